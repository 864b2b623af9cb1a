// Internal to the Go template engine: the function library (Go's builtins, sprig's text functions,
// Promtail's additions) and how a call is checked and made.
#pragma once

#include <re2/re2.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "pipeline_stages/go_template/go_template_value.h"

namespace skald::stages::go_template_internal {

// What one execution may still spend; shared by the executor and the functions it calls.
struct Budget {
  int64_t steps = 0;  // actions, calls, iterations and elements built or visited
  int64_t bytes = 0;  // bytes of strings and collections built
};

// One call in progress: its limits, the budget, and where a failure is told.
class CallContext {
 public:
  CallContext(std::string_view name, size_t max_bytes, Budget* budget, const RE2* regex)
      : name_(name), max_bytes_(max_bytes), budget_(budget), regex_(regex) {}

  // The longest string a function may build (the execution's output bound).
  size_t max_bytes() const { return max_bytes_; }
  // The regex compiled when the template was parsed (a literal first argument), or null.
  const RE2* regex() const { return regex_; }

  // Fails the call as Go would: "error calling <name>: <why>".
  bool Fail(std::string_view why);
  // Fails the call because its result would pass max_bytes() or the budget.
  bool TooLong();
  // Spends `elements` steps and `bytes` bytes of the budget; false (and TooLong) past it. Call it
  // before building a large result.
  bool Spend(int64_t elements, int64_t bytes);
  // Spends what a string of `size` bytes costs; false past max_bytes() or the budget.
  bool SpendString(size_t size);

  const std::string& error() const { return error_; }
  bool too_long() const { return too_long_; }
  std::string_view name() const { return name_; }

 private:
  std::string_view name_;
  size_t max_bytes_;
  Budget* budget_;
  const RE2* regex_;
  std::string error_;
  bool too_long_ = false;
};

using FunctionSet = GoTemplate::Functions;

using FunctionImpl = bool (*)(std::span<Value> args, CallContext& ctx, Value* result);

struct Function {
  std::string_view name;
  FunctionImpl impl;  // null for a refused function, and for and/or (the executor's)
  // One letter per parameter, Go's parameter types: s string, i int, b bool, f float64,
  // t time.Time, m map[string]interface {}, L []string, a interface{}, r anything (reflect.Value:
  // a missing value included). A trailing '*' makes the letter before it variadic.
  std::string_view params;
  std::string_view refused;  // why the function is not available, when it is not
  int regex_arg = -1;        // the argument holding a regex pattern (compiled when literal)

  bool variadic() const { return !params.empty() && params.back() == '*'; }
  int fixed() const { return static_cast<int>(params.size()) - (variadic() ? 2 : 0); }
  // The parameter type of argument k (0-based).
  char ParamAt(size_t k) const {
    if (variadic() && k >= static_cast<size_t>(fixed())) return params[params.size() - 2];
    return k < params.size() ? params[k] : 'r';
  }
  int min_args() const { return fixed(); }
  int max_args() const { return variadic() ? -1 : fixed(); }
};

// The function named `name` (supported or refused), or nullptr.
const Function* FindFunction(std::string_view name, FunctionSet set);
// Every supported name, comma separated, for error messages.
std::string SupportedFunctionNames(FunctionSet set);
// Go's spelling of a parameter type letter ("string", "map[string]interface {}").
std::string_view ParamTypeName(char param);

// Checks the arguments against f's parameter types (Go's validateType: "wrong type for value;
// expected string; got int", "invalid value; expected int") and calls it.
bool CallFunction(const Function& f, std::span<Value> args, CallContext& ctx, Value* result);

}  // namespace skald::stages::go_template_internal
