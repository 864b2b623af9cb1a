// Internal to the Go template engine: the parts of Go's strings, unicode, path and encoding
// packages that the template functions are made of.
//
// Case mapping is Go's (pipeline_stages/go/go_unicode_case.h). IsUpperRune and IsLowerRune
// approximate Go's categories by it: a rune is upper case when it has a lower case mapping, and
// lower case when it has an upper case one (or is "ß").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline_stages/go/go_string.h"
#include "pipeline_stages/go/go_unicode_case.h"

namespace skald::stages::go_template_internal {

bool IsSpaceRune(char32_t r);   // unicode.IsSpace
bool IsUpperRune(char32_t r);   // unicode.IsUpper (approximately, as above)
bool IsLowerRune(char32_t r);   // unicode.IsLower (approximately, as above)
bool IsLetterRune(char32_t r);  // unicode.IsLetter (ASCII exact; others approximate)
bool IsDigitRune(char32_t r);   // unicode.IsDigit (ASCII and fullwidth digits)
bool IsPunctRune(char32_t r);   // unicode.IsPunct (ASCII exact; common others)

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
