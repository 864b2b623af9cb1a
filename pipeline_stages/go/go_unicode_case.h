// Go's Unicode case mapping: unicode.ToUpper, ToLower and ToTitle of one rune, and
// strings.ToUpper and ToLower of a string.
//
// The mapping is Go's: Unicode 15.0.0's simple (one rune to one rune) case mappings, as Go 1.26's
// unicode.CaseRanges holds them. There are no special casings: "ß" stays "ß" in upper case, a
// final sigma "ς" is "Σ" in upper case but "Σ" is always "σ" in lower case, and "İ" lowers to
// a plain "i".
#pragma once

#include <string>
#include <string_view>

namespace skald::stages {

char32_t GoToUpperRune(char32_t r);  // unicode.ToUpper
char32_t GoToLowerRune(char32_t r);  // unicode.ToLower
char32_t GoToTitleRune(char32_t r);  // unicode.ToTitle

// strings.ToUpper and strings.ToLower: each rune mapped; each byte that is not UTF-8 becomes
// U+FFFD ("\xff" -> "\xef\xbf\xbd"), as strings.Map makes it.
std::string GoToUpper(std::string_view s);
std::string GoToLower(std::string_view s);

}  // namespace skald::stages
