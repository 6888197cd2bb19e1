#include "compiler/base/spellcheck.hpp"

#include <algorithm>

namespace pipec {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance over three rolling rows.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string spellcheck(std::string_view word, const std::vector<std::string>& candidates) {
  // Allow roughly one edit per three characters, at least one and at most three.
  const std::size_t max_distance = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::size_t best = max_distance + 1;
  std::string result;
  for (const auto& candidate : candidates) {
    if (candidate == word) continue;
    std::size_t d = edit_distance(word, candidate);
    if (d < best) {
      best = d;
      result = candidate;
    }
  }
  return result;
}

}  // namespace pipec
