// Parses a JMESPath expression into its syntax tree (jmespath_ast.h) with go-jmespath's
// precedence (a Pratt parser over jmespath_lexer.h's tokens).
#pragma once

#include <string_view>

#include "pipeline_stages/jmespath_ast.h"

namespace skald::stages::jmes {

// Bounds a config cannot exceed: checked before parsing, so a hostile expression cannot
// exhaust the stack of the parser or of the evaluator.
inline constexpr size_t kMaxExpressionLength = 4096;  // bytes
inline constexpr int kMaxNesting = 64;  // open brackets, braces and parentheses at once
inline constexpr int kMaxDepth = 256;   // sub-expressions within each other

// Throws ConfigError naming the expression, the position and what was expected, for syntax
// errors, an unknown function, a wrong argument count, a slice step of 0, and expressions past
// the bounds above.
Node Parse(std::string_view expression);

}  // namespace skald::stages::jmes
