// A compiled JMESPath expression (https://jmespath.org/specification.html), evaluated as
// github.com/jmespath/go-jmespath v0.4.0 does, which Promtail's json stage uses.
//
// Everything of the language: sub-expressions, indexes, slices, projections ([*], *, []),
// filters ([?a == `1` && !b]), pipes, multiselect lists and hashes, `json` literals and 'raw
// strings', @, and the built-in functions (jmespath_functions.h) with expression references
// (sort_by(items, &size)). As in go-jmespath: every number is a double; <, <=, >, >= compare
// numbers only (anything else gives null); slices apply to arrays only.
//
// Differences from go-jmespath, where it is random or fails: `*` on an object, keys() and
// values() go in key order (Go's map order is random); an unknown function, a wrong argument
// count and a slice step of 0 are errors when the expression is compiled (go-jmespath reports
// them when it runs); avg([]) is null (Go computes 0/0, NaN); contains() compares arrays and
// objects by value (go-jmespath panics on them); merge() of a non-object is a type error (a
// panic in go-jmespath); an expression reference outside a function's argument is a run-time
// error (go-jmespath yields an opaque value).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace skald::stages {

namespace jmes {
struct Node;
}

class JmesExpression {
 public:
  // Throws ConfigError naming the expression, the position and what was expected; see
  // jmespath_parser.h for the bounds on length and nesting.
  explicit JmesExpression(std::string_view expression);

  // The result; nullopt for a run-time error (a function given a value of the wrong type),
  // where go-jmespath's Search returns an error, and for one that would do more work or make
  // larger values than a line can need (a fixed allowance plus eight times what `document`
  // holds: jmespath_expression.cc). Numbers in `document` must be doubles, as Go's decoder
  // gives them (JmesNumbersToDoubles).
  std::optional<nlohmann::json> Search(const nlohmann::json& document) const;

 private:
  std::shared_ptr<const jmes::Node> root_;
};

// Turns every number of `value` into a double.
void JmesNumbersToDoubles(nlohmann::json& value);

}  // namespace skald::stages
