// RandomHex: `n` random lowercase hex digits (container ids, name suffixes) for test tools.
#pragma once

#include <cstddef>
#include <random>
#include <string>

namespace skald::testkit {

inline std::string RandomHex(std::size_t n) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(n);
  for (std::size_t i = 0; i < n; ++i) s += kHex[rng() % 16];
  return s;
}

}  // namespace skald::testkit
