// Go's time.Duration text: time.ParseDuration and Duration.String, for every duration a user
// writes (stage fields, template functions, the plugin's --log-opt values).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace skald::stages {

// time.ParseDuration: "300ms", "1.5h", "2h45m", "1us"/"1µs", "-1s", "0". Nanoseconds, or
// nullopt when Go refuses the text (no unit, an unknown unit, no digits, out of the int64
// range). A fraction is converted as Go does: truncated to whole nanoseconds, never rounded
// ("1.5ns" is 1ns).
std::optional<int64_t> ParseGoDuration(std::string_view text);

// Duration.String(): "0s", "1.5µs", "300ms", "1h2m3.5s", "-2s".
std::string FormatGoDuration(int64_t nanoseconds);

}  // namespace skald::stages
