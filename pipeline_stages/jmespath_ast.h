// The syntax tree of a JMESPath expression (jmespath_parser.h builds it, jmespath_expression.h
// evaluates it). Numbers in literals are doubles, as go-jmespath holds every JSON number as a
// float64.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skald::stages::jmes {

struct Function;  // jmespath_functions.h

enum class Comparator { kEq, kNe, kLt, kLte, kGt, kGte };

struct Node {
  enum class Kind {
    kCurrent,           // @, and the implicit right side of a projection
    kField,             // name
    kIndex,             // index
    kSlice,             // slice
    kSubexpression,     // children[0] then children[1] on its result
    kProjection,        // children[1] on each element of the array children[0] gives
    kValueProjection,   // children[1] on each value of the object children[0] gives
    kFlatten,           // children[0]'s array with arrays in it spliced
    kFilterProjection,  // children[1] on each element of children[0] where children[2] holds
    kLiteral,           // literal
    kMultiSelectList,   // [children...]
    kMultiSelectHash,   // {keys[i]: children[i]...}
    kOr,
    kAnd,
    kNot,
    kComparator,  // comparator, children[0] and children[1]
    kPipe,
    kFunction,             // function, arguments in children
    kExpressionReference,  // &children[0]
  };

  Kind kind = Kind::kCurrent;
  std::string name;                 // kField
  int64_t index = 0;                // kIndex
  std::optional<int64_t> slice[3];  // kSlice: start, stop, step
  Comparator comparator = Comparator::kEq;
  nlohmann::json literal;              // kLiteral
  const Function* function = nullptr;  // kFunction
  std::vector<std::string> keys;       // kMultiSelectHash
  std::vector<Node> children;

  static Node Of(Kind kind, std::vector<Node> children = {}) {
    Node n;
    n.kind = kind;
    n.children = std::move(children);
    return n;
  }
};

}  // namespace skald::stages::jmes
