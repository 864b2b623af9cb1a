#include "pipeline_stages/go/go_time_layout.h"

#include <absl/time/civil_time.h>

#include <array>
#include <chrono>
#include <cmath>

#include "pipeline_stages/common/config_error.h"

// The layout scanner and the parser follow Go's time/format.go (nextStdChunk, parse) closely, so
// that the same text is accepted and yields the same instant.

namespace skald::stages {
namespace {

enum Element {
  kNone = 0,
  kLongMonth,
  kMonth,
  kNumMonth,
  kZeroMonth,
  kLongWeekDay,
  kWeekDay,
  kDay,
  kUnderDay,
  kZeroDay,
  kUnderYearDay,
  kZeroYearDay,
  kHour,
  kHour12,
  kZeroHour12,
  kMinute,
  kZeroMinute,
  kSecond,
  kZeroSecond,
  kLongYear,
  kYear,
  kPM,
  kpm,
  kTZ,
  kISO8601TZ,
  kISO8601SecondsTZ,
  kISO8601ShortTZ,
  kISO8601ColonTZ,
  kISO8601ColonSecondsTZ,
  kNumTZ,
  kNumSecondsTz,
  kNumShortTZ,
  kNumColonTZ,
  kNumColonSecondsTZ,
  kFracSecond0,
  kFracSecond9,
};

struct NamedFormat {
  std::string_view name;
  std::string_view layout;
};
constexpr std::array<NamedFormat, 10> kNamedLayouts{{
    {"ANSIC", "Mon Jan _2 15:04:05 2006"},
    {"UnixDate", "Mon Jan _2 15:04:05 MST 2006"},
    {"RubyDate", "Mon Jan 02 15:04:05 -0700 2006"},
    {"RFC822", "02 Jan 06 15:04 MST"},
    {"RFC822Z", "02 Jan 06 15:04 -0700"},
    {"RFC850", "Monday, 02-Jan-06 15:04:05 MST"},
    {"RFC1123", "Mon, 02 Jan 2006 15:04:05 MST"},
    {"RFC1123Z", "Mon, 02 Jan 2006 15:04:05 -0700"},
    {"RFC3339", "2006-01-02T15:04:05Z07:00"},
    {"RFC3339Nano", "2006-01-02T15:04:05.999999999Z07:00"},
}};

constexpr std::array<std::string_view, 12> kLongMonthNames{
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
constexpr std::array<std::string_view, 12> kShortMonthNames{
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kLongDayNames{
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
constexpr std::array<std::string_view, 7> kShortDayNames{"Sun", "Mon", "Tue", "Wed",
                                                         "Thu", "Fri", "Sat"};

bool StartsWithLower(std::string_view s) { return !s.empty() && s[0] >= 'a' && s[0] <= 'z'; }
bool IsDigitAt(std::string_view s, size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; }
bool HasPrefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

struct StdChunk {
  size_t prefix_len;
  int element;
  int frac_digits;
  size_t element_len;
};

// Go's nextStdChunk: the literal prefix, the first reference element and its length.
StdChunk NextStdChunk(std::string_view layout) {
  for (size_t i = 0; i < layout.size(); ++i) {
    const std::string_view rest = layout.substr(i);
    auto at = [&](int element, size_t len) { return StdChunk{i, element, 0, len}; };
    switch (layout[i]) {
      case 'J':
        if (HasPrefix(rest, "Jan")) {
          if (HasPrefix(rest, "January")) return at(kLongMonth, 7);
          if (!StartsWithLower(rest.substr(3))) return at(kMonth, 3);
        }
        break;
      case 'M':
        if (HasPrefix(rest, "Mon")) {
          if (HasPrefix(rest, "Monday")) return at(kLongWeekDay, 6);
          if (!StartsWithLower(rest.substr(3))) return at(kWeekDay, 3);
        }
        if (HasPrefix(rest, "MST")) return at(kTZ, 3);
        break;
      case '0':
        if (rest.size() >= 2 && rest[1] >= '1' && rest[1] <= '6') {
          static constexpr int k0x[] = {kZeroMonth,  kZeroDay,    kZeroHour12,
                                        kZeroMinute, kZeroSecond, kYear};
          return at(k0x[rest[1] - '1'], 2);
        }
        if (HasPrefix(rest, "002")) return at(kZeroYearDay, 3);
        break;
      case '1':
        if (HasPrefix(rest, "15")) return at(kHour, 2);
        return at(kNumMonth, 1);
      case '2':
        if (HasPrefix(rest, "2006")) return at(kLongYear, 4);
        return at(kDay, 1);
      case '_':
        if (HasPrefix(rest, "_2")) {
          // _2006 is a literal _ followed by the long year.
          if (HasPrefix(rest, "_2006")) return StdChunk{i + 1, kLongYear, 0, 4};
          return at(kUnderDay, 2);
        }
        if (HasPrefix(rest, "__2")) return at(kUnderYearDay, 3);
        break;
      case '3':
        return at(kHour12, 1);
      case '4':
        return at(kMinute, 1);
      case '5':
        return at(kSecond, 1);
      case 'P':
        if (HasPrefix(rest, "PM")) return at(kPM, 2);
        break;
      case 'p':
        if (HasPrefix(rest, "pm")) return at(kpm, 2);
        break;
      case '-':
        if (HasPrefix(rest, "-070000")) return at(kNumSecondsTz, 7);
        if (HasPrefix(rest, "-07:00:00")) return at(kNumColonSecondsTZ, 9);
        if (HasPrefix(rest, "-0700")) return at(kNumTZ, 5);
        if (HasPrefix(rest, "-07:00")) return at(kNumColonTZ, 6);
        if (HasPrefix(rest, "-07")) return at(kNumShortTZ, 3);
        break;
      case 'Z':
        if (HasPrefix(rest, "Z070000")) return at(kISO8601SecondsTZ, 7);
        if (HasPrefix(rest, "Z07:00:00")) return at(kISO8601ColonSecondsTZ, 9);
        if (HasPrefix(rest, "Z0700")) return at(kISO8601TZ, 5);
        if (HasPrefix(rest, "Z07:00")) return at(kISO8601ColonTZ, 6);
        if (HasPrefix(rest, "Z07")) return at(kISO8601ShortTZ, 3);
        break;
      case '.':
      case ',':
        // ,000 .000 ,999 .999: fractional seconds, only when no digit follows the run.
        if (rest.size() >= 2 && (rest[1] == '0' || rest[1] == '9')) {
          const char ch = rest[1];
          size_t j = 1;
          while (j < rest.size() && rest[j] == ch) ++j;
          if (!IsDigitAt(rest, j)) {
            return StdChunk{i, ch == '0' ? kFracSecond0 : kFracSecond9, static_cast<int>(j - 1), j};
          }
        }
        break;
      default:
        break;
    }
  }
  return StdChunk{layout.size(), kNone, 0, 0};
}

bool MatchFold(std::string_view value, std::string_view name) {
  if (value.size() < name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char a = value[i], b = name[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

template <size_t N>
bool LookupName(const std::array<std::string_view, N>& names, std::string_view* value, int* index) {
  for (size_t i = 0; i < N; ++i) {
    if (MatchFold(*value, names[i])) {
      value->remove_prefix(names[i].size());
      *index = static_cast<int>(i);
      return true;
    }
  }
  return false;
}

// Go's getnum: one or two digits (exactly two when fixed).
bool GetNum(std::string_view* s, bool fixed, int* out) {
  if (!IsDigitAt(*s, 0)) return false;
  if (!IsDigitAt(*s, 1)) {
    if (fixed) return false;
    *out = (*s)[0] - '0';
    s->remove_prefix(1);
    return true;
  }
  *out = ((*s)[0] - '0') * 10 + ((*s)[1] - '0');
  s->remove_prefix(2);
  return true;
}

// Go's getnum3: one to three digits (exactly three when fixed).
bool GetNum3(std::string_view* s, bool fixed, int* out) {
  int n = 0;
  size_t i = 0;
  for (; i < 3 && IsDigitAt(*s, i); ++i) n = n * 10 + ((*s)[i] - '0');
  if (i == 0 || (fixed && i != 3)) return false;
  s->remove_prefix(i);
  *out = n;
  return true;
}

// Go's skip: literal layout text must match; a space matches any run of spaces (or none).
bool Skip(std::string_view* value, std::string_view prefix) {
  while (!prefix.empty()) {
    if (prefix[0] == ' ') {
      if (!value->empty() && (*value)[0] != ' ') return false;
      while (!prefix.empty() && prefix[0] == ' ') prefix.remove_prefix(1);
      while (!value->empty() && (*value)[0] == ' ') value->remove_prefix(1);
      continue;
    }
    if (value->empty() || (*value)[0] != prefix[0]) return false;
    prefix.remove_prefix(1);
    value->remove_prefix(1);
  }
  return true;
}

// Go's atoi: an optional sign, then only digits (none at all reads as 0).
bool GoAtoi(std::string_view s, int64_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9' || x > INT64_MAX / 10 - 10) return false;
    x = x * 10 + (c - '0');
  }
  *out = negative ? -x : x;
  return true;
}

// Go's parseNanoseconds: value[0] is '.' or ',', then nbytes-1 digits (Go's atoi, so a sign
// slips through as long as the result is not negative).
bool ParseNanoseconds(std::string_view value, size_t nbytes, int* ns) {
  if (value.empty() || (value[0] != '.' && value[0] != ',')) return false;
  if (nbytes > 10) nbytes = 10;  // only nanosecond precision is kept
  if (nbytes > value.size()) return false;
  int64_t n;
  if (!GoAtoi(value.substr(1, nbytes - 1), &n) || n < 0) return false;
  for (size_t i = nbytes; i < 10; ++i) n *= 10;
  *ns = static_cast<int>(n);
  return true;
}

// Go's parseSignedOffset: "+h" / "-hh" with hours <= 23; returns bytes consumed or 0.
size_t ParseSignedOffset(std::string_view value) {
  if (value.empty() || (value[0] != '-' && value[0] != '+')) return 0;
  size_t i = 1;
  int64_t x = 0;
  while (i < value.size() && IsDigitAt(value, i)) {
    x = x * 10 + (value[i] - '0');
    if (x > 1000000) return 0;
    ++i;
  }
  if (i == 1 || x > 23) return 0;
  return i;
}

// Go's parseTimeZone: bytes of a plausible zone abbreviation at the start of value, or 0.
size_t ParseTimeZone(std::string_view value) {
  if (value.size() < 3) return 0;
  if (HasPrefix(value, "ChST") || HasPrefix(value, "MeST")) return 4;
  if (HasPrefix(value, "GMT"))
    return 3 + (value.size() > 3 ? ParseSignedOffset(value.substr(3)) : 0);
  if (value[0] == '+' || value[0] == '-') return ParseSignedOffset(value);
  size_t upper = 0;
  while (upper < 6 && upper < value.size() && value[upper] >= 'A' && value[upper] <= 'Z') ++upper;
  switch (upper) {
    case 3:
      return 3;
    case 4:
      return (value[3] == 'T' || HasPrefix(value, "WITA")) ? 4 : 0;
    case 5:
      return value[4] == 'T' ? 5 : 0;
    default:
      return 0;
  }
}

bool IsLeap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int DaysIn(int month, int64_t year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && IsLeap(year)) return 29;
  return kDays[month - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (month 1..12; day may overflow the month).
int64_t DaysFromCivil(int64_t y, int m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468 + (d - 1);
}

std::optional<int64_t> ToUnixNanos(int64_t seconds, int64_t nanos) {
  constexpr int64_t kMaxSeconds = INT64_MAX / 1000000000 - 1;
  if (seconds > kMaxSeconds || seconds < -kMaxSeconds) return std::nullopt;
  return seconds * 1000000000 + nanos;
}

// strconv.ParseInt(s, 10, 64).
bool ParseInt64(std::string_view s, int64_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + (c - '0');
  }
  if (negative ? v > uint64_t{1} << 63 : v > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

std::optional<int64_t> Multiply(int64_t v, int64_t scale) {
  int64_t out;
  if (__builtin_mul_overflow(v, scale, &out)) return std::nullopt;
  return out;
}

}  // namespace

GoTimeLayout GoTimeLayout::Compile(std::string_view format, std::string_view location) {
  GoTimeLayout t;
  bool is_named = false;  // Promtail parses its named formats with time.Parse: no location
  if (format == "Unix") {
    t.kind_ = Kind::kUnix;
  } else if (format == "UnixMs") {
    t.kind_ = Kind::kUnixMs;
  } else if (format == "UnixUs") {
    t.kind_ = Kind::kUnixUs;
  } else if (format == "UnixNs") {
    t.kind_ = Kind::kUnixNs;
  } else {
    t.layout_ = std::string(format);
    for (const NamedFormat& named : kNamedLayouts) {
      if (format == named.name) {
        t.layout_ = std::string(named.layout);
        is_named = true;
      }
    }
    std::string_view rest = t.layout_;
    while (true) {
      const StdChunk c = NextStdChunk(rest);
      t.chunks_.push_back(
          Chunk{std::string(rest.substr(0, c.prefix_len)), c.element, c.frac_digits});
      if (c.element == kNone) break;
      if (c.element == kYear || c.element == kLongYear) t.has_year_ = true;
      rest.remove_prefix(c.prefix_len + c.element_len);
    }
    if (t.chunks_.size() == 1) {
      throw ConfigError(
          "invalid timestamp format \"" + std::string(format) +
          "\": not a named format and not a Go layout (it has no element of the reference time "
          "Mon Jan 2 15:04:05 MST 2006); use ANSIC, UnixDate, RubyDate, RFC822, RFC822Z, RFC850, "
          "RFC1123, RFC1123Z, RFC3339, RFC3339Nano, Unix, UnixMs, UnixUs, UnixNs or a layout such "
          "as 2006-01-02T15:04:05.000Z07:00");
    }
  }
  if (!location.empty()) {
    absl::TimeZone tz;
    if (!absl::LoadTimeZone(std::string(location), &tz)) {
      throw ConfigError("invalid timestamp location \"" + std::string(location) +
                        "\": unknown time zone; use an IANA zone name such as UTC, "
                        "Europe/Berlin or America/New_York");
    }
    // Checked for every format (Promtail refuses an unknown zone whatever the format), applied
    // to layouts only.
    if (is_named) return t;
    t.zone_ = tz;
    // Collect every abbreviation the zone has used, for text that names its zone ("CET").
    auto note = [&](absl::Time at) {
      const absl::TimeZone::CivilInfo ci = tz.At(at);
      for (const ZoneAbbreviation& z : t.abbreviations_) {
        if (z.abbr == ci.zone_abbr && z.offset == ci.offset) return;
      }
      t.abbreviations_.push_back(ZoneAbbreviation{ci.zone_abbr, ci.offset});
    };
    note(absl::UnixEpoch());
    absl::Time at = absl::InfinitePast();
    absl::TimeZone::CivilTransition trans;
    for (int i = 0; i < 5000 && tz.NextTransition(at, &trans); ++i) {
      at = tz.At(trans.to).trans;
      note(at);
      if (trans.to.year() > 2100) break;
    }
  }
  return t;
}

std::optional<int64_t> GoTimeLayout::Parse(std::string_view text) const {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return Parse(text, std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

std::optional<int64_t> GoTimeLayout::Parse(std::string_view text,
                                           std::optional<int>* text_offset) const {
  if (kind_ != Kind::kLayout) return Parse(text);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return ParseLayout(text, std::chrono::duration_cast<std::chrono::nanoseconds>(now).count(),
                     text_offset);
}

std::optional<int64_t> GoTimeLayout::Parse(std::string_view text, int64_t now_unix_ns) const {
  int64_t v;
  switch (kind_) {
    case Kind::kLayout:
      return ParseLayout(text, now_unix_ns);
    case Kind::kUnixMs:
      return ParseInt64(text, &v) ? Multiply(v, 1000000) : std::nullopt;
    case Kind::kUnixUs:
      return ParseInt64(text, &v) ? Multiply(v, 1000) : std::nullopt;
    case Kind::kUnixNs:
      return ParseInt64(text, &v) ? std::optional<int64_t>(v) : std::nullopt;
    case Kind::kUnix:
      break;
  }
  // Promtail (Loki 3): seconds, optionally with one '.' and a fraction that strconv.ParseInt
  // reads (so a sign is allowed) and scales in floating point to nanoseconds.
  const size_t dot = text.find('.');
  if (dot == std::string_view::npos) {
    return ParseInt64(text, &v) ? ToUnixNanos(v, 0) : std::nullopt;
  }
  const std::string_view frac = text.substr(dot + 1);
  int64_t f;
  if (frac.find('.') != std::string_view::npos || !ParseInt64(text.substr(0, dot), &v) ||
      !ParseInt64(frac, &f)) {
    return std::nullopt;
  }
  const double scaled =
      static_cast<double>(f) * std::pow(10.0, 9.0 - static_cast<double>(frac.size()));
  if (!(std::fabs(scaled) < 9e18)) return std::nullopt;
  const std::optional<int64_t> seconds = ToUnixNanos(v, 0);
  int64_t out;
  if (!seconds || __builtin_add_overflow(*seconds, static_cast<int64_t>(scaled), &out)) {
    return std::nullopt;
  }
  return out;
}

std::optional<int> GoTimeLayout::LookupAbbreviation(std::string_view abbr,
                                                    int64_t civil_as_utc) const {
  if (!zone_) {
    if (abbr == "UTC") return 0;
    return std::nullopt;
  }
  // Go's Location.lookupName: prefer an offset under which the zone really used this name at
  // that time, else any offset the name ever had.
  for (const ZoneAbbreviation& z : abbreviations_) {
    if (z.abbr != abbr) continue;
    const absl::TimeZone::CivilInfo ci = zone_->At(absl::FromUnixSeconds(civil_as_utc - z.offset));
    if (abbr == ci.zone_abbr) return ci.offset;
  }
  for (const ZoneAbbreviation& z : abbreviations_) {
    if (z.abbr == abbr) return z.offset;
  }
  return std::nullopt;
}

std::optional<int64_t> GoTimeLayout::ParseLayout(std::string_view value, int64_t now_unix_ns,
                                                 std::optional<int>* text_offset) const {
  int64_t year = 0;
  int month = -1, day = -1, yday = -1, hour = 0, min = 0, sec = 0, nsec = 0;
  bool utc = false, pm_set = false, am_set = false;
  int zone_offset = -1;
  bool has_offset = false;
  std::string_view zone_name;

  for (size_t ci = 0; ci < chunks_.size(); ++ci) {
    const Chunk& chunk = chunks_[ci];
    if (!Skip(&value, chunk.prefix)) return std::nullopt;
    if (chunk.element == kNone) {
      if (!value.empty()) return std::nullopt;  // extra text
      break;
    }
    bool ok = true;
    switch (chunk.element) {
      case kYear: {
        // Go reads the two bytes with atoi, so "+3" and "-5" are years too.
        if (value.size() < 2 || !GoAtoi(value.substr(0, 2), &year)) return std::nullopt;
        year += year >= 69 ? 1900 : 2000;
        value.remove_prefix(2);
        break;
      }
      case kLongYear:
        if (value.size() < 4) return std::nullopt;
        year = 0;
        for (int i = 0; i < 4; ++i) {
          if (!IsDigitAt(value, i)) return std::nullopt;
          year = year * 10 + (value[i] - '0');
        }
        value.remove_prefix(4);
        break;
      case kMonth:
        ok = LookupName(kShortMonthNames, &value, &month);
        ++month;
        break;
      case kLongMonth:
        ok = LookupName(kLongMonthNames, &value, &month);
        ++month;
        break;
      case kNumMonth:
      case kZeroMonth:
        ok = GetNum(&value, chunk.element == kZeroMonth, &month) && month >= 1 && month <= 12;
        break;
      case kWeekDay: {
        int ignored;
        ok = LookupName(kShortDayNames, &value, &ignored);
        break;
      }
      case kLongWeekDay: {
        int ignored;
        ok = LookupName(kLongDayNames, &value, &ignored);
        break;
      }
      case kDay:
      case kUnderDay:
      case kZeroDay:
        if (chunk.element == kUnderDay && !value.empty() && value[0] == ' ') value.remove_prefix(1);
        ok = GetNum(&value, chunk.element == kZeroDay, &day);
        break;  // validated against month and year below
      case kUnderYearDay:
      case kZeroYearDay:
        for (int i = 0; i < 2; ++i) {
          if (chunk.element == kUnderYearDay && !value.empty() && value[0] == ' ') {
            value.remove_prefix(1);
          }
        }
        ok = GetNum3(&value, chunk.element == kZeroYearDay, &yday);
        break;
      case kHour:
        ok = GetNum(&value, false, &hour) && hour < 24;
        break;
      case kHour12:
      case kZeroHour12:
        ok = GetNum(&value, chunk.element == kZeroHour12, &hour) && hour <= 12;
        break;
      case kMinute:
      case kZeroMinute:
        ok = GetNum(&value, chunk.element == kZeroMinute, &min) && min < 60;
        break;
      case kSecond:
      case kZeroSecond: {
        ok = GetNum(&value, chunk.element == kZeroSecond, &sec) && sec < 60;
        if (!ok) break;
        // A fractional second in the text that the layout does not spell out.
        if (value.size() >= 2 && (value[0] == '.' || value[0] == ',') && IsDigitAt(value, 1)) {
          // Like Go, look at the next element whatever literal text precedes it.
          const int next = ci + 1 < chunks_.size() ? chunks_[ci + 1].element : kNone;
          if (next == kFracSecond0 || next == kFracSecond9) break;
          size_t n = 2;
          while (IsDigitAt(value, n)) ++n;
          ok = ParseNanoseconds(value, n, &nsec);
          value.remove_prefix(n);
        }
        break;
      }
      case kPM:
      case kpm: {
        if (value.size() < 2) return std::nullopt;
        const std::string_view p = value.substr(0, 2);
        value.remove_prefix(2);
        const bool upper = chunk.element == kPM;
        if (p == (upper ? "PM" : "pm")) {
          pm_set = true;
        } else if (p == (upper ? "AM" : "am")) {
          am_set = true;
        } else {
          return std::nullopt;
        }
        break;
      }
      case kISO8601TZ:
      case kISO8601ShortTZ:
      case kISO8601ColonTZ:
      case kISO8601SecondsTZ:
      case kISO8601ColonSecondsTZ:
        if (!value.empty() && value[0] == 'Z') {
          value.remove_prefix(1);
          utc = true;
          break;
        }
        [[fallthrough]];
      case kNumTZ:
      case kNumShortTZ:
      case kNumColonTZ:
      case kNumSecondsTz:
      case kNumColonSecondsTZ: {
        const int e = chunk.element;
        std::string_view sign, hh, mm = "00", ss = "00";
        if (e == kISO8601ColonTZ || e == kNumColonTZ) {
          if (value.size() < 6 || value[3] != ':') return std::nullopt;
          sign = value.substr(0, 1), hh = value.substr(1, 2), mm = value.substr(4, 2);
          value.remove_prefix(6);
        } else if (e == kNumShortTZ || e == kISO8601ShortTZ) {
          if (value.size() < 3) return std::nullopt;
          sign = value.substr(0, 1), hh = value.substr(1, 2);
          value.remove_prefix(3);
        } else if (e == kISO8601ColonSecondsTZ || e == kNumColonSecondsTZ) {
          if (value.size() < 9 || value[3] != ':' || value[6] != ':') return std::nullopt;
          sign = value.substr(0, 1), hh = value.substr(1, 2), mm = value.substr(4, 2);
          ss = value.substr(7, 2);
          value.remove_prefix(9);
        } else if (e == kISO8601SecondsTZ || e == kNumSecondsTz) {
          if (value.size() < 7) return std::nullopt;
          sign = value.substr(0, 1), hh = value.substr(1, 2), mm = value.substr(3, 2);
          ss = value.substr(5, 2);
          value.remove_prefix(7);
        } else {
          if (value.size() < 5) return std::nullopt;
          sign = value.substr(0, 1), hh = value.substr(1, 2), mm = value.substr(3, 2);
          value.remove_prefix(5);
        }
        int h, m, s;
        if (!GetNum(&hh, true, &h) || !GetNum(&mm, true, &m) || !GetNum(&ss, true, &s)) {
          return std::nullopt;
        }
        if (h > 24 || m > 60 || s > 60) return std::nullopt;
        zone_offset = (h * 60 + m) * 60 + s;
        if (sign == "-") {
          zone_offset = -zone_offset;
        } else if (sign != "+") {
          return std::nullopt;
        }
        has_offset = true;
        break;
      }
      case kTZ: {
        if (HasPrefix(value, "UTC")) {
          utc = true;
          value.remove_prefix(3);
          break;
        }
        const size_t n = ParseTimeZone(value);
        if (n == 0) return std::nullopt;
        zone_name = value.substr(0, n);
        value.remove_prefix(n);
        break;
      }
      case kFracSecond0: {
        const size_t ndigit = 1 + chunk.frac_digits;
        if (value.size() < ndigit) return std::nullopt;
        ok = ParseNanoseconds(value, ndigit, &nsec);
        value.remove_prefix(ndigit);
        break;
      }
      case kFracSecond9: {
        if (value.size() < 2 || (value[0] != '.' && value[0] != ',') || !IsDigitAt(value, 1)) {
          break;  // fractional second omitted
        }
        size_t i = 1;
        while (IsDigitAt(value, i)) ++i;
        ok = ParseNanoseconds(value, i, &nsec);
        value.remove_prefix(i);
        break;
      }
      default:
        break;
    }
    if (!ok) return std::nullopt;
  }

  if (pm_set && hour < 12) {
    hour += 12;
  } else if (am_set && hour == 12) {
    hour = 0;
  }

  if (yday >= 0) {
    int m = 0, d = 0;
    if (IsLeap(year)) {
      if (yday == 31 + 29) {
        m = 2, d = 29;
      } else if (yday > 31 + 29) {
        --yday;
      }
    }
    if (yday < 1 || yday > 365) return std::nullopt;
    if (m == 0) {
      static constexpr int kDaysBefore[] = {0,   31,  59,  90,  120, 151, 181,
                                            212, 243, 273, 304, 334, 365};
      m = (yday - 1) / 31 + 1;
      if (kDaysBefore[m] < yday) ++m;
      d = yday - kDaysBefore[m - 1];
    }
    if ((month >= 0 && month != m) || (day >= 0 && day != d)) return std::nullopt;
    month = m, day = d;
  } else {
    if (month < 0) month = 1;
    if (day < 0) day = 1;
  }
  if (day < 1 || day > DaysIn(month, year)) return std::nullopt;

  if (!has_year_) {
    // Promtail: the current year, adjusted across new year's eve.
    const absl::CivilDay today =
        absl::ToCivilDay(absl::FromUnixNanos(now_unix_ns), absl::UTCTimeZone());
    year = today.year();
    if (month == 12 && today.month() == 1) {
      --year;
    } else if (month == 1 && today.month() == 12) {
      ++year;
    }
  }

  // Seconds of the civil time read as UTC; Feb 29 of a replaced year rolls over like Go's AddDate.
  const int64_t civil = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec;
  int64_t offset = 0;
  if (utc) {
    offset = 0;
  } else if (has_offset) {
    offset = zone_offset;
  } else if (!zone_name.empty()) {
    if (const std::optional<int> o = LookupAbbreviation(zone_name, civil)) {
      offset = *o;
    } else if (zone_name.size() > 3 && HasPrefix(zone_name, "GMT")) {
      int64_t hours = 0;
      ParseInt64(zone_name.substr(3), &hours);
      offset = hours * 3600;
    }  // else: Go makes up a zone with offset 0
  }
  const bool text_has_zone = utc || has_offset || !zone_name.empty();
  if (text_offset != nullptr && text_has_zone) *text_offset = static_cast<int>(offset);
  if (!text_has_zone && zone_) {
    // Go's Date: take the offset in effect at the civil time read as UTC; if the instant that
    // offset gives lies in another zone period, take that period's offset. (Within a DST gap
    // or overlap Go's choice depends on this, so it is reproduced rather than absl's.)
    offset = zone_->At(absl::FromUnixSeconds(civil)).offset;
    if (offset != 0) {
      const int real = zone_->At(absl::FromUnixSeconds(civil - offset)).offset;
      if (real != offset) offset = real;
    }
  }
  return ToUnixNanos(civil - offset, nsec);
}

namespace {

// Go's appendInt: x in decimal, zero-padded to `width` digits, a '-' before the padding.
void AppendPaddedInt(int64_t x, int width, std::string* out) {
  uint64_t u = static_cast<uint64_t>(x);
  if (x < 0) {
    out->push_back('-');
    u = 0 - u;
  }
  const std::string digits = std::to_string(u);
  for (int k = static_cast<int>(digits.size()); k < width; ++k) out->push_back('0');
  out->append(digits);
}

}  // namespace

std::string GoTimeLayout::Format(std::string_view layout, absl::Time t,
                                 const absl::TimeZone& zone) {
  const absl::TimeZone::CivilInfo ci = zone.At(t);
  const absl::CivilSecond& cs = ci.cs;
  const int64_t nanos = absl::ToInt64Nanoseconds(ci.subsecond);
  const int offset = ci.offset;
  std::string out;
  while (!layout.empty()) {
    const StdChunk c = NextStdChunk(layout);
    out.append(layout.substr(0, c.prefix_len));
    if (c.element == kNone) break;
    const char separator = layout[c.prefix_len];
    layout.remove_prefix(c.prefix_len + c.element_len);
    const int hour = cs.hour();
    switch (c.element) {
      case kYear:
        AppendPaddedInt(((cs.year() % 100) + 100) % 100, 2, &out);
        break;
      case kLongYear:
        AppendPaddedInt(cs.year(), 4, &out);
        break;
      case kMonth:
        out.append(kShortMonthNames[cs.month() - 1]);
        break;
      case kLongMonth:
        out.append(kLongMonthNames[cs.month() - 1]);
        break;
      case kNumMonth:
        AppendPaddedInt(cs.month(), 0, &out);
        break;
      case kZeroMonth:
        AppendPaddedInt(cs.month(), 2, &out);
        break;
      case kWeekDay:
      case kLongWeekDay: {
        // absl counts from Monday, Go from Sunday.
        const int wd = (static_cast<int>(absl::GetWeekday(cs)) + 1) % 7;
        out.append(c.element == kWeekDay ? kShortDayNames[wd] : kLongDayNames[wd]);
        break;
      }
      case kDay:
        AppendPaddedInt(cs.day(), 0, &out);
        break;
      case kUnderDay:
        if (cs.day() < 10) out.push_back(' ');
        AppendPaddedInt(cs.day(), 0, &out);
        break;
      case kZeroDay:
        AppendPaddedInt(cs.day(), 2, &out);
        break;
      case kUnderYearDay:
      case kZeroYearDay: {
        const int yday = absl::GetYearDay(absl::CivilDay(cs));
        if (c.element == kUnderYearDay) {
          if (yday < 100) out.push_back(' ');
          if (yday < 10) out.push_back(' ');
          AppendPaddedInt(yday, 0, &out);
        } else {
          AppendPaddedInt(yday, 3, &out);
        }
        break;
      }
      case kHour:
        AppendPaddedInt(hour, 2, &out);
        break;
      case kHour12:
      case kZeroHour12:
        AppendPaddedInt(hour % 12 == 0 ? 12 : hour % 12, c.element == kHour12 ? 0 : 2, &out);
        break;
      case kMinute:
        AppendPaddedInt(cs.minute(), 0, &out);
        break;
      case kZeroMinute:
        AppendPaddedInt(cs.minute(), 2, &out);
        break;
      case kSecond:
        AppendPaddedInt(cs.second(), 0, &out);
        break;
      case kZeroSecond:
        AppendPaddedInt(cs.second(), 2, &out);
        break;
      case kPM:
        out.append(hour >= 12 ? "PM" : "AM");
        break;
      case kpm:
        out.append(hour >= 12 ? "pm" : "am");
        break;
      case kISO8601TZ:
      case kISO8601ColonTZ:
      case kISO8601SecondsTZ:
      case kISO8601ShortTZ:
      case kISO8601ColonSecondsTZ:
      case kNumTZ:
      case kNumColonTZ:
      case kNumSecondsTz:
      case kNumShortTZ:
      case kNumColonSecondsTZ: {
        const bool iso = c.element == kISO8601TZ || c.element == kISO8601ColonTZ ||
                         c.element == kISO8601SecondsTZ || c.element == kISO8601ShortTZ ||
                         c.element == kISO8601ColonSecondsTZ;
        if (offset == 0 && iso) {
          out.push_back('Z');
          break;
        }
        int zone_minutes = offset / 60;
        int abs_offset = offset;
        if (zone_minutes < 0) {
          out.push_back('-');
          zone_minutes = -zone_minutes;
          abs_offset = -abs_offset;
        } else {
          out.push_back('+');
        }
        AppendPaddedInt(zone_minutes / 60, 2, &out);
        const bool colon = c.element == kISO8601ColonTZ || c.element == kNumColonTZ ||
                           c.element == kISO8601ColonSecondsTZ || c.element == kNumColonSecondsTZ;
        if (colon) out.push_back(':');
        if (c.element != kNumShortTZ && c.element != kISO8601ShortTZ) {
          AppendPaddedInt(zone_minutes % 60, 2, &out);
        }
        if (c.element == kISO8601SecondsTZ || c.element == kNumSecondsTz ||
            c.element == kNumColonSecondsTZ || c.element == kISO8601ColonSecondsTZ) {
          if (colon) out.push_back(':');
          AppendPaddedInt(abs_offset % 60, 2, &out);
        }
        break;
      }
      case kTZ: {
        const std::string_view abbr = ci.zone_abbr;
        if (!abbr.empty() && abbr[0] != '+' && abbr[0] != '-') {
          out.append(ci.zone_abbr);
          break;
        }
        int zone_minutes = offset / 60;
        if (zone_minutes < 0) {
          out.push_back('-');
          zone_minutes = -zone_minutes;
        } else {
          out.push_back('+');
        }
        AppendPaddedInt(zone_minutes / 60, 2, &out);
        AppendPaddedInt(zone_minutes % 60, 2, &out);
        break;
      }
      case kFracSecond0:
      case kFracSecond9: {
        const bool trim = c.element == kFracSecond9;
        const int n = c.frac_digits;
        if (trim && (n == 0 || nanos == 0)) break;
        std::string digits;
        AppendPaddedInt(nanos, 9, &digits);
        if (n < 9) digits.resize(n);
        if (trim) {
          while (!digits.empty() && digits.back() == '0') digits.pop_back();
          if (digits.empty()) break;
        }
        out.push_back(separator);
        out.append(digits);
        break;
      }
      default:
        break;
    }
  }
  return out;
}

}  // namespace skald::stages
