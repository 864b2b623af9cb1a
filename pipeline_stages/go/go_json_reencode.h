// What Promtail's json stage stores for an object or array it extracts: the value decoded into
// Go values by json-iterator (numbers become float64) and marshalled back by it.
//
// So the stored text is compact and normalized: numbers in Go's shortest float64 form (1.50 ->
// 1.5, 1e3 -> 1000, -0 -> -0, 1e-7 -> 1e-07, integers past 2^53 rounded: 12345678901234567890
// -> 12345678901234567000), strings re-escaped (escapes only where JSON needs them, with <, >,
// & and U+2028/U+2029 as \u003c, \u003e, \u0026, \u2028, \u2029, other control characters as
// \u00XX but \n \r \t; a \u escape of a lone UTF-16 surrogate becomes U+FFFD), and an object's
// duplicate keys collapsed to the last one. Go's map marshals its keys in an order that changes
// from run to run; here they keep the document's order (a duplicated key where it last
// appears).
#pragma once

#include <string>
#include <string_view>

namespace skald::stages {

// Writes the re-encoded form of the JSON value `json` (an object or array, or any value) to
// `*out`. Returns false, with `*out` unspecified, when `json` is not one JSON value with only
// whitespace around it, nests deeper than 1,024 levels (the json stage's parser's limit too), or
// holds a number beyond float64's range (Go refuses such a document: the line is malformed).
// `*had_duplicates` (when given) tells whether some object held a key twice: then `*out` is
// also the document as Go's map sees it.
bool ReencodeAsGoJson(std::string_view json, std::string* out, bool* had_duplicates = nullptr);

}  // namespace skald::stages
