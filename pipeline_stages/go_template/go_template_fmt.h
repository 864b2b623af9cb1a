// Internal to the Go template engine: Go's fmt.Sprint, Sprintln and Sprintf over template values
// (the builtins print, println and printf).
//
// Sprintf handles the flags + - # space 0, widths and precisions (also `*` and explicit argument
// indexes `%[2]d`), and the verbs v s q d b o O x X c U e E f F g G t T %, with Go's error
// notes in the text (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int=1)`). Not supported, and
// written as a bad verb: %p and the hexadecimal/binary forms of floats (%x, %b on a float).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "pipeline_stages/go_template/go_template_value.h"

namespace skald::stages::go_template_internal {

// Each appends to *out and returns false as soon as *out would pass `limit` bytes (a width or
// precision that would pass it is refused before any padding is written).
bool GoSprint(std::span<const Value> args, std::string* out, size_t limit);
bool GoSprintln(std::span<const Value> args, std::string* out, size_t limit);
bool GoSprintf(std::string_view format, std::span<const Value> args, std::string* out,
               size_t limit);

// strconv.Quote with only ASCII in the result (fmt's %+q).
void AppendGoQuotedAscii(std::string_view s, std::string* out);

}  // namespace skald::stages::go_template_internal
