// JMESPath's built-in functions (abs ... values), their signatures and type checks, as
// go-jmespath defines them.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/jmespath_ast.h"

namespace skald::stages::jmes {

// A run-time error: a function given a value of the wrong type. The whole expression then
// yields nothing (go-jmespath's Search returns an error).
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Evaluates an expression reference (map, sort_by, ...) on a value.
class Evaluator {
 public:
  virtual nlohmann::json Apply(const Node& expression, const nlohmann::json& value) const = 0;
  // Pays, from the search's work budget, for a value of `bytes` a function is about to build
  // (throws when the budget is spent).
  virtual void Pay(std::size_t bytes) const = 0;

 protected:
  ~Evaluator() = default;
};

enum class ArgType : uint8_t {
  kAny,
  kNumber,
  kString,
  kArray,
  kObject,
  kArrayNumber,
  kArrayString,
  kExpref,
};

// One argument: a value, or (for an kExpref parameter) the referenced expression.
struct Arg {
  const nlohmann::json* value = nullptr;
  const Node* expression = nullptr;
};

struct Function {
  std::string_view name;
  std::vector<std::vector<ArgType>> parameters;  // the types each one accepts
  bool variadic = false;                         // the last parameter repeats (at least once)
  nlohmann::json (*call)(const Evaluator&, const std::vector<Arg>&) = nullptr;
};

// The function named `name`, or null.
const Function* FindFunction(std::string_view name);

// The names of every function, comma-separated (for error messages).
std::string FunctionNames();

// Checks `args` against `function`'s parameters and calls it. Throws RuntimeError.
nlohmann::json CallFunction(const Function& function, const Evaluator& evaluator,
                            const std::vector<Arg>& args);

// JMESPath's truth: false, null, "", [] and {} are false; everything else is true.
bool IsTruthy(const nlohmann::json& value);

}  // namespace skald::stages::jmes
