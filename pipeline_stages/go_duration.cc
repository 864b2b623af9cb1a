#include "pipeline_stages/go_duration.h"

namespace skald::stages {
namespace {

constexpr uint64_t kOverflow = uint64_t{1} << 63;

// Go's leadingInt: [0-9]* as an integer; false past 1<<63.
bool LeadingInt(std::string_view& s, uint64_t& x) {
  x = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (x > kOverflow / 10) return false;
    x = x * 10 + static_cast<uint64_t>(s[i] - '0');
    if (x > kOverflow) return false;
  }
  s.remove_prefix(i);
  return true;
}

// Go's leadingFraction: [0-9]* as x / scale; digits past int64's precision are read and
// dropped.
void LeadingFraction(std::string_view& s, uint64_t& x, double& scale) {
  x = 0;
  scale = 1;
  bool overflow = false;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (overflow) continue;
    if (x > (kOverflow - 1) / 10) {
      overflow = true;
      continue;
    }
    const uint64_t y = x * 10 + static_cast<uint64_t>(s[i] - '0');
    if (y > kOverflow) {
      overflow = true;
      continue;
    }
    x = y;
    scale *= 10;
  }
  s.remove_prefix(i);
}

uint64_t UnitNs(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\xC2\xB5s" || u == "\xCE\xBCs") return 1'000;  // U+00B5, U+03BC
  if (u == "ms") return 1'000'000;
  if (u == "s") return 1'000'000'000;
  if (u == "m") return 60'000'000'000;
  if (u == "h") return 3'600'000'000'000;
  return 0;
}

}  // namespace

std::optional<int64_t> ParseGoDuration(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  uint64_t d = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return std::nullopt;
    const size_t before_int = s.size();
    uint64_t v = 0;
    if (!LeadingInt(s, v)) return std::nullopt;
    const bool pre = s.size() != before_int;
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      const size_t before_fraction = s.size();
      LeadingFraction(s, f, scale);
      post = s.size() != before_fraction;
    }
    if (!pre && !post) return std::nullopt;  // no digits: ".s"
    size_t i = 0;
    while (i < s.size() && s[i] != '.' && !(s[i] >= '0' && s[i] <= '9')) ++i;
    if (i == 0) return std::nullopt;  // no unit
    const uint64_t unit = UnitNs(s.substr(0, i));
    s.remove_prefix(i);
    if (unit == 0) return std::nullopt;
    if (v > kOverflow / unit) return std::nullopt;
    v *= unit;
    if (f > 0) {
      // As Go: float64 keeps fractions of hours accurate to the nanosecond.
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
      if (v > kOverflow) return std::nullopt;
    }
    d += v;
    if (d > kOverflow) return std::nullopt;
  }
  if (neg) return static_cast<int64_t>(-d);  // 1<<63 wraps to INT64_MIN
  if (d > kOverflow - 1) return std::nullopt;
  return static_cast<int64_t>(d);
}

}  // namespace skald::stages
