// The lexer (lexer.hpp): the tokens of a text, and the meaning of the lexemes whose text is
// not their value (doc comments, string literals).
#include "compiler/syntax/lexer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/syntax/ast.hpp"
#include "input/utf8.hpp"

namespace pipec::syntax::lex {

std::size_t invalid_length(const char* p, const char* end) {
  const char* q = p + 1;
  if (is_digit(*p)) {
    while (q != end && is_ident_char(*q)) ++q;
    return static_cast<std::size_t>(q - p);
  }
  if (static_cast<unsigned char>(*p) < 0x80) return 1;
  std::size_t len = utf8_sequence_length(std::string_view(p, static_cast<std::size_t>(end - p)), 0);
  return len == 0 ? 1 : len;
}

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  Lexer lexer(text);
  while (!lexer.done()) tokens.push_back(lexer.next());
  return tokens;
}

std::string_view doc_comment_text(std::string_view comment) {
  comment.remove_prefix(std::min<std::size_t>(2, comment.size()));
  if (!comment.empty() && comment.front() == ' ') comment.remove_prefix(1);
  while (!comment.empty() && (comment.back() == '\r' || comment.back() == ' ')) comment.remove_suffix(1);
  return comment;
}

//// String literals ///////////////////////////////////////////////////////

namespace {

struct Char {
  char c;
  std::uint32_t offset;
};

bool blank_line(const std::vector<Char>& line) {
  return std::all_of(line.begin(), line.end(), [](const Char& ch) { return is_blank(ch.c); });
}

// The characters of a literal between its quotes, with the indentation common to
// its lines and its blank first and last lines removed for `"""`.
std::vector<Char> literal_chars(const ast::StringLit& lit) {
  const std::string& raw = lit.raw;
  bool triple = raw.size() >= 6 && raw.compare(0, 3, "\"\"\"") == 0;
  std::size_t quote = triple ? 3 : 1;
  std::vector<Char> chars;
  for (std::size_t i = quote; i + quote < raw.size() + 0 && i < raw.size() - quote; ++i)
    chars.push_back({raw[i], static_cast<std::uint32_t>(lit.range.begin + i)});
  if (!triple) return chars;

  std::vector<std::vector<Char>> lines(1);
  std::vector<Char> newlines;
  for (const Char& ch : chars) {
    if (ch.c == '\n') {
      newlines.push_back(ch);
      lines.emplace_back();
    } else {
      lines.back().push_back(ch);
    }
  }
  std::size_t first = 0, last = lines.size();
  if (lines.size() > 1 && blank_line(lines.front())) first = 1;
  if (last - first > 1 && blank_line(lines.back())) --last;
  std::size_t indent = SIZE_MAX;
  for (std::size_t l = first; l < last; ++l) {
    if (blank_line(lines[l])) continue;
    std::size_t n = 0;
    while (n < lines[l].size() && (lines[l][n].c == ' ' || lines[l][n].c == '\t')) ++n;
    indent = std::min(indent, n);
  }
  if (indent == SIZE_MAX) indent = 0;
  std::vector<Char> out;
  for (std::size_t l = first; l < last; ++l) {
    if (l > first) out.push_back(newlines[l - 1]);
    if (blank_line(lines[l])) continue;
    out.insert(out.end(), lines[l].begin() + static_cast<std::ptrdiff_t>(indent), lines[l].end());
  }
  return out;
}

// A raw block's text: its lines without the closing fence's indentation, each ending in a
// line end; nothing decoded. A line indented less than the fence is an error at it.
bool decode_raw_block(ast::StringLit& lit, Diagnostics& diags) {
  const std::string& raw = lit.raw;
  RawBlock b = scan_raw_block(raw, 0);
  ast::StringPart part;
  part.range = lit.range;
  bool ok = true;
  for (const RawLine& line : raw_block_lines(raw, b)) {
    if (line.short_indent) {
      std::uint32_t at = lit.range.begin + static_cast<std::uint32_t>(line.begin);
      diags.error(SourceRange{lit.range.file, at, at + static_cast<std::uint32_t>(line.size)},
                  fmt::format("this line of the raw block is indented less than its closing {} "
                              "(whose indentation every line starts with)",
                              std::string(b.fence, '`')));
      ok = false;
      continue;
    }
    part.text.append(raw, line.begin, line.size);
    part.text += '\n';
  }
  if (!part.text.empty()) lit.parts.push_back(std::move(part));
  return ok;
}

}  // namespace

bool decode_string(ast::StringLit& lit, Diagnostics& diags) {
  if (raw_block_at(lit.raw, 0)) return decode_raw_block(lit, diags);
  FileId file = lit.range.file;
  std::vector<Char> chars = literal_chars(lit);
  bool ok = true;
  ast::StringPart text_part;
  auto flush = [&] {
    if (!text_part.text.empty()) lit.parts.push_back(std::move(text_part));
    text_part = {};
  };
  auto add_text = [&](char c, std::uint32_t begin, std::uint32_t end) {
    if (text_part.text.empty()) text_part.range = SourceRange{file, begin, end};
    text_part.text += c;
    text_part.range.end = end;
  };
  std::size_t i = 0;
  while (i < chars.size()) {
    const Char& ch = chars[i];
    if (ch.c == '\\' && i + 1 < chars.size() && chars[i + 1].c == '\n') {
      // A line that ends in `\` goes on with the next: both characters go.
      i += 2;
      continue;
    }
    if (ch.c == '\\' && i + 1 < chars.size()) {
      char e = chars[i + 1].c;
      char out = e == 'n'    ? '\n'
                 : e == 't'  ? '\t'
                 : e == '"'  ? '"'
                 : e == '\\' ? '\\'
                 : e == '$'  ? '$'
                             : 0;
      if (out == 0) {
        std::string shown = e == '\n' ? "\\n" : std::string(1, e);
        diags.error(SourceRange{file, ch.offset, chars[i + 1].offset + 1},
                    fmt::format("unknown escape sequence '\\{}' (use \\\" \\\\ \\n \\t or \\$)",
                                e == '\n' ? std::string("<newline>") : shown));
        ok = false;
      } else {
        add_text(out, ch.offset, chars[i + 1].offset + 1);
      }
      i += 2;
      continue;
    }
    if (ch.c == '$' && i + 1 < chars.size() && chars[i + 1].c == '{') {
      flush();
      ast::StringPart ref;
      ref.is_ref = true;
      std::size_t j = i + 2;
      auto read_name = [&](ast::Identifier& id) {
        std::size_t start = j;
        if (j < chars.size() && is_ident_start(chars[j].c))
          while (j < chars.size() && is_ident_char(chars[j].c)) id.name += chars[j++].c;
        if (j == start) return false;
        id.range = SourceRange{file, chars[start].offset, chars[j - 1].offset + 1};
        return true;
      };
      auto fail = [&](std::string message) {
        std::uint32_t at = j < chars.size() ? chars[j].offset : lit.range.end - 1;
        diags.error(SourceRange{file, at, at + 1}, std::move(message));
        ok = false;
        // Resume after the closing brace, if there is one.
        while (j < chars.size() && chars[j].c != '}' && chars[j].c != '"') ++j;
        i = j < chars.size() && chars[j].c == '}' ? j + 1 : j;
      };
      if (!read_name(ref.head)) {
        fail("expected a name after '${' (e.g. ${batch_size} or ${train.model})");
        continue;
      }
      if (j < chars.size() && chars[j].c == '.') {
        ++j;
        ast::Identifier field;
        if (!read_name(field)) {
          fail("expected a name after '.' in '${...}'");
          continue;
        }
        ref.field = std::move(field);
      }
      if (j >= chars.size() || chars[j].c != '}') {
        fail("expected '}' to close '${'");
        continue;
      }
      ref.range = SourceRange{file, ch.offset, chars[j].offset + 1};
      lit.parts.push_back(std::move(ref));
      i = j + 1;
      continue;
    }
    add_text(ch.c, ch.offset, ch.offset + 1);
    ++i;
  }
  flush();
  return ok;
}

}  // namespace pipec::syntax::lex
