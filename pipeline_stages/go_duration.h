// Go's time.ParseDuration, exactly: "300ms", "-1.5h", "2h45m", ".5s", "1us"/"1µs"/"1μs", "0".
//
// Durations come from the settings and stage configs users copy from Go programs (Promtail,
// Grafana's driver), so they parse to the nanosecond Go gives. Integer arithmetic throughout,
// except the one float64 product Go itself uses for a fraction (a double multiplication,
// rounded the same way on every IEEE 754 machine): the result does not depend on the
// architecture (long double is 80-bit on x86-64 and 128-bit on arm64).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace skald::stages {

// Nanoseconds, or nullopt where Go returns an error (no unit, an unknown unit, no digits,
// outside int64).
std::optional<int64_t> ParseGoDuration(std::string_view s);

}  // namespace skald::stages
