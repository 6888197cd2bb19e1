#pragma once
// Small text helpers that several folders need.

#include <string>
#include <string_view>

namespace pipec {

/// `text` with A-Z as a-z and every other byte as it is (no locale).
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace pipec
