// The tokens of a JMESPath expression, as go-jmespath's lexer cuts them.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages::jmes {

enum class Tok {
  kEof,
  kIdentifier,        // text: the name
  kQuotedIdentifier,  // text: the name, unescaped
  kNumber,            // text: the digits, maybe after '-'
  kLiteral,           // `json`: value
  kRawString,         // 'text': value (a string)
  kDot,
  kStar,
  kComma,
  kColon,
  kLbrace,
  kRbrace,
  kLbracket,
  kRbracket,
  kLparen,
  kRparen,
  kCurrent,  // @
  kFilter,   // [?
  kFlatten,  // []
  kPipe,
  kOr,
  kAnd,
  kNot,
  kExpref,  // &
  kLt,
  kLte,
  kGt,
  kGte,
  kEq,
  kNe,
};

struct Token {
  Tok type = Tok::kEof;
  size_t position = 0;  // byte offset in the expression
  std::string text;
  nlohmann::json value;  // kLiteral, kRawString
};

// A short description of a token type for error messages ("'['", "an identifier", ...).
std::string_view Describe(Tok type);

// Cuts `expression` into tokens, the last one kEof. Throws ConfigError naming the expression,
// the position and what was expected.
std::vector<Token> Tokenize(std::string_view expression);

// The message prefix every JMESPath config error starts with.
std::string ErrorPrefix(std::string_view expression);

// Turns every number of `value` into a double (Go reads every JSON number as a float64).
void NumbersToDoubles(nlohmann::json& value);

}  // namespace skald::stages::jmes
