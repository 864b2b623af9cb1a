#include "pipeline_stages/jmespath.h"

#include <nlohmann/json.hpp>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/go/go_string.h"

namespace skald::stages {
namespace {

constexpr std::string_view kSupported =
    "supported: identifiers (a), quoted identifiers (\"user-agent\"), dotted paths (a.b) and "
    "indexes ([0], [-1]), e.g. a.b[0].\"c-d\"";

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class PathParser {
 public:
  explicit PathParser(std::string_view expr) : expr_(expr) {}

  JmesPath Parse() {
    SkipSpace();
    if (pos_ == expr_.size()) Fail("is empty; name a key", "");
    if (Peek() == '[') {
      ParseIndexes();
    } else {
      ParseSegment();
    }
    while (true) {
      SkipSpace();
      if (pos_ == expr_.size()) break;
      if (Peek() != '.') Unexpected("expected '.' or '[' after a key");
      ++pos_;
      SkipSpace();
      if (pos_ == expr_.size()) Fail("ends with '.'; a key must follow", "");
      ParseSegment();
    }
    return std::move(steps_);
  }

 private:
  char Peek() const { return expr_[pos_]; }
  void SkipSpace() {
    while (pos_ < expr_.size() && IsSpace(expr_[pos_])) ++pos_;
  }

  [[noreturn]] void Fail(std::string_view what, std::string_view hint) const {
    std::string msg = "invalid JMESPath expression \"" + std::string(expr_) + "\": ";
    msg.append(what);
    if (!hint.empty()) msg.append("; ").append(hint);
    msg.append("; ").append(kSupported);
    throw ConfigError(msg);
  }

  // Names what sits at pos_ and why it cannot be there.
  [[noreturn]] void Unexpected(std::string_view expected) const {
    const char c = Peek();
    std::string at = "'" + std::string(1, c) + "' at position " + std::to_string(pos_);
    std::string_view hint;
    switch (c) {
      case '*':
        hint = "projections ([*], *) are not supported";
        break;
      case '|':
        hint = "pipes and || are not supported";
        break;
      case '&':
        hint = "&& is not supported";
        break;
      case '(':
        hint = "functions are not supported";
        break;
      case '[':
        hint =
            "an index follows a key directly (a[0]); multiselect lists (a.[b, c]) are not "
            "supported";
        break;
      case '{':
        hint = "multiselect hashes are not supported";
        break;
      case '@':
        hint = "the current node @ is not supported";
        break;
      case '`':
      case '\'':
        hint = "literals are not supported; quote keys with double quotes";
        break;
      case '!':
      case '<':
      case '>':
      case '=':
        hint = "comparisons are not supported";
        break;
      default:
        break;
    }
    Fail(at + " is unexpected: " + std::string(expected), hint);
  }

  // key or "quoted key", then any indexes.
  void ParseSegment() {
    const char c = Peek();
    if (c == '"') {
      ParseQuoted();
    } else if (IsIdentStart(c)) {
      const size_t start = pos_;
      while (pos_ < expr_.size() && IsIdentChar(expr_[pos_])) ++pos_;
      if (pos_ < expr_.size() && expr_[pos_] == '(') {
        Fail("function " + std::string(expr_.substr(start, pos_ - start)) + "() at position " +
                 std::to_string(start) + " is not supported",
             "");
      }
      if (pos_ < expr_.size() && expr_[pos_] == '-') {
        size_t end = pos_;
        while (end < expr_.size() && (IsIdentChar(expr_[end]) || expr_[end] == '-')) ++end;
        const std::string key(expr_.substr(start, end - start));
        Fail("'-' at position " + std::to_string(pos_) + " is not allowed in an unquoted key",
             "quote the key: \"" + key + "\"");
      }
      steps_.push_back(JmesPathStep::Field(std::string(expr_.substr(start, pos_ - start))));
    } else {
      Unexpected("expected a key");
    }
    SkipSpace();
    if (pos_ < expr_.size() && Peek() == '[') ParseIndexes();
  }

  // A JSON string: JMESPath quoted identifiers use JSON escapes.
  void ParseQuoted() {
    const size_t start = pos_;
    std::string key;
    ++pos_;
    while (true) {
      if (pos_ >= expr_.size()) {
        Fail("quoted key at position " + std::to_string(start) + " has no closing '\"'", "");
      }
      const char c = expr_[pos_++];
      if (c == '"') break;
      if (c != '\\') {
        key.push_back(c);
        continue;
      }
      if (pos_ >= expr_.size()) continue;  // reported as unclosed above
      const char e = expr_[pos_++];
      switch (e) {
        case '"':
          key.push_back('"');
          break;
        case '\\':
          key.push_back('\\');
          break;
        case '/':
          key.push_back('/');
          break;
        case 'b':
          key.push_back('\b');
          break;
        case 'f':
          key.push_back('\f');
          break;
        case 'n':
          key.push_back('\n');
          break;
        case 'r':
          key.push_back('\r');
          break;
        case 't':
          key.push_back('\t');
          break;
        case 'u':
          key.append(ParseUnicodeEscape());
          break;
        default:
          Fail("invalid escape \\" + std::string(1, e) + " at position " + std::to_string(pos_ - 2),
               "quoted keys use JSON escapes (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
      }
    }
    steps_.push_back(JmesPathStep::Field(std::move(key)));
  }

  std::string ParseUnicodeEscape() {
    auto hex4 = [&](size_t at) -> int {
      if (at + 4 > expr_.size()) return -1;
      int v = 0;
      for (size_t i = at; i < at + 4; ++i) {
        const char c = expr_[i];
        int d = (c >= '0' && c <= '9')   ? c - '0'
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                         : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
      }
      return v;
    };
    const int hi = hex4(pos_);
    if (hi < 0) {
      Fail("invalid \\u escape at position " + std::to_string(pos_ - 2),
           "write \\u and 4 hex digits");
    }
    pos_ += 4;
    char32_t code = hi;
    if (hi >= 0xD800 && hi <= 0xDBFF && expr_.substr(pos_, 2) == "\\u") {
      const int lo = hex4(pos_ + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
        pos_ += 6;
      }
    }
    std::string out;
    AppendRune(code, &out);
    return out;
  }

  void ParseIndexes() {
    while (pos_ < expr_.size() && Peek() == '[') {
      const size_t open = pos_;
      ++pos_;
      SkipSpace();
      const size_t num_start = pos_;
      if (pos_ < expr_.size() && Peek() == '-') ++pos_;
      const size_t digits_start = pos_;
      while (pos_ < expr_.size() && Peek() >= '0' && Peek() <= '9') ++pos_;
      SkipSpace();
      if (pos_ == digits_start || pos_ >= expr_.size() || Peek() != ']') {
        const size_t close = expr_.find(']', open);
        const std::string bracket(close == std::string_view::npos
                                      ? expr_.substr(open)
                                      : expr_.substr(open, close - open + 1));
        std::string_view hint;
        if (bracket == "[]" || bracket.find('*') != std::string::npos) {
          hint = "projections ([*], []) are not supported";
        } else if (bracket.find('?') != std::string::npos) {
          hint = "filters ([?...]) are not supported";
        } else if (bracket.find(':') != std::string::npos) {
          hint = "slices ([a:b]) are not supported";
        } else if (close == std::string_view::npos) {
          hint = "close the index with ']'";
        }
        Fail(bracket + " at position " + std::to_string(open) + " is not an index", hint);
      }
      const std::string_view num = expr_.substr(num_start, pos_ - num_start);
      int64_t value = 0;
      bool negative = false;
      for (char c : num) {
        if (c == '-') {
          negative = true;
        } else if (c >= '0' && c <= '9') {
          if (value > (INT64_MAX - 9) / 10)
            Fail("index at position " + std::to_string(open) + " is too large", "");
          value = value * 10 + (c - '0');
        }
      }
      steps_.push_back(JmesPathStep::Index(negative ? -value : value));
      ++pos_;  // ']'
      SkipSpace();
    }
  }

  std::string_view expr_;
  size_t pos_ = 0;
  JmesPath steps_;
};

}  // namespace

JmesPath ParseJmesPath(std::string_view expression) { return PathParser(expression).Parse(); }

const nlohmann::json* EvaluateJmesPath(const JmesPath& path, const nlohmann::json& document) {
  const nlohmann::json* node = &document;
  for (const JmesPathStep& step : path) {
    if (step.kind == JmesPathStep::Kind::kField) {
      if (!node->is_object()) return nullptr;
      auto it = node->find(step.field);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else {
      if (!node->is_array()) return nullptr;
      const auto size = static_cast<int64_t>(node->size());
      const int64_t i = step.index < 0 ? size + step.index : step.index;
      if (i < 0 || i >= size) return nullptr;
      node = &(*node)[static_cast<size_t>(i)];
    }
  }
  return node;
}

}  // namespace skald::stages
