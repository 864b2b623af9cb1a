// Fuzz target: LogQL stream selectors with line filters (the match stage's `selector`).
//
// Input: line 1 is the selector, the lines after it are log lines to filter.
// Checks: a refusal is a ConfigError with a message; a parsed selector names valid label names,
// has a compiled regex exactly where its operator is a regex one, and matches label sets and
// lines without failing.
#include <cstdint>
#include <map>
#include <string>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/entry.h"
#include "pipeline_stages/logql_selector.h"
#include "tests/fuzz/fuzz_support.h"

using skald::stages::LogqlSelector;

namespace {

bool IsRegexOp(LogqlSelector::Op op) {
  return op == LogqlSelector::Op::kRegexMatch || op == LogqlSelector::Op::kRegexNoMatch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [selector_text, rest] = skald::fuzz::FirstLine(skald::fuzz::AsView(data, size));
  LogqlSelector selector;
  try {
    selector = LogqlSelector::Parse(selector_text);
  } catch (const skald::stages::ConfigError& e) {
    FUZZ_CHECK(e.what()[0] != '\0');
    return 0;
  }
  for (const LogqlSelector::LabelMatcher& m : selector.label_matchers()) {
    FUZZ_CHECK(skald::stages::IsValidLabelName(m.name));
    FUZZ_CHECK(IsRegexOp(m.op) == (m.regex != nullptr));
  }
  for (const LogqlSelector::LineFilter& f : selector.line_filters()) {
    FUZZ_CHECK(IsRegexOp(f.op) == (f.regex != nullptr));
  }

  // Label sets: the usual ones, none, and the values of the selector's own matchers (so that
  // equality matchers can match).
  std::map<std::string, std::string> own;
  for (const LogqlSelector::LabelMatcher& m : selector.label_matchers()) own[m.name] = m.value;
  const std::map<std::string, std::string> sets[] = {
      {{"job", "fuzz"}, {"level", "error"}, {"source", "stdout"}}, {}, own};
  for (const auto& labels : sets) {
    (void)selector.MatchesLabels([&](std::string_view name) -> std::optional<std::string_view> {
      auto it = labels.find(std::string(name));
      if (it == labels.end()) return std::nullopt;
      return std::string_view(it->second);
    });
  }
  for (std::string_view line : skald::fuzz::SplitLines(rest)) (void)selector.MatchesLine(line);
  for (const std::string& line : skald::fuzz::SampleLines()) (void)selector.MatchesLine(line);
  // A filter of `|= "x"` accepts a line that is exactly x.
  for (const LogqlSelector::LineFilter& f : selector.line_filters()) {
    if (selector.line_filters().size() == 1 && f.op == LogqlSelector::Op::kEqual) {
      FUZZ_CHECK(selector.MatchesLine(f.value));
    }
  }
  return 0;
}
