// Sha256Hex: the SHA-256 digest of some bytes as lower-case hex, cut to a prefix. Used where a
// value must be compared or named without being kept (client keys, secret references).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace skald {

// The first `hex_chars` hex digits (64: all) of SHA-256(`data`), lower case.
std::string Sha256Hex(std::string_view data, std::size_t hex_chars = 64);

}  // namespace skald
