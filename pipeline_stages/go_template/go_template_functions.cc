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
#include "pipeline_stages/go_template/go_template_library.h"
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

constexpr std::string_view kCertificates =
    "it generates keys and certificates, which have no place in a log pipeline";
constexpr std::string_view kSecrets =
    "it would read the plugin's environment, where secrets live, into log lines";

// Argument counts include the piped value. Params: see Function::params.
// Go's builtins: every template has them.
constexpr Function kBuiltins[] = {
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
};

// Promtail's template stage: its own functions and sprig's text functions.
constexpr Function kPromtailFunctions[] = {
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
    {"semver", FnSemver, "s", {}},
    {"semverCompare", FnSemverCompare, "ss", {}},
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
    {"urlParse", FnUrlParse, "s", {}},
    {"urlJoin", FnUrlJoin, "m", {}},
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

// Docker's log-tag templates (moby daemon/logger/templates).
constexpr Function kDockerTagFunctions[] = {
    {"json", FnDockerJson, "a", {}},  {"split", FnDockerSplit, "ss", {}},
    {"join", FnDockerJoin, "Ls", {}}, {"title", FnTitle, "s", {}},
    {"lower", FnToLower, "s", {}},    {"upper", FnToUpper, "s", {}},
    {"pad", FnDockerPad, "sii", {}},  {"truncate", FnDockerTruncate, "si", {}},
};

std::span<const Function> TableOf(FunctionSet set) {
  if (set == FunctionSet::kDockerTag) return kDockerTagFunctions;
  return kPromtailFunctions;
}

}  // namespace

const Function* FindFunction(std::string_view name, FunctionSet set) {
  for (const Function& f : kBuiltins) {
    if (f.name == name) return &f;
  }
  for (const Function& f : TableOf(set)) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string SupportedFunctionNames(FunctionSet set) {
  std::string out;
  for (std::span<const Function> table : {std::span<const Function>(kBuiltins), TableOf(set)}) {
    for (const Function& f : table) {
      if (!f.refused.empty()) continue;
      if (!out.empty()) out.append(", ");
      out.append(f.name);
    }
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
    case 'L':
      return "[]string";
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
      case 'L':
        ok = a.is_nil() || a.type == GoType::kListString;
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
