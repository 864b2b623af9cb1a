// Go text/template, the subset Promtail's template and replace stages use.
//
// Syntax: text and actions `{{ }}` with trim markers `{{- ` / ` -}}` and comments `{{/* */}}`;
// fields `.name` (any data key, e.g. `.Value`, `.Entry`), `$.name`, `.` and `$`; string literals
// ("Go escapes" and `raw`), numbers, true/false; pipelines `{{ .Value | ToUpper }}` (the piped
// value is the LAST argument); function calls with arguments and parenthesised
// sub-expressions; `if` / `else if` / `else` / `end`.
// Functions: the builtins and or not eq ne lt le gt ge; Promtail's ToLower ToUpper TrimSpace
// Replace Trim TrimLeft TrimRight TrimPrefix TrimSuffix regexReplaceAll regexReplaceAllLiteral
// Hash Sha2Hash; sprig's lower upper title trim trimPrefix trimSuffix replace contains hasPrefix
// hasSuffix default quote squote substr trunc repeat add sub mul div mod b64enc b64dec (with
// sprig's argument orders, e.g. `replace old new s`, `trunc n s`, `default dflt value`).
// Not supported (a ConfigError when parsed): other functions (also Go's builtins print, printf,
// len, index, ...), variables `$x :=`, range, with, define, template, block, nil, character
// constants. Mistakes Go only reports at run time are ConfigErrors here when they are visible
// in the text: wrong argument counts, a literal of the wrong type, a bad literal regex.
// Run time follows Go: a missing key prints `<no value>`, is false in `if`, is unequal to any
// value in `eq`/`ne`, is empty for `default`, and fails the execution when given to a function
// that wants a string. Unicode case mapping covers Latin, Greek, Cyrillic and Armenian letters.
// Unlike Go, an execution produces at most kMaxOutputBytes: a longer output, or a longer string
// from a function on the way (`repeat`, `replace` with a long replacement, ...), fails it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace skald::stages {

// A value a template reads. String views must stay valid while Execute runs.
struct TemplateValue {
  enum class Kind { kMissing, kNull, kString, kInt, kDouble, kBool };
  Kind kind = Kind::kMissing;
  std::string_view str;
  int64_t i = 0;
  double d = 0;
  bool b = false;

  static TemplateValue Missing() { return {}; }
  static TemplateValue Null() { return {Kind::kNull, {}, 0, 0, false}; }
  static TemplateValue String(std::string_view s) { return {Kind::kString, s, 0, 0, false}; }
  static TemplateValue Int(int64_t v) { return {Kind::kInt, {}, v, 0, false}; }
  static TemplateValue Double(double v) { return {Kind::kDouble, {}, 0, v, false}; }
  static TemplateValue Bool(bool v) { return {Kind::kBool, {}, 0, 0, v}; }
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

  enum class Result {
    kOk,
    kFailed,   // Go would fail the execution
    kTooLong,  // the output or a string on the way would pass kMaxOutputBytes
  };

  // Throws ConfigError quoting the template, the position and the bad text (unknown function,
  // wrong argument count or literal type, bad regex literal, syntax error) and what is accepted.
  static GoTemplate Parse(std::string_view text);

  // Renders into `*out` (cleared first; reuse it to avoid allocations). Returns kFailed when Go
  // would fail the execution (a missing value or a number given to a string function, `div` by
  // zero, `substr` out of range, an incompatible comparison, ...) and kTooLong past
  // kMaxOutputBytes: `*out` is then unspecified and `*error` (if not null) says why. Never throws
  // on data.
  Result Execute(const TemplateData& data, std::string* out, std::string* error = nullptr) const;

  const std::string& source() const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace skald::stages
