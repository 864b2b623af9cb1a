#include "pipeline_stages/jmespath_lexer.h"

#include "pipeline_stages/common/config_error.h"

namespace skald::stages::jmes {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string_view expr) : expr_(expr) {}

  std::vector<Token> Run() {
    std::vector<Token> out;
    while (true) {
      while (pos_ < expr_.size() && (expr_[pos_] == ' ' || expr_[pos_] == '\t' ||
                                     expr_[pos_] == '\n' || expr_[pos_] == '\r')) {
        ++pos_;
      }
      Token t;
      t.position = pos_;
      if (pos_ >= expr_.size()) {
        out.push_back(std::move(t));
        return out;
      }
      const char c = expr_[pos_];
      if (IsIdentStart(c)) {
        const size_t start = pos_;
        while (pos_ < expr_.size() && IsIdentChar(expr_[pos_])) ++pos_;
        t.type = Tok::kIdentifier;
        t.text = expr_.substr(start, pos_ - start);
      } else if (c == '-' || IsDigit(c)) {
        const size_t start = pos_++;
        while (pos_ < expr_.size() && IsDigit(expr_[pos_])) ++pos_;
        if (pos_ == start + 1 && c == '-') Fail(start, "'-' must be followed by digits");
        t.type = Tok::kNumber;
        t.text = expr_.substr(start, pos_ - start);
      } else if (c == '"') {
        t.type = Tok::kQuotedIdentifier;
        const std::string raw = Until('"');
        try {
          t.text = nlohmann::json::parse(raw).get<std::string>();
        } catch (const nlohmann::json::exception&) {
          Fail(t.position, "the quoted identifier " + raw +
                               " is not a JSON string (escapes: \\\" \\\\ \\/ \\b \\f \\n \\r "
                               "\\t \\uXXXX)");
        }
      } else if (c == '\'') {
        t.type = Tok::kRawString;
        t.value = RawString();
      } else if (c == '`') {
        t.type = Tok::kLiteral;
        std::string raw = Until('`');
        raw = raw.substr(1, raw.size() - 2);
        std::string text;
        for (size_t i = 0; i < raw.size(); ++i) {
          if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '`') continue;
          text.push_back(raw[i]);
        }
        try {
          t.value = nlohmann::json::parse(text);
        } catch (const nlohmann::json::exception&) {
          Fail(t.position, "the literal `" + text + "` is not JSON");
        }
        NumbersToDoubles(t.value);
      } else {
        ++pos_;
        const char n = pos_ < expr_.size() ? expr_[pos_] : '\0';
        auto two = [&](char second, Tok both, Tok one) {
          if (n == second) {
            ++pos_;
            return both;
          }
          return one;
        };
        switch (c) {
          case '.':
            t.type = Tok::kDot;
            break;
          case '*':
            t.type = Tok::kStar;
            break;
          case ',':
            t.type = Tok::kComma;
            break;
          case ':':
            t.type = Tok::kColon;
            break;
          case '{':
            t.type = Tok::kLbrace;
            break;
          case '}':
            t.type = Tok::kRbrace;
            break;
          case ']':
            t.type = Tok::kRbracket;
            break;
          case '(':
            t.type = Tok::kLparen;
            break;
          case ')':
            t.type = Tok::kRparen;
            break;
          case '@':
            t.type = Tok::kCurrent;
            break;
          case '[':
            t.type = n == '?' ? Tok::kFilter : n == ']' ? Tok::kFlatten : Tok::kLbracket;
            if (t.type != Tok::kLbracket) ++pos_;
            break;
          case '|':
            t.type = two('|', Tok::kOr, Tok::kPipe);
            break;
          case '<':
            t.type = two('=', Tok::kLte, Tok::kLt);
            break;
          case '>':
            t.type = two('=', Tok::kGte, Tok::kGt);
            break;
          case '!':
            t.type = two('=', Tok::kNe, Tok::kNot);
            break;
          case '&':
            t.type = two('&', Tok::kAnd, Tok::kExpref);
            break;
          case '=':
            if (n != '=') Fail(t.position, "'=' is not an operator; compare with '=='");
            ++pos_;
            t.type = Tok::kEq;
            break;
          default:
            Fail(t.position, "the character '" + std::string(1, c) + "' is not part of JMESPath");
        }
      }
      out.push_back(std::move(t));
    }
  }

 private:
  [[noreturn]] void Fail(size_t at, const std::string& what) const {
    throw ConfigError(ErrorPrefix(expr_) + "at position " + std::to_string(at) + ": " + what);
  }

  // From the opening delimiter at pos_ to the closing one, both included; a backslash escapes
  // the next character.
  std::string Until(char close) {
    const size_t start = pos_++;
    while (pos_ < expr_.size() && expr_[pos_] != close) {
      if (expr_[pos_] == '\\' && pos_ + 1 < expr_.size()) ++pos_;
      ++pos_;
    }
    if (pos_ >= expr_.size()) {
      Fail(start, std::string("the ") + close + " opened here is not closed");
    }
    ++pos_;
    return std::string(expr_.substr(start, pos_ - start));
  }

  // 'text': only \' is an escape.
  std::string RawString() {
    const size_t start = pos_++;
    std::string out;
    while (pos_ < expr_.size() && expr_[pos_] != '\'') {
      if (expr_[pos_] == '\\' && pos_ + 1 < expr_.size() && expr_[pos_ + 1] == '\'') ++pos_;
      out.push_back(expr_[pos_++]);
    }
    if (pos_ >= expr_.size()) Fail(start, "the ' opened here is not closed");
    ++pos_;
    return out;
  }

  std::string_view expr_;
  size_t pos_ = 0;
};

}  // namespace

std::string_view Describe(Tok type) {
  switch (type) {
    case Tok::kEof:
      return "the end";
    case Tok::kIdentifier:
      return "an identifier";
    case Tok::kQuotedIdentifier:
      return "a quoted identifier";
    case Tok::kNumber:
      return "a number";
    case Tok::kLiteral:
      return "a `literal`";
    case Tok::kRawString:
      return "a 'string'";
    case Tok::kDot:
      return "'.'";
    case Tok::kStar:
      return "'*'";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kLbrace:
      return "'{'";
    case Tok::kRbrace:
      return "'}'";
    case Tok::kLbracket:
      return "'['";
    case Tok::kRbracket:
      return "']'";
    case Tok::kLparen:
      return "'('";
    case Tok::kRparen:
      return "')'";
    case Tok::kCurrent:
      return "'@'";
    case Tok::kFilter:
      return "'[?'";
    case Tok::kFlatten:
      return "'[]'";
    case Tok::kPipe:
      return "'|'";
    case Tok::kOr:
      return "'||'";
    case Tok::kAnd:
      return "'&&'";
    case Tok::kNot:
      return "'!'";
    case Tok::kExpref:
      return "'&'";
    case Tok::kLt:
      return "'<'";
    case Tok::kLte:
      return "'<='";
    case Tok::kGt:
      return "'>'";
    case Tok::kGte:
      return "'>='";
    case Tok::kEq:
      return "'=='";
    case Tok::kNe:
      return "'!='";
  }
  return "?";
}

std::vector<Token> Tokenize(std::string_view expression) { return Lexer(expression).Run(); }

std::string ErrorPrefix(std::string_view expression) {
  return "invalid JMESPath expression \"" + std::string(expression) + "\": ";
}

void NumbersToDoubles(nlohmann::json& value) {
  if (value.is_number_integer()) {
    value = value.get<double>();
  } else if (value.is_structured()) {
    for (auto& child : value) NumbersToDoubles(child);
  }
}

}  // namespace skald::stages::jmes
