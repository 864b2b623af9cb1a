#include "pipeline_stages/go/go_duration.h"

namespace skald::stages {
namespace {

constexpr uint64_t kMaxMagnitude = UINT64_C(1) << 63;  // |INT64_MIN|

// Go's leadingInt: the leading [0-9]* of `s`; false on overflow past 1<<63.
bool LeadingInt(std::string_view& s, uint64_t* x) {
  std::size_t i = 0;
  *x = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (*x > kMaxMagnitude / 10) return false;
    *x = *x * 10 + static_cast<uint64_t>(s[i] - '0');
    if (*x > kMaxMagnitude) return false;
  }
  s.remove_prefix(i);
  return true;
}

// Go's leadingFraction: the leading [0-9]* of `s` as x / scale; digits past what fits in
// 63 bits are read and ignored.
void LeadingFraction(std::string_view& s, uint64_t* x, double* scale) {
  std::size_t i = 0;
  *x = 0;
  *scale = 1;
  bool overflow = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (overflow) continue;
    if (*x > (kMaxMagnitude - 1) / 10) {
      overflow = true;
      continue;
    }
    const uint64_t y = *x * 10 + static_cast<uint64_t>(s[i] - '0');
    if (y > kMaxMagnitude) {
      overflow = true;
      continue;
    }
    *x = y;
    *scale *= 10;
  }
  s.remove_prefix(i);
}

std::optional<uint64_t> UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
    return 1'000;  // µ (U+00B5, U+03BC)
  if (unit == "ms") return 1'000'000;
  if (unit == "s") return 1'000'000'000;
  if (unit == "m") return 60 * UINT64_C(1'000'000'000);
  if (unit == "h") return 3600 * UINT64_C(1'000'000'000);
  return std::nullopt;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<int64_t> ParseGoDuration(std::string_view s) {
  // [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || IsDigit(s[0]))) return std::nullopt;
    const std::size_t before = s.size();
    uint64_t v = 0;
    if (!LeadingInt(s, &v)) return std::nullopt;
    const bool pre = s.size() != before;
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      const std::size_t at = s.size();
      LeadingFraction(s, &f, &scale);
      post = s.size() != at;
    }
    if (!pre && !post) return std::nullopt;  // ".s"
    std::size_t i = 0;
    while (i < s.size() && s[i] != '.' && !IsDigit(s[i])) ++i;
    if (i == 0) return std::nullopt;  // a missing unit
    const std::optional<uint64_t> unit = UnitNanos(s.substr(0, i));
    s.remove_prefix(i);
    if (!unit) return std::nullopt;
    if (v > kMaxMagnitude / *unit) return std::nullopt;
    v *= *unit;
    if (f > 0) {
      // float64, as Go: nanosecond-exact for fractions of hours.
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(*unit) / scale));
      if (v > kMaxMagnitude) return std::nullopt;
    }
    total += v;
    if (total > kMaxMagnitude) return std::nullopt;
  }
  if (negative) return static_cast<int64_t>(0 - total);
  if (total > kMaxMagnitude - 1) return std::nullopt;
  return static_cast<int64_t>(total);
}

std::string FormatGoDuration(int64_t d) {
  if (d == 0) return "0s";
  const bool negative = d < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(d) : static_cast<uint64_t>(d);
  std::string out;
  if (u < 1000000000) {
    // Under a second: ns, µs or ms with a fraction.
    int prec = 0;
    std::string unit;
    if (u < 1000) {
      unit = "ns";
    } else if (u < 1000000) {
      prec = 3;
      unit = "\xc2\xb5s";
    } else {
      prec = 6;
      unit = "ms";
    }
    std::string digits = std::to_string(u);
    std::string frac;
    if (prec > 0) {
      while (static_cast<int>(digits.size()) <= prec) digits.insert(0, "0");
      frac = digits.substr(digits.size() - prec);
      digits.resize(digits.size() - prec);
      while (!frac.empty() && frac.back() == '0') frac.pop_back();
    }
    out = digits + (frac.empty() ? "" : "." + frac) + unit;
  } else {
    std::string frac = std::to_string(u % 1000000000);
    frac.insert(0, 9 - frac.size(), '0');
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    u /= 1000000000;
    const uint64_t seconds = u % 60;
    u /= 60;
    std::string tail = std::to_string(seconds) + (frac.empty() ? "" : "." + frac) + "s";
    if (u > 0) {
      const uint64_t minutes = u % 60;
      u /= 60;
      tail = std::to_string(minutes) + "m" + tail;
      if (u > 0) tail = std::to_string(u) + "h" + tail;
    }
    out = tail;
  }
  return negative ? "-" + out : out;
}

}  // namespace skald::stages
