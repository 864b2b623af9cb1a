#include "pipeline_stages/go_template.h"

#include <absl/container/inlined_vector.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "pipeline_stages/config_error.h"
#include "pipeline_stages/go_regexp.h"
#include "pipeline_stages/go_string.h"
#include "pipeline_stages/go_template_functions.h"

namespace skald::stages {

using go_template_internal::Function;
using go_template_internal::FunctionId;
using go_template_internal::ParamType;
using go_template_internal::Value;

namespace {

struct Pipeline;

struct Operand {
  enum class Kind { kField, kDot, kLiteral, kFunction, kParen };
  Kind kind = Kind::kDot;
  std::vector<std::string> fields;  // kField: .a.b is {"a", "b"}
  Value literal;                    // kLiteral (strings own their text)
  const Function* function = nullptr;
  std::unique_ptr<Pipeline> sub;  // kParen
  size_t pos = 0;
};

struct Command {
  std::vector<Operand> operands;  // a function and its arguments, or a single operand
  std::shared_ptr<RE2> regex;     // regexReplaceAll* with a literal pattern, compiled once
  size_t pos = 0;
};

struct Pipeline {
  std::vector<Command> commands;
};

struct Node;
struct IfBranch {
  Pipeline condition;
  std::vector<Node> body;
};

struct Node {
  enum class Kind { kText, kAction, kIf };
  Kind kind;
  std::string text;                // kText
  Pipeline pipeline;               // kAction
  std::vector<IfBranch> branches;  // kIf: if / else if ...
  std::vector<Node> otherwise;     // kIf: else
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

constexpr int kMaxDepth = 100;

}  // namespace

struct GoTemplate::Impl {
  std::string source;
  std::vector<Node> nodes;
};

namespace {

// How a list of nodes ended.
enum class ListEnd { kEof, kEnd, kElse, kElseIf };

class TemplateParser {
 public:
  explicit TemplateParser(std::string_view text) : text_(text) {}

  std::vector<Node> ParseTemplate() {
    std::vector<Node> nodes;
    const ListEnd end = ParseList(&nodes, 0);
    if (end != ListEnd::kEof) {
      pos_ = control_pos_;
      Fail(end == ListEnd::kEnd ? "unexpected {{end}}" : "unexpected {{else}}",
           "{{end}} and {{else}} only inside {{if}}");
    }
    return nodes;
  }

 private:
  [[noreturn]] void Fail(std::string_view what, std::string_view accepted) const {
    std::string msg = "invalid template \"" + std::string(text_) + "\": " + std::string(what);
    if (pos_ < text_.size()) {
      msg.append(" at position ").append(std::to_string(pos_));
    } else {
      msg.append(" at the end");
    }
    if (!accepted.empty()) msg.append("; ").append(accepted);
    throw ConfigError(msg);
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  bool LookingAt(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  // Skips blanks; returns whether there were any.
  bool SkipSpace() {
    const size_t start = pos_;
    while (!AtEnd() && IsSpace(text_[pos_])) ++pos_;
    return pos_ != start;
  }
  // At "}}" or " -}}" (the blank before '-' already skipped when had_space).
  bool AtClose(bool had_space) const { return LookingAt("}}") || (had_space && LookingAt("-}}")); }

  // Consumes the end of an action: "}}" or " -}}" (which trims blanks after it).
  void ExpectClose(bool had_space) {
    if (LookingAt("}}")) {
      pos_ += 2;
      return;
    }
    if (had_space && LookingAt("-}}")) {
      pos_ += 3;
      trim_next_ = true;
      return;
    }
    if (AtEnd()) Fail("unclosed action", "close it with }}");
    Fail("unexpected \"" + std::string(text_.substr(pos_, 1)) + "\" in action", "expected }}");
  }

  // Parses text and actions until EOF or a control action that ends the list ({{end}},
  // {{else}}, {{else if ...}}; for else-if the condition is parsed into *else_if).
  ListEnd ParseList(std::vector<Node>* nodes, int depth, Pipeline* else_if = nullptr) {
    if (depth > kMaxDepth) Fail("too deeply nested", "");
    while (true) {
      const size_t open = text_.find("{{", pos_);
      std::string_view text =
          text_.substr(pos_, open == std::string_view::npos ? std::string_view::npos : open - pos_);
      if (trim_next_) {
        while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
        trim_next_ = false;
      }
      // "{{- " trims blanks before the action.
      const bool trim_left = open != std::string_view::npos && open + 3 < text_.size() &&
                             text_[open + 2] == '-' && IsSpace(text_[open + 3]);
      if (trim_left) {
        while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
      }
      if (!text.empty()) {
        if (!nodes->empty() && nodes->back().kind == Node::Kind::kText) {
          nodes->back().text.append(text);
        } else {
          Node n{Node::Kind::kText, std::string(text), {}, {}, {}};
          nodes->push_back(std::move(n));
        }
      }
      if (open == std::string_view::npos) {
        pos_ = text_.size();
        return ListEnd::kEof;
      }
      const size_t action_pos = open;
      pos_ = open + (trim_left ? 4 : 2);  // past "{{" or "{{- "
      // As in Go, a comment sits right inside the delimiters: {{/* c */}} or {{- /* c */ -}}.
      if (LookingAt("/*")) {
        const size_t close = text_.find("*/", pos_);
        if (close == std::string_view::npos) Fail("unclosed comment", "close it with */");
        pos_ = close + 2;
        const bool trim_right =
            pos_ + 1 < text_.size() && IsSpace(text_[pos_]) && text_.substr(pos_ + 1, 3) == "-}}";
        if (trim_right) ++pos_;
        if (!trim_right && !LookingAt("}}")) {
          Fail("comment must be followed directly by }} or \" -}}\"", "write {{/* comment */}}");
        }
        ExpectClose(trim_right);
        continue;
      }
      bool had_space = SkipSpace();
      const std::string_view word = PeekWord();
      if (word == "if") {
        pos_ += 2;
        nodes->push_back(ParseIf(depth, action_pos));
        continue;
      }
      if (word == "end" || word == "else") {
        control_pos_ = action_pos;
        pos_ += word.size();
        had_space = SkipSpace();
        if (word == "else" && PeekWord() == "if") {
          if (else_if == nullptr) {
            pos_ = action_pos;
            Fail("unexpected {{else if}}", "{{else if}} only inside {{if}}");
          }
          pos_ += 2;
          *else_if = ParsePipeline(depth + 1, /*in_paren=*/false);
          had_space = pos_ > 0 && IsSpace(text_[pos_ - 1]);
          ExpectClose(had_space);
          return ListEnd::kElseIf;
        }
        ExpectClose(had_space);
        return word == "end" ? ListEnd::kEnd : ListEnd::kElse;
      }
      if (word == "range" || word == "with" || word == "define" || word == "template" ||
          word == "block" || word == "break" || word == "continue") {
        Fail("{{" + std::string(word) + "}} is not supported",
             "supported actions: {{.field}}, pipelines, {{if}}/{{else if}}/{{else}}/{{end}}");
      }
      Node n{Node::Kind::kAction, {}, ParsePipeline(depth + 1, false), {}, {}};
      had_space = pos_ > 0 && IsSpace(text_[pos_ - 1]);
      ExpectClose(had_space);
      nodes->push_back(std::move(n));
    }
  }

  std::string_view PeekWord() const {
    size_t end = pos_;
    while (end < text_.size() && IsIdentChar(text_[end])) ++end;
    const std::string_view word = text_.substr(pos_, end - pos_);
    return word;
  }

  // After "{{ if" (the action began at if_pos).
  Node ParseIf(int depth, size_t if_pos) {
    Node node{Node::Kind::kIf, {}, {}, {}, {}};
    IfBranch first;
    first.condition = ParsePipeline(depth + 1, false);
    ExpectClose(pos_ > 0 && IsSpace(text_[pos_ - 1]));
    node.branches.push_back(std::move(first));
    while (true) {
      Pipeline next_condition;
      const ListEnd end = ParseList(&node.branches.back().body, depth + 1, &next_condition);
      if (end == ListEnd::kEof) {
        pos_ = if_pos;
        Fail("{{if}} has no matching {{end}}", "close it with {{end}}");
      }
      if (end == ListEnd::kEnd) return node;
      if (end == ListEnd::kElseIf) {
        node.branches.push_back(IfBranch{std::move(next_condition), {}});
        continue;
      }
      // {{else}}: the rest up to {{end}}.
      const ListEnd last = ParseList(&node.otherwise, depth + 1);
      if (last != ListEnd::kEnd) {
        pos_ = last == ListEnd::kEof ? if_pos : control_pos_;
        Fail(last == ListEnd::kEof ? "{{if}} has no matching {{end}}" : "{{else}} after {{else}}",
             "expected {{end}}");
      }
      return node;
    }
  }

  // A pipeline: commands separated by '|', up to "}}", " -}}" or (in_paren) ')'.
  Pipeline ParsePipeline(int depth, bool in_paren) {
    if (depth > kMaxDepth) Fail("too deeply nested", "");
    Pipeline p;
    bool had_space = SkipSpace();
    while (true) {
      Command cmd;
      cmd.pos = pos_;
      while (true) {
        if (AtEnd()) Fail("unclosed action", in_paren ? "close it with )" : "close it with }}");
        if (AtClose(had_space) || text_[pos_] == '|' || text_[pos_] == ')') break;
        if (!cmd.operands.empty() && !had_space) {
          Fail("unexpected \"" + std::string(text_.substr(pos_, 1)) + "\" after an operand",
               "separate arguments with spaces");
        }
        cmd.operands.push_back(ParseOperand(depth));
        had_space = SkipSpace();
      }
      if (cmd.operands.empty()) {
        Fail(p.commands.empty() ? "missing value for command" : "missing command after |",
             "write a field such as .Value, a literal or a function call");
      }
      CheckCommand(&cmd, !p.commands.empty());
      p.commands.push_back(std::move(cmd));
      if (text_[pos_] == '|') {
        ++pos_;
        had_space = SkipSpace();
        continue;
      }
      if (text_[pos_] == ')') {
        if (!in_paren) Fail("unexpected \")\"", "parentheses must match");
        ++pos_;
        return p;
      }
      if (in_paren) Fail("unclosed parenthesis", "close it with )");
      return p;
    }
  }

  Operand ParseOperand(int depth) {
    Operand op;
    op.pos = pos_;
    const char c = text_[pos_];
    if (c == '.' || c == '$') {
      if (c == '$') {
        ++pos_;
        if (!AtEnd() && IsIdentChar(text_[pos_])) {
          Fail("variables are not supported", "use $ or $.name for the data, .name for a key");
        }
        if (AtEnd() || text_[pos_] != '.') {
          op.kind = Operand::Kind::kDot;
          return op;
        }
      }
      if (pos_ + 1 >= text_.size() || !IsIdentStart(text_[pos_ + 1])) {
        ++pos_;
        if (!AtEnd() && IsDigit(text_[pos_])) {  // .5 is a number
          pos_ = op.pos;
          return ParseNumber(std::move(op));
        }
        op.kind = Operand::Kind::kDot;
        return op;
      }
      op.kind = Operand::Kind::kField;
      while (!AtEnd() && text_[pos_] == '.' && pos_ + 1 < text_.size() &&
             IsIdentStart(text_[pos_ + 1])) {
        const size_t start = ++pos_;
        while (!AtEnd() && IsIdentChar(text_[pos_])) ++pos_;
        op.fields.emplace_back(text_.substr(start, pos_ - start));
      }
      return op;
    }
    if (c == '"' || c == '`') {
      std::string value, error;
      const size_t n = ReadGoStringLiteral(text_.substr(pos_), &value, &error);
      if (n == 0) Fail(error, "");
      pos_ += n;
      op.kind = Operand::Kind::kLiteral;
      op.literal = Value::Own(std::move(value));
      return op;
    }
    if (c == '\'') Fail("character constants are not supported", "use a \"string\"");
    if (IsDigit(c) || ((c == '-' || c == '+') && pos_ + 1 < text_.size() &&
                       (IsDigit(text_[pos_ + 1]) || text_[pos_ + 1] == '.'))) {
      return ParseNumber(std::move(op));
    }
    if (c == '(') {
      ++pos_;
      op.kind = Operand::Kind::kParen;
      op.sub = std::make_unique<Pipeline>(ParsePipeline(depth + 1, true));
      return op;
    }
    if (IsIdentStart(c)) {
      const std::string_view word = PeekWord();
      pos_ += word.size();
      if (word == "true" || word == "false") {
        op.kind = Operand::Kind::kLiteral;
        op.literal = Value::Bool(word == "true");
        return op;
      }
      if (word == "nil") {
        pos_ = op.pos;
        Fail("nil is not supported", "");
      }
      op.function = go_template_internal::FindFunction(word);
      if (op.function == nullptr) {
        pos_ = op.pos;
        Fail("function \"" + std::string(word) + "\" is not supported",
             "supported functions: " + go_template_internal::SupportedFunctionNames());
      }
      op.kind = Operand::Kind::kFunction;
      return op;
    }
    Fail("unexpected \"" + std::string(text_.substr(pos_, 1)) + "\" in action",
         "expected a field (.Value), a string, a number, a function or (");
  }

  // Go number syntax: ints in decimal, 0x, 0o, 0b or leading-0 octal (with _ separators);
  // floats with '.', exponents, or hex mantissas.
  Operand ParseNumber(Operand op) {
    const size_t start = pos_;
    if (text_[pos_] == '+' || text_[pos_] == '-') ++pos_;
    while (!AtEnd()) {
      const char c = text_[pos_];
      if (IsIdentChar(c) || c == '.') {
        ++pos_;
      } else if ((c == '+' || c == '-') && (text_[pos_ - 1] | 0x20) == 'e' &&
                 !(text_.substr(start, 3) == "0x" || text_.substr(start, 3) == "0X")) {
        ++pos_;
      } else if ((c == '+' || c == '-') && (text_[pos_ - 1] | 0x20) == 'p') {
        ++pos_;
      } else {
        break;
      }
    }
    std::string digits;
    for (char ch : text_.substr(start, pos_ - start)) {
      if (ch != '_') digits.push_back(ch);
    }
    const std::string_view number = text_.substr(start, pos_ - start);
    auto bad = [&]() {
      pos_ = start;
      Fail("bad number syntax \"" + std::string(number) + "\"", "");
    };
    std::string_view body = digits;
    bool negative = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      negative = body[0] == '-';
      body.remove_prefix(1);
    }
    int base = 10;
    std::string_view int_digits = body;
    if (body.size() > 1 && body[0] == '0') {
      const char p = body[1] | 0x20;
      if (p == 'x')
        base = 16, int_digits = body.substr(2);
      else if (p == 'o')
        base = 8, int_digits = body.substr(2);
      else if (p == 'b')
        base = 2, int_digits = body.substr(2);
      else if (body.find_first_of(".eE") == std::string_view::npos)
        base = 8, int_digits = body.substr(1);
    }
    op.kind = Operand::Kind::kLiteral;
    errno = 0;
    char* end = nullptr;
    const std::string int_str(int_digits);
    const unsigned long long u = int_str.empty() ? 0 : std::strtoull(int_str.c_str(), &end, base);
    if (!int_str.empty() && end == int_str.c_str() + int_str.size() && errno == 0 &&
        int_str[0] != '-' && int_str[0] != '+') {
      if (u > (negative ? 1ULL << 63 : static_cast<unsigned long long>(INT64_MAX))) bad();
      op.literal = Value::Int(negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u));
      return op;
    }
    end = nullptr;
    const double d = std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size() || std::isinf(d) || std::isnan(d)) {
      bad();
    }
    op.literal = Value::Double(d);
    return op;
  }

  // Checks a command once parsed: non-functions take no arguments; later pipeline stages are
  // functions; functions get their argument count and literal argument types right.
  void CheckCommand(Command* cmd, bool piped) {
    Operand& head = cmd->operands[0];
    if (head.kind != Operand::Kind::kFunction) {
      if (piped) {
        pos_ = head.pos;
        Fail("a pipeline stage after | must be a function", "e.g. {{ .Value | ToUpper }}");
      }
      if (cmd->operands.size() > 1) {
        pos_ = cmd->operands[1].pos;
        Fail("can't give an argument to a non-function", "only functions take arguments");
      }
      return;
    }
    const Function& f = *head.function;
    const int nargs = static_cast<int>(cmd->operands.size()) - 1 + (piped ? 1 : 0);
    if (nargs < f.min_args || (f.max_args >= 0 && nargs > f.max_args)) {
      pos_ = head.pos;
      std::string want = std::to_string(f.min_args);
      if (f.max_args < 0) {
        want = "at least " + want;
      } else if (f.max_args != f.min_args) {
        want += " to " + std::to_string(f.max_args);
      }
      Fail("wrong number of arguments for " + std::string(f.name) + ": want " + want + ", got " +
               std::to_string(nargs) + (piped ? " (the piped value counts as the last)" : ""),
           "");
    }
    for (size_t k = 1; k < cmd->operands.size(); ++k) {
      Operand& arg = cmd->operands[k];
      if (arg.kind == Operand::Kind::kFunction) {
        // A bare function as an argument is a call without arguments.
        const Function& inner = *arg.function;
        if (inner.min_args > 0) {
          pos_ = arg.pos;
          Fail("function " + std::string(inner.name) + " used as an argument without its arguments",
               "wrap the call in parentheses: (" + std::string(inner.name) + " ...)");
        }
        continue;
      }
      if (arg.kind != Operand::Kind::kLiteral) continue;
      const ParamType want = f.TypeOf(k - 1);
      if (want == ParamType::kInt && arg.literal.kind == Value::Kind::kDouble &&
          arg.literal.d == std::trunc(arg.literal.d) && std::fabs(arg.literal.d) < 9e18) {
        arg.literal = Value::Int(static_cast<int64_t>(arg.literal.d));
      }
      const bool ok = want == ParamType::kAny ||
                      (want == ParamType::kString && arg.literal.kind == Value::Kind::kString) ||
                      (want == ParamType::kInt && arg.literal.kind == Value::Kind::kInt);
      if (!ok) {
        pos_ = arg.pos;
        Fail("argument " + std::to_string(k) + " of " + std::string(f.name) + " must be " +
                 (want == ParamType::kString ? "a string" : "an integer"),
             "");
      }
    }
    if ((f.id == FunctionId::kRegexReplaceAll || f.id == FunctionId::kRegexReplaceAllLiteral) &&
        cmd->operands.size() > 1 && cmd->operands[1].kind == Operand::Kind::kLiteral) {
      const std::string pattern(cmd->operands[1].literal.str());
      std::string error;
      cmd->regex = CompileGoRegexp(pattern, &error);
      if (!cmd->regex) {
        pos_ = cmd->operands[1].pos;
        Fail("invalid regex \"" + pattern + "\" for " + std::string(f.name) + " (" + error + ")",
             "an RE2 regular expression");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t control_pos_ = 0;
  bool trim_next_ = false;
};

class Executor {
 public:
  Executor(const TemplateData& data, std::string* out, std::string* error)
      : data_(data), out_(out), error_(error) {}

  bool Run(const std::vector<Node>& nodes) {
    for (const Node& n : nodes) {
      switch (n.kind) {
        case Node::Kind::kText:
          out_->append(n.text);
          if (out_->size() > GoTemplate::kMaxOutputBytes) return TooLong();
          break;
        case Node::Kind::kAction: {
          Value v;
          if (!Eval(n.pipeline, &v)) return false;
          go_template_internal::AppendValue(v, out_);
          if (out_->size() > GoTemplate::kMaxOutputBytes) return TooLong();
          break;
        }
        case Node::Kind::kIf: {
          const std::vector<Node>* body = &n.otherwise;
          for (const IfBranch& b : n.branches) {
            Value v;
            if (!Eval(b.condition, &v)) return false;
            if (go_template_internal::IsTrue(v)) {
              body = &b.body;
              break;
            }
          }
          if (!Run(*body)) return false;
          break;
        }
      }
    }
    return true;
  }

  bool too_long() const { return too_long_; }

 private:
  bool Fail(std::string msg) {
    if (error_) *error_ = std::move(msg);
    return false;
  }
  bool TooLong() {
    too_long_ = true;
    return Fail("output longer than " + std::to_string(GoTemplate::kMaxOutputBytes) + " bytes");
  }

  bool Eval(const Pipeline& p, Value* v) {
    bool piped = false;
    for (const Command& cmd : p.commands) {
      Value result;
      if (!EvalCommand(cmd, piped ? v : nullptr, &result)) return false;
      *v = std::move(result);
      piped = true;
    }
    return true;
  }

  bool EvalCommand(const Command& cmd, Value* piped, Value* result) {
    const Operand& head = cmd.operands[0];
    if (head.kind != Operand::Kind::kFunction) return EvalOperand(head, result);
    const Function& f = *head.function;
    const size_t nargs = cmd.operands.size() - 1 + (piped ? 1 : 0);
    auto arg = [&](size_t k, Value* v) -> bool {
      if (k + 1 < cmd.operands.size()) return EvalOperand(cmd.operands[k + 1], v);
      *v = std::move(*piped);
      return true;
    };
    if (f.id == FunctionId::kAnd || f.id == FunctionId::kOr) {
      // Short-circuit: the first false (and) / true (or) argument, else the last.
      for (size_t k = 0; k < nargs; ++k) {
        if (!arg(k, result)) return false;
        const bool truth = go_template_internal::IsTrue(*result);
        if (f.id == FunctionId::kAnd ? !truth : truth) break;
      }
      return true;
    }
    absl::InlinedVector<Value, 4> args(nargs);
    for (size_t k = 0; k < nargs; ++k) {
      if (!arg(k, &args[k])) return false;
    }
    std::string error;
    bool too_long = false;
    if (!go_template_internal::CallFunction(f, std::span<Value>(args.data(), args.size()),
                                            cmd.regex.get(), GoTemplate::kMaxOutputBytes, result,
                                            &error, &too_long)) {
      too_long_ = too_long;
      return Fail(std::move(error));
    }
    return true;
  }

  bool EvalOperand(const Operand& op, Value* v) {
    switch (op.kind) {
      case Operand::Kind::kDot:
        *v = Value();
        v->kind = Value::Kind::kMap;
        v->map = &data_;
        return true;
      case Operand::Kind::kField: {
        *v = Value::FromData(data_.Lookup(op.fields[0]));
        if (op.fields.size() > 1) {
          return Fail("can't evaluate field " + op.fields[1] + " of ." + op.fields[0] +
                      ": it is not a map");
        }
        return true;
      }
      case Operand::Kind::kLiteral:
        if (op.literal.kind == Value::Kind::kString) {
          *v = Value::Borrow(op.literal.str());
        } else {
          *v = op.literal;
        }
        return true;
      case Operand::Kind::kFunction: {
        Command call;
        call.operands.resize(1);
        call.operands[0].kind = Operand::Kind::kFunction;
        call.operands[0].function = op.function;
        return EvalCommand(call, nullptr, v);
      }
      case Operand::Kind::kParen:
        return Eval(*op.sub, v);
    }
    return false;
  }

  const TemplateData& data_;
  std::string* out_;
  std::string* error_;
  bool too_long_ = false;
};

}  // namespace

void TemplateData::ForEach(
    const std::function<void(std::string_view, const TemplateValue&)>& /*f*/) const {}

MapTemplateData::MapTemplateData(
    std::initializer_list<std::pair<const std::string, std::string>> strings) {
  for (const auto& [name, value] : strings) SetString(name, value);
}

void MapTemplateData::SetString(std::string name, std::string value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kString, std::move(value)};
}
void MapTemplateData::SetInt(std::string name, int64_t value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kInt, {}, value};
}
void MapTemplateData::SetDouble(std::string name, double value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kDouble, {}, 0, value};
}
void MapTemplateData::SetBool(std::string name, bool value) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kBool, {}, 0, 0, value};
}
void MapTemplateData::SetNull(std::string name) {
  values_[std::move(name)] = Stored{TemplateValue::Kind::kNull, {}};
}

TemplateValue MapTemplateData::View(const Stored& s) const {
  return TemplateValue{s.kind, s.str, s.i, s.d, s.b};
}

TemplateValue MapTemplateData::Lookup(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? TemplateValue::Missing() : View(it->second);
}

void MapTemplateData::ForEach(
    const std::function<void(std::string_view, const TemplateValue&)>& f) const {
  for (const auto& [name, stored] : values_) f(name, View(stored));
}

GoTemplate GoTemplate::Parse(std::string_view text) {
  auto impl = std::make_shared<Impl>();
  impl->source = std::string(text);
  impl->nodes = TemplateParser(impl->source).ParseTemplate();
  GoTemplate t;
  t.impl_ = std::move(impl);
  return t;
}

GoTemplate::Result GoTemplate::Execute(const TemplateData& data, std::string* out,
                                       std::string* error) const {
  out->clear();
  Executor executor(data, out, error);
  if (executor.Run(impl_->nodes)) return Result::kOk;
  return executor.too_long() ? Result::kTooLong : Result::kFailed;
}

const std::string& GoTemplate::source() const { return impl_->source; }

}  // namespace skald::stages
