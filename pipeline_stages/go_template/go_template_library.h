// The Go template engine's function library, internal to the engine: what the function files
// share (building results, regexes, randomness, the clock) and every function the table names
// (go_template_functions.cc), by family, each family in a file of its own.
#pragma once

#include <absl/time/time.h>
#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline_stages/go_template/go_template_functions.h"
#include "pipeline_stages/go_template/go_template_value.h"

namespace skald::stages::go_template_internal {

using Args = std::span<Value>;
inline constexpr int64_t kElementBytes = sizeof(Value);

// --- Building results, regexes, randomness, the clock (go_template_library.cc).
bool SetString(CallContext& ctx, std::string s, Value* r);
bool SetList(CallContext& ctx, GoType type, List items, Value* r);
bool SetMap(CallContext& ctx, GoType type, std::shared_ptr<Map> m, Value* r);
bool NotAList(CallContext& ctx, const Value& v, std::string_view message_before_type);
std::vector<std::string> StrSlice(const Value& v);
std::string GoRegexpError(std::string_view pattern);
bool BadRegex(CallContext& ctx, std::string_view pattern, bool must);
const RE2* CompileRegex(CallContext& ctx, std::string_view pattern, std::unique_ptr<RE2>* holder,
                        std::string* why);
std::vector<std::pair<size_t, size_t>> FindAll(const RE2& re, std::string_view s, int64_t n,
                                               CallContext& ctx);
int64_t CryptoRandomBelow(int64_t n);
bool RandomString(CallContext& ctx, int64_t count, char first, char last, bool (*accept)(char),
                  Value* r);
absl::Time Now();
int64_t MonotonicNanos();
absl::TimeZone LocalZone();
absl::Time DateArgument(const Value& v);

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

// --- Go's builtins: comparisons, index, len, print, printf, html, js, urlquery
// (go_template_builtins.cc).
bool FnNot(Args a, CallContext& ctx, Value* r);
bool FnEq(Args a, CallContext& ctx, Value* r);
bool FnNe(Args a, CallContext& ctx, Value* r);
bool FnLt(Args a, CallContext& ctx, Value* r);
bool FnLe(Args a, CallContext& ctx, Value* r);
bool FnGt(Args a, CallContext& ctx, Value* r);
bool FnGe(Args a, CallContext& ctx, Value* r);
bool FnIndex(Args a, CallContext& ctx, Value* r);
bool FnLen(Args a, CallContext& ctx, Value* r);
bool FnPrint(Args a, CallContext& ctx, Value* r);
bool FnPrintln(Args a, CallContext& ctx, Value* r);
bool FnPrintf(Args a, CallContext& ctx, Value* r);
bool FnHtml(Args a, CallContext& ctx, Value* r);
bool FnJs(Args a, CallContext& ctx, Value* r);
bool FnUrlquery(Args a, CallContext& ctx, Value* r);

// --- Promtail's additions and Go's strings package (ToLower, Replace, Hash, regexReplaceAll, ...)
// (go_template_promtail_functions.cc).
bool FnToLower(Args a, CallContext& ctx, Value* r);
bool FnToUpper(Args a, CallContext& ctx, Value* r);
bool FnTrimSpace(Args a, CallContext& ctx, Value* r);
bool FnReplaceGo(Args a, CallContext& ctx, Value* r);
bool FnTrimGo(Args a, CallContext& ctx, Value* r);
bool FnTrimLeftGo(Args a, CallContext& ctx, Value* r);
bool FnTrimRightGo(Args a, CallContext& ctx, Value* r);
std::string_view TrimPrefix(std::string_view s, std::string_view prefix);
std::string_view TrimSuffix(std::string_view s, std::string_view suffix);
bool FnTrimPrefixGo(Args a, CallContext& ctx, Value* r);
bool FnTrimSuffixGo(Args a, CallContext& ctx, Value* r);
bool FnHash(Args a, CallContext& ctx, Value* r);
bool FnSha2Hash(Args a, CallContext& ctx, Value* r);
bool FnRegexReplaceAll(Args a, CallContext& ctx, Value* r);
bool FnRegexReplaceAllLiteral(Args a, CallContext& ctx, Value* r);
bool FnRegexMatchPlain(Args a, CallContext& ctx, Value* r);
bool FnRegexMatchMust(Args a, CallContext& ctx, Value* r);
bool FnRegexFindAll(Args a, CallContext& ctx, Value* r);
bool FnRegexFind(Args a, CallContext& ctx, Value* r);
bool FnRegexSplit(Args a, CallContext& ctx, Value* r);
bool FnRegexQuoteMeta(Args a, CallContext& ctx, Value* r);

// --- Sprig's string functions (go_template_sprig_strings.cc).
bool FnHello(Args a, CallContext& ctx, Value* r);
bool FnTitle(Args a, CallContext& ctx, Value* r);
bool FnUntitle(Args a, CallContext& ctx, Value* r);
bool FnSwapcase(Args a, CallContext& ctx, Value* r);
bool FnSubstr(Args a, CallContext& ctx, Value* r);
bool FnTrunc(Args a, CallContext& ctx, Value* r);
bool FnRepeat(Args a, CallContext& ctx, Value* r);
bool FnTrimAll(Args a, CallContext& ctx, Value* r);
bool FnTrimPrefix(Args a, CallContext& ctx, Value* r);
bool FnTrimSuffix(Args a, CallContext& ctx, Value* r);
bool FnNospace(Args a, CallContext& ctx, Value* r);
bool FnInitials(Args a, CallContext& ctx, Value* r);
bool FnAbbrev(Args a, CallContext& ctx, Value* r);
bool FnAbbrevboth(Args a, CallContext& ctx, Value* r);
bool FnWrap(Args a, CallContext& ctx, Value* r);
bool FnWrapWith(Args a, CallContext& ctx, Value* r);
bool FnContains(Args a, CallContext& ctx, Value* r);
bool FnHasPrefix(Args a, CallContext& ctx, Value* r);
bool FnHasSuffix(Args a, CallContext& ctx, Value* r);
bool FnQuote(Args a, CallContext& ctx, Value* r);
bool FnSquote(Args a, CallContext& ctx, Value* r);
bool FnCat(Args a, CallContext& ctx, Value* r);
bool FnIndent(Args a, CallContext& ctx, Value* r);
bool FnNindent(Args a, CallContext& ctx, Value* r);
bool FnReplace(Args a, CallContext& ctx, Value* r);
bool FnPlural(Args a, CallContext& ctx, Value* r);
bool FnSha1sum(Args a, CallContext& ctx, Value* r);
bool FnSha256sum(Args a, CallContext& ctx, Value* r);
bool FnSha512sum(Args a, CallContext& ctx, Value* r);
bool FnAdler32sum(Args a, CallContext& ctx, Value* r);
bool FnToString(Args a, CallContext& ctx, Value* r);
bool FnRandAlphaNum(Args a, CallContext& ctx, Value* r);
bool FnRandAlpha(Args a, CallContext& ctx, Value* r);
bool FnRandAscii(Args a, CallContext& ctx, Value* r);
bool FnRandNumeric(Args a, CallContext& ctx, Value* r);
bool FnShuffle(Args a, CallContext& ctx, Value* r);
bool FnSnakecase(Args a, CallContext& ctx, Value* r);
bool FnKebabcase(Args a, CallContext& ctx, Value* r);
bool FnCamelcase(Args a, CallContext& ctx, Value* r);

// --- Sprig's conversions and numbers (go_template_sprig_numbers.cc).
bool FnAtoi(Args a, CallContext& ctx, Value* r);
bool FnInt(Args a, CallContext& ctx, Value* r);
bool FnInt64(Args a, CallContext& ctx, Value* r);
bool FnFloat64(Args a, CallContext& ctx, Value* r);
bool FnToDecimal(Args a, CallContext& ctx, Value* r);
bool FnSplitMap(Args a, CallContext& ctx, Value* r);
bool FnSplitn(Args a, CallContext& ctx, Value* r);
bool FnSplitList(Args a, CallContext& ctx, Value* r);
bool FnToStrings(Args a, CallContext& ctx, Value* r);
bool FnUntil(Args a, CallContext& ctx, Value* r);
bool FnUntilStep(Args a, CallContext& ctx, Value* r);
bool FnSeq(Args a, CallContext& ctx, Value* r);
bool FnAdd1(Args a, CallContext& ctx, Value* r);
bool FnAdd(Args a, CallContext& ctx, Value* r);
bool FnSub(Args a, CallContext& ctx, Value* r);
bool FnMul(Args a, CallContext& ctx, Value* r);
bool FnDiv(Args a, CallContext& ctx, Value* r);
bool FnMod(Args a, CallContext& ctx, Value* r);
bool FnRandInt(Args a, CallContext& ctx, Value* r);
bool FnMax(Args a, CallContext& ctx, Value* r);
bool FnMin(Args a, CallContext& ctx, Value* r);
bool FnMaxf(Args a, CallContext& ctx, Value* r);
bool FnMinf(Args a, CallContext& ctx, Value* r);
bool FnCeil(Args a, CallContext& ctx, Value* r);
bool FnFloor(Args a, CallContext& ctx, Value* r);
bool FnRound(Args a, CallContext& ctx, Value* r);
bool FnAddf(Args a, CallContext& ctx, Value* r);
bool FnAdd1f(Args a, CallContext& ctx, Value* r);
bool FnSubf(Args a, CallContext& ctx, Value* r);
bool FnMulf(Args a, CallContext& ctx, Value* r);
bool FnDivf(Args a, CallContext& ctx, Value* r);

// --- Sprig's defaults, JSON and reflection functions (go_template_sprig_defaults.cc).
bool FnDefault(Args a, CallContext& ctx, Value* r);
bool FnEmpty(Args a, CallContext& ctx, Value* r);
bool FnCoalesce(Args a, CallContext& ctx, Value* r);
bool FnAll(Args a, CallContext& ctx, Value* r);
bool FnAny(Args a, CallContext& ctx, Value* r);
bool FnTernary(Args a, CallContext& ctx, Value* r);
bool FnToJson(Args a, CallContext& ctx, Value* r);
bool FnMustToJson(Args a, CallContext& ctx, Value* r);
bool FnToPrettyJson(Args a, CallContext& ctx, Value* r);
bool FnMustToPrettyJson(Args a, CallContext& ctx, Value* r);
bool FnToRawJson(Args a, CallContext& ctx, Value* r);
bool FnMustToRawJson(Args a, CallContext& ctx, Value* r);
bool FnFromJson(Args a, CallContext& ctx, Value* r);
bool FnMustFromJson(Args a, CallContext& ctx, Value* r);
bool FnTypeOf(Args a, CallContext& ctx, Value* r);
bool FnTypeIs(Args a, CallContext& ctx, Value* r);
bool FnTypeIsLike(Args a, CallContext& ctx, Value* r);
bool FnKindOf(Args a, CallContext& ctx, Value* r);
bool FnKindIs(Args a, CallContext& ctx, Value* r);
bool FnDeepEqual(Args a, CallContext& ctx, Value* r);
bool FnDeepCopy(Args a, CallContext& ctx, Value* r);

// --- Sprig's paths and encodings (go_template_sprig_encodings.cc).
bool FnBase(Args a, CallContext& ctx, Value* r);
bool FnDir(Args a, CallContext& ctx, Value* r);
bool FnClean(Args a, CallContext& ctx, Value* r);
bool FnExt(Args a, CallContext& ctx, Value* r);
bool FnIsAbs(Args a, CallContext& ctx, Value* r);
bool FnB64enc(Args a, CallContext& ctx, Value* r);
bool FnB64dec(Args a, CallContext& ctx, Value* r);
bool FnB32enc(Args a, CallContext& ctx, Value* r);
bool FnB32dec(Args a, CallContext& ctx, Value* r);
bool FnUuidv4(Args a, CallContext& ctx, Value* r);
bool FnRandBytes(Args a, CallContext& ctx, Value* r);
bool FnFail(Args a, CallContext& ctx, Value* r);

// --- Sprig's lists (go_template_sprig_lists.cc).
bool FnList(Args a, CallContext& ctx, Value* r);
bool FnPush(Args a, CallContext& ctx, Value* r);
bool FnPrepend(Args a, CallContext& ctx, Value* r);
bool FnChunk(Args a, CallContext& ctx, Value* r);
bool FnFirst(Args a, CallContext& ctx, Value* r);
bool FnLast(Args a, CallContext& ctx, Value* r);
bool FnRest(Args a, CallContext& ctx, Value* r);
bool FnInitial(Args a, CallContext& ctx, Value* r);
bool FnReverse(Args a, CallContext& ctx, Value* r);
bool FnJoin(Args a, CallContext& ctx, Value* r);
bool FnSortAlpha(Args a, CallContext& ctx, Value* r);
bool FnCompact(Args a, CallContext& ctx, Value* r);
bool FnUniq(Args a, CallContext& ctx, Value* r);
bool FnWithout(Args a, CallContext& ctx, Value* r);
bool FnHas(Args a, CallContext& ctx, Value* r);
bool FnSlice(Args a, CallContext& ctx, Value* r);
bool FnConcat(Args a, CallContext& ctx, Value* r);

// --- Sprig's dicts (go_template_sprig_dicts.cc).
bool FnDict(Args a, CallContext& ctx, Value* r);
bool FnGet(Args a, CallContext& ctx, Value* r);
bool FnSet(Args a, CallContext& ctx, Value* r);
bool FnUnset(Args a, CallContext& ctx, Value* r);
bool FnHasKey(Args a, CallContext& ctx, Value* r);
bool FnPluck(Args a, CallContext& ctx, Value* r);
bool FnKeys(Args a, CallContext& ctx, Value* r);
bool FnPick(Args a, CallContext& ctx, Value* r);
bool FnOmit(Args a, CallContext& ctx, Value* r);
bool FnValues(Args a, CallContext& ctx, Value* r);
bool FnMerge(Args a, CallContext& ctx, Value* r);
bool FnMergeOverwrite(Args a, CallContext& ctx, Value* r);
bool FnDig(Args a, CallContext& ctx, Value* r);

// --- Sprig's dates (go_template_sprig_dates.cc).
bool FnNow(Args a, CallContext& ctx, Value* r);
bool FnDate(Args a, CallContext& ctx, Value* r);
bool FnDateInZone(Args a, CallContext& ctx, Value* r);
bool FnHtmlDate(Args a, CallContext& ctx, Value* r);
bool FnHtmlDateInZone(Args a, CallContext& ctx, Value* r);
bool FnDateModify(Args a, CallContext& ctx, Value* r);
bool FnMustDateModify(Args a, CallContext& ctx, Value* r);
bool FnToDate(Args a, CallContext& ctx, Value* r);
bool FnMustToDate(Args a, CallContext& ctx, Value* r);
bool FnUnixEpoch(Args a, CallContext& ctx, Value* r);
bool FnAgo(Args a, CallContext& ctx, Value* r);
bool FnDuration(Args a, CallContext& ctx, Value* r);
bool FnDurationRound(Args a, CallContext& ctx, Value* r);

// --- Sprig's semantic versions (go_template_sprig_semver.cc).
bool FnSemver(Args a, CallContext& ctx, Value* r);
bool FnSemverCompare(Args a, CallContext& ctx, Value* r);

// --- Sprig's URLs (go_template_sprig_urls.cc).
bool FnUrlParse(Args a, CallContext& ctx, Value* r);
bool FnUrlJoin(Args a, CallContext& ctx, Value* r);

// --- Docker's log-tag templates: json, split, join, pad, truncate
// (go_template_docker_tag_functions.cc).
bool FnDockerJson(Args a, CallContext& ctx, Value* r);
bool FnDockerSplit(Args a, CallContext& ctx, Value* r);
bool FnDockerJoin(Args a, CallContext& ctx, Value* r);
bool FnDockerPad(Args a, CallContext& ctx, Value* r);
bool FnDockerTruncate(Args a, CallContext& ctx, Value* r);

}  // namespace skald::stages::go_template_internal
