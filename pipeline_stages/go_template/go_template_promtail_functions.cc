// The Go template engine's functions: Promtail's additions and Go's strings package (ToLower,
// Replace, Hash, regexReplaceAll, ...). Declared, with the other families, in
// go_template_library.h; the function table is go_template_functions.cc's.
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

bool FnToLower(Args a, CallContext& ctx, Value* r) { return SetString(ctx, GoToLower(a[0].s), r); }
bool FnToUpper(Args a, CallContext& ctx, Value* r) { return SetString(ctx, GoToUpper(a[0].s), r); }
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

namespace {

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

}  // namespace

bool FnRegexReplaceAll(Args a, CallContext& ctx, Value* r) {
  return RegexReplace(a, ctx, r, false);
}
bool FnRegexReplaceAllLiteral(Args a, CallContext& ctx, Value* r) {
  return RegexReplace(a, ctx, r, true);
}

namespace {

bool FnRegexMatch(Args a, CallContext& ctx, Value* r, bool must) {
  std::unique_ptr<RE2> holder;
  std::string why;
  const RE2* re = CompileRegex(ctx, a[0].s, &holder, &why);
  if (re == nullptr) {
    if (must) return BadRegex(ctx, a[0].s, true);
    *r = Value::Bool(false);
    return true;
  }
  *r = Value::Bool(GoRegexpMatches(*re, a[1].s));
  return true;
}

}  // namespace

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
  if (!GoRegexpMatch(*re, a[1].s, 0, a[1].s.size(), RE2::UNANCHORED, &match, 1)) {
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

}  // namespace skald::stages::go_template_internal
