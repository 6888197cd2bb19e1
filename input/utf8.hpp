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

/// The code point of the valid sequence of `len` (2-4) bytes at text[i].
char32_t utf8_code_point(std::string_view text, std::size_t i, std::size_t len);

/// The Unicode name of a character that shows as nothing, or as a space, but is not one
/// (U+200D ZERO WIDTH JOINER, U+FEFF, U+00A0, the bidirectional controls, ...): between
/// tokens it makes a correct-looking line fail, so the parser names it where it is, and
/// the diagnostics printer shows it as '?'. nullptr for any other character.
const char* invisible_character_name(char32_t c);

/// The embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) that reorder how
/// text displays (Trojan Source, CVE-2021-42574).
bool is_bidi_control(char32_t c);

/// The offset of the first byte of `text` that does not start a valid UTF-8 sequence, or
/// std::string_view::npos when the whole text is UTF-8.
std::size_t first_invalid_utf8(std::string_view text);

}  // namespace pipec
