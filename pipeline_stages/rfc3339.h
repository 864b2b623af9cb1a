// ParseRfc3339: "2019-04-30T02:12:41.8443515Z" or "...+02:00" to Unix nanoseconds (the
// RFC3339Nano records of Docker's json-file and of CRI). Kept apart from the Go layout parser
// because the docker and cri stages need only this.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace skald::stages {

std::optional<int64_t> ParseRfc3339(std::string_view s);
// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);

}  // namespace skald::stages
