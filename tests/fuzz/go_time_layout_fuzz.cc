// Fuzz target: Go time layouts (the timestamp stage's `format`) compiled and used to parse.
//
// Input: line 1 is the format (a Go layout or a named format), line 2 the location (an IANA
// zone name; empty: UTC), the lines after it the texts to parse.
// Checks: a refusal is a ConfigError with a message; parsing never throws, and gives the same
// answer twice; a layout without a year takes the year from "now" (two different nows may
// only differ by whole years' worth of seconds near new year, so they are not compared).
#include <cstdint>
#include <string>

#include "pipeline_stages/common/config_error.h"
#include "pipeline_stages/go/go_time_layout.h"
#include "tests/fuzz/fuzz_support.h"

using skald::stages::GoTimeLayout;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string_view> lines = skald::fuzz::SplitLines(skald::fuzz::AsView(data, size));
  const std::string_view format = lines[0];
  const std::string_view location = lines.size() > 1 ? lines[1] : std::string_view();
  GoTimeLayout layout;
  try {
    layout = GoTimeLayout::Compile(format, location);
  } catch (const skald::stages::ConfigError& e) {
    FUZZ_CHECK(e.what()[0] != '\0');
    return 0;
  }
  constexpr int64_t kNow = 1'714'557'600'000'000'000;  // 2024-05-01T10:00:00Z
  for (size_t i = 2; i < lines.size(); ++i) {
    const std::optional<int64_t> t = layout.Parse(lines[i], kNow);
    FUZZ_CHECK(layout.Parse(lines[i], kNow) == t);
    (void)layout.Parse(lines[i], int64_t{0});
    (void)layout.Parse(lines[i], INT64_MAX);
    (void)layout.Parse(lines[i], INT64_MIN);
  }
  // The format itself as text: a layout matches its own reference time in many cases.
  (void)layout.Parse(format, kNow);
  return 0;
}
