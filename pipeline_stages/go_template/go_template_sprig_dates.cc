// The Go template engine's functions: sprig's dates. Declared, with the other families,
// in go_template_library.h; the function table is go_template_functions.cc's.
#include <absl/time/clock.h>
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include "pipeline_stages/go/go_duration.h"
#include "pipeline_stages/go/go_regexp.h"
#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_time_layout.h"
#include "pipeline_stages/go_template/go_template_decimal.h"
#include "pipeline_stages/go_template/go_template_fmt.h"
#include "pipeline_stages/go_template/go_template_json.h"
#include "pipeline_stages/go_template/go_template_library.h"
#include "pipeline_stages/go_template/go_template_strings.h"

namespace skald::stages::go_template_internal {

bool FnNow(Args, CallContext&, Value* r) {
  *r = Value::Time(Now(), LocalZone(), MonotonicNanos());
  return true;
}

namespace {

bool FormatDate(CallContext& ctx, std::string_view layout, const Value& date,
                std::string_view zone_name, Value* r) {
  absl::TimeZone zone;
  if (zone_name == "Local") {
    zone = LocalZone();
  } else if (zone_name.empty() || zone_name == "UTC" ||
             !absl::LoadTimeZone(std::string(zone_name), &zone)) {
    zone = absl::UTCTimeZone();
  }
  return SetString(ctx, GoTimeLayout::Format(layout, DateArgument(date), zone), r);
}

}  // namespace

bool FnDate(Args a, CallContext& ctx, Value* r) {
  return FormatDate(ctx, a[0].s, a[1], "Local", r);
}
bool FnDateInZone(Args a, CallContext& ctx, Value* r) {
  return FormatDate(ctx, a[0].s, a[1], a[2].s, r);
}
bool FnHtmlDate(Args a, CallContext& ctx, Value* r) {
  return FormatDate(ctx, "2006-01-02", a[0], "Local", r);
}
bool FnHtmlDateInZone(Args a, CallContext& ctx, Value* r) {
  return FormatDate(ctx, "2006-01-02", a[0], a[1].s, r);
}

namespace {

bool DateModify(Args a, CallContext& ctx, Value* r, bool must) {
  const std::optional<int64_t> d = ParseGoDuration(a[0].s);
  if (!d) {
    if (must) return ctx.Fail("time: invalid duration \"" + std::string(a[0].s) + "\"");
    *r = a[1];
    return true;
  }
  *r = a[1];
  r->time += absl::Nanoseconds(*d);
  if (r->monotonic != kNoMonotonic) r->monotonic += *d;
  return true;
}

}  // namespace

bool FnDateModify(Args a, CallContext& ctx, Value* r) { return DateModify(a, ctx, r, false); }
bool FnMustDateModify(Args a, CallContext& ctx, Value* r) { return DateModify(a, ctx, r, true); }

namespace {

bool ToDate(Args a, CallContext& ctx, Value* r, bool must) {
  std::optional<int64_t> parsed;
  std::optional<int> offset;
  try {
    parsed = GoTimeLayout::Compile(a[0].s).Parse(a[1].s, &offset);
  } catch (const std::exception&) {
    // A layout without any element: Go parses only the identical text, into the zero time.
  }
  if (!parsed) {
    if (must) {
      return ctx.Fail("parsing time \"" + std::string(a[1].s) + "\" as \"" + std::string(a[0].s) +
                      "\": cannot parse");
    }
    *r = Value::Time(GoZeroTime(), absl::UTCTimeZone());
    return true;
  }
  // Go keeps a zone the text names, unless it is the local zone's offset at that time.
  const absl::Time t = absl::FromUnixNanos(*parsed);
  absl::TimeZone zone = LocalZone();
  if (offset && zone.At(t).offset != *offset) {
    zone = *offset == 0 ? absl::UTCTimeZone() : absl::FixedTimeZone(*offset);
  }
  *r = Value::Time(t, zone);
  return true;
}

}  // namespace

bool FnToDate(Args a, CallContext& ctx, Value* r) { return ToDate(a, ctx, r, false); }
bool FnMustToDate(Args a, CallContext& ctx, Value* r) { return ToDate(a, ctx, r, true); }

bool FnUnixEpoch(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::to_string(absl::ToUnixSeconds(a[0].time)), r);
}

bool FnAgo(Args a, CallContext& ctx, Value* r) {
  int64_t d = absl::ToInt64Nanoseconds(Now() - DateArgument(a[0]));
  // Duration.Round(time.Second): halves away from zero.
  const int64_t rem = d % 1000000000;
  d -= rem;
  if (rem >= 500000000) d += 1000000000;
  if (rem <= -500000000) d -= 1000000000;
  return SetString(ctx, FormatGoDuration(d), r);
}

bool FnDuration(Args a, CallContext& ctx, Value* r) {
  int64_t n = 0;
  if (a[0].is_string()) {
    int64_t parsed = 0;
    std::string_view s = a[0].s;
    bool negative = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
      negative = s[0] == '-';
      s.remove_prefix(1);
    }
    uint64_t u = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), u, 10);
    if (!s.empty() && ec == std::errc() && ptr == s.data() + s.size() &&
        u <= static_cast<uint64_t>(INT64_MAX)) {
      parsed = negative ? -static_cast<int64_t>(u) : static_cast<int64_t>(u);
    }
    n = parsed;
  } else if (a[0].type == GoType::kInt64) {
    n = a[0].i;
  }
  return SetString(
      ctx, FormatGoDuration(static_cast<int64_t>(static_cast<uint64_t>(n) * 1000000000)), r);
}

bool FnDurationRound(Args a, CallContext& ctx, Value* r) {
  int64_t d = 0;
  if (a[0].is_string()) {
    d = ParseGoDuration(a[0].s).value_or(0);
  } else if (a[0].type == GoType::kInt64) {
    d = a[0].i;
  } else if (a[0].type == GoType::kTime) {
    d = absl::ToInt64Nanoseconds(Now() - a[0].time);
  }
  uint64_t u = static_cast<uint64_t>(d);
  if (d < 0) u = 0 - u;
  constexpr uint64_t kSecond = 1000000000, kMinute = 60 * kSecond, kHour = 60 * kMinute,
                     kDay = 24 * kHour, kMonth = 30 * kDay, kYear = 365 * kDay;
  std::string out = "0s";
  if (u > kYear) {
    out = std::to_string(u / kYear) + "y";
  } else if (u > kMonth) {
    out = std::to_string(u / kMonth) + "mo";
  } else if (u > kDay) {
    out = std::to_string(u / kDay) + "d";
  } else if (u > kHour) {
    out = std::to_string(u / kHour) + "h";
  } else if (u > kMinute) {
    out = std::to_string(u / kMinute) + "m";
  } else if (u > kSecond) {
    out = std::to_string(u / kSecond) + "s";
  }
  return SetString(ctx, std::move(out), r);
}

}  // namespace skald::stages::go_template_internal
