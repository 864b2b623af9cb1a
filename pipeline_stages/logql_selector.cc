#include "pipeline_stages/logql_selector.h"

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_string.h"

namespace skald::stages {
namespace {

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class SelectorParser {
 public:
  explicit SelectorParser(std::string_view text) : text_(text) {}

  void Parse(std::vector<LogqlSelector::LabelMatcher>* matchers,
             std::vector<LogqlSelector::LineFilter>* filters) {
    SkipSpace();
    if (AtEnd()) Fail("is empty", "a stream selector such as {app=\"api\"}");
    if (text_[pos_] != '{') Fail("must start with '{'", "a stream selector such as {app=\"api\"}");
    ++pos_;
    SkipSpace();
    if (!AtEnd() && text_[pos_] == '}') {
      Fail("has no label matcher", "at least one matcher such as {app=\"api\"}");
    }
    while (true) {
      matchers->push_back(ParseMatcher());
      SkipSpace();
      if (AtEnd()) Fail("ends before its closing '}'", "',' or '}'");
      if (text_[pos_] == '}') {
        ++pos_;
        break;
      }
      if (text_[pos_] != ',') Fail("expected ',' or '}' after a label matcher", "");
      ++pos_;
      SkipSpace();
    }
    while (true) {
      SkipSpace();
      if (AtEnd()) break;
      filters->push_back(ParseFilter());
    }
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(text_[pos_])) ++pos_;
  }

  [[noreturn]] void Fail(std::string_view what, std::string_view expected) const {
    std::string msg = "invalid selector '" + std::string(text_) + "': ";
    msg.append(what);
    if (AtEnd()) {
      msg.append(" at the end");
    } else {
      msg.append(" at position ").append(std::to_string(pos_));
      msg.append(" (near '").append(text_.substr(pos_, 12)).append("')");
    }
    if (!expected.empty()) msg.append("; expected ").append(expected);
    throw ConfigError(msg);
  }

  std::string ParseString(std::string_view what) {
    if (AtEnd() || (text_[pos_] != '"' && text_[pos_] != '`')) {
      Fail(std::string(what) + " must be a quoted string",
           "\"double-quoted\" (Go escapes) or `raw` text");
    }
    std::string value, error;
    const size_t n = ReadGoStringLiteral(text_.substr(pos_), &value, &error);
    if (n == 0) Fail(error, "");
    pos_ += n;
    return value;
  }

  std::shared_ptr<RE2> CompileRegex(const std::string& pattern, size_t at, bool dot_nl) {
    std::string error;
    std::shared_ptr<RE2> re = CompileGoRegexp(pattern, &error, dot_nl);
    if (!re) {
      pos_ = at;
      Fail("invalid regex \"" + pattern + "\" (" + error + ")", "an RE2 regular expression");
    }
    return re;
  }

  LogqlSelector::LabelMatcher ParseMatcher() {
    LogqlSelector::LabelMatcher m;
    const size_t start = pos_;
    if (AtEnd() || !IsNameStart(text_[pos_])) {
      Fail("expected a label name", "a name matching [a-zA-Z_][a-zA-Z0-9_]*");
    }
    while (!AtEnd() && IsNameChar(text_[pos_])) ++pos_;
    m.name = std::string(text_.substr(start, pos_ - start));
    SkipSpace();
    const std::string_view op = text_.substr(pos_, 2);
    if (op == "=~") {
      m.op = LogqlSelector::Op::kRegexMatch;
      pos_ += 2;
    } else if (op == "!~") {
      m.op = LogqlSelector::Op::kRegexNoMatch;
      pos_ += 2;
    } else if (op == "!=") {
      m.op = LogqlSelector::Op::kNotEqual;
      pos_ += 2;
    } else if (op.substr(0, 1) == "=") {
      m.op = LogqlSelector::Op::kEqual;
      pos_ += 1;
    } else {
      Fail("expected an operator after label " + m.name, "=, !=, =~ or !~");
    }
    SkipSpace();
    const size_t value_at = pos_;
    m.value = ParseString("the value of label " + m.name);
    if (m.op == LogqlSelector::Op::kRegexMatch || m.op == LogqlSelector::Op::kRegexNoMatch) {
      m.regex = CompileRegex(m.value, value_at, /*dot_nl=*/true);
    }
    return m;
  }

  LogqlSelector::LineFilter ParseFilter() {
    LogqlSelector::LineFilter f;
    const std::string_view op = text_.substr(pos_, 2);
    if (op == "|=") {
      f.op = LogqlSelector::Op::kEqual;
    } else if (op == "!=") {
      f.op = LogqlSelector::Op::kNotEqual;
    } else if (op == "|~") {
      f.op = LogqlSelector::Op::kRegexMatch;
    } else if (op == "!~") {
      f.op = LogqlSelector::Op::kRegexNoMatch;
    } else if (op.substr(0, 1) == "|") {
      Fail("only line filters may follow the selector",
           "|= \"text\", != \"text\", |~ \"regex\" or !~ \"regex\" (parsers, label filters and "
           "formatters such as | json are not supported)");
    } else {
      Fail("unexpected text after the selector",
           "a line filter: |= \"text\", != \"text\", |~ \"regex\" or !~ \"regex\"");
    }
    pos_ += 2;
    SkipSpace();
    const size_t value_at = pos_;
    f.value = ParseString("a line filter's argument");
    if (f.op == LogqlSelector::Op::kRegexMatch || f.op == LogqlSelector::Op::kRegexNoMatch) {
      f.regex = CompileRegex(f.value, value_at, /*dot_nl=*/false);
    }
    SkipSpace();
    if (text_.substr(pos_, 3) == "or ") {
      Fail("'or' between line filters is not supported", "one filter per operator");
    }
    return f;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

LogqlSelector LogqlSelector::Parse(std::string_view selector) {
  LogqlSelector s;
  SelectorParser(selector).Parse(&s.matchers_, &s.filters_);
  return s;
}

bool LogqlSelector::Accepts(const LabelMatcher& m, std::string_view value) {
  switch (m.op) {
    case Op::kEqual:
      return value == m.value;
    case Op::kNotEqual:
      return value != m.value;
    case Op::kRegexMatch:
      return GoRegexpMatches(*m.regex, value, RE2::ANCHOR_BOTH);
    case Op::kRegexNoMatch:
      return !GoRegexpMatches(*m.regex, value, RE2::ANCHOR_BOTH);
  }
  return false;
}

bool LogqlSelector::MatchesLine(std::string_view line) const {
  for (const LineFilter& f : filters_) {
    bool ok = false;
    switch (f.op) {
      case Op::kEqual:
        ok = line.find(f.value) != std::string_view::npos;
        break;
      case Op::kNotEqual:
        ok = line.find(f.value) == std::string_view::npos;
        break;
      case Op::kRegexMatch:
        ok = GoRegexpMatches(*f.regex, line);
        break;
      case Op::kRegexNoMatch:
        ok = !GoRegexpMatches(*f.regex, line);
        break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace skald::stages
