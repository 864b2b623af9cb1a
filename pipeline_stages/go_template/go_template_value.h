// Internal to the Go template engine: the values a template computes with, and how Go prints,
// tests and converts them.
//
// A Value carries the Go dynamic type a template could observe (printing, typed parameters,
// typeOf, comparisons): nil, bool, int, int64, uint8, uint64, float64, string, time.Time,
// *semver.Version (sprig's `semver`), the slices
// []interface{} []string []int [][]interface{}, the maps map[string]interface{} and
// map[string]string, and the template's data (a map[string]interface{} read through
// TemplateData). Slices are immutable once built and shared by copies; maps are shared and
// mutable (sprig's `set` changes the map every copy sees), as in Go.
#pragma once

#include <absl/time/time.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/go/go_semver.h"
#include "pipeline_stages/go_template/go_template.h"

namespace skald::stages::go_template_internal {

enum class GoType : uint8_t {
  kNil,
  kBool,
  kInt,
  kInt64,
  kUint8,
  kFloat64,
  kString,
  kListAny,     // []interface {}
  kListString,  // []string
  kListInt,     // []int
  kListList,    // [][]interface {}
  kMapAny,      // map[string]interface {}
  kMapString,   // map[string]string
  kData,        // the template's data, a map[string]interface {}
  kTime,        // time.Time
  kUint64,      // uint64 (a version's Major, Minor, Patch)
  kVersion,     // *semver.Version: its original text in `s` (go/go_semver.h)
};

struct Value;
using List = std::vector<Value>;
using Map = std::map<std::string, Value, std::less<>>;

constexpr int64_t kNoMonotonic = INT64_MIN;
// Go's zero time.Time: January 1, year 1, 00:00:00 UTC.
inline absl::Time GoZeroTime() { return absl::FromUnixSeconds(-62135596800); }

struct Value {
  GoType type = GoType::kNil;
  bool b = false;
  int64_t i = 0;  // kInt, kInt64, kUint8; kUint64 as its two's complement bits
  double d = 0;
  std::string_view s;                        // kString; kVersion: the text it was parsed from
  std::shared_ptr<const std::string> owned;  // the bytes of s when built during execution;
                                             // kVersion: its identity (Go compares pointers)
  std::shared_ptr<const List> list;          // kList*
  std::shared_ptr<Map> map;                  // kMapAny, kMapString
  const TemplateData* data = nullptr;        // kData
  absl::Time time;                           // kTime
  absl::TimeZone zone;                       // kTime: where the time is shown
  int64_t monotonic = kNoMonotonic;          // kTime: seconds-since-start reading of `now`, ns

  static Value Nil() { return Value(); }
  static Value Bool(bool x) {
    Value v;
    v.type = GoType::kBool, v.b = x;
    return v;
  }
  static Value Int(int64_t x) { return Integer(GoType::kInt, x); }
  static Value Int64(int64_t x) { return Integer(GoType::kInt64, x); }
  static Value Uint8(uint8_t x) { return Integer(GoType::kUint8, x); }
  static Value Uint64(uint64_t x) { return Integer(GoType::kUint64, static_cast<int64_t>(x)); }
  // A new *semver.Version read from `original` (which SemanticVersion::Parse accepts, or ""
  // for Go's zero Version, 0.0.0). Every call makes a distinct pointer.
  static Value Version(std::string original) {
    Value v = Own(std::move(original));
    v.type = GoType::kVersion;
    return v;
  }
  static Value Integer(GoType t, int64_t x) {
    Value v;
    v.type = t, v.i = x;
    return v;
  }
  static Value Float(double x) {
    Value v;
    v.type = GoType::kFloat64, v.d = x;
    return v;
  }
  // A string whose bytes outlive the execution (the data, the parsed template).
  static Value Borrow(std::string_view x) {
    Value v;
    v.type = GoType::kString, v.s = x;
    return v;
  }
  static Value Own(std::string x) {
    Value v;
    v.type = GoType::kString;
    v.owned = std::make_shared<const std::string>(std::move(x));
    v.s = *v.owned;
    return v;
  }
  static Value MakeList(GoType t, List items) {
    Value v;
    v.type = t, v.list = std::make_shared<const List>(std::move(items));
    return v;
  }
  static Value MakeMap(GoType t, std::shared_ptr<Map> m) {
    Value v;
    v.type = t, v.map = std::move(m);
    return v;
  }
  static Value Data(const TemplateData* d) {
    Value v;
    v.type = GoType::kData, v.data = d;
    return v;
  }
  static Value Time(absl::Time t, absl::TimeZone zone, int64_t monotonic = kNoMonotonic) {
    Value v;
    v.type = GoType::kTime, v.time = t, v.zone = zone, v.monotonic = monotonic;
    return v;
  }
  static Value FromData(const TemplateValue& t);

  bool is_nil() const { return type == GoType::kNil; }
  bool is_string() const { return type == GoType::kString; }
  bool is_list() const { return type >= GoType::kListAny && type <= GoType::kListList; }
  bool is_map() const { return type >= GoType::kMapAny && type <= GoType::kData; }
  bool is_integer() const {
    return type == GoType::kInt || type == GoType::kInt64 || type == GoType::kUint8 ||
           type == GoType::kUint64;
  }
  bool is_unsigned() const { return type == GoType::kUint8 || type == GoType::kUint64; }
  // The elements of a list (none for a nil slice, whose `list` is null).
  const List& items() const {
    static const List kNone;
    return list ? *list : kNone;
  }
};

// The data is a Go struct (TemplateData::StructType): not a map to index, measure or range over.
inline bool IsStructData(const Value& v) {
  return v.type == GoType::kData && v.data != nullptr && !v.data->StructType().empty();
}
// Go's spelling of the value's type ("string", "[]interface {}", "map[string]interface {}",
// "<nil>") and of its reflect.Kind ("string", "slice", "map", "struct", "invalid").
std::string_view TypeName(const Value& v);
std::string_view KindName(const Value& v);
// The type of what a pointer points to (reflect's Indirect, as len and index name it):
// "semver.Version" for a version, TypeName otherwise.
std::string_view IndirectTypeName(const Value& v);

// The entries of a map value (kMapAny, kMapString or the data) in key order.
Map MapEntries(const Value& v);
// The number of entries of a map value; the length of a list or a string; 0 otherwise.
size_t Length(const Value& v);
// The value under `key` in a map value; nil when absent.
Value MapLookup(const Value& v, std::string_view key);

// Appends v as Go's fmt prints it with %v (nil is "<nil>", maps print as map[k:v] in key order,
// times as time.Time.String()). Stops and returns false as soon as *out is longer than `limit`
// or nesting passes 100 levels (Go would overflow its stack on a map that holds itself).
bool AppendValue(const Value& v, std::string* out, size_t limit);
// As a template action prints a value: like AppendValue, but nil is "<no value>".
bool AppendPrinted(const Value& v, std::string* out, size_t limit);

// Go's template truth: false, 0, "", nil, empty lists and maps are false; times are true.
bool IsTrue(const Value& v);
// sprig's empty(): the values `default`, `coalesce` and `compact` skip.
bool IsEmpty(const Value& v);

// spf13/cast's ToInt64 / ToFloat64 (sprig's arithmetic): numbers convert, bools are 0/1, strings
// parse (a decimal string keeps its integer part for ints), anything else is 0.
int64_t CastToInt64(const Value& v);
double CastToFloat64(const Value& v);
// sprig's strval / toString: strings as they are, everything else as %v prints it.
std::string StrVal(const Value& v);

// Go's strconv.FormatFloat(x, fmt, prec, 64) for fmt 'e', 'E', 'f', 'g', 'G' (prec -1: the
// shortest text that reads back as x).
void AppendGoFloat(double x, char fmt, int prec, std::string* out);

// Go's template comparisons. Eq is `eq a b`; Less is `lt a b`. They return false and set *error
// (Go's text) when the values cannot be compared.
bool TemplateEq(const Value& a, const Value& b, bool* equal, std::string* error);
bool TemplateLess(const Value& a, const Value& b, bool* less, std::string* error);
// reflect.DeepEqual over values. `budget` counts visited elements down; false when exhausted.
bool DeepEqual(const Value& a, const Value& b, int64_t* budget);

// time.Time.String(): "2006-01-02 15:04:05.999999999 -0700 MST" and, for `now`, " m=+0.000001".
std::string FormatTimeString(const Value& t);

// The version a kVersion value holds (Go's zero Version for the text "").
SemanticVersion VersionOf(const Value& v);

}  // namespace skald::stages::go_template_internal
