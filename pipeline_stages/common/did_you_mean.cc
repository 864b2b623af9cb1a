#include "pipeline_stages/common/did_you_mean.h"

#include <algorithm>

namespace skald::stages {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& names,
                       DidYouMeanRule rule) {
  std::string best;
  std::size_t best_distance = rule.max_distance + 1;
  for (std::string_view n : names) {
    const std::size_t d = EditDistance(word, n);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(n);
    }
  }
  if (best.empty() && rule.prefixes && word.size() >= 3) {
    for (std::string_view n : names) {
      if (n.substr(0, word.size()) == word || word.substr(0, n.size()) == n) return std::string(n);
    }
  }
  return best;
}

}  // namespace skald::stages
