// JMESPath plain paths: the subset of JMESPath that simdjson reads directly (the json stage's
// fast path).
//
// Plain paths: identifiers (`level`), quoted identifiers (`"user-agent"`), dotted paths (`a.b`)
// and array indexes (`items[0]`, `items[-1]`, negative counting from the end), e.g.
// `a.b[0]."c-d"`. ParseJmesPath refuses everything else (functions, projections, filters,
// ...); the json stage then compiles the expression as full JMESPath
// (jmespath_expression.h).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {

// One step of a path: a field of an object, or an element of an array.
struct JmesPathStep {
  enum class Kind { kField, kIndex };
  Kind kind;
  std::string field;  // kField: the key, unquoted and unescaped
  int64_t index = 0;  // kIndex: >= 0 from the start, < 0 from the end (-1 is the last)

  static JmesPathStep Field(std::string name) { return {Kind::kField, std::move(name), 0}; }
  static JmesPathStep Index(int64_t i) { return {Kind::kIndex, {}, i}; }
  friend bool operator==(const JmesPathStep&, const JmesPathStep&) = default;
};

using JmesPath = std::vector<JmesPathStep>;

// Parses `expression` into steps. Throws ConfigError naming the expression, the position and
// what is supported, for empty or unsupported expressions and for an unquoted key with a '-'.
// (The json stage substitutes the key name for an empty expression before calling this.)
JmesPath ParseJmesPath(std::string_view expression);

// Follows `path` in `document`. Returns nullptr when a step does not match: a missing key, a
// field step on a non-object, an index step on a non-array or out of range. Never throws.
const nlohmann::json* EvaluateJmesPath(const JmesPath& path, const nlohmann::json& document);

}  // namespace skald::stages
