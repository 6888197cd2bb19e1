#pragma once

// UTF-8 decoding shared by the parser (which rejects invalid input) and the diagnostics
// printer (which shows a source line safely on a terminal).

#include <cstddef>
#include <string_view>

namespace pipec {

/// The length in bytes (1-4) of the valid UTF-8 sequence that starts at text[i], or 0
/// when the bytes there are not one: a stray continuation byte, a truncated sequence, an
/// overlong form, a surrogate or a value past U+10FFFF. Requires i < text.size().
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

}  // namespace pipec
