#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pipec {

/// Edit distance (insertions, deletions, substitutions, adjacent swaps).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `word` within a small edit distance (ninja's
/// SpellcheckString), or "" when none is near enough.
std::string spellcheck(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace pipec
