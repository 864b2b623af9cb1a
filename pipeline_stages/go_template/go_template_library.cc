#include "pipeline_stages/go_template/go_template_library.h"

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
#include "pipeline_stages/go_template/go_template_strings.h"

namespace skald::stages::go_template_internal {

// --- Building results.

bool SetString(CallContext& ctx, std::string s, Value* r) {
  if (!ctx.SpendString(s.size())) return false;
  *r = Value::Own(std::move(s));
  return true;
}

bool SetList(CallContext& ctx, GoType type, List items, Value* r) {
  if (!ctx.Spend(static_cast<int64_t>(items.size()),
                 static_cast<int64_t>(items.size()) * kElementBytes)) {
    return false;
  }
  *r = Value::MakeList(type, std::move(items));
  return true;
}

bool SetMap(CallContext& ctx, GoType type, std::shared_ptr<Map> m, Value* r) {
  if (!ctx.Spend(static_cast<int64_t>(m->size()),
                 static_cast<int64_t>(m->size()) * kElementBytes)) {
    return false;
  }
  *r = Value::MakeMap(type, std::move(m));
  return true;
}

// reflect.TypeOf(v).Kind() in sprig's "Cannot ... on type %s" messages; a nil is a nil pointer
// dereference in Go.
bool NotAList(CallContext& ctx, const Value& v, std::string_view message_before_type) {
  if (v.is_nil())
    return ctx.Fail("runtime error: invalid memory address or nil pointer dereference");
  return ctx.Fail(std::string(message_before_type) + std::string(KindName(v)));
}

// sprig's strslice: a list's non-nil elements as strings; a nil is no string; anything else one.
std::vector<std::string> StrSlice(const Value& v) {
  std::vector<std::string> out;
  if (v.is_list()) {
    for (const Value& item : v.items()) {
      if (!item.is_nil()) out.push_back(StrVal(item));
    }
  } else if (!v.is_nil()) {
    out.push_back(StrVal(v));
  }
  return out;
}

// Go's regexp error text: "error parsing regexp: missing closing ): `(`".
std::string GoRegexpError(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(GoRegexpToRe2Syntax(pattern), options);
  std::string_view code = "invalid or unsupported Perl syntax";
  switch (re.error_code()) {
    case RE2::ErrorBadEscape:
      code = "invalid escape sequence";
      break;
    case RE2::ErrorBadCharClass:
      code = "invalid character class";
      break;
    case RE2::ErrorBadCharRange:
      code = "invalid character class range";
      break;
    case RE2::ErrorMissingBracket:
      code = "missing closing ]";
      break;
    case RE2::ErrorMissingParen:
      code = "missing closing )";
      break;
    case RE2::ErrorUnexpectedParen:
      code = "unexpected )";
      break;
    case RE2::ErrorTrailingBackslash:
      code = "trailing backslash at end of expression";
      break;
    case RE2::ErrorRepeatArgument:
      code = "missing argument to repetition operator";
      break;
    case RE2::ErrorRepeatSize:
      code = "invalid repeat count";
      break;
    case RE2::ErrorRepeatOp:
      code = "invalid nested repetition operator";
      break;
    case RE2::ErrorBadUTF8:
      code = "invalid UTF-8";
      break;
    case RE2::ErrorBadNamedCapture:
      code = "invalid named capture";
      break;
    case RE2::ErrorPatternTooLarge:
      code = "expression too large";
      break;
    default:
      break;
  }
  return "error parsing regexp: " + std::string(code) + ": `" + re.error_arg() + "`";
}

// A regex that does not compile: the must* functions return Go's error; the others panic in
// Go's regexp.MustCompile, which the template reports with its text.
bool BadRegex(CallContext& ctx, std::string_view pattern, bool must) {
  const std::string error = GoRegexpError(pattern);
  if (must) return ctx.Fail(error);
  std::string quoted;
  if (pattern.find('`') == std::string_view::npos) {
    quoted = "`" + std::string(pattern) + "`";
  } else {
    AppendGoQuoted(pattern, &quoted);
  }
  return ctx.Fail("regexp: Compile(" + quoted + "): " + error);
}

const RE2* CompileRegex(CallContext& ctx, std::string_view pattern, std::unique_ptr<RE2>* holder,
                        std::string* why) {
  if (ctx.regex() != nullptr) return ctx.regex();
  *holder = CompileGoRegexp(pattern, why);
  return holder->get();
}

// Go's Regexp.FindAllStringIndex(s, n) over RE2.
std::vector<std::pair<size_t, size_t>> FindAll(const RE2& re, std::string_view s, int64_t n,
                                               CallContext& ctx) {
  std::vector<std::pair<size_t, size_t>> out;
  if (n < 0) n = static_cast<int64_t>(s.size()) + 1;
  size_t pos = 0;
  size_t prev_end = std::string_view::npos;
  re2::StringPiece match;
  GoRegexpText subject(s);
  while (static_cast<int64_t>(out.size()) < n && pos <= s.size()) {
    if (!subject.Match(re, pos, s.size(), RE2::UNANCHORED, &match, 1)) break;
    const size_t start = match.data() - s.data();
    const size_t end = start + match.size();
    bool accept = true;
    if (end == pos) {
      if (start == prev_end) accept = false;
      size_t w = 1;
      if (pos < s.size()) DecodeRune(s, pos, &w);
      pos += w;
    } else {
      pos = end;
    }
    prev_end = end;
    if (accept) out.emplace_back(start, end);
    if (!ctx.Spend(1, 0)) break;
  }
  return out;
}

int64_t CryptoRandomBelow(int64_t n) {
  uint64_t x;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % static_cast<uint64_t>(n);
  do {
    RAND_bytes(reinterpret_cast<unsigned char*>(&x), sizeof(x));
  } while (x >= limit);
  return static_cast<int64_t>(x % static_cast<uint64_t>(n));
}

// goutils.CryptoRandom over ASCII: `count` characters in [start, end) that pass `accept`.
bool RandomString(CallContext& ctx, int64_t count, char first, char last, bool (*accept)(char),
                  Value* r) {
  if (count < 0) return SetString(ctx, "", r);  // goutils' error, ignored by sprig
  if (!ctx.SpendString(static_cast<size_t>(count))) return false;
  std::string out;
  while (static_cast<int64_t>(out.size()) < count) {
    const char c = static_cast<char>(first + CryptoRandomBelow(last - first + 1));
    if (accept(c)) out.push_back(c);
  }
  *r = Value::Own(std::move(out));
  return true;
}

absl::Time Now() { return absl::Now(); }

// Go's monotonic reading of time.Now(): time since the process started.
int64_t MonotonicNanos() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              start)
             .count() +
         1;
}

absl::TimeZone LocalZone() {
  static const absl::TimeZone zone = absl::LocalTimeZone();
  return zone;
}

// sprig's dateInZone: a time, or Unix seconds as int / int64; anything else is now.
absl::Time DateArgument(const Value& v) {
  if (v.type == GoType::kTime) return v.time;
  if (v.type == GoType::kInt64 || v.type == GoType::kInt) return absl::FromUnixSeconds(v.i);
  return Now();
}

}  // namespace skald::stages::go_template_internal
