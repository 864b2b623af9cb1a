// Internal to the Go template engine: the parts of Go's strings, unicode, path and encoding
// packages that the template functions are made of.
//
// Unicode case mapping covers Latin, Greek, Cyrillic, Armenian and fullwidth letters; other
// letters keep their case (and count as neither upper nor lower case).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/go/go_string.h"

namespace skald::stages::go_template_internal {

char32_t ToUpperRune(char32_t r);
char32_t ToLowerRune(char32_t r);
bool IsSpaceRune(char32_t r);   // unicode.IsSpace
bool IsUpperRune(char32_t r);   // unicode.IsUpper (within the mapped scripts)
bool IsLowerRune(char32_t r);   // unicode.IsLower (within the mapped scripts)
bool IsLetterRune(char32_t r);  // unicode.IsLetter (ASCII exact; others approximate)
bool IsDigitRune(char32_t r);   // unicode.IsDigit (ASCII and fullwidth digits)
bool IsPunctRune(char32_t r);   // unicode.IsPunct (ASCII exact; common others)

// strings.Map with a rune mapping (invalid UTF-8 becomes U+FFFD, as in Go).
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
std::string Title(std::string_view s);  // strings.Title
std::string_view TrimLeftFunc(std::string_view s, const std::function<bool(char32_t)>& in_set);
std::string_view TrimRightFunc(std::string_view s, const std::function<bool(char32_t)>& in_set);
std::function<bool(char32_t)> CutsetPredicate(std::string_view cutset);
std::string_view TrimSpace(std::string_view s);  // strings.TrimSpace

// strings.Replace into *out; false (and nothing built) when the result would be longer than
// max_bytes.
bool ReplaceN(std::string_view s, std::string_view old_s, std::string_view new_s, int64_t n,
              size_t max_bytes, std::string* out);
// strings.SplitN (n < 0: all parts; n == 0: none).
std::vector<std::string_view> SplitN(std::string_view s, std::string_view sep, int64_t n);
// strings.Fields.
std::vector<std::string_view> Fields(std::string_view s);

// encoding/base64 and base32 with the standard alphabets and padding. Decoding returns Go's
// error text in place of the result on bad input ("illegal base64 data at input byte 4"), as
// sprig's b64dec and b32dec do.
std::string Base64Encode(std::string_view s);
std::string Base64Decode(std::string_view s);
std::string Base32Encode(std::string_view s);
std::string Base32Decode(std::string_view s);

// Lower-case hex digest of `a` then `b` with an OpenSSL digest name ("SHA256", "SHA3-256").
std::string HexDigest(const char* digest, std::string_view a, std::string_view b = {});

// Package path: Base, Dir, Clean, Ext.
std::string PathClean(std::string_view p);
std::string PathBase(std::string_view p);
std::string PathDir(std::string_view p);
std::string_view PathExt(std::string_view p);

}  // namespace skald::stages::go_template_internal
