#include "compiler/syntax/raw_block.hpp"

#include <cctype>

namespace pipec::syntax {

namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

RawBlock scan_raw_block(std::string_view text, std::size_t i) {
  RawBlock b;
  std::size_t j = i;
  while (j < text.size() && text[j] == '`') ++j;
  b.fence = j - i;
  // A word naming the language may follow, as in Markdown (```python): it is ignored.
  while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' ||
                             text[j] == '-' || text[j] == '+' || text[j] == '.'))
    ++j;
  while (j < text.size() && text[j] != '\n') {
    if (!blank(text[j]) && b.junk == RawBlock::npos) b.junk = j;
    ++j;
  }
  b.content_begin = j < text.size() ? j + 1 : j;
  for (std::size_t line = b.content_begin; line < text.size();) {
    std::size_t k = line;
    while (k < text.size() && blank(text[k])) ++k;
    std::size_t ticks = k;
    while (ticks < text.size() && text[ticks] == '`') ++ticks;
    std::size_t after = ticks;
    while (after < text.size() && blank(text[after])) ++after;
    if (ticks - k == b.fence && (after == text.size() || text[after] == '\n')) {
      b.content_end = line;
      b.indent = k - line;
      b.end = ticks;
      return b;
    }
    std::size_t eol = text.find('\n', line);
    if (eol == std::string_view::npos) break;
    line = eol + 1;
  }
  b.content_end = text.size();
  return b;
}

std::vector<RawLine> raw_block_lines(std::string_view text, const RawBlock& b) {
  std::vector<RawLine> lines;
  std::string_view prefix = text.substr(b.content_end, b.indent);
  for (std::size_t line = b.content_begin; line < b.content_end;) {
    std::size_t eol = text.find('\n', line);
    if (eol == std::string_view::npos || eol > b.content_end) eol = b.content_end;
    std::string_view l = text.substr(line, eol - line);
    RawLine out;
    if (l.find_first_not_of(" \t") == std::string_view::npos) {
      out.begin = line;
    } else if (l.substr(0, prefix.size()) == prefix) {
      out.begin = line + prefix.size();
      out.size = l.size() - prefix.size();
    } else {
      out = RawLine{line, l.size(), true};
    }
    lines.push_back(out);
    line = eol + 1;
  }
  return lines;
}

}  // namespace pipec::syntax
