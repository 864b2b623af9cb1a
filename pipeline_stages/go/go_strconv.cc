#include "pipeline_stages/go/go_strconv.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace skald::stages {
namespace {

// strconv's underscoreOK: underscores only between digits (a base prefix counts as one).
bool UnderscoresOk(std::string_view s) {
  char saw = '^';
  size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    if (p == 'b' || p == 'o' || p == 'x') {
      i = 2;
      saw = '0';
      hex = p == 'x';
    }
  }
  for (; i < s.size(); ++i) {
    const char c = s[i], l = static_cast<char>(c | 0x20);
    if ((c >= '0' && c <= '9') || (hex && l >= 'a' && l <= 'f')) {
      saw = '0';
    } else if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
    } else {
      if (saw == '_') return false;
      saw = '!';
    }
  }
  return saw != '_';
}

std::string WithoutUnderscores(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out.push_back(c);
  }
  return out;
}

}  // namespace

bool ParseGoInt(std::string_view text, int64_t* out) {
  if (text.find('_') != std::string_view::npos && !UnderscoresOk(text)) return false;
  const std::string clean = WithoutUnderscores(text);
  std::string_view s = clean;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 1 && s[0] == '0') {
    const char p = static_cast<char>(s[1] | 0x20);
    if (p == 'x') {
      base = 16, s.remove_prefix(2);
    } else if (p == 'o') {
      base = 8, s.remove_prefix(2);
    } else if (p == 'b') {
      base = 2, s.remove_prefix(2);
    } else {
      base = 8, s.remove_prefix(1);
    }
  }
  if (s.empty()) return false;
  uint64_t u = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), u, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  if (u > (negative ? uint64_t{1} << 63 : static_cast<uint64_t>(INT64_MAX))) return false;
  *out = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  return true;
}

bool ParseGoFloat(std::string_view s, double* out) {
  if (s.empty()) return false;
  std::string_view body = s;
  const bool signed_text = body[0] == '+' || body[0] == '-';
  if (signed_text) body.remove_prefix(1);
  auto lower_equals = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if ((a[i] | 0x20) != b[i]) return false;
    }
    return true;
  };
  if (lower_equals(body, "inf") || lower_equals(body, "infinity")) {
    *out = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (lower_equals(body, "nan")) {
    if (signed_text) return false;  // Go's sign goes with infinity only
    *out = std::nan("");
    return true;
  }
  const bool hex = body.size() > 1 && body[0] == '0' && (body[1] | 0x20) == 'x';
  // A hexadecimal mantissa needs its p exponent in Go (strtod would take "0x1" as 1).
  if (hex && body.find_first_of("pP") == std::string_view::npos) return false;
  if (s.find('_') != std::string_view::npos && !UnderscoresOk(s)) return false;
  std::string text;
  for (char c : s) {
    const bool ok = (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == '_' ||
                    (c | 0x20) == 'e' ||
                    (hex && ((c | 0x20) == 'x' || (c | 0x20) == 'p' ||
                             ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')));
    if (!ok) return false;
    if (c == '_') continue;
    text.push_back(c);
  }
  // strtod rounds as Go does, and gives 0 or a subnormal below float64's range (no error in Go).
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  if (std::isinf(d)) return false;
  *out = d;
  return true;
}

}  // namespace skald::stages
