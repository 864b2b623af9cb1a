// LogQL stream selectors with line filters, as the match stage's `selector` uses them.
//
//   {app="api", env!="dev", level=~"warn|error", pod!~"canary-.*"} |= "timeout" != "retry"
//
// Label regexes are fully anchored and their `.` matches newlines (Prometheus compiles
// `^(?s:re)$`); a label the entry lacks compares as "". Line filters: `|=` contains, `!=` does
// not contain, `|~` regex matches somewhere, `!~` regex matches nowhere (`.` stops at newlines,
// as in Go). Strings are Go literals: "double-quoted" with escapes, or `raw` (which Promtail's
// parser rejects; accepting them is a superset). Everything is compiled by Parse; matching
// never fails. Checked against Promtail's own logql package on generated selectors.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {

class LogqlSelector {
 public:
  enum class Op { kEqual, kNotEqual, kRegexMatch, kRegexNoMatch };

  struct LabelMatcher {
    std::string name;
    Op op;
    std::string value;           // the literal or the regex source
    std::shared_ptr<RE2> regex;  // for kRegexMatch / kRegexNoMatch
  };

  struct LineFilter {
    Op op;  // kEqual is |=, kNotEqual is !=, kRegexMatch is |~, kRegexNoMatch is !~
    std::string value;
    std::shared_ptr<RE2> regex;
  };

  // Parses `selector`. Throws ConfigError quoting the selector and pointing at the problem
  // (position and what was expected) for any syntax error, bad label name or bad regex.
  static LogqlSelector Parse(std::string_view selector);

  // True when every label matcher accepts the entry's labels. `lookup(name)` returns the value of
  // label `name` as something convertible to std::optional<std::string_view> (nullopt: absent).
  template <typename Lookup>
  bool MatchesLabels(const Lookup& lookup) const {
    for (const LabelMatcher& m : matchers_) {
      const std::optional<std::string_view> value = lookup(std::string_view(m.name));
      if (!Accepts(m, value.value_or(std::string_view()))) return false;
    }
    return true;
  }

  // True when every line filter accepts `line` (always true without line filters).
  bool MatchesLine(std::string_view line) const;

  const std::vector<LabelMatcher>& label_matchers() const { return matchers_; }
  const std::vector<LineFilter>& line_filters() const { return filters_; }

 private:
  static bool Accepts(const LabelMatcher& m, std::string_view value);

  std::vector<LabelMatcher> matchers_;
  std::vector<LineFilter> filters_;
};

}  // namespace skald::stages
