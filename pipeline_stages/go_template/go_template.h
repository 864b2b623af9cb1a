// Go text/template with the function map of Promtail's template stage: Go's builtins, sprig's
// text functions (github.com/Masterminds/sprig/v3 v3.3.0) and Promtail's ToLower, ToUpper,
// Replace, Trim*, Hash, Sha2Hash, regexReplaceAll and regexReplaceAllLiteral.
//
// Syntax: text and actions `{{ }}` with trim markers `{{- ` / ` -}}` and comments `{{/* */}}`;
// fields and chains `.a.b`, `$x.a`, `(pipeline).a`; variables `$x := ...`, `$x = ...`, `$`;
// literals (strings, raw strings, numbers, characters, true, false, nil); pipelines with `|`
// (the piped value is the LAST argument) and parentheses; `if` / `else if` / `else`, `with` /
// `else with` / `else`, `range` (slices, maps in key order, integers; `$i, $v :=`; `else`;
// `break`, `continue`), `define`, `template`, `block`.
// Functions: every function of Promtail's map except the few refused when parsed, each with the
// reason in the error (env and expandenv read the environment, where secrets live; certificate
// and key generation, bcrypt, AES; getHostByName).
// `keys` and `values` list in key order (Go's order is random). `semver` returns a version whose
// methods Major, Minor, Patch, Prerelease, Metadata, Original, String, Compare, Equal, LessThan,
// LessThanEqual, GreaterThan and GreaterThanEqual a template may call.
// Mistakes Go only reports at run time are ConfigErrors here when they are visible in the text:
// an unknown or refused function, wrong argument counts, a literal of the wrong type, a bad
// literal regex, an undefined variable or template.
// Run time follows Go: a missing key prints `<no value>`, is false in `if`, is unequal to any
// value in `eq`/`ne`, is empty for `default`, and fails the execution when given to a function
// that wants a string; maps range and print in key order; values print as Go's fmt prints them.
//
// Unlike Go, an execution is bounded: it produces at most kMaxOutputBytes (so does every string
// a function builds: `repeat`, `replace`, `printf "%*d"` stop before building more), takes at
// most kMaxSteps steps (an action, a function call, a range iteration, an element built or
// compared), builds at most kMaxBuiltBytes of strings and collections, and nests `template` calls
// and control structures at most kMaxDepth deep. `range until 1000000000` or a template calling
// itself fail quickly with kTooLong and a message naming the bound.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {

// A value a template reads. Strings, lists and maps are borrowed: they must stay valid while
// Execute runs.
struct TemplateValue {
  // kStringList is Go's []string, kStringMap its map[string]string, kTime a time.Time in UTC
  // (`i` seconds and `nanos` since the Unix epoch).
  enum class Kind {
    kMissing,
    kNull,
    kString,
    kInt,
    kDouble,
    kBool,
    kStringList,
    kStringMap,
    kTime
  };
  Kind kind = Kind::kMissing;
  std::string_view str;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  const std::vector<std::string>* strings = nullptr;
  const std::map<std::string, std::string>* string_map = nullptr;
  int32_t nanos = 0;

  static TemplateValue Missing() { return {}; }
  static TemplateValue Null() { return {Kind::kNull, {}, 0, 0, false}; }
  static TemplateValue String(std::string_view s) { return {Kind::kString, s, 0, 0, false}; }
  static TemplateValue Int(int64_t v) { return {Kind::kInt, {}, v, 0, false}; }
  static TemplateValue Double(double v) { return {Kind::kDouble, {}, 0, v, false}; }
  static TemplateValue Bool(bool v) { return {Kind::kBool, {}, 0, 0, v}; }
  static TemplateValue StringList(const std::vector<std::string>& v) {
    return {Kind::kStringList, {}, 0, 0, false, &v};
  }
  static TemplateValue StringMap(const std::map<std::string, std::string>& v) {
    return {Kind::kStringMap, {}, 0, 0, false, nullptr, &v};
  }
  static TemplateValue Time(int64_t unix_seconds, int32_t nanos) {
    return {Kind::kTime, {}, unix_seconds, 0, false, nullptr, nullptr, nanos};
  }
};

// The data of one execution: `.name` reads Lookup("name"). A key that is absent (or null,
// which Go's templates treat the same way) renders as `<no value>`. Promtail passes every value
// as a string; pass numbers as strings to behave identically (Go refuses e.g. an int where a
// function wants a string).
class TemplateData {
 public:
  virtual ~TemplateData() = default;
  virtual TemplateValue Lookup(std::string_view name) const = 0;
  // Calls f for every key in name order; only needed to print `.` itself (as Go's map[k:v]).
  virtual void ForEach(const std::function<void(std::string_view, const TemplateValue&)>& f) const;
  // Empty for a map (Promtail's data). A name (e.g. "*logger.Info") makes the data a Go struct
  // of that type: a field it lacks fails the execution ("can't evaluate field X in type T")
  // instead of printing `<no value>`.
  virtual std::string_view StructType() const { return {}; }
};

// TemplateData over an owned map; for tests and for callers that build data once.
class MapTemplateData : public TemplateData {
 public:
  MapTemplateData() = default;
  MapTemplateData(std::initializer_list<std::pair<const std::string, std::string>> strings);
  void SetString(std::string name, std::string value);
  void SetInt(std::string name, int64_t value);
  void SetDouble(std::string name, double value);
  void SetBool(std::string name, bool value);
  void SetNull(std::string name);

  TemplateValue Lookup(std::string_view name) const override;
  void ForEach(const std::function<void(std::string_view, const TemplateValue&)>& f) const override;

 private:
  struct Stored {
    TemplateValue::Kind kind;
    std::string str;
    int64_t i = 0;
    double d = 0;
    bool b = false;
  };
  TemplateValue View(const Stored& s) const;
  std::map<std::string, Stored, std::less<>> values_;
};

// A parsed template: parse once (Parse throws), execute many times. Copies share the parsed
// form; Execute is const and may run on several threads at once.
class GoTemplate {
 public:
  static constexpr size_t kMaxOutputBytes = 1 << 20;
  static constexpr int64_t kMaxSteps = 1000000;
  static constexpr int64_t kMaxBuiltBytes = 32 << 20;
  static constexpr int kMaxDepth = 1000;

  // The functions a template may call. kPromtail: Promtail's template stage (above). kDockerTag:
  // Go's builtins and the eight of Docker's log-tag templates (moby daemon/logger/templates):
  // json (encoding/json without HTML escapes, "" on error), split (strings.Split), join
  // (strings.Join: the []string first), title, lower, upper, pad (spaces before and after a
  // non-empty string) and truncate (the first n bytes).
  enum class Functions { kPromtail, kDockerTag };

  enum class Result {
    kOk,
    kFailed,   // Go would fail the execution
    kTooLong,  // the execution would pass a bound (output, steps, data built, depth)
  };

  // Throws ConfigError quoting the template, the position and the bad text (unknown or refused
  // function, wrong argument count or literal type, bad regex literal, undefined variable or
  // template, syntax error) and what is accepted.
  static GoTemplate Parse(std::string_view text, Functions functions = Functions::kPromtail);

  // Renders into `*out` (cleared first; reuse it to avoid allocations). Returns kFailed when Go
  // would fail the execution (a missing value or a number given to a string function, `div` by
  // zero, `substr` out of range, an incompatible comparison, `fail`, ...) and kTooLong past a
  // bound: `*out` is then unspecified and `*error` (if not null) says why. Never throws on data.
  Result Execute(const TemplateData& data, std::string* out, std::string* error = nullptr) const;

  const std::string& source() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace skald::stages
