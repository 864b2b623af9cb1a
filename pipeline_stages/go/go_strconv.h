// Go's strconv number parsers, as the stages meet them: ParseInt(s, 0, 64) (sprig's toInt and
// the template's int conversions) and ParseFloat(s, 64) (go-jmespath's to_number, sprig's
// toFloat64). Same syntax and the same range errors, so a value Promtail refuses is refused here.
#pragma once

#include <cstdint>
#include <string_view>

namespace skald::stages {

// strconv.ParseInt(s, 0, 64): an optional sign, a base prefix (0x, 0o, 0b, or a leading 0 for
// octal), underscores only between digits; false on bad syntax or beyond int64.
bool ParseGoInt(std::string_view s, int64_t* out);

// strconv.ParseFloat(s, 64): decimal or hexadecimal (which needs its p exponent), an optional
// sign, inf/infinity (signed) and nan (unsigned), underscores between digits; no blanks. Beyond
// float64 is an error (Go's ErrRange); below it is 0 or a subnormal, as Go rounds.
bool ParseGoFloat(std::string_view s, double* out);

}  // namespace skald::stages
