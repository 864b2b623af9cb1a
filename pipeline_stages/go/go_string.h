// Go string literals, as written in LogQL selectors and Go templates, and Go's %q quoting.
//
// The stage languages users paste come from Go programs, so their string literals follow Go's
// rules: "interpreted" strings with backslash escapes, and `raw` strings without any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace skald::stages {

// Reads one Go string literal at the start of `text` (which must begin with '"' or '`') and
// appends its value to `*value`. Returns the number of bytes the literal spans, quotes included.
// On a malformed literal returns 0 and sets `*error` to a reason naming the bad text (an unknown
// escape, a missing closing quote, a newline inside a double-quoted string).
size_t ReadGoStringLiteral(std::string_view text, std::string* value, std::string* error);

// Appends `s` quoted as Go's strconv.Quote / fmt's %q does: "\"", "\\", \n \t \r \a \b \f \v,
// \xNN for other control bytes and invalid UTF-8, \u00NN for C1 controls; other characters as-is.
void AppendGoQuoted(std::string_view s, std::string* out);
// The same, as a string of its own.
std::string GoQuoted(std::string_view s);

// Appends `s` as a JSON string the way Go's JSON writers write one: `"` and `\` escaped, \n \r
// \t, other control characters as \u00XX (`short_bf`: \b and \f, as encoding/json writes them
// since Go 1.22; json-iterator writes \u0008 and \u000c), `<`, `>` and `&` as \u003c \u003e
// \u0026 when `escape_html`, U+2028 and U+2029 as \u2028 \u2029, and each byte that is not
// UTF-8 as \ufffd.
void AppendGoJsonString(std::string_view s, bool escape_html, bool short_bf, std::string* out);

// The letter of a control character's one-letter Go escape (\a \b \f \n \r \t \v), or 0.
// JSON has the same letters but \a and \v.
char ShortEscapeLetter(char32_t r);
// The value of a hex digit (0-9, a-f, A-F), or -1.
int HexDigitValue(char c);
// The value of the four hex digits at s[at] (a \u escape's), or -1 when they are not there.
int32_t Hex4At(std::string_view s, size_t at);
// Appends `prefix` and the last `digits` hex digits of `value`, lower case: \x1b, \u00e9.
void AppendHexEscape(std::string_view prefix, uint32_t value, int digits, std::string* out);

// Decodes one UTF-8 code point at s[i]. Sets *size to its length (1 for an invalid byte, which
// decodes as U+FFFD like Go does). Requires i < s.size().
char32_t DecodeRune(std::string_view s, size_t i, size_t* size);
// Appends the UTF-8 encoding of `r`.
void AppendRune(char32_t r, std::string* out);

// strings.Map: `f` applied to each rune of `s` (an invalid UTF-8 byte is passed as U+FFFD, as in
// Go), the results encoded in UTF-8.
template <typename F>
std::string MapRunes(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      const char32_t mapped = f(c);
      if (mapped < 0x80) {
        out.push_back(static_cast<char>(mapped));
      } else {
        AppendRune(mapped, &out);
      }
      ++i;
      continue;
    }
    size_t n;
    AppendRune(f(DecodeRune(s, i, &n)), &out);
    i += n;
  }
  return out;
}

// Appends the finite `v` as Go's strconv.AppendFloat(v, format, -1, 64): the shortest digits
// that read back as v, in fixed notation (`format` 'f': 1e23 -> 100000000000000000000000) or
// exponent notation ('e': 1e-07, 1.5e+21).
void AppendGoFloat(double v, char format, std::string* out);

}  // namespace skald::stages
