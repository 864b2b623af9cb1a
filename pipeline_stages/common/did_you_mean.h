// "Did you mean ...?" for a mistyped name (a stage, a field, a relabel action, a --log-opt):
// the closest known name by edit distance.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace skald::stages {

// Levenshtein distance: the fewest single-byte insertions, deletions and substitutions that
// turn `a` into `b`.
std::size_t EditDistance(std::string_view a, std::string_view b);

struct DidYouMeanRule {
  std::size_t max_distance = 2;  // a name further away is never suggested...
  bool prefixes = true;          // ...unless it is a prefix of the word or the word of it
};

// The first of `names` at the least edit distance from `word`, when that is at most
// rule.max_distance; otherwise, with rule.prefixes and a word of 3 or more bytes, the first
// name that is a prefix of the word or that the word is a prefix of; otherwise "".
std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& names,
                       DidYouMeanRule rule = {});

}  // namespace skald::stages
