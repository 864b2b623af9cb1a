#include "pipeline_stages/jmespath_functions.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "pipeline_stages/go/go_json_reencode.h"
#include "pipeline_stages/go/go_strconv.h"

namespace skald::stages::jmes {
namespace {

using json = nlohmann::json;
using Args = std::vector<Arg>;

const json& V(const Args& a, size_t i) { return *a[i].value; }

bool AllOf(const json& v, bool (json::*is)() const noexcept) {
  if (!v.is_array()) return false;
  for (const json& e : v) {
    if (!(e.*is)()) return false;
  }
  return true;
}

bool Accepts(ArgType t, const Arg& a) {
  if (t == ArgType::kExpref) return a.expression != nullptr;
  if (!a.value) return false;
  const json& v = *a.value;
  switch (t) {
    case ArgType::kAny:
      return true;
    case ArgType::kNumber:
      return v.is_number();
    case ArgType::kString:
      return v.is_string();
    case ArgType::kArray:
      return v.is_array();
    case ArgType::kObject:
      return v.is_object();
    case ArgType::kArrayNumber:
      return AllOf(v, &json::is_number);
    case ArgType::kArrayString:
      return AllOf(v, &json::is_string);
    case ArgType::kExpref:
      break;
  }
  return false;
}

std::string TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "number";
  }
}

size_t RuneLength(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

json Abs(const Evaluator&, const Args& a) { return std::fabs(V(a, 0).get<double>()); }
json Ceil(const Evaluator&, const Args& a) { return std::ceil(V(a, 0).get<double>()); }
json Floor(const Evaluator&, const Args& a) { return std::floor(V(a, 0).get<double>()); }

json Sum(const Evaluator&, const Args& a) {
  double sum = 0;
  for (const json& e : V(a, 0)) sum += e.get<double>();
  return sum;
}

json Avg(const Evaluator& e, const Args& a) {
  if (V(a, 0).empty()) return nullptr;
  return Sum(e, a).get<double>() / static_cast<double>(V(a, 0).size());
}

json Contains(const Evaluator&, const Args& a) {
  const json& subject = V(a, 0);
  const json& search = V(a, 1);
  if (subject.is_string()) {
    if (!search.is_string()) return false;
    // memmem (Two-Way) is linear; std::string::find is not ("aaa...a" in "aaa...ab").
    const std::string& s = subject.get_ref<const std::string&>();
    const std::string& t = search.get_ref<const std::string&>();
    return t.empty() || ::memmem(s.data(), s.size(), t.data(), t.size()) != nullptr;
  }
  return std::find(subject.begin(), subject.end(), search) != subject.end();
}

json StartsWith(const Evaluator&, const Args& a) {
  return V(a, 0).get_ref<const std::string&>().starts_with(V(a, 1).get_ref<const std::string&>());
}

json EndsWith(const Evaluator&, const Args& a) {
  return V(a, 0).get_ref<const std::string&>().ends_with(V(a, 1).get_ref<const std::string&>());
}

json Join(const Evaluator& evaluator, const Args& a) {
  const std::size_t items = V(a, 1).size();
  std::size_t bytes = items > 0 ? (items - 1) * V(a, 0).get_ref<const std::string&>().size() : 0;
  for (const json& e : V(a, 1)) bytes += e.get_ref<const std::string&>().size();
  evaluator.Pay(bytes);  // before the separator is copied n - 1 times
  std::string out;
  out.reserve(bytes);
  bool first = true;
  for (const json& e : V(a, 1)) {
    if (!first) out += V(a, 0).get_ref<const std::string&>();
    first = false;
    out += e.get_ref<const std::string&>();
  }
  return out;
}

json Keys(const Evaluator&, const Args& a) {
  json out = json::array();
  for (const auto& [k, v] : V(a, 0).items()) out.push_back(k);
  return out;
}

json Values(const Evaluator&, const Args& a) {
  json out = json::array();
  for (const json& v : V(a, 0)) out.push_back(v);
  return out;
}

json Length(const Evaluator&, const Args& a) {
  const json& v = V(a, 0);
  return static_cast<double>(v.is_string() ? RuneLength(v.get_ref<const std::string&>())
                                           : v.size());
}

json Map(const Evaluator& e, const Args& a) {
  json out = json::array();
  for (const json& v : V(a, 1)) out.push_back(e.Apply(*a[0].expression, v));
  return out;
}

// The best of an array of numbers or of strings; null when empty.
json Best(const json& items, bool max) {
  if (items.empty()) return nullptr;
  const json* best = &items[0];
  for (const json& v : items) {
    if (max ? v > *best : v < *best) best = &v;
  }
  return *best;
}

json Max(const Evaluator&, const Args& a) { return Best(V(a, 0), true); }
json Min(const Evaluator&, const Args& a) { return Best(V(a, 0), false); }

// The keys `expression` gives for each element: all numbers or all strings.
std::vector<json> SortKeys(const Evaluator& e, const json& items, const Node& expression,
                           std::string_view function) {
  std::vector<json> keys;
  keys.reserve(items.size());
  for (const json& v : items) keys.push_back(e.Apply(expression, v));
  const bool numbers = keys[0].is_number();
  if (!numbers && !keys[0].is_string()) {
    throw RuntimeError(std::string(function) + ": the expression gives " + TypeName(keys[0]) +
                       ", not a number or a string");
  }
  for (const json& k : keys) {
    if (numbers ? !k.is_number() : !k.is_string()) {
      throw RuntimeError(std::string(function) + ": the expression gives " + TypeName(k) + " and " +
                         TypeName(keys[0]) + " for different elements");
    }
  }
  return keys;
}

json BestBy(const Evaluator& e, const Args& a, bool max) {
  const json& items = V(a, 0);
  if (items.empty()) return nullptr;
  if (items.size() == 1) return items[0];
  const std::vector<json> keys =
      SortKeys(e, items, *a[1].expression, max ? "max_by()" : "min_by()");
  size_t best = 0;
  for (size_t i = 1; i < keys.size(); ++i) {
    if (max ? keys[i] > keys[best] : keys[i] < keys[best]) best = i;
  }
  return items[best];
}

json MaxBy(const Evaluator& e, const Args& a) { return BestBy(e, a, true); }
json MinBy(const Evaluator& e, const Args& a) { return BestBy(e, a, false); }

json Merge(const Evaluator&, const Args& a) {
  json out = json::object();
  for (const Arg& arg : a) {
    if (!arg.value || !arg.value->is_object()) {
      throw RuntimeError("merge(): arguments must be objects");
    }
    for (const auto& [k, v] : arg.value->items()) out[k] = v;
  }
  return out;
}

json NotNull(const Evaluator&, const Args& a) {
  for (const Arg& arg : a) {
    if (!arg.value) throw RuntimeError("not_null(): an expression reference is not a value");
    if (!arg.value->is_null()) return *arg.value;
  }
  return nullptr;
}

json Reverse(const Evaluator&, const Args& a) {
  const json& v = V(a, 0);
  if (v.is_array()) {
    json out = json::array();
    for (auto it = v.rbegin(); it != v.rend(); ++it) out.push_back(*it);
    return out;
  }
  // By code point: each UTF-8 sequence keeps its bytes in order.
  const std::string& s = v.get_ref<const std::string&>();
  std::string out;
  out.reserve(s.size());
  size_t end = s.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    out.append(s, start, end - start);
    end = start;
  }
  return out;
}

json Sort(const Evaluator&, const Args& a) {
  json out = V(a, 0);
  std::stable_sort(out.begin(), out.end(), [](const json& x, const json& y) { return x < y; });
  return out;
}

json SortBy(const Evaluator& e, const Args& a) {
  const json& items = V(a, 0);
  if (items.size() < 2) return items;
  const std::vector<json> keys = SortKeys(e, items, *a[1].expression, "sort_by()");
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return keys[x] < keys[y]; });
  json out = json::array();
  for (size_t i : order) out.push_back(items[i]);
  return out;
}

json ToArray(const Evaluator&, const Args& a) {
  if (V(a, 0).is_array()) return V(a, 0);
  return json::array({V(a, 0)});
}

json ToString(const Evaluator&, const Args& a) {
  const json& v = V(a, 0);
  if (v.is_string()) return v;
  std::string out;
  if (!ReencodeAsGoJson(v.dump(-1, ' ', false, json::error_handler_t::replace), &out)) {
    throw RuntimeError("to_string(): the value cannot be encoded");
  }
  return out;
}

json ToNumber(const Evaluator&, const Args& a) {
  const json& v = V(a, 0);
  if (v.is_number()) return v;
  if (!v.is_string()) return nullptr;
  // go-jmespath: strconv.ParseFloat, null on its error ("1e-400" is 0, "1e400" an error).
  double d = 0;
  if (!ParseGoFloat(v.get_ref<const std::string&>(), &d)) return nullptr;
  return d;
}

json Type(const Evaluator&, const Args& a) { return TypeName(V(a, 0)); }

using T = ArgType;

const std::vector<Function>& Table() {
  static const std::vector<Function> table = {
      {"abs", {{T::kNumber}}, false, Abs},
      {"avg", {{T::kArrayNumber}}, false, Avg},
      {"ceil", {{T::kNumber}}, false, Ceil},
      {"contains", {{T::kArray, T::kString}, {T::kAny}}, false, Contains},
      {"ends_with", {{T::kString}, {T::kString}}, false, EndsWith},
      {"floor", {{T::kNumber}}, false, Floor},
      {"join", {{T::kString}, {T::kArrayString}}, false, Join},
      {"keys", {{T::kObject}}, false, Keys},
      {"length", {{T::kString, T::kArray, T::kObject}}, false, Length},
      {"map", {{T::kExpref}, {T::kArray}}, false, Map},
      {"max", {{T::kArrayNumber, T::kArrayString}}, false, Max},
      {"max_by", {{T::kArray}, {T::kExpref}}, false, MaxBy},
      {"merge", {{T::kObject}}, true, Merge},
      {"min", {{T::kArrayNumber, T::kArrayString}}, false, Min},
      {"min_by", {{T::kArray}, {T::kExpref}}, false, MinBy},
      {"not_null", {{T::kAny}}, true, NotNull},
      {"reverse", {{T::kArray, T::kString}}, false, Reverse},
      {"sort", {{T::kArrayString, T::kArrayNumber}}, false, Sort},
      {"sort_by", {{T::kArray}, {T::kExpref}}, false, SortBy},
      {"starts_with", {{T::kString}, {T::kString}}, false, StartsWith},
      {"sum", {{T::kArrayNumber}}, false, Sum},
      {"to_array", {{T::kAny}}, false, ToArray},
      {"to_number", {{T::kAny}}, false, ToNumber},
      {"to_string", {{T::kAny}}, false, ToString},
      {"type", {{T::kAny}}, false, Type},
      {"values", {{T::kObject}}, false, Values},
  };
  return table;
}

}  // namespace

const Function* FindFunction(std::string_view name) {
  for (const Function& f : Table()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string FunctionNames() {
  std::string out;
  for (const Function& f : Table()) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

json CallFunction(const Function& function, const Evaluator& evaluator, const Args& args) {
  // go-jmespath checks the types of a fixed list of parameters; the variadic functions check
  // their own arguments.
  if (!function.variadic) {
    for (size_t i = 0; i < args.size(); ++i) {
      const auto& accepted = function.parameters[i];
      if (std::none_of(accepted.begin(), accepted.end(),
                       [&](ArgType t) { return Accepts(t, args[i]); })) {
        throw RuntimeError(std::string(function.name) + "(): argument " + std::to_string(i + 1) +
                           " has the wrong type (" +
                           (args[i].value ? TypeName(*args[i].value) : "expression") + ")");
      }
    }
  }
  return function.call(evaluator, args);
}

bool IsTruthy(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return false;
    case json::value_t::boolean:
      return v.get<bool>();
    case json::value_t::string:
      return !v.get_ref<const std::string&>().empty();
    case json::value_t::array:
    case json::value_t::object:
      return !v.empty();
    default:
      return true;
  }
}

}  // namespace skald::stages::jmes
