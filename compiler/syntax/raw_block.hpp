#pragma once

// The raw block, the one string literal that holds text as written (a Python function,
// a script): three or more backticks (and optionally a word naming the language, as in
// Markdown's ```python) at the end of a line open it, the next line that holds
// only the same backticks (and spaces or tabs) closes it, and nothing in between is read:
// no escapes, no `${...}`, no comments. The closing line's indentation is removed from
// every line between. Every scanner of .pipe text (the grammar, the checks before it,
// error recovery, `pipec fmt`) finds its end with scan_raw_block(), so they agree.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pipec::syntax {

/// Whether a raw block opens at `i`: three backticks.
inline bool raw_block_at(std::string_view text, std::size_t i) {
  return text.substr(i, 3) == "```";
}

/// Where a raw block's parts are (offsets into the text that was scanned).
struct RawBlock {
  static constexpr std::size_t npos = std::string_view::npos;
  std::size_t fence = 0;          // backticks in the opening (and closing) fence
  std::size_t junk = npos;        // first byte after the opening fence (and its word) other than a space or tab
  std::size_t content_begin = 0;  // the first line after the opening fence
  std::size_t content_end = 0;    // the start of the closing fence's line
  std::size_t indent = 0;         // bytes of spaces and tabs before the closing fence
  std::size_t end = npos;         // just after the closing fence; npos: never closed
};

/// Scans the raw block opening at `i` (raw_block_at(text, i) holds). Never reads past
/// the end of `text`; an unclosed block has `end == npos`.
RawBlock scan_raw_block(std::string_view text, std::size_t i);

/// One line of a raw block's content: `text` from offset `begin` in the scanned text
/// (after the indentation); `short_indent`: a line with text that does not start with
/// the closing fence's indentation (then `begin` is the line's start).
struct RawLine {
  std::size_t begin = 0;
  std::size_t size = 0;
  bool short_indent = false;
};

/// The content lines of a closed block `b` of `text`: blank lines (spaces and tabs only)
/// are empty.
std::vector<RawLine> raw_block_lines(std::string_view text, const RawBlock& b);

}  // namespace pipec::syntax
