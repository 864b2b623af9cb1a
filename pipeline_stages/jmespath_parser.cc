#include "pipeline_stages/jmespath_parser.h"

#include <charconv>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/jmespath_functions.h"
#include "pipeline_stages/jmespath_lexer.h"

namespace skald::stages::jmes {
namespace {

// go-jmespath's binding powers: how tightly a token binds to the expression on its left.
int BindingPower(Tok t) {
  switch (t) {
    case Tok::kPipe:
      return 1;
    case Tok::kOr:
      return 2;
    case Tok::kAnd:
      return 3;
    case Tok::kEq:
    case Tok::kNe:
    case Tok::kLt:
    case Tok::kLte:
    case Tok::kGt:
    case Tok::kGte:
      return 5;
    case Tok::kFlatten:
      return 9;
    case Tok::kStar:
      return 20;
    case Tok::kFilter:
      return 21;
    case Tok::kDot:
      return 40;
    case Tok::kNot:
      return 45;
    case Tok::kLbrace:
      return 50;
    case Tok::kLbracket:
      return 55;
    case Tok::kLparen:
      return 60;
    default:
      return 0;
  }
}

int TreeDepth(const Node& n) {
  int deepest = 0;
  for (const Node& c : n.children) deepest = std::max(deepest, TreeDepth(c));
  return deepest + 1;
}

class Parser {
 public:
  Parser(std::string_view expr, std::vector<Token> tokens)
      : expr_(expr), tokens_(std::move(tokens)) {}

  Node Run() {
    Node n = Expression(0);
    if (Current() != Tok::kEof) Fail(Peek(), "expected the end of the expression");
    return n;
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(index_ + ahead, tokens_.size() - 1)];
  }
  Tok Current() const { return Peek().type; }
  void Advance() {
    if (index_ + 1 < tokens_.size()) ++index_;
  }

  [[noreturn]] void Fail(const Token& at, const std::string& what) const {
    std::string msg = ErrorPrefix(expr_) + "at position " + std::to_string(at.position) + ": ";
    msg += what;
    msg += ", found ";
    msg += Describe(at.type);
    throw ConfigError(msg);
  }

  void Match(Tok type) {
    if (Current() != type) Fail(Peek(), "expected " + std::string(Describe(type)));
    Advance();
  }

  Node Expression(int binding_power) {
    if (++depth_ > kMaxDepth) {
      throw ConfigError(ErrorPrefix(expr_) + "nests deeper than " + std::to_string(kMaxDepth) +
                        " sub-expressions (the limit)");
    }
    Token left_token = Peek();
    Advance();
    Node left = Nud(left_token);
    while (binding_power < BindingPower(Current())) {
      const Token& t = Peek();
      Advance();
      left = Led(t, std::move(left));
    }
    --depth_;
    return left;
  }

  int64_t Number(const Token& t) const {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size()) Fail(t, "the number is too large");
    return v;
  }

  Node Nud(const Token& t) {
    switch (t.type) {
      case Tok::kLiteral:
      case Tok::kRawString: {
        Node n = Node::Of(Node::Kind::kLiteral);
        n.literal = t.value;
        return n;
      }
      case Tok::kIdentifier:
      case Tok::kQuotedIdentifier: {
        if (t.type == Tok::kQuotedIdentifier && Current() == Tok::kLparen) {
          Fail(t, "a function name must not be quoted");
        }
        Node n = Node::Of(Node::Kind::kField);
        n.name = t.text;
        return n;
      }
      case Tok::kStar: {
        Node right = Current() == Tok::kRbracket ? Node::Of(Node::Kind::kCurrent)
                                                 : ProjectionRhs(BindingPower(Tok::kStar));
        return Node::Of(Node::Kind::kValueProjection,
                        {Node::Of(Node::Kind::kCurrent), std::move(right)});
      }
      case Tok::kFilter:
        return Filter(Node::Of(Node::Kind::kCurrent));
      case Tok::kLbrace:
        return MultiSelectHash();
      case Tok::kFlatten: {
        Node left = Node::Of(Node::Kind::kFlatten, {Node::Of(Node::Kind::kCurrent)});
        Node right = ProjectionRhs(BindingPower(Tok::kFlatten));
        return Node::Of(Node::Kind::kProjection, {std::move(left), std::move(right)});
      }
      case Tok::kLbracket:
        if (Current() == Tok::kNumber || Current() == Tok::kColon) {
          return ProjectIfSlice(Node::Of(Node::Kind::kCurrent), IndexExpression());
        }
        if (Current() == Tok::kStar && Peek(1).type == Tok::kRbracket) {
          Advance();
          Advance();
          Node right = ProjectionRhs(BindingPower(Tok::kStar));
          return Node::Of(Node::Kind::kProjection,
                          {Node::Of(Node::Kind::kCurrent), std::move(right)});
        }
        return MultiSelectList();
      case Tok::kCurrent:
        return Node::Of(Node::Kind::kCurrent);
      case Tok::kExpref:
        return Node::Of(Node::Kind::kExpressionReference, {Expression(0)});
      case Tok::kNot:
        return Node::Of(Node::Kind::kNot, {Expression(BindingPower(Tok::kNot))});
      case Tok::kLparen: {
        Node inner = Expression(0);
        Match(Tok::kRparen);
        return inner;
      }
      case Tok::kEof:
        Fail(t, "the expression is incomplete: expected a value");
      default:
        Fail(t, "expected an identifier, '@', '*', '[', '{', '!', '&', '(' or a literal");
    }
  }

  Node Led(const Token& t, Node left) {
    switch (t.type) {
      case Tok::kDot:
        if (Current() != Tok::kStar) {
          Node right = DotRhs(BindingPower(Tok::kDot));
          return Node::Of(Node::Kind::kSubexpression, {std::move(left), std::move(right)});
        } else {
          Advance();
          Node right = ProjectionRhs(BindingPower(Tok::kDot));
          return Node::Of(Node::Kind::kValueProjection, {std::move(left), std::move(right)});
        }
      case Tok::kPipe:
        return Node::Of(Node::Kind::kPipe, {std::move(left), Expression(BindingPower(Tok::kPipe))});
      case Tok::kOr:
        return Node::Of(Node::Kind::kOr, {std::move(left), Expression(BindingPower(Tok::kOr))});
      case Tok::kAnd:
        return Node::Of(Node::Kind::kAnd, {std::move(left), Expression(BindingPower(Tok::kAnd))});
      case Tok::kLparen:
        return FunctionCall(t, std::move(left));
      case Tok::kFilter:
        return Filter(std::move(left));
      case Tok::kFlatten: {
        Node flat = Node::Of(Node::Kind::kFlatten, {std::move(left)});
        Node right = ProjectionRhs(BindingPower(Tok::kFlatten));
        return Node::Of(Node::Kind::kProjection, {std::move(flat), std::move(right)});
      }
      case Tok::kEq:
      case Tok::kNe:
      case Tok::kLt:
      case Tok::kLte:
      case Tok::kGt:
      case Tok::kGte: {
        Node n =
            Node::Of(Node::Kind::kComparator, {std::move(left), Expression(BindingPower(t.type))});
        n.comparator = t.type == Tok::kEq    ? Comparator::kEq
                       : t.type == Tok::kNe  ? Comparator::kNe
                       : t.type == Tok::kLt  ? Comparator::kLt
                       : t.type == Tok::kLte ? Comparator::kLte
                       : t.type == Tok::kGt  ? Comparator::kGt
                                             : Comparator::kGte;
        return n;
      }
      case Tok::kLbracket: {
        if (Current() == Tok::kNumber || Current() == Tok::kColon) {
          return ProjectIfSlice(std::move(left), IndexExpression());
        }
        if (Current() != Tok::kStar) {
          Fail(Peek(), "expected a number, ':' or '*' after '['");
        }
        Advance();
        Match(Tok::kRbracket);
        Node right = ProjectionRhs(BindingPower(Tok::kStar));
        return Node::Of(Node::Kind::kProjection, {std::move(left), std::move(right)});
      }
      default:
        Fail(t, "expected an operator");
    }
  }

  Node FunctionCall(const Token& paren, Node name) {
    if (name.kind != Node::Kind::kField || !name.children.empty()) {
      Fail(paren, "only a function name may be called");
    }
    const Function* f = FindFunction(name.name);
    if (!f) {
      throw ConfigError(ErrorPrefix(expr_) + "at position " + std::to_string(paren.position) +
                        ": unknown function " + name.name + "(); the functions are " +
                        FunctionNames());
    }
    Node call = Node::Of(Node::Kind::kFunction);
    call.function = f;
    while (Current() != Tok::kRparen) {
      call.children.push_back(Expression(0));
      if (Current() == Tok::kComma) {
        Advance();
      } else if (Current() != Tok::kRparen) {
        Fail(Peek(), "expected ',' or ')' in the arguments of " + name.name + "()");
      }
    }
    Match(Tok::kRparen);
    const size_t n = call.children.size();
    const size_t want = f->parameters.size();
    if (f->variadic ? n < want : n != want) {
      throw ConfigError(ErrorPrefix(expr_) + "at position " + std::to_string(paren.position) +
                        ": " + name.name + "() takes " + (f->variadic ? "at least " : "") +
                        std::to_string(want) + " argument" + (want == 1 ? "" : "s") + ", not " +
                        std::to_string(n));
    }
    return call;
  }

  // [number] or [start:stop:step], after the '['.
  Node IndexExpression() {
    if (Current() == Tok::kColon || Peek(1).type == Tok::kColon) return Slice();
    const Token& t = Peek();
    Node n = Node::Of(Node::Kind::kIndex);
    n.index = Number(t);
    Advance();
    Match(Tok::kRbracket);
    return n;
  }

  Node Slice() {
    Node n = Node::Of(Node::Kind::kSlice);
    int part = 0;
    while (Current() != Tok::kRbracket && part < 3) {
      if (Current() == Tok::kColon) {
        ++part;
        Advance();
      } else if (Current() == Tok::kNumber) {
        if (n.slice[part]) Fail(Peek(), "expected ':' or ']'");
        n.slice[part] = Number(Peek());
        if (part == 2 && *n.slice[2] == 0) Fail(Peek(), "a slice step must not be 0");
        Advance();
      } else {
        Fail(Peek(), "expected a number, ':' or ']' in a slice");
      }
    }
    Match(Tok::kRbracket);
    return n;
  }

  Node ProjectIfSlice(Node left, Node right) {
    const bool slice = right.kind == Node::Kind::kSlice;
    Node index = Node::Of(Node::Kind::kSubexpression, {std::move(left), std::move(right)});
    if (!slice) return index;
    return Node::Of(Node::Kind::kProjection,
                    {std::move(index), ProjectionRhs(BindingPower(Tok::kStar))});
  }

  Node Filter(Node left) {
    Node condition = Expression(0);
    Match(Tok::kRbracket);
    Node right = Current() == Tok::kFlatten ? Node::Of(Node::Kind::kCurrent)
                                            : ProjectionRhs(BindingPower(Tok::kFilter));
    return Node::Of(Node::Kind::kFilterProjection,
                    {std::move(left), std::move(right), std::move(condition)});
  }

  Node DotRhs(int binding_power) {
    switch (Current()) {
      case Tok::kIdentifier:
      case Tok::kQuotedIdentifier:
      case Tok::kStar:
        return Expression(binding_power);
      case Tok::kLbracket:
        Advance();
        return MultiSelectList();
      case Tok::kLbrace:
        Advance();
        return MultiSelectHash();
      default:
        Fail(Peek(), "expected an identifier, '[' or '{' after '.'");
    }
  }

  Node ProjectionRhs(int binding_power) {
    const Tok c = Current();
    if (BindingPower(c) < 10) return Node::Of(Node::Kind::kCurrent);
    if (c == Tok::kLbracket || c == Tok::kFilter) return Expression(binding_power);
    if (c == Tok::kDot) {
      Advance();
      return DotRhs(binding_power);
    }
    Fail(Peek(), "expected '.', '[' or '[?' after a projection");
  }

  Node MultiSelectList() {
    Node n = Node::Of(Node::Kind::kMultiSelectList);
    while (true) {
      n.children.push_back(Expression(0));
      if (Current() == Tok::kRbracket) break;
      Match(Tok::kComma);
    }
    Match(Tok::kRbracket);
    return n;
  }

  Node MultiSelectHash() {
    Node n = Node::Of(Node::Kind::kMultiSelectHash);
    while (true) {
      if (Current() != Tok::kIdentifier && Current() != Tok::kQuotedIdentifier) {
        Fail(Peek(), "expected a key (an identifier) in '{...}'");
      }
      n.keys.push_back(Peek().text);
      Advance();
      Match(Tok::kColon);
      n.children.push_back(Expression(0));
      if (Current() == Tok::kRbrace) {
        Advance();
        break;
      }
      if (Current() != Tok::kComma) Fail(Peek(), "expected ',' or '}'");
      Advance();
    }
    return n;
  }

  std::string_view expr_;
  std::vector<Token> tokens_;
  size_t index_ = 0;
  int depth_ = 0;
};

}  // namespace

Node Parse(std::string_view expression) {
  if (expression.size() > kMaxExpressionLength) {
    throw ConfigError(ErrorPrefix(expression.substr(0, 64)) + "is " +
                      std::to_string(expression.size()) + " bytes long; the limit is " +
                      std::to_string(kMaxExpressionLength));
  }
  std::vector<Token> tokens = Tokenize(expression);
  int open = 0;
  for (const Token& t : tokens) {
    if (t.type == Tok::kLbracket || t.type == Tok::kFilter || t.type == Tok::kLbrace ||
        t.type == Tok::kLparen) {
      if (++open > kMaxNesting) {
        throw ConfigError(ErrorPrefix(expression) + "at position " + std::to_string(t.position) +
                          ": brackets, braces and parentheses nest deeper than " +
                          std::to_string(kMaxNesting) + " levels (the limit)");
      }
    } else if (t.type == Tok::kRbracket || t.type == Tok::kRbrace || t.type == Tok::kRparen) {
      --open;
    }
  }
  Node root = Parser(expression, std::move(tokens)).Run();
  // Left-nested chains (a.b.c..., a | b | c ...) parse in a loop but evaluate recursively.
  if (TreeDepth(root) > kMaxDepth) {
    throw ConfigError(ErrorPrefix(expression) + "nests deeper than " + std::to_string(kMaxDepth) +
                      " sub-expressions (the limit)");
  }
  return root;
}

}  // namespace skald::stages::jmes
