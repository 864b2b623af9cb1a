// Internal to go_template.cc: run-time values and the function library of GoTemplate.
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "pipeline_stages/go_template.h"

namespace skald::stages::go_template_internal {

// A value during execution. Strings either borrow (from the data or the parsed template, both
// outliving the execution) or own their bytes.
struct Value {
  enum class Kind { kMissing, kString, kInt, kDouble, kBool, kMap };
  Kind kind = Kind::kMissing;
  bool borrowed = false;
  std::string_view view;
  std::string owned;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  bool int64_typed = false;           // kInt from data or sprig arithmetic: Go's int64, not int
  const TemplateData* map = nullptr;  // kMap: the data itself (`.`)

  std::string_view str() const { return borrowed ? view : std::string_view(owned); }
  static Value Borrow(std::string_view s) {
    Value v;
    v.kind = Kind::kString, v.borrowed = true, v.view = s;
    return v;
  }
  static Value Own(std::string s) {
    Value v;
    v.kind = Kind::kString, v.owned = std::move(s);
    return v;
  }
  static Value Int(int64_t x) {
    Value v;
    v.kind = Kind::kInt, v.i = x;
    return v;
  }
  static Value Int64(int64_t x) {
    Value v = Int(x);
    v.int64_typed = true;
    return v;
  }
  static Value Double(double x) {
    Value v;
    v.kind = Kind::kDouble, v.d = x;
    return v;
  }
  static Value Bool(bool x) {
    Value v;
    v.kind = Kind::kBool, v.b = x;
    return v;
  }
  static Value FromData(const TemplateValue& t);
};

// Appends v as Go's fmt %v prints it (missing: "<no value>"; the data: "map[k:v ...]").
// Doubles print in shortest round-trip form without exponent.
void AppendValue(const Value& v, std::string* out);
// Go's template truth: false, 0, "", missing are false.
bool IsTrue(const Value& v);

enum class ParamType { kString, kInt, kAny };

enum class FunctionId {
  kAnd,
  kOr,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kToLower,
  kToUpper,
  kTrimSpace,
  kReplaceN,
  kTrim,
  kTrimLeft,
  kTrimRight,
  kTrimPrefixGo,
  kTrimSuffixGo,
  kRegexReplaceAll,
  kRegexReplaceAllLiteral,
  kHash,
  kSha2Hash,
  kLower,
  kUpper,
  kTitle,
  kTrimSprig,
  kTrimPrefix,
  kTrimSuffix,
  kReplace,
  kContains,
  kHasPrefix,
  kHasSuffix,
  kDefault,
  kQuote,
  kSquote,
  kSubstr,
  kTrunc,
  kRepeat,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kB64Enc,
  kB64Dec,
};

struct Function {
  std::string_view name;
  FunctionId id;
  int min_args;
  int max_args;  // -1: any number
  ParamType params[4];
  ParamType rest;  // type of arguments beyond params (variadic functions)

  ParamType TypeOf(size_t arg) const { return arg < 4 ? params[arg] : rest; }
};

// The function named `name`, or nullptr.
const Function* FindFunction(std::string_view name);
// "ToLower, ToUpper, ...": every supported name, for error messages.
std::string SupportedFunctionNames();

// Calls `f` (not and/or, which the executor short-circuits) with `args` (piped value last).
// `regex` is the pattern compiled at parse time for the regex functions, or null. Returns false
// and sets *error when Go would fail the call, or when the result would be a string longer than
// `max_bytes` (then *too_long is set too; functions whose result can outgrow their arguments,
// such as repeat and replace, stop before building it).
bool CallFunction(const Function& f, std::span<Value> args, const RE2* regex, size_t max_bytes,
                  Value* result, std::string* error, bool* too_long);

}  // namespace skald::stages::go_template_internal
