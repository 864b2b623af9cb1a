// Internal to the Go template engine: encoding/json for sprig's toJson, toPrettyJson,
// toRawJson and fromJson.
#pragma once

#include <string>
#include <string_view>

#include "pipeline_stages/go_template/go_template_value.h"

namespace skald::stages::go_template_internal {

struct JsonStyle {
  bool escape_html = true;  // toJson, toPrettyJson: <, > and & as \u003c \u003e \u0026
  bool indent = false;      // toPrettyJson: two spaces per level
};

// json.Marshal(v): maps with sorted keys, nil slices and maps as null, floats as Go writes them,
// times in RFC 3339. Returns false with Go's error text (NaN and infinities are unsupported) or,
// with *too_long set, when *out would pass `limit` bytes.
bool EncodeJson(const Value& v, const JsonStyle& style, size_t limit, std::string* out,
                std::string* error, bool* too_long);

// json.Unmarshal into an interface{}: objects become map[string]interface{}, arrays
// []interface{}, numbers float64. Returns false with Go's error text on malformed input.
// `*elements` counts the values built (for the caller's budget).
bool DecodeJson(std::string_view text, Value* out, std::string* error, int64_t* elements);

}  // namespace skald::stages::go_template_internal
