#pragma once

// UTF-8 decoding shared by the parser (which rejects invalid input), the diagnostics
// printer (which shows a source line safely on a terminal), and every reader of values
// (parameters, launcher values), which refuses text that is not UTF-8 with its place.

#include <cstddef>
#include <string_view>

namespace pipec {

/// The length in bytes (1-4) of the valid UTF-8 sequence that starts at text[i], or 0
/// when the bytes there are not one: a stray continuation byte, a truncated sequence, an
/// overlong form, a surrogate or a value past U+10FFFF. Requires i < text.size().
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

/// The offset of the first byte of `text` that does not start a valid UTF-8 sequence, or
/// std::string_view::npos when the whole text is UTF-8.
std::size_t first_invalid_utf8(std::string_view text);

}  // namespace pipec
