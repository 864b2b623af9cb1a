#include "pipeline_stages/go_template/go_template_functions.h"

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

bool CallContext::Fail(std::string_view why) {
  error_ = "error calling " + std::string(name_) + ": " + std::string(why);
  return false;
}

bool CallContext::TooLong() {
  too_long_ = true;
  return Fail("result longer than " + std::to_string(max_bytes_) + " bytes");
}

bool CallContext::Spend(int64_t elements, int64_t bytes) {
  budget_->steps -= elements;
  budget_->bytes -= bytes;
  if (budget_->steps < 0 || budget_->bytes < 0) {
    too_long_ = true;
    return Fail(budget_->steps < 0 ? "the template takes too many steps"
                                   : "the template builds too much data");
  }
  return true;
}

bool CallContext::SpendString(size_t size) {
  if (size > max_bytes_) return TooLong();
  return Spend(0, static_cast<int64_t>(size));
}

namespace {

using Args = std::span<Value>;
constexpr int64_t kElementBytes = sizeof(Value);

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

template <typename Strings>
bool SetStringList(CallContext& ctx, const Strings& parts, Value* r) {
  if (!ctx.Spend(static_cast<int64_t>(parts.size()),
                 static_cast<int64_t>(parts.size()) * kElementBytes)) {
    return false;
  }
  List items;
  items.reserve(parts.size());
  for (const auto& p : parts) items.push_back(Value::Own(std::string(p)));
  *r = Value::MakeList(GoType::kListString, std::move(items));
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
  const re2::StringPiece text(s.data(), s.size());
  while (static_cast<int64_t>(out.size()) < n && pos <= s.size()) {
    if (!re.Match(text, pos, s.size(), RE2::UNANCHORED, &match, 1)) break;
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

// --- Go's builtins.

bool FnNot(Args a, CallContext&, Value* r) {
  *r = Value::Bool(!IsTrue(a[0]));
  return true;
}

bool FnEq(Args a, CallContext& ctx, Value* r) {
  for (size_t k = 1; k < a.size(); ++k) {
    bool equal;
    std::string error;
    if (!TemplateEq(a[0], a[k], &equal, &error)) return ctx.Fail(error);
    if (equal) {
      *r = Value::Bool(true);
      return true;
    }
  }
  *r = Value::Bool(false);
  return true;
}

bool FnNe(Args a, CallContext& ctx, Value* r) {
  if (!FnEq(a, ctx, r)) return false;
  r->b = !r->b;
  return true;
}

bool FnLt(Args a, CallContext& ctx, Value* r) {
  bool less;
  std::string error;
  if (!TemplateLess(a[0], a[1], &less, &error)) return ctx.Fail(error);
  *r = Value::Bool(less);
  return true;
}

bool FnLe(Args a, CallContext& ctx, Value* r) {
  bool less, equal;
  std::string error;
  if (!TemplateLess(a[0], a[1], &less, &error)) return ctx.Fail(error);
  if (!less && !TemplateEq(a[0], a[1], &equal, &error)) return ctx.Fail(error);
  *r = Value::Bool(less || equal);
  return true;
}

bool FnGt(Args a, CallContext& ctx, Value* r) {
  if (!FnLe(a, ctx, r)) return false;
  r->b = !r->b;
  return true;
}

bool FnGe(Args a, CallContext& ctx, Value* r) {
  if (!FnLt(a, ctx, r)) return false;
  r->b = !r->b;
  return true;
}

// Go's indexArg.
bool IndexArg(CallContext& ctx, const Value& index, size_t cap, size_t* out) {
  if (index.is_nil()) return ctx.Fail("cannot index slice/array with nil");
  if (!index.is_integer()) {
    return ctx.Fail("cannot index slice/array with type " + std::string(TypeName(index)));
  }
  if (index.i < 0 || static_cast<uint64_t>(index.i) > cap) {
    return ctx.Fail("index out of range: " + std::to_string(index.i));
  }
  *out = static_cast<size_t>(index.i);
  return true;
}

bool FnIndex(Args a, CallContext& ctx, Value* r) {
  Value item = a[0];
  if (item.is_nil()) return ctx.Fail("index of untyped nil");
  for (size_t k = 1; k < a.size(); ++k) {
    const Value& index = a[k];
    if (item.is_string() || item.is_list()) {
      const size_t len = Length(item);
      size_t x = 0;
      if (!IndexArg(ctx, index, len, &x)) return false;
      if (x == len) return ctx.Fail("reflect: slice index out of range");
      if (item.is_string()) {
        item = Value::Uint8(static_cast<uint8_t>(item.s[x]));
      } else {
        item = Value(item.items()[x]);
      }
    } else if (item.is_map()) {
      if (!index.is_string()) {
        if (index.is_nil()) {
          // Go: a nil key becomes the zero string.
          item = MapLookup(item, "");
        } else {
          return ctx.Fail("value has type " + std::string(TypeName(index)) + "; should be string");
        }
      } else {
        const Value found = MapLookup(item, index.s);
        if (found.is_nil() && item.type == GoType::kMapString) {
          item = Value::Borrow("");
        } else {
          item = found;
        }
      }
    } else if (item.is_nil()) {
      return ctx.Fail("index of nil pointer");
    } else {
      return ctx.Fail("can't index item of type " + std::string(TypeName(item)));
    }
  }
  *r = item;
  return true;
}

bool FnLen(Args a, CallContext& ctx, Value* r) {
  const Value& v = a[0];
  if (v.is_nil()) return ctx.Fail("reflect: call of reflect.Value.Type on zero Value");
  if (!v.is_string() && !v.is_list() && !v.is_map()) {
    return ctx.Fail("len of type " + std::string(TypeName(v)));
  }
  *r = Value::Int(static_cast<int64_t>(Length(v)));
  return true;
}

bool FnPrint(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!GoSprint(a, &out, ctx.max_bytes())) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

bool FnPrintln(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!GoSprintln(a, &out, ctx.max_bytes())) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

bool FnPrintf(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!GoSprintf(a[0].s, a.subspan(1), &out, ctx.max_bytes())) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

// text/template's evalArgs: the one string argument as it is, else fmt.Sprint of them all.
bool EvalArgs(Args a, CallContext& ctx, std::string* out) {
  if (a.size() == 1 && a[0].is_string()) {
    out->assign(a[0].s);
    return true;
  }
  if (!GoSprint(a, out, ctx.max_bytes())) return ctx.TooLong();
  return true;
}

bool FnHtml(Args a, CallContext& ctx, Value* r) {
  std::string s;
  if (!EvalArgs(a, ctx, &s)) return false;
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\0':
        out.append("\xef\xbf\xbd");
        break;
      case '"':
        out.append("&#34;");
        break;
      case '\'':
        out.append("&#39;");
        break;
      case '&':
        out.append("&amp;");
        break;
      case '<':
        out.append("&lt;");
        break;
      case '>':
        out.append("&gt;");
        break;
      default:
        out.push_back(c);
    }
  }
  return SetString(ctx, std::move(out), r);
}

bool FnJs(Args a, CallContext& ctx, Value* r) {
  std::string s;
  if (!EvalArgs(a, ctx, &s)) return false;
  static constexpr char kUpperHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\\':
          out.append("\\\\");
          break;
        case '\'':
          out.append("\\'");
          break;
        case '"':
          out.append("\\\"");
          break;
        case '<':
          out.append("\\u003C");
          break;
        case '>':
          out.append("\\u003E");
          break;
        case '&':
          out.append("\\u0026");
          break;
        case '=':
          out.append("\\u003D");
          break;
        default:
          if (c < ' ') {
            out.append("\\u00").push_back(kUpperHex[c >> 4]);
            out.push_back(kUpperHex[c & 15]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    size_t w;
    const char32_t rune = DecodeRune(s, i, &w);
    std::string quoted;
    AppendGoQuoted(s.substr(i, w), &quoted);
    const bool printable = !(rune == 0xFFFD && w == 1) && quoted.size() == w + 2;
    if (printable) {
      out.append(s.substr(i, w));
    } else {
      char buf[16];
      snprintf(buf, sizeof(buf), "\\u%04X", static_cast<unsigned>(rune));
      out.append(buf);
    }
    i += w;
  }
  return SetString(ctx, std::move(out), r);
}

bool FnUrlquery(Args a, CallContext& ctx, Value* r) {
  std::string s;
  if (!EvalArgs(a, ctx, &s)) return false;
  static constexpr char kUpperHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(ch);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kUpperHex[c >> 4]);
      out.push_back(kUpperHex[c & 15]);
    }
  }
  return SetString(ctx, std::move(out), r);
}

// --- Promtail's functions and the strings package.

bool FnToLower(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, MapRunes(a[0].s, ToLowerRune), r);
}
bool FnToUpper(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, MapRunes(a[0].s, ToUpperRune), r);
}
bool FnTrimSpace(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimSpace(a[0].s)), r);
}
bool FnReplaceGo(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!ReplaceN(a[0].s, a[1].s, a[2].s, a[3].i, ctx.max_bytes(), &out)) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}
bool FnTrimGo(Args a, CallContext& ctx, Value* r) {
  const auto in_set = CutsetPredicate(a[1].s);
  return SetString(ctx, std::string(TrimRightFunc(TrimLeftFunc(a[0].s, in_set), in_set)), r);
}
bool FnTrimLeftGo(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimLeftFunc(a[0].s, CutsetPredicate(a[1].s))), r);
}
bool FnTrimRightGo(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimRightFunc(a[0].s, CutsetPredicate(a[1].s))), r);
}
std::string_view TrimPrefix(std::string_view s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
  return s;
}
std::string_view TrimSuffix(std::string_view s, std::string_view suffix) {
  if (s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
    s.remove_suffix(suffix.size());
  }
  return s;
}
bool FnTrimPrefixGo(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimPrefix(a[0].s, a[1].s)), r);
}
bool FnTrimSuffixGo(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimSuffix(a[0].s, a[1].s)), r);
}
bool FnHash(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA3-256", a[0].s, a[1].s), r);
}
bool FnSha2Hash(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA256", a[0].s, a[1].s), r);
}

// regexReplaceAll and friends: `must` variants report a bad pattern; the others fail the
// execution too (they panic in Go, which the template reports as an error).
bool RegexReplace(Args a, CallContext& ctx, Value* r, bool literal) {
  std::unique_ptr<RE2> holder;
  std::string why;
  const RE2* re = CompileRegex(ctx, a[0].s, &holder, &why);
  if (re == nullptr) return BadRegex(ctx, a[0].s, ctx.name().substr(0, 4) == "must");
  std::string out;
  if (!GoRegexpReplaceAll(*re, a[1].s, a[2].s, literal, &out, ctx.max_bytes())) {
    return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}
bool FnRegexReplaceAll(Args a, CallContext& ctx, Value* r) {
  return RegexReplace(a, ctx, r, false);
}
bool FnRegexReplaceAllLiteral(Args a, CallContext& ctx, Value* r) {
  return RegexReplace(a, ctx, r, true);
}

bool FnRegexMatch(Args a, CallContext& ctx, Value* r, bool must) {
  std::unique_ptr<RE2> holder;
  std::string why;
  const RE2* re = CompileRegex(ctx, a[0].s, &holder, &why);
  if (re == nullptr) {
    if (must) return BadRegex(ctx, a[0].s, true);
    *r = Value::Bool(false);
    return true;
  }
  *r = Value::Bool(RE2::PartialMatch(re2::StringPiece(a[1].s.data(), a[1].s.size()), *re));
  return true;
}
bool FnRegexMatchPlain(Args a, CallContext& ctx, Value* r) {
  return FnRegexMatch(a, ctx, r, false);
}
bool FnRegexMatchMust(Args a, CallContext& ctx, Value* r) { return FnRegexMatch(a, ctx, r, true); }

bool FnRegexFindAll(Args a, CallContext& ctx, Value* r) {
  std::unique_ptr<RE2> holder;
  std::string why;
  const RE2* re = CompileRegex(ctx, a[0].s, &holder, &why);
  if (re == nullptr) return BadRegex(ctx, a[0].s, ctx.name().substr(0, 4) == "must");
  const auto matches = FindAll(*re, a[1].s, a[2].i, ctx);
  if (!ctx.error().empty()) return false;
  std::vector<std::string_view> parts;
  for (const auto& [start, end] : matches) parts.push_back(a[1].s.substr(start, end - start));
  if (parts.empty()) {
    *r = Value::MakeList(GoType::kListString, {});
    r->list = nullptr;  // Go returns a nil slice
    return true;
  }
  return SetStringList(ctx, parts, r);
}

bool FnRegexFind(Args a, CallContext& ctx, Value* r) {
  std::unique_ptr<RE2> holder;
  std::string why;
  const RE2* re = CompileRegex(ctx, a[0].s, &holder, &why);
  if (re == nullptr) return BadRegex(ctx, a[0].s, ctx.name().substr(0, 4) == "must");
  re2::StringPiece match;
  const re2::StringPiece text(a[1].s.data(), a[1].s.size());
  if (!re->Match(text, 0, text.size(), RE2::UNANCHORED, &match, 1)) {
    return SetString(ctx, "", r);
  }
  return SetString(ctx, std::string(match.data(), match.size()), r);
}

bool FnRegexSplit(Args a, CallContext& ctx, Value* r) {
  std::unique_ptr<RE2> holder;
  std::string why;
  const RE2* re = CompileRegex(ctx, a[0].s, &holder, &why);
  if (re == nullptr) return BadRegex(ctx, a[0].s, ctx.name().substr(0, 4) == "must");
  const std::string_view s = a[1].s;
  const int64_t n = a[2].i;
  if (n == 0) {
    *r = Value::MakeList(GoType::kListString, {});
    r->list = nullptr;
    return true;
  }
  if (!a[0].s.empty() && s.empty()) return SetStringList(ctx, std::vector<std::string>{""}, r);
  const auto matches = FindAll(*re, s, n, ctx);
  if (!ctx.error().empty()) return false;
  std::vector<std::string_view> parts;
  size_t beg = 0, end = 0;
  for (const auto& [ms, me] : matches) {
    if (n > 0 && static_cast<int64_t>(parts.size()) == n - 1) break;
    end = ms;
    if (me != 0) parts.push_back(s.substr(beg, end - beg));
    beg = me;
  }
  if (end != s.size()) parts.push_back(s.substr(beg));
  return SetStringList(ctx, parts, r);
}

bool FnRegexQuoteMeta(Args a, CallContext& ctx, Value* r) {
  std::string out;
  for (char c : a[0].s) {
    if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return SetString(ctx, std::move(out), r);
}

// --- sprig: strings.

bool FnHello(Args, CallContext& ctx, Value* r) { return SetString(ctx, "Hello!", r); }

bool FnTitle(Args a, CallContext& ctx, Value* r) { return SetString(ctx, Title(a[0].s), r); }

bool FnUntitle(Args a, CallContext& ctx, Value* r) {
  bool next = true;
  return SetString(ctx,
                   MapRunes(a[0].s,
                            [&](char32_t c) {
                              if (IsSpaceRune(c)) {
                                next = true;
                                return c;
                              }
                              if (next) {
                                next = false;
                                return ToLowerRune(c);
                              }
                              return c;
                            }),
                   r);
}

bool FnSwapcase(Args a, CallContext& ctx, Value* r) {
  bool whitespace = true;
  return SetString(ctx,
                   MapRunes(a[0].s,
                            [&](char32_t c) {
                              if (IsUpperRune(c)) {
                                whitespace = false;
                                return ToLowerRune(c);
                              }
                              if (IsLowerRune(c)) {
                                const char32_t mapped = ToUpperRune(c);
                                whitespace = false;
                                return mapped;
                              }
                              whitespace = IsSpaceRune(c);
                              return c;
                            }),
                   r);
}

bool FnSubstr(Args a, CallContext& ctx, Value* r) {
  const int64_t start = a[0].i, end = a[1].i;
  const std::string_view s = a[2].s;
  const auto size = static_cast<int64_t>(s.size());
  auto out_of_range = [&](int64_t lo, int64_t hi, bool has_lo) {
    return ctx.Fail("runtime error: slice bounds out of range [" +
                    (has_lo ? std::to_string(lo) : std::string()) + ":" + std::to_string(hi) + "]" +
                    (hi > size ? " with length " + std::to_string(size) : ""));
  };
  if (start < 0) {
    if (end < 0 || end > size) return out_of_range(0, end, false);
    return SetString(ctx, std::string(s.substr(0, end)), r);
  }
  if (end < 0 || end > size) {
    if (start > size) return out_of_range(start, size, true);
    return SetString(ctx, std::string(s.substr(start)), r);
  }
  if (start > end) {
    return ctx.Fail("runtime error: slice bounds out of range [" + std::to_string(start) + ":" +
                    std::to_string(end) + "]");
  }
  return SetString(ctx, std::string(s.substr(start, end - start)), r);
}

bool FnTrunc(Args a, CallContext& ctx, Value* r) {
  const int64_t c = a[0].i;
  const std::string_view s = a[1].s;
  const auto size = static_cast<int64_t>(s.size());
  if (c < 0 && size + c > 0) return SetString(ctx, std::string(s.substr(size + c)), r);
  if (c >= 0 && size > c) return SetString(ctx, std::string(s.substr(0, c)), r);
  return SetString(ctx, std::string(s), r);
}

bool Repeat(CallContext& ctx, std::string_view s, int64_t n, std::string* out) {
  if (n < 0) return ctx.Fail("strings: negative Repeat count");
  if (!s.empty() && static_cast<uint64_t>(n) > ctx.max_bytes() / s.size()) return ctx.TooLong();
  out->reserve(out->size() + s.size() * n);
  for (int64_t k = 0; k < n && !s.empty(); ++k) out->append(s);
  return true;
}

bool FnRepeat(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!Repeat(ctx, a[1].s, a[0].i, &out)) return false;
  return SetString(ctx, std::move(out), r);
}

bool FnTrimAll(Args a, CallContext& ctx, Value* r) {
  const auto in_set = CutsetPredicate(a[0].s);
  return SetString(ctx, std::string(TrimRightFunc(TrimLeftFunc(a[1].s, in_set), in_set)), r);
}
bool FnTrimPrefix(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimPrefix(a[1].s, a[0].s)), r);
}
bool FnTrimSuffix(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TrimSuffix(a[1].s, a[0].s)), r);
}

// goutils reads these byte by byte, each byte as the rune of the same number.
bool IsSpaceByte(unsigned char c) { return IsSpaceRune(c); }

bool FnNospace(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool removed = false;
  for (char ch : a[0].s) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsSpaceByte(c)) {
      removed = true;
    } else {
      AppendRune(c, &out);
    }
  }
  return SetString(ctx, removed ? std::move(out) : std::string(a[0].s), r);
}

bool FnInitials(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool gap = true;
  for (char ch : a[0].s) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsSpaceByte(c)) {
      gap = true;
    } else if (gap) {
      AppendRune(c, &out);
      gap = false;
    }
  }
  return SetString(ctx, std::move(out), r);
}

// goutils.AbbreviateFull (errors yield "").
std::string Abbreviate(std::string_view str, int64_t offset, int64_t max_width) {
  if (str.empty()) return "";
  if (max_width < 4) return "";
  const auto len = static_cast<int64_t>(str.size());
  if (len <= max_width) return std::string(str);
  if (offset > len) offset = len;
  if (len - offset < max_width - 3) offset = len - (max_width - 3);
  if (offset <= 4) return std::string(str.substr(0, max_width - 3)) + "...";
  if (max_width < 7) return "";
  if (offset + max_width - 3 < len) return "..." + Abbreviate(str.substr(offset), 0, max_width - 3);
  return "..." + std::string(str.substr(len - (max_width - 3)));
}

bool FnAbbrev(Args a, CallContext& ctx, Value* r) {
  if (a[0].i < 4) return SetString(ctx, std::string(a[1].s), r);
  return SetString(ctx, Abbreviate(a[1].s, 0, a[0].i), r);
}

bool FnAbbrevboth(Args a, CallContext& ctx, Value* r) {
  const int64_t left = a[0].i, right = a[1].i;
  if (right < 4 || (left > 0 && right < 7)) return SetString(ctx, std::string(a[2].s), r);
  return SetString(ctx, Abbreviate(a[2].s, left, right), r);
}

// goutils.WrapCustom.
bool Wrap(CallContext& ctx, std::string_view str, int64_t wrap_length, std::string_view newline,
          bool wrap_long_words, Value* r) {
  if (str.empty()) return SetString(ctx, "", r);
  if (newline.empty()) newline = "\n";
  if (wrap_length < 1) wrap_length = 1;
  const auto length = static_cast<int64_t>(str.size());
  int64_t offset = 0;
  std::string out;
  while (length - offset > wrap_length) {
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
    if (str[offset] == ' ') {
      ++offset;
      continue;
    }
    const int64_t end = wrap_length + offset + 1;
    const size_t space = str.substr(offset, end - offset).rfind(' ');
    if (space != std::string_view::npos) {
      const int64_t at = static_cast<int64_t>(space) + offset;
      out.append(str.substr(offset, at - offset)).append(newline);
      offset = at + 1;
    } else if (wrap_long_words) {
      out.append(str.substr(offset, wrap_length)).append(newline);
      offset += wrap_length;
    } else {
      const int64_t from = wrap_length + offset;
      const size_t next = str.substr(from).find(' ');
      if (next == std::string_view::npos) {
        out.append(str.substr(offset));
        offset = length;
      } else {
        const int64_t at = static_cast<int64_t>(next) + from;
        out.append(str.substr(offset, at - offset)).append(newline);
        offset = at + 1;
      }
    }
  }
  out.append(str.substr(offset));
  return SetString(ctx, std::move(out), r);
}

bool FnWrap(Args a, CallContext& ctx, Value* r) { return Wrap(ctx, a[1].s, a[0].i, "", false, r); }
bool FnWrapWith(Args a, CallContext& ctx, Value* r) {
  return Wrap(ctx, a[2].s, a[0].i, a[1].s, true, r);
}

bool FnContains(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[1].s.find(a[0].s) != std::string_view::npos);
  return true;
}
bool FnHasPrefix(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[1].s.substr(0, a[0].s.size()) == a[0].s);
  return true;
}
bool FnHasSuffix(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[1].s.size() >= a[0].s.size() &&
                   a[1].s.substr(a[1].s.size() - a[0].s.size()) == a[0].s);
  return true;
}

bool FnQuote(Args a, CallContext& ctx, Value* r) {
  std::string out;
  for (const Value& v : a) {
    if (v.is_nil()) continue;
    if (!out.empty()) out.push_back(' ');
    AppendGoQuoted(StrVal(v), &out);
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnSquote(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool first = true;
  for (const Value& v : a) {
    if (v.is_nil()) continue;
    if (!first) out.push_back(' ');
    first = false;
    out.push_back('\'');
    if (!AppendValue(v, &out, ctx.max_bytes())) return ctx.TooLong();
    out.push_back('\'');
  }
  return SetString(ctx, std::move(out), r);
}

bool FnCat(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool first = true;
  for (const Value& v : a) {
    if (v.is_nil()) continue;
    if (!first) out.push_back(' ');
    first = false;
    if (!AppendValue(v, &out, ctx.max_bytes())) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool Indent(CallContext& ctx, int64_t spaces, std::string_view s, bool leading_newline, Value* r) {
  std::string pad;
  if (!Repeat(ctx, " ", spaces, &pad)) return false;
  std::string out = leading_newline ? "\n" + pad : pad;
  std::string replaced;
  if (!ReplaceN(s, "\n", "\n" + pad, -1, ctx.max_bytes(), &replaced)) return ctx.TooLong();
  out += replaced;
  return SetString(ctx, std::move(out), r);
}
bool FnIndent(Args a, CallContext& ctx, Value* r) { return Indent(ctx, a[0].i, a[1].s, false, r); }
bool FnNindent(Args a, CallContext& ctx, Value* r) { return Indent(ctx, a[0].i, a[1].s, true, r); }

bool FnReplace(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (!ReplaceN(a[2].s, a[0].s, a[1].s, -1, ctx.max_bytes(), &out)) return ctx.TooLong();
  return SetString(ctx, std::move(out), r);
}

bool FnPlural(Args a, CallContext&, Value* r) {
  *r = a[2].i == 1 ? a[0] : a[1];
  return true;
}

bool FnSha1sum(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA1", a[0].s), r);
}
bool FnSha256sum(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA256", a[0].s), r);
}
bool FnSha512sum(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, HexDigest("SHA512", a[0].s), r);
}
bool FnAdler32sum(Args a, CallContext& ctx, Value* r) {
  uint32_t s1 = 1, s2 = 0;
  for (char c : a[0].s) {
    s1 = (s1 + static_cast<unsigned char>(c)) % 65521;
    s2 = (s2 + s1) % 65521;
  }
  return SetString(ctx, std::to_string((s2 << 16) | s1), r);
}

bool FnToString(Args a, CallContext& ctx, Value* r) {
  std::string out;
  if (a[0].is_string()) {
    out.assign(a[0].s);
  } else if (!AppendValue(a[0], &out, ctx.max_bytes())) {
    return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnRandAlphaNum(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', 'z', [](char c) { return IsLetterRune(c) || (c >= '0' && c <= '9'); }, r);
}
bool FnRandAlpha(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', 'z', [](char c) { return IsLetterRune(c); }, r);
}
bool FnRandAscii(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', '~', [](char) { return true; }, r);
}
bool FnRandNumeric(Args a, CallContext& ctx, Value* r) {
  return RandomString(
      ctx, a[0].i, ' ', 'z', [](char c) { return c >= '0' && c <= '9'; }, r);
}

bool FnShuffle(Args a, CallContext& ctx, Value* r) {
  std::vector<std::string_view> runes;
  const std::string_view s = a[0].s;
  std::string decoded;
  for (size_t i = 0; i < s.size();) {
    size_t w;
    const char32_t c = DecodeRune(s, i, &w);
    if (c == 0xFFFD && w == 1) {
      runes.emplace_back("\xef\xbf\xbd");
    } else {
      runes.push_back(s.substr(i, w));
    }
    i += w;
  }
  for (size_t i = runes.size(); i > 1; --i) {
    std::swap(runes[i - 1], runes[CryptoRandomBelow(static_cast<int64_t>(i))]);
  }
  std::string out;
  for (std::string_view p : runes) out.append(p);
  return SetString(ctx, std::move(out), r);
}

// xstrings' word splitting (ToSnakeCase, ToKebabCase).
enum WordType {
  kInvalidWord,
  kNumberWord,
  kUpperCaseWord,
  kAlphabetWord,
  kConnectorWord,
  kPunctWord,
  kOtherWord
};

bool IsConnector(char32_t c) { return c == '-' || c == '_' || IsSpaceRune(c); }
bool IsAlphabet(char32_t c) {
  if (!IsLetterRune(c)) return false;
  if (c < 0x2E80) return true;
  return !((c >= 0x4E00 && c <= 0x9FCC) || (c >= 0x3400 && c <= 0x4DB5) ||
           (c >= 0x2E80 && c <= 0x2FDF) || (c >= 0x3040 && c <= 0x30FF) ||
           (c >= 0xAC00 && c <= 0xD7AF));
}

// xstrings.nextValidRune: the next rune that decodes (invalid bytes are skipped); `prev` when
// none is left.
char32_t NextValidRune(std::string_view s, char32_t prev, size_t* size) {
  *size = 0;
  while (!s.empty()) {
    size_t w;
    const char32_t c = DecodeRune(s, 0, &w);
    *size += w;
    if (!(c == 0xFFFD && w == 1)) return c;
    s.remove_prefix(w);
  }
  return prev;
}

void NextWord(std::string_view str, WordType* wt, std::string_view* word,
              std::string_view* remaining) {
  *wt = kInvalidWord;
  *word = {};
  *remaining = {};
  if (str.empty()) return;
  size_t offset = 0;
  *remaining = str;
  size_t size;
  char32_t c = NextValidRune(*remaining, 0xFFFD, &size);
  offset += size;
  if (c == 0xFFFD) {
    *wt = kInvalidWord;
    *word = str.substr(0, offset);
    *remaining = str.substr(offset);
    return;
  }
  auto advance_while = [&](auto pred) {
    while (!remaining->empty()) {
      c = NextValidRune(*remaining, c, &size);
      if (!pred(c)) break;
      offset += size;
      remaining->remove_prefix(size);
    }
  };
  if (IsConnector(c)) {
    *wt = kConnectorWord;
    remaining->remove_prefix(size);
    advance_while(IsConnector);
  } else if (IsPunctRune(c)) {
    *wt = kPunctWord;
    remaining->remove_prefix(size);
    advance_while(IsPunctRune);
  } else if (IsUpperRune(c)) {
    *wt = kUpperCaseWord;
    remaining->remove_prefix(size);
    if (!remaining->empty()) {
      c = NextValidRune(*remaining, c, &size);
      if (IsUpperRune(c)) {
        size_t prev_size = size;
        offset += size;
        remaining->remove_prefix(size);
        while (!remaining->empty()) {
          c = NextValidRune(*remaining, c, &size);
          if (!IsUpperRune(c)) break;
          prev_size = size;
          offset += size;
          remaining->remove_prefix(size);
        }
        if (!remaining->empty() && IsAlphabet(c)) {
          offset -= prev_size;
          *remaining = str.substr(offset);
        }
      } else if (IsAlphabet(c)) {
        offset += size;
        remaining->remove_prefix(size);
        advance_while([](char32_t x) { return IsAlphabet(x) && !IsUpperRune(x); });
      }
    }
  } else if (IsAlphabet(c)) {
    *wt = kAlphabetWord;
    remaining->remove_prefix(size);
    advance_while([](char32_t x) { return IsAlphabet(x) && !IsUpperRune(x); });
  } else if (IsDigitRune(c)) {
    *wt = kNumberWord;
    remaining->remove_prefix(size);
    advance_while(IsDigitRune);
  } else {
    *wt = kOtherWord;
    remaining->remove_prefix(size);
    while (!remaining->empty()) {
      c = NextValidRune(*remaining, c, &size);
      if (size == 0 || IsConnector(c) || IsAlphabet(c) || IsDigitRune(c) || IsPunctRune(c)) break;
      offset += size;
      remaining->remove_prefix(size);
    }
  }
  *word = str.substr(0, offset);
}

void LowerWord(std::string* buf, WordType wt, std::string_view str, char connector) {
  if (wt != kUpperCaseWord && wt != kConnectorWord) {
    buf->append(str);
    return;
  }
  for (size_t i = 0; i < str.size();) {
    size_t w;
    const char32_t c = DecodeRune(str, i, &w);
    if (IsConnector(c)) {
      buf->push_back(connector);
    } else if (IsUpperRune(c)) {
      AppendRune(ToLowerRune(c), buf);
    } else {
      AppendRune(c, buf);
    }
    i += w;
  }
}

std::string CamelCaseToLowerCase(std::string_view str, char connector) {
  if (str.empty()) return "";
  std::string buf;
  WordType wt;
  std::string_view word, remaining;
  NextWord(str, &wt, &word, &remaining);
  while (!remaining.empty()) {
    if (wt != kConnectorWord) LowerWord(&buf, wt, word, connector);
    const WordType prev = wt;
    const std::string_view last = word;
    NextWord(remaining, &wt, &word, &remaining);
    switch (prev) {
      case kNumberWord:
        while (wt == kAlphabetWord || wt == kNumberWord) {
          LowerWord(&buf, wt, word, connector);
          NextWord(remaining, &wt, &word, &remaining);
        }
        if (wt != kInvalidWord && wt != kPunctWord && wt != kConnectorWord) {
          buf.push_back(connector);
        }
        break;
      case kConnectorWord:
        LowerWord(&buf, prev, last, connector);
        break;
      case kPunctWord:
        break;
      default: {
        if (wt != kNumberWord) {
          if (wt != kConnectorWord && wt != kPunctWord) buf.push_back(connector);
          break;
        }
        if (remaining.empty()) break;
        const std::string_view number = word;
        NextWord(remaining, &wt, &word, &remaining);
        if (wt != kAlphabetWord) {
          LowerWord(&buf, kNumberWord, number, connector);
          if (wt != kConnectorWord && wt != kPunctWord) buf.push_back(connector);
          break;
        }
        buf.push_back(connector);
        LowerWord(&buf, kNumberWord, number, connector);
        while (wt == kAlphabetWord || wt == kNumberWord) {
          LowerWord(&buf, wt, word, connector);
          NextWord(remaining, &wt, &word, &remaining);
        }
        if (wt != kInvalidWord && wt != kConnectorWord && wt != kPunctWord) {
          buf.push_back(connector);
        }
        break;
      }
    }
  }
  LowerWord(&buf, wt, word, connector);
  return buf;
}

bool FnSnakecase(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, CamelCaseToLowerCase(a[0].s, '_'), r);
}
bool FnKebabcase(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, CamelCaseToLowerCase(a[0].s, '-'), r);
}

// xstrings.ToPascalCase.
bool FnCamelcase(Args a, CallContext& ctx, Value* r) {
  std::string_view str = a[0].s;
  if (str.empty()) return SetString(ctx, "", r);
  std::string buf;
  bool first_upper = false;
  char32_t r0 = 0, r1;
  size_t size = 0;
  while (!str.empty()) {
    r0 = DecodeRune(str, 0, &size);
    str.remove_prefix(size);
    if (!IsConnector(r0)) {
      first_upper = IsUpperRune(r0);
      r0 = ToUpperRune(r0);
      break;
    }
    AppendRune(r0, &buf);
  }
  if (str.empty()) {
    if (size != 0) AppendRune(r0, &buf);
    return SetString(ctx, std::move(buf), r);
  }
  while (!str.empty()) {
    r1 = r0;
    r0 = DecodeRune(str, 0, &size);
    str.remove_prefix(size);
    if (IsConnector(r0) && IsConnector(r1)) {
      AppendRune(r1, &buf);
      continue;
    }
    if (IsConnector(r1)) {
      first_upper = IsUpperRune(r0);
      r0 = ToUpperRune(r0);
    } else {
      if (first_upper) {
        if (IsUpperRune(r0)) {
          r0 = ToLowerRune(r0);
        } else {
          first_upper = false;
        }
      }
      AppendRune(r1, &buf);
    }
  }
  AppendRune(r0, &buf);
  return SetString(ctx, std::move(buf), r);
}

// --- sprig: conversions and numbers.

bool FnAtoi(Args a, CallContext&, Value* r) {
  std::string_view s = a[0].s;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  uint64_t u = 0;
  bool ok = !s.empty(), overflow = false;
  for (char c : s) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    if (u > (UINT64_MAX - 9) / 10) {
      overflow = true;
    } else {
      u = u * 10 + (c - '0');
    }
  }
  int64_t out = 0;
  if (ok) {
    const uint64_t limit = negative ? UINT64_C(1) << 63 : static_cast<uint64_t>(INT64_MAX);
    if (overflow || u > limit) u = limit;  // strconv clamps on ErrRange
    out = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  }
  *r = Value::Int(out);
  return true;
}

bool FnInt(Args a, CallContext&, Value* r) {
  *r = Value::Int(CastToInt64(a[0]));
  return true;
}
bool FnInt64(Args a, CallContext&, Value* r) {
  *r = Value::Int64(CastToInt64(a[0]));
  return true;
}
bool FnFloat64(Args a, CallContext&, Value* r) {
  *r = Value::Float(CastToFloat64(a[0]));
  return true;
}

bool FnToDecimal(Args a, CallContext&, Value* r) {
  std::string s = StrVal(a[0]);
  std::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  uint64_t u = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), u, 8);
  int64_t out = 0;
  if (!body.empty() && ec == std::errc() && ptr == body.data() + body.size() &&
      u <= (negative ? UINT64_C(1) << 63 : static_cast<uint64_t>(INT64_MAX))) {
    out = negative ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
  }
  *r = Value::Int64(out);
  return true;
}

bool FnSplit(CallContext& ctx, Value* r, int64_t n, std::string_view sep, std::string_view orig) {
  const auto parts = SplitN(orig, sep, n);
  auto m = std::make_shared<Map>();
  for (size_t k = 0; k < parts.size(); ++k) {
    (*m)["_" + std::to_string(k)] = Value::Own(std::string(parts[k]));
  }
  return SetMap(ctx, GoType::kMapString, std::move(m), r);
}
bool FnSplitMap(Args a, CallContext& ctx, Value* r) { return FnSplit(ctx, r, -1, a[0].s, a[1].s); }
bool FnSplitn(Args a, CallContext& ctx, Value* r) {
  return FnSplit(ctx, r, a[1].i, a[0].s, a[2].s);
}
bool FnSplitList(Args a, CallContext& ctx, Value* r) {
  return SetStringList(ctx, SplitN(a[1].s, a[0].s, -1), r);
}
bool FnToStrings(Args a, CallContext& ctx, Value* r) {
  return SetStringList(ctx, StrSlice(a[0]), r);
}

// sprig's untilStep, with the element count checked before anything is built.
bool UntilStep(CallContext& ctx, int64_t start, int64_t stop, int64_t step, List* out) {
  uint64_t count = 0;
  if (stop < start) {
    if (step >= 0) return true;
    count = (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) /
                static_cast<uint64_t>(-(step + 1) + 1) +
            1;
  } else {
    if (step <= 0) return true;
    if (stop == start) return true;
    count = (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) /
                static_cast<uint64_t>(step) +
            1;
  }
  if (count > static_cast<uint64_t>(INT64_MAX / kElementBytes) ||
      !ctx.Spend(static_cast<int64_t>(count), static_cast<int64_t>(count) * kElementBytes)) {
    if (ctx.error().empty()) ctx.Spend(INT64_MAX / 2, 0);
    return false;
  }
  out->reserve(count);
  int64_t v = start;
  for (uint64_t k = 0; k < count; ++k) {
    out->push_back(Value::Int(v));
    v = static_cast<int64_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(step));
  }
  return true;
}

bool FnUntil(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!UntilStep(ctx, 0, a[0].i, a[0].i < 0 ? -1 : 1, &items)) return false;
  *r = Value::MakeList(GoType::kListInt, std::move(items));
  return true;
}

bool FnUntilStep(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!UntilStep(ctx, a[0].i, a[1].i, a[2].i, &items)) return false;
  *r = Value::MakeList(GoType::kListInt, std::move(items));
  return true;
}

bool FnSeq(Args a, CallContext& ctx, Value* r) {
  List items;
  int64_t start = 1, end = 0, step = 1;
  switch (a.size()) {
    case 1:
      end = a[0].i;
      if (end < start) step = -1;
      if (!UntilStep(ctx, start, end + step, step, &items)) return false;
      break;
    case 2:
      start = a[0].i, end = a[1].i;
      if (end < start) step = -1;
      if (!UntilStep(ctx, start, end + step, step, &items)) return false;
      break;
    case 3: {
      start = a[0].i, end = a[2].i, step = a[1].i;
      int64_t increment = 1;
      if (end < start) {
        increment = -1;
        if (step > 0) return SetString(ctx, "", r);
      }
      if (!UntilStep(ctx, start, end + increment, step, &items)) return false;
      break;
    }
    default:
      return SetString(ctx, "", r);
  }
  std::string out;
  for (const Value& v : items) {
    if (!out.empty()) out.push_back(' ');
    out.append(std::to_string(v.i));
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnAdd1(Args a, CallContext&, Value* r) {
  *r = Value::Int64(static_cast<int64_t>(static_cast<uint64_t>(CastToInt64(a[0])) + 1));
  return true;
}
bool FnAdd(Args a, CallContext&, Value* r) {
  uint64_t acc = 0;
  for (const Value& v : a) acc += static_cast<uint64_t>(CastToInt64(v));
  *r = Value::Int64(static_cast<int64_t>(acc));
  return true;
}
bool FnSub(Args a, CallContext&, Value* r) {
  *r = Value::Int64(static_cast<int64_t>(static_cast<uint64_t>(CastToInt64(a[0])) -
                                         static_cast<uint64_t>(CastToInt64(a[1]))));
  return true;
}
bool FnMul(Args a, CallContext&, Value* r) {
  uint64_t acc = static_cast<uint64_t>(CastToInt64(a[0]));
  for (size_t k = 1; k < a.size(); ++k) acc *= static_cast<uint64_t>(CastToInt64(a[k]));
  *r = Value::Int64(static_cast<int64_t>(acc));
  return true;
}
bool DivMod(Args a, CallContext& ctx, Value* r, bool div) {
  const int64_t x = CastToInt64(a[0]), y = CastToInt64(a[1]);
  if (y == 0) return ctx.Fail("runtime error: integer divide by zero");
  if (x == INT64_MIN && y == -1) {
    *r = Value::Int64(div ? x : 0);  // Go wraps
  } else {
    *r = Value::Int64(div ? x / y : x % y);
  }
  return true;
}
bool FnDiv(Args a, CallContext& ctx, Value* r) { return DivMod(a, ctx, r, true); }
bool FnMod(Args a, CallContext& ctx, Value* r) { return DivMod(a, ctx, r, false); }

bool FnRandInt(Args a, CallContext& ctx, Value* r) {
  const int64_t lo = a[0].i, hi = a[1].i;
  if (hi - lo <= 0) return ctx.Fail("invalid argument to Intn");
  *r = Value::Int(lo + CryptoRandomBelow(hi - lo));
  return true;
}

bool FnMax(Args a, CallContext&, Value* r) {
  int64_t acc = CastToInt64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = std::max(acc, CastToInt64(a[k]));
  *r = Value::Int64(acc);
  return true;
}
bool FnMin(Args a, CallContext&, Value* r) {
  int64_t acc = CastToInt64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = std::min(acc, CastToInt64(a[k]));
  *r = Value::Int64(acc);
  return true;
}
// Go's math.Max / math.Min: NaN wins, and +0 beats -0 for Max (the reverse for Min).
double GoMax(double x, double y) {
  if (std::isinf(x) && x > 0) return x;
  if (std::isinf(y) && y > 0) return y;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  if (x == 0 && x == y) return std::signbit(x) ? y : x;
  return x > y ? x : y;
}
double GoMin(double x, double y) {
  if (std::isinf(x) && x < 0) return x;
  if (std::isinf(y) && y < 0) return y;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  if (x == 0 && x == y) return std::signbit(x) ? x : y;
  return x < y ? x : y;
}
bool FnMaxf(Args a, CallContext&, Value* r) {
  double acc = CastToFloat64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = GoMax(acc, CastToFloat64(a[k]));
  *r = Value::Float(acc);
  return true;
}
bool FnMinf(Args a, CallContext&, Value* r) {
  double acc = CastToFloat64(a[0]);
  for (size_t k = 1; k < a.size(); ++k) acc = GoMin(acc, CastToFloat64(a[k]));
  *r = Value::Float(acc);
  return true;
}
bool FnCeil(Args a, CallContext&, Value* r) {
  *r = Value::Float(std::ceil(CastToFloat64(a[0])));
  return true;
}
bool FnFloor(Args a, CallContext&, Value* r) {
  *r = Value::Float(std::floor(CastToFloat64(a[0])));
  return true;
}
bool FnRound(Args a, CallContext&, Value* r) {
  const double round_on = a.size() > 2 ? a[2].d : 0.5;
  const double val = CastToFloat64(a[0]);
  const double pow = std::pow(10.0, static_cast<double>(a[1].i));
  const double digit = pow * val;
  double integral;
  const double frac = std::modf(digit, &integral);
  const double rounded = frac >= round_on ? std::ceil(digit) : std::floor(digit);
  *r = Value::Float(rounded / pow);
  return true;
}

// addf, subf, mulf, divf: shopspring/decimal arithmetic on the shortest decimal form of each
// operand, as sprig does.
bool DecimalOp(Args a, CallContext& ctx, Value* r, char op, bool start_from_zero) {
  std::string error;
  Decimal acc;
  size_t first = 0;
  if (start_from_zero) {
    acc = Decimal::FromDouble(0, &error);
  } else {
    acc = Decimal::FromDouble(CastToFloat64(a[0]), &error);
    first = 1;
  }
  if (!error.empty()) return ctx.Fail(error);
  for (size_t k = first; k < a.size(); ++k) {
    const Decimal x = Decimal::FromDouble(CastToFloat64(a[k]), &error);
    if (!error.empty()) return ctx.Fail(error);
    if (!acc.Apply(op, x, &error)) return ctx.Fail(error);
    if (!ctx.Spend(static_cast<int64_t>(acc.digits()), 0)) return false;
  }
  *r = Value::Float(acc.ToDouble());
  return true;
}
bool FnAddf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '+', true); }
bool FnAdd1f(Args a, CallContext& ctx, Value* r) {
  Value args[2] = {a[0], Value::Int(1)};
  return DecimalOp(std::span<Value>(args, 2), ctx, r, '+', false);
}
bool FnSubf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '-', false); }
bool FnMulf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '*', false); }
bool FnDivf(Args a, CallContext& ctx, Value* r) { return DecimalOp(a, ctx, r, '/', false); }

// --- sprig: defaults, JSON, reflection.

bool FnDefault(Args a, CallContext&, Value* r) {
  *r = (a.size() < 2 || IsEmpty(a[1])) ? a[0] : a[1];
  return true;
}
bool FnEmpty(Args a, CallContext&, Value* r) {
  *r = Value::Bool(IsEmpty(a[0]));
  return true;
}
bool FnCoalesce(Args a, CallContext&, Value* r) {
  *r = Value();
  for (const Value& v : a) {
    if (!IsEmpty(v)) {
      *r = v;
      break;
    }
  }
  return true;
}
bool FnAll(Args a, CallContext&, Value* r) {
  *r = Value::Bool(std::all_of(a.begin(), a.end(), [](const Value& v) { return !IsEmpty(v); }));
  return true;
}
bool FnAny(Args a, CallContext&, Value* r) {
  *r = Value::Bool(std::any_of(a.begin(), a.end(), [](const Value& v) { return !IsEmpty(v); }));
  return true;
}
bool FnTernary(Args a, CallContext&, Value* r) {
  *r = a[2].b ? a[0] : a[1];
  return true;
}

bool ToJson(Args a, CallContext& ctx, Value* r, JsonStyle style, bool must) {
  std::string out, error;
  bool too_long = false;
  if (!EncodeJson(a[0], style, ctx.max_bytes(), &out, &error, &too_long)) {
    if (too_long) return ctx.TooLong();
    if (must) return ctx.Fail(error);
    out.clear();
  }
  return SetString(ctx, std::move(out), r);
}
bool FnToJson(Args a, CallContext& ctx, Value* r) { return ToJson(a, ctx, r, {}, false); }
bool FnMustToJson(Args a, CallContext& ctx, Value* r) { return ToJson(a, ctx, r, {}, true); }
bool FnToPrettyJson(Args a, CallContext& ctx, Value* r) {
  return ToJson(a, ctx, r, {true, true}, false);
}
bool FnMustToPrettyJson(Args a, CallContext& ctx, Value* r) {
  return ToJson(a, ctx, r, {true, true}, true);
}
bool FnToRawJson(Args a, CallContext& ctx, Value* r) {
  // sprig panics on an encoding error here, which fails the execution.
  return ToJson(a, ctx, r, {false, false}, true);
}
bool FnMustToRawJson(Args a, CallContext& ctx, Value* r) {
  return ToJson(a, ctx, r, {false, false}, true);
}
bool FromJson(Args a, CallContext& ctx, Value* r, bool must) {
  std::string error;
  int64_t elements = 0;
  Value v;
  const bool ok = DecodeJson(a[0].s, &v, &error, &elements);
  if (!ctx.Spend(elements, elements * kElementBytes)) return false;
  if (!ok) {
    if (must) return ctx.Fail(error);
    *r = Value();
    return true;
  }
  *r = std::move(v);
  return true;
}
bool FnFromJson(Args a, CallContext& ctx, Value* r) { return FromJson(a, ctx, r, false); }
bool FnMustFromJson(Args a, CallContext& ctx, Value* r) { return FromJson(a, ctx, r, true); }

bool FnTypeOf(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(TypeName(a[0])), r);
}
bool FnTypeIs(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[0].s == TypeName(a[1]));
  return true;
}
bool FnTypeIsLike(Args a, CallContext&, Value* r) {
  const std::string_view t = TypeName(a[1]);
  *r = Value::Bool(a[0].s == t || "*" + std::string(a[0].s) == t);
  return true;
}
bool FnKindOf(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(KindName(a[0])), r);
}
bool FnKindIs(Args a, CallContext&, Value* r) {
  *r = Value::Bool(a[0].s == KindName(a[1]));
  return true;
}
bool FnDeepEqual(Args a, CallContext& ctx, Value* r) {
  int64_t budget = 1000000;
  const bool equal = DeepEqual(a[0], a[1], &budget);
  if (!ctx.Spend(1000000 - std::max<int64_t>(budget, 0), 0)) return false;
  *r = Value::Bool(equal);
  return true;
}

// A deep copy of v, spending one element per value copied.
bool DeepCopy(CallContext& ctx, const Value& v, Value* out, int depth) {
  if (depth > 100) return ctx.Fail("deepCopy error: too deeply nested");
  if (!ctx.Spend(1, kElementBytes)) return false;
  if (v.is_list()) {
    if (!v.list) {
      *out = v;
      return true;
    }
    List items(v.items().size());
    for (size_t k = 0; k < items.size(); ++k) {
      if (!DeepCopy(ctx, v.items()[k], &items[k], depth + 1)) return false;
    }
    *out = Value::MakeList(v.type, std::move(items));
    return true;
  }
  if (v.is_map()) {
    if (v.type != GoType::kData && !v.map) {
      *out = v;
      return true;
    }
    auto m = std::make_shared<Map>();
    for (const auto& [key, item] : MapEntries(v)) {
      if (!DeepCopy(ctx, item, &(*m)[key], depth + 1)) return false;
    }
    *out = Value::MakeMap(v.type == GoType::kData ? GoType::kMapAny : v.type, std::move(m));
    return true;
  }
  *out = v;
  return true;
}
bool FnDeepCopy(Args a, CallContext& ctx, Value* r) { return DeepCopy(ctx, a[0], r, 0); }

// --- sprig: paths and encodings.

bool FnBase(Args a, CallContext& ctx, Value* r) { return SetString(ctx, PathBase(a[0].s), r); }
bool FnDir(Args a, CallContext& ctx, Value* r) { return SetString(ctx, PathDir(a[0].s), r); }
bool FnClean(Args a, CallContext& ctx, Value* r) { return SetString(ctx, PathClean(a[0].s), r); }
bool FnExt(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, std::string(PathExt(a[0].s)), r);
}
bool FnIsAbs(Args a, CallContext&, Value* r) {
  *r = Value::Bool(!a[0].s.empty() && a[0].s[0] == '/');
  return true;
}
bool FnB64enc(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base64Encode(a[0].s), r);
}
bool FnB64dec(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base64Decode(a[0].s), r);
}
bool FnB32enc(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base32Encode(a[0].s), r);
}
bool FnB32dec(Args a, CallContext& ctx, Value* r) {
  return SetString(ctx, Base32Decode(a[0].s), r);
}

bool FnUuidv4(Args, CallContext& ctx, Value* r) {
  unsigned char b[16];
  RAND_bytes(b, sizeof(b));
  b[6] = (b[6] & 0x0F) | 0x40;
  b[8] = (b[8] & 0x3F) | 0x80;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int k = 0; k < 16; ++k) {
    if (k == 4 || k == 6 || k == 8 || k == 10) out.push_back('-');
    out.push_back(kHex[b[k] >> 4]);
    out.push_back(kHex[b[k] & 15]);
  }
  return SetString(ctx, std::move(out), r);
}

bool FnRandBytes(Args a, CallContext& ctx, Value* r) {
  const int64_t n = a[0].i;
  if (n < 0) return ctx.Fail("runtime error: makeslice: len out of range");
  if (static_cast<uint64_t>(n) > ctx.max_bytes() / 4 * 3) return ctx.TooLong();
  std::string bytes(static_cast<size_t>(n), '\0');
  if (n > 0) RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n));
  return SetString(ctx, Base64Encode(bytes), r);
}

bool FnFail(Args a, CallContext& ctx, Value*) { return ctx.Fail(a[0].s); }

// --- sprig: lists.

bool FnList(Args a, CallContext& ctx, Value* r) {
  return SetList(ctx, GoType::kListAny, List(a.begin(), a.end()), r);
}

bool CopyList(CallContext& ctx, const Value& v, std::string_view what, List* out) {
  if (!v.is_list()) return NotAList(ctx, v, what);
  if (!ctx.Spend(static_cast<int64_t>(v.items().size()),
                 static_cast<int64_t>(v.items().size()) * kElementBytes)) {
    return false;
  }
  out->assign(v.items().begin(), v.items().end());
  return true;
}

bool FnPush(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot push on type ", &items)) return false;
  items.push_back(a[1]);
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}
bool FnPrepend(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot prepend on type ", &items)) return false;
  items.insert(items.begin(), a[1]);
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}

bool FnChunk(Args a, CallContext& ctx, Value* r) {
  const int64_t size = a[0].i;
  const Value& v = a[1];
  if (!v.is_list()) return NotAList(ctx, v, "Cannot chunk type ");
  const auto& items = v.items();
  const auto l = static_cast<int64_t>(items.size());
  if (size <= 0) return ctx.Fail("runtime error: makeslice: len out of range");
  const int64_t chunks = (l - 1 + (l == 0 ? 0 : 0)) / size + 1 - (l == 0 ? 1 : 0);
  List out;
  if (!ctx.Spend(l + chunks, (l + chunks) * kElementBytes)) return false;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t clen = size;
    if (c == chunks - 1) {
      clen = l % size;
      if (clen == 0) clen = size;
    }
    List chunk(items.begin() + c * size, items.begin() + c * size + clen);
    out.push_back(Value::MakeList(GoType::kListAny, std::move(chunk)));
  }
  *r = Value::MakeList(GoType::kListList, std::move(out));
  return true;
}

bool FnFirst(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find first on type ");
  *r = a[0].items().empty() ? Value() : a[0].items().front();
  return true;
}
bool FnLast(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find last on type ");
  *r = a[0].items().empty() ? Value() : a[0].items().back();
  return true;
}
bool FnRest(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find rest on type ");
  const auto& items = a[0].items();
  if (items.empty()) {
    *r = Value::MakeList(GoType::kListAny, {});
    r->list = nullptr;
    return true;
  }
  return SetList(ctx, GoType::kListAny, List(items.begin() + 1, items.end()), r);
}
bool FnInitial(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find initial on type ");
  const auto& items = a[0].items();
  if (items.empty()) {
    *r = Value::MakeList(GoType::kListAny, {});
    r->list = nullptr;
    return true;
  }
  return SetList(ctx, GoType::kListAny, List(items.begin(), items.end() - 1), r);
}
bool FnReverse(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot find reverse on type ", &items)) return false;
  std::reverse(items.begin(), items.end());
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}
bool FnJoin(Args a, CallContext& ctx, Value* r) {
  std::string out;
  bool first = true;
  for (const std::string& part : StrSlice(a[1])) {
    if (!first) out.append(a[0].s);
    first = false;
    out.append(part);
    if (out.size() > ctx.max_bytes()) return ctx.TooLong();
  }
  return SetString(ctx, std::move(out), r);
}

bool FnSortAlpha(Args a, CallContext& ctx, Value* r) {
  std::vector<std::string> items = a[0].is_list() ? StrSlice(a[0]) : std::vector{StrVal(a[0])};
  std::sort(items.begin(), items.end());
  return SetStringList(ctx, items, r);
}
bool FnCompact(Args a, CallContext& ctx, Value* r) {
  List items;
  if (!CopyList(ctx, a[0], "Cannot compact on type ", &items)) return false;
  std::erase_if(items, [](const Value& v) { return IsEmpty(v); });
  return SetList(ctx, GoType::kListAny, std::move(items), r);
}

bool InList(CallContext& ctx, std::span<const Value> haystack, const Value& needle, bool* found) {
  for (const Value& h : haystack) {
    int64_t budget = 100000;
    const bool equal = DeepEqual(needle, h, &budget);
    if (!ctx.Spend(100000 - std::max<int64_t>(budget, 0), 0)) return false;
    if (equal) {
      *found = true;
      return true;
    }
  }
  *found = false;
  return true;
}

bool FnUniq(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find uniq on type ");
  List out;
  for (const Value& item : a[0].items()) {
    bool found;
    if (!InList(ctx, out, item, &found)) return false;
    if (!found) out.push_back(item);
  }
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}
bool FnWithout(Args a, CallContext& ctx, Value* r) {
  if (!a[0].is_list()) return NotAList(ctx, a[0], "Cannot find without on type ");
  List out;
  for (const Value& item : a[0].items()) {
    bool found;
    if (!InList(ctx, a.subspan(1), item, &found)) return false;
    if (!found) out.push_back(item);
  }
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}
bool FnHas(Args a, CallContext& ctx, Value* r) {
  if (a[1].is_nil()) {
    *r = Value::Bool(false);
    return true;
  }
  if (!a[1].is_list()) return NotAList(ctx, a[1], "Cannot find has on type ");
  bool found;
  if (!InList(ctx, a[1].items(), a[0], &found)) return false;
  *r = Value::Bool(found);
  return true;
}

bool FnSlice(Args a, CallContext& ctx, Value* r) {
  const Value& v = a[0];
  if (!v.is_list()) {
    if (v.is_nil()) return NotAList(ctx, v, "");
    return ctx.Fail("list should be type of slice or array but " + std::string(KindName(v)));
  }
  const auto& items = v.items();
  const auto l = static_cast<int64_t>(items.size());
  if (l == 0) {
    *r = Value();
    return true;
  }
  const int64_t start = a.size() > 1 ? CastToInt64(a[1]) : 0;
  const int64_t end = a.size() > 2 ? CastToInt64(a[2]) : l;
  if (start < 0 || end < start || end > l) {
    return ctx.Fail("reflect.Value.Slice: slice index out of bounds");
  }
  return SetList(ctx, v.type, List(items.begin() + start, items.begin() + end), r);
}

bool FnConcat(Args a, CallContext& ctx, Value* r) {
  List out;
  for (const Value& v : a) {
    if (!v.is_list()) {
      if (v.is_nil()) return NotAList(ctx, v, "");
      return ctx.Fail("Cannot concat type " + std::string(KindName(v)) + " as list");
    }
    if (!ctx.Spend(static_cast<int64_t>(v.items().size()),
                   static_cast<int64_t>(v.items().size()) * kElementBytes)) {
      return false;
    }
    out.insert(out.end(), v.items().begin(), v.items().end());
  }
  *r = Value::MakeList(GoType::kListAny, std::move(out));
  if (r->items().empty()) r->list = nullptr;  // Go's nil slice: no list was appended to
  return true;
}

// --- sprig: dicts.

bool FnDict(Args a, CallContext& ctx, Value* r) {
  auto m = std::make_shared<Map>();
  for (size_t k = 0; k < a.size(); k += 2) {
    const std::string key = StrVal(a[k]);
    (*m)[key] = k + 1 < a.size() ? a[k + 1] : Value::Borrow("");
  }
  return SetMap(ctx, GoType::kMapAny, std::move(m), r);
}

bool FnGet(Args a, CallContext&, Value* r) {
  if (!a[0].is_nil()) {
    if (a[0].type == GoType::kData) {
      bool found = false;
      a[0].data->ForEach([&](std::string_view k, const TemplateValue&) { found |= k == a[1].s; });
      if (found) {
        *r = MapLookup(a[0], a[1].s);
        return true;
      }
    } else if (a[0].map) {
      auto it = a[0].map->find(a[1].s);
      if (it != a[0].map->end()) {
        *r = it->second;
        return true;
      }
    }
  }
  *r = Value::Borrow("");
  return true;
}

bool HasKey(const Value& m, std::string_view key) {
  if (m.type == GoType::kData) {
    bool found = false;
    m.data->ForEach([&](std::string_view k, const TemplateValue&) { found |= k == key; });
    return found;
  }
  return m.map && m.map->count(key) > 0;
}

bool FnSet(Args a, CallContext& ctx, Value* r) {
  if (!a[0].map) return ctx.Fail("assignment to entry in nil map");
  if (!ctx.Spend(1, kElementBytes)) return false;
  (*a[0].map)[std::string(a[1].s)] = a[2];
  *r = a[0];
  return true;
}
bool FnUnset(Args a, CallContext&, Value* r) {
  if (a[0].map) a[0].map->erase(std::string(a[1].s));
  *r = a[0];
  return true;
}
bool FnHasKey(Args a, CallContext&, Value* r) {
  *r = Value::Bool(HasKey(a[0], a[1].s));
  return true;
}
bool FnPluck(Args a, CallContext& ctx, Value* r) {
  List out;
  for (size_t k = 1; k < a.size(); ++k) {
    if (HasKey(a[k], a[0].s)) out.push_back(MapLookup(a[k], a[0].s));
  }
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}
bool FnKeys(Args a, CallContext& ctx, Value* r) {
  // Go lists a map's keys in random order; here they come sorted, map by map.
  std::vector<std::string> keys;
  for (const Value& m : a) {
    for (const auto& [key, item] : MapEntries(m)) keys.push_back(key);
  }
  return SetStringList(ctx, keys, r);
}
bool FnPick(Args a, CallContext& ctx, Value* r) {
  auto m = std::make_shared<Map>();
  for (size_t k = 1; k < a.size(); ++k) {
    if (HasKey(a[0], a[k].s)) (*m)[std::string(a[k].s)] = MapLookup(a[0], a[k].s);
  }
  return SetMap(ctx, GoType::kMapAny, std::move(m), r);
}
bool FnOmit(Args a, CallContext& ctx, Value* r) {
  auto m = std::make_shared<Map>(MapEntries(a[0]));
  for (size_t k = 1; k < a.size(); ++k) m->erase(std::string(a[k].s));
  return SetMap(ctx, GoType::kMapAny, std::move(m), r);
}
bool FnValues(Args a, CallContext& ctx, Value* r) {
  // Go's order is random; here it is the keys' order.
  List out;
  for (const auto& [key, item] : MapEntries(a[0])) out.push_back(item);
  return SetList(ctx, GoType::kListAny, std::move(out), r);
}

// mergo.Merge (overwrite = false) / MergeWithOverwrite into dst, recursing into maps.
bool MergeInto(CallContext& ctx, Map* dst, const Map& src, bool overwrite, int depth) {
  if (depth > 100) return ctx.Fail("too deeply nested");
  for (const auto& [key, value] : src) {
    if (!ctx.Spend(1, kElementBytes)) return false;
    auto it = dst->find(key);
    if (it == dst->end()) {
      (*dst)[key] = value;
      continue;
    }
    Value& existing = it->second;
    if (existing.type == GoType::kMapAny && existing.map && value.type == GoType::kMapAny &&
        value.map) {
      if (existing.map.get() == value.map.get()) continue;
      if (!MergeInto(ctx, existing.map.get(), *value.map, overwrite, depth + 1)) return false;
      continue;
    }
    if (overwrite ? !IsEmpty(value) : IsEmpty(existing)) existing = value;
  }
  return true;
}

bool Merge(Args a, CallContext& ctx, Value* r, bool overwrite) {
  if (!a[0].map) return ctx.Fail("src and dst must be of same type");
  for (size_t k = 1; k < a.size(); ++k) {
    if (a[k].is_nil()) continue;
    if (!MergeInto(ctx, a[0].map.get(), MapEntries(a[k]), overwrite, 0)) return false;
  }
  *r = a[0];
  return true;
}
bool FnMerge(Args a, CallContext& ctx, Value* r) { return Merge(a, ctx, r, false); }
bool FnMergeOverwrite(Args a, CallContext& ctx, Value* r) { return Merge(a, ctx, r, true); }

bool FnDig(Args a, CallContext& ctx, Value* r) {
  if (a.size() < 3) return ctx.Fail("dig needs at least three arguments");
  const Value& dict = a[a.size() - 1];
  if (dict.type != GoType::kMapAny && dict.type != GoType::kData) {
    return ctx.Fail("interface conversion: interface {} is " + std::string(TypeName(dict)) +
                    ", not map[string]interface {}");
  }
  for (size_t k = 0; k + 2 < a.size(); ++k) {
    if (!a[k].is_string()) {
      return ctx.Fail("interface conversion: interface {} is " + std::string(TypeName(a[k])) +
                      ", not string");
    }
  }
  Value current = dict;
  for (size_t k = 0; k + 2 < a.size(); ++k) {
    if (!HasKey(current, a[k].s)) {
      *r = a[a.size() - 2];
      return true;
    }
    Value step = MapLookup(current, a[k].s);
    if (k + 3 == a.size()) {
      *r = step;
      return true;
    }
    if (step.type != GoType::kMapAny) {
      return ctx.Fail("interface conversion: interface {} is " + std::string(TypeName(step)) +
                      ", not map[string]interface {}");
    }
    current = step;
  }
  *r = current;
  return true;
}

// --- sprig: dates.

bool FnNow(Args, CallContext&, Value* r) {
  *r = Value::Time(Now(), LocalZone(), MonotonicNanos());
  return true;
}

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
bool FnDateModify(Args a, CallContext& ctx, Value* r) { return DateModify(a, ctx, r, false); }
bool FnMustDateModify(Args a, CallContext& ctx, Value* r) { return DateModify(a, ctx, r, true); }

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

constexpr std::string_view kCertificates =
    "it generates keys and certificates, which have no place in a log pipeline";
constexpr std::string_view kSecrets =
    "it would read the plugin's environment, where secrets live, into log lines";

// Argument counts include the piped value. Params: see Function::params.
constexpr Function kFunctions[] = {
    // Go's builtins.
    {"and", nullptr, "rr*", {}},
    {"or", nullptr, "rr*", {}},
    {"not", FnNot, "r", {}},
    {"eq", FnEq, "rrr*", {}},
    {"ne", FnNe, "rr", {}},
    {"lt", FnLt, "rr", {}},
    {"le", FnLe, "rr", {}},
    {"gt", FnGt, "rr", {}},
    {"ge", FnGe, "rr", {}},
    {"index", FnIndex, "rr*", {}},
    {"len", FnLen, "r", {}},
    {"print", FnPrint, "a*", {}},
    {"printf", FnPrintf, "sa*", {}},
    {"println", FnPrintln, "a*", {}},
    {"html", FnHtml, "a*", {}},
    {"js", FnJs, "a*", {}},
    {"urlquery", FnUrlquery, "a*", {}},
    {"call", nullptr, "rr*", "the template data holds no functions to call"},
    // Promtail's.
    {"ToLower", FnToLower, "s", {}},
    {"ToUpper", FnToUpper, "s", {}},
    {"Replace", FnReplaceGo, "sssi", {}},
    {"Trim", FnTrimGo, "ss", {}},
    {"TrimLeft", FnTrimLeftGo, "ss", {}},
    {"TrimRight", FnTrimRightGo, "ss", {}},
    {"TrimPrefix", FnTrimPrefixGo, "ss", {}},
    {"TrimSuffix", FnTrimSuffixGo, "ss", {}},
    {"TrimSpace", FnTrimSpace, "s", {}},
    {"Hash", FnHash, "ss", {}},
    {"Sha2Hash", FnSha2Hash, "ss", {}},
    {"regexReplaceAll", FnRegexReplaceAll, "sss", {}, 0},
    {"regexReplaceAllLiteral", FnRegexReplaceAllLiteral, "sss", {}, 0},
    // sprig: strings.
    {"hello", FnHello, "", {}},
    {"abbrev", FnAbbrev, "is", {}},
    {"abbrevboth", FnAbbrevboth, "iis", {}},
    {"trunc", FnTrunc, "is", {}},
    {"trim", FnTrimSpace, "s", {}},
    {"upper", FnToUpper, "s", {}},
    {"lower", FnToLower, "s", {}},
    {"title", FnTitle, "s", {}},
    {"untitle", FnUntitle, "s", {}},
    {"substr", FnSubstr, "iis", {}},
    {"repeat", FnRepeat, "is", {}},
    {"trimall", FnTrimAll, "ss", {}},
    {"trimAll", FnTrimAll, "ss", {}},
    {"trimSuffix", FnTrimSuffix, "ss", {}},
    {"trimPrefix", FnTrimPrefix, "ss", {}},
    {"nospace", FnNospace, "s", {}},
    {"initials", FnInitials, "s", {}},
    {"randAlphaNum", FnRandAlphaNum, "i", {}},
    {"randAlpha", FnRandAlpha, "i", {}},
    {"randAscii", FnRandAscii, "i", {}},
    {"randNumeric", FnRandNumeric, "i", {}},
    {"swapcase", FnSwapcase, "s", {}},
    {"shuffle", FnShuffle, "s", {}},
    {"snakecase", FnSnakecase, "s", {}},
    {"camelcase", FnCamelcase, "s", {}},
    {"kebabcase", FnKebabcase, "s", {}},
    {"wrap", FnWrap, "is", {}},
    {"wrapWith", FnWrapWith, "iss", {}},
    {"contains", FnContains, "ss", {}},
    {"hasPrefix", FnHasPrefix, "ss", {}},
    {"hasSuffix", FnHasSuffix, "ss", {}},
    {"quote", FnQuote, "a*", {}},
    {"squote", FnSquote, "a*", {}},
    {"cat", FnCat, "a*", {}},
    {"indent", FnIndent, "is", {}},
    {"nindent", FnNindent, "is", {}},
    {"replace", FnReplace, "sss", {}},
    {"plural", FnPlural, "ssi", {}},
    {"sha1sum", FnSha1sum, "s", {}},
    {"sha256sum", FnSha256sum, "s", {}},
    {"sha512sum", FnSha512sum, "s", {}},
    {"adler32sum", FnAdler32sum, "s", {}},
    {"toString", FnToString, "a", {}},
    // sprig: conversions and numbers.
    {"atoi", FnAtoi, "s", {}},
    {"int64", FnInt64, "a", {}},
    {"int", FnInt, "a", {}},
    {"float64", FnFloat64, "a", {}},
    {"seq", FnSeq, "i*", {}},
    {"toDecimal", FnToDecimal, "a", {}},
    {"split", FnSplitMap, "ss", {}},
    {"splitList", FnSplitList, "ss", {}},
    {"splitn", FnSplitn, "sis", {}},
    {"toStrings", FnToStrings, "a", {}},
    {"until", FnUntil, "i", {}},
    {"untilStep", FnUntilStep, "iii", {}},
    {"add1", FnAdd1, "a", {}},
    {"add", FnAdd, "a*", {}},
    {"sub", FnSub, "aa", {}},
    {"div", FnDiv, "aa", {}},
    {"mod", FnMod, "aa", {}},
    {"mul", FnMul, "aa*", {}},
    {"randInt", FnRandInt, "ii", {}},
    {"add1f", FnAdd1f, "a", {}},
    {"addf", FnAddf, "a*", {}},
    {"subf", FnSubf, "aa*", {}},
    {"divf", FnDivf, "aa*", {}},
    {"mulf", FnMulf, "aa*", {}},
    {"biggest", FnMax, "aa*", {}},
    {"max", FnMax, "aa*", {}},
    {"min", FnMin, "aa*", {}},
    {"maxf", FnMaxf, "aa*", {}},
    {"minf", FnMinf, "aa*", {}},
    {"ceil", FnCeil, "a", {}},
    {"floor", FnFloor, "a", {}},
    {"round", FnRound, "aif*", {}},
    {"join", FnJoin, "sa", {}},
    {"sortAlpha", FnSortAlpha, "a", {}},
    // sprig: defaults, JSON, reflection.
    {"default", FnDefault, "aa*", {}},
    {"empty", FnEmpty, "a", {}},
    {"coalesce", FnCoalesce, "a*", {}},
    {"all", FnAll, "a*", {}},
    {"any", FnAny, "a*", {}},
    {"compact", FnCompact, "a", {}},
    {"mustCompact", FnCompact, "a", {}},
    {"fromJson", FnFromJson, "s", {}},
    {"toJson", FnToJson, "a", {}},
    {"toPrettyJson", FnToPrettyJson, "a", {}},
    {"toRawJson", FnToRawJson, "a", {}},
    {"mustFromJson", FnMustFromJson, "s", {}},
    {"mustToJson", FnMustToJson, "a", {}},
    {"mustToPrettyJson", FnMustToPrettyJson, "a", {}},
    {"mustToRawJson", FnMustToRawJson, "a", {}},
    {"ternary", FnTernary, "aab", {}},
    {"deepCopy", FnDeepCopy, "a", {}},
    {"mustDeepCopy", FnDeepCopy, "a", {}},
    {"typeOf", FnTypeOf, "a", {}},
    {"typeIs", FnTypeIs, "sa", {}},
    {"typeIsLike", FnTypeIsLike, "sa", {}},
    {"kindOf", FnKindOf, "a", {}},
    {"kindIs", FnKindIs, "sa", {}},
    {"deepEqual", FnDeepEqual, "aa", {}},
    // sprig: OS and network.
    {"env", nullptr, "s", kSecrets},
    {"expandenv", nullptr, "s", kSecrets},
    {"getHostByName", nullptr, "s", "a DNS lookup for every log line would stall the pipeline"},
    // sprig: paths (path and path/filepath are the same on Linux).
    {"base", FnBase, "s", {}},
    {"dir", FnDir, "s", {}},
    {"clean", FnClean, "s", {}},
    {"ext", FnExt, "s", {}},
    {"isAbs", FnIsAbs, "s", {}},
    {"osBase", FnBase, "s", {}},
    {"osClean", FnClean, "s", {}},
    {"osDir", FnDir, "s", {}},
    {"osExt", FnExt, "s", {}},
    {"osIsAbs", FnIsAbs, "s", {}},
    // sprig: encodings.
    {"b64enc", FnB64enc, "s", {}},
    {"b64dec", FnB64dec, "s", {}},
    {"b32enc", FnB32enc, "s", {}},
    {"b32dec", FnB32dec, "s", {}},
    // sprig: lists and dicts.
    {"tuple", FnList, "a*", {}},
    {"list", FnList, "a*", {}},
    {"dict", FnDict, "a*", {}},
    {"get", FnGet, "ms", {}},
    {"set", FnSet, "msa", {}},
    {"unset", FnUnset, "ms", {}},
    {"hasKey", FnHasKey, "ms", {}},
    {"pluck", FnPluck, "sm*", {}},
    {"keys", FnKeys, "m*", {}},
    {"pick", FnPick, "ms*", {}},
    {"omit", FnOmit, "ms*", {}},
    {"merge", FnMerge, "mm*", {}},
    {"mergeOverwrite", FnMergeOverwrite, "mm*", {}},
    {"mustMerge", FnMerge, "mm*", {}},
    {"mustMergeOverwrite", FnMergeOverwrite, "mm*", {}},
    {"values", FnValues, "m", {}},
    {"append", FnPush, "aa", {}},
    {"push", FnPush, "aa", {}},
    {"mustAppend", FnPush, "aa", {}},
    {"mustPush", FnPush, "aa", {}},
    {"prepend", FnPrepend, "aa", {}},
    {"mustPrepend", FnPrepend, "aa", {}},
    {"first", FnFirst, "a", {}},
    {"mustFirst", FnFirst, "a", {}},
    {"rest", FnRest, "a", {}},
    {"mustRest", FnRest, "a", {}},
    {"last", FnLast, "a", {}},
    {"mustLast", FnLast, "a", {}},
    {"initial", FnInitial, "a", {}},
    {"mustInitial", FnInitial, "a", {}},
    {"reverse", FnReverse, "a", {}},
    {"mustReverse", FnReverse, "a", {}},
    {"uniq", FnUniq, "a", {}},
    {"mustUniq", FnUniq, "a", {}},
    {"without", FnWithout, "aa*", {}},
    {"mustWithout", FnWithout, "aa*", {}},
    {"has", FnHas, "aa", {}},
    {"mustHas", FnHas, "aa", {}},
    {"slice", FnSlice, "aa*", {}},
    {"mustSlice", FnSlice, "aa*", {}},
    {"concat", FnConcat, "a*", {}},
    {"dig", FnDig, "a*", {}},
    {"chunk", FnChunk, "ia", {}},
    {"mustChunk", FnChunk, "ia", {}},
    // sprig: crypto.
    {"bcrypt", nullptr, "s", "password hashing costs ~100 ms per log line"},
    {"htpasswd", nullptr, "ss", "password hashing costs ~100 ms per log line"},
    {"genPrivateKey", nullptr, "s", kCertificates},
    {"derivePassword", nullptr, "sssss", "password derivation costs ~100 ms per log line"},
    {"buildCustomCert", nullptr, "ss", kCertificates},
    {"genCA", nullptr, "si", kCertificates},
    {"genCAWithKey", nullptr, "sis", kCertificates},
    {"genSelfSignedCert", nullptr, "saai", kCertificates},
    {"genSelfSignedCertWithKey", nullptr, "saais", kCertificates},
    {"genSignedCert", nullptr, "saaia", kCertificates},
    {"genSignedCertWithKey", nullptr, "saaias", kCertificates},
    {"encryptAES", nullptr, "ss",
     "a key written into a pipeline config is no secret; encrypt in transit (TLS) instead"},
    {"decryptAES", nullptr, "ss",
     "a key written into a pipeline config is no secret; encrypt in transit (TLS) instead"},
    {"randBytes", FnRandBytes, "i", {}},
    {"uuidv4", FnUuidv4, "", {}},
    {"semver", nullptr, "s", "semantic version parsing is not implemented in skald"},
    {"semverCompare", nullptr, "ss", "semantic version parsing is not implemented in skald"},
    {"fail", FnFail, "s", {}},
    // sprig: regular expressions.
    {"regexMatch", FnRegexMatchPlain, "ss", {}, 0},
    {"mustRegexMatch", FnRegexMatchMust, "ss", {}, 0},
    {"regexFindAll", FnRegexFindAll, "ssi", {}, 0},
    {"mustRegexFindAll", FnRegexFindAll, "ssi", {}, 0},
    {"regexFind", FnRegexFind, "ss", {}, 0},
    {"mustRegexFind", FnRegexFind, "ss", {}, 0},
    {"mustRegexReplaceAll", FnRegexReplaceAll, "sss", {}, 0},
    {"mustRegexReplaceAllLiteral", FnRegexReplaceAllLiteral, "sss", {}, 0},
    {"regexSplit", FnRegexSplit, "ssi", {}, 0},
    {"mustRegexSplit", FnRegexSplit, "ssi", {}, 0},
    {"regexQuoteMeta", FnRegexQuoteMeta, "s", {}},
    // sprig: URLs.
    {"urlParse", nullptr, "s", "URL parsing is not implemented in skald"},
    {"urlJoin", nullptr, "m", "URL parsing is not implemented in skald"},
    // sprig: dates.
    {"ago", FnAgo, "a", {}},
    {"date", FnDate, "sa", {}},
    {"date_in_zone", FnDateInZone, "sas", {}},
    {"date_modify", FnDateModify, "st", {}},
    {"dateInZone", FnDateInZone, "sas", {}},
    {"dateModify", FnDateModify, "st", {}},
    {"duration", FnDuration, "a", {}},
    {"durationRound", FnDurationRound, "a", {}},
    {"htmlDate", FnHtmlDate, "a", {}},
    {"htmlDateInZone", FnHtmlDateInZone, "as", {}},
    {"must_date_modify", FnMustDateModify, "st", {}},
    {"mustDateModify", FnMustDateModify, "st", {}},
    {"mustToDate", FnMustToDate, "ss", {}},
    {"now", FnNow, "", {}},
    {"toDate", FnToDate, "ss", {}},
    {"unixEpoch", FnUnixEpoch, "t", {}},
};

}  // namespace

const Function* FindFunction(std::string_view name) {
  for (const Function& f : kFunctions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string SupportedFunctionNames() {
  std::string out;
  for (const Function& f : kFunctions) {
    if (!f.refused.empty()) continue;
    if (!out.empty()) out.append(", ");
    out.append(f.name);
  }
  return out;
}

std::string_view ParamTypeName(char param) {
  switch (param) {
    case 's':
      return "string";
    case 'i':
      return "int";
    case 'b':
      return "bool";
    case 'f':
      return "float64";
    case 't':
      return "time.Time";
    case 'm':
      return "map[string]interface {}";
    default:
      return "interface {}";
  }
}

bool CallFunction(const Function& f, std::span<Value> args, CallContext& ctx, Value* result) {
  const auto n = static_cast<int>(args.size());
  if (n < f.min_args() || (f.max_args() >= 0 && n > f.max_args())) {
    return ctx.Fail("wrong number of args: want " + std::to_string(f.min_args()) + " got " +
                    std::to_string(n));
  }
  for (size_t k = 0; k < args.size(); ++k) {
    const char want = f.ParamAt(k);
    const Value& a = args[k];
    bool ok = true;
    switch (want) {
      case 's':
        ok = a.is_string();
        break;
      case 'i':
        ok = a.type == GoType::kInt;
        break;
      case 'b':
        ok = a.type == GoType::kBool;
        break;
      case 'f':
        ok = a.type == GoType::kFloat64;
        break;
      case 't':
        ok = a.type == GoType::kTime;
        break;
      case 'm':
        ok = a.is_nil() || a.type == GoType::kMapAny || a.type == GoType::kData;
        break;
      default:
        break;
    }
    if (!ok) {
      const std::string type(ParamTypeName(want));
      return ctx.Fail("argument " + std::to_string(k + 1) + ": " +
                      (a.is_nil() ? "invalid value; expected " + type
                                  : "wrong type for value; expected " + type + "; got " +
                                        std::string(TypeName(a))));
    }
  }
  if (!ctx.Spend(1, 0)) return false;
  if (!f.impl(args, ctx, result)) return false;
  if (result->is_string() && result->s.size() > ctx.max_bytes()) return ctx.TooLong();
  return true;
}

}  // namespace skald::stages::go_template_internal
