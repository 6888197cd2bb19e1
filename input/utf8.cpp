#include "input/utf8.hpp"

#include <cstdint>

namespace pipec {

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  auto c = static_cast<unsigned char>(text[i]);
  std::size_t len = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xe  ? 3
                    : (c >> 3) == 0x1e ? 4
                                       : 0;
  if (len == 0 || i + len > text.size()) return 0;
  std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    auto cc = static_cast<unsigned char>(text[i + k]);
    if ((cc >> 6) != 0x2) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid too.
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return 0;
  return len;
}

const char* invisible_character_name(char32_t c) {
  switch (c) {
    case 0x00A0: return "NO-BREAK SPACE";
    case 0x00AD: return "SOFT HYPHEN";
    case 0x034F: return "COMBINING GRAPHEME JOINER";
    case 0x061C: return "ARABIC LETTER MARK";
    case 0x180E: return "MONGOLIAN VOWEL SEPARATOR";
    case 0x2000: return "EN QUAD";
    case 0x2001: return "EM QUAD";
    case 0x2002: return "EN SPACE";
    case 0x2003: return "EM SPACE";
    case 0x2004: return "THREE-PER-EM SPACE";
    case 0x2005: return "FOUR-PER-EM SPACE";
    case 0x2006: return "SIX-PER-EM SPACE";
    case 0x2007: return "FIGURE SPACE";
    case 0x2008: return "PUNCTUATION SPACE";
    case 0x2009: return "THIN SPACE";
    case 0x200A: return "HAIR SPACE";
    case 0x200B: return "ZERO WIDTH SPACE";
    case 0x200C: return "ZERO WIDTH NON-JOINER";
    case 0x200D: return "ZERO WIDTH JOINER";
    case 0x200E: return "LEFT-TO-RIGHT MARK";
    case 0x200F: return "RIGHT-TO-LEFT MARK";
    case 0x2028: return "LINE SEPARATOR";
    case 0x2029: return "PARAGRAPH SEPARATOR";
    case 0x202A: return "LEFT-TO-RIGHT EMBEDDING";
    case 0x202B: return "RIGHT-TO-LEFT EMBEDDING";
    case 0x202C: return "POP DIRECTIONAL FORMATTING";
    case 0x202D: return "LEFT-TO-RIGHT OVERRIDE";
    case 0x202E: return "RIGHT-TO-LEFT OVERRIDE";
    case 0x202F: return "NARROW NO-BREAK SPACE";
    case 0x205F: return "MEDIUM MATHEMATICAL SPACE";
    case 0x2060: return "WORD JOINER";
    case 0x2061: return "FUNCTION APPLICATION";
    case 0x2062: return "INVISIBLE TIMES";
    case 0x2063: return "INVISIBLE SEPARATOR";
    case 0x2064: return "INVISIBLE PLUS";
    case 0x2066: return "LEFT-TO-RIGHT ISOLATE";
    case 0x2067: return "RIGHT-TO-LEFT ISOLATE";
    case 0x2068: return "FIRST STRONG ISOLATE";
    case 0x2069: return "POP DIRECTIONAL ISOLATE";
    case 0x3000: return "IDEOGRAPHIC SPACE";
    case 0xFEFF: return "ZERO WIDTH NO-BREAK SPACE (byte-order mark)";
    default: return nullptr;
  }
}

bool is_bidi_control(char32_t c) { return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069); }

char32_t utf8_code_point(std::string_view text, std::size_t i, std::size_t len) {
  auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(text[i + k])); };
  if (len == 2) return (b(0) & 0x1f) << 6 | (b(1) & 0x3f);
  if (len == 3) return (b(0) & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
}

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace pipec
