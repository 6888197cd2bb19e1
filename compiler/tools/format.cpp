#include "compiler/tools/format.hpp"

#include <cstddef>
#include <vector>

#include "compiler/syntax/raw_block.hpp"

namespace pipec::tools {

namespace {

enum class Kind { Word, Punct, String, Comment, Newline };

struct Token {
  Kind kind;
  std::string_view text;
  bool space_before = false;  // the source had spaces or tabs before it on its line
};

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool digit(char c) { return c >= '0' && c <= '9'; }

// The tokens of a program the parser accepted: layout needs only their kinds and texts.
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  bool space = false;
  auto push = [&](Kind k, std::size_t begin) {
    out.push_back({k, s.substr(begin, i - begin), space});
    space = false;
  };
  while (i < s.size()) {
    char c = s[i];
    std::size_t begin = i;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      space = true;
    } else if (c == '\n') {
      ++i;
      push(Kind::Newline, begin);
    } else if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      std::size_t end = i;  // without trailing spaces
      while (end > begin && (s[end - 1] == ' ' || s[end - 1] == '\t' || s[end - 1] == '\r')) --end;
      out.push_back({Kind::Comment, s.substr(begin, end - begin), space});
      space = false;
    } else if (syntax::raw_block_at(s, i)) {
      // Kept as written, line for line, the closing fence's indentation too (it decides
      // the text).
      syntax::RawBlock b = syntax::scan_raw_block(s, i);
      i = b.end == syntax::RawBlock::npos ? s.size() : b.end;
      push(Kind::String, begin);
    } else if (s.compare(i, 3, "\"\"\"") == 0) {
      std::size_t end = s.find("\"\"\"", i + 3);
      i = end == std::string_view::npos ? s.size() : end + 3;
      push(Kind::String, begin);
    } else if (c == '"') {
      for (++i; i < s.size() && s[i] != '"' && s[i] != '\n'; ++i)
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
      if (i < s.size() && s[i] == '"') ++i;
      push(Kind::String, begin);
    } else if (s.compare(i, 2, "->") == 0 || s.compare(i, 2, "..") == 0 || s.compare(i, 2, "==") == 0 ||
               s.compare(i, 2, "!=") == 0 || s.compare(i, 2, "<=") == 0 || s.compare(i, 2, ">=") == 0) {
      i += 2;
      push(Kind::Punct, begin);
    } else if (digit(c) || (c == '-' && i + 1 < s.size() && (digit(s[i + 1]) || s[i + 1] == '.'))) {
      // A number: digits, a fraction (not `..`), an exponent.
      ++i;
      while (i < s.size() && digit(s[i])) ++i;
      if (i + 1 < s.size() && s[i] == '.' && digit(s[i + 1]))
        for (++i; i < s.size() && digit(s[i]);) ++i;
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        std::size_t j = i + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        if (j < s.size() && digit(s[j])) {
          for (i = j; i < s.size() && digit(s[i]);) ++i;
        }
      }
      while (i < s.size() && word_char(s[i])) ++i;
      push(Kind::Word, begin);
    } else if (word_char(c)) {
      while (i < s.size() && word_char(s[i])) ++i;
      push(Kind::Word, begin);
    } else {
      ++i;
      push(Kind::Punct, begin);
    }
  }
  return out;
}

bool is(const Token& t, std::string_view p) { return t.kind == Kind::Punct && t.text == p; }
bool opener(const Token& t) { return is(t, "{") || is(t, "[") || is(t, "("); }
bool closer(const Token& t) { return is(t, "}") || is(t, "]") || is(t, ")"); }

// Whether one space goes between `a` and `b` on a line.
bool space_between(const Token& a, const Token& b) {
  if (b.kind == Kind::Comment) return true;
  if (is(b, ",") || is(b, ":") || is(b, ")") || is(b, "]") || is(b, ".") || is(b, "..")) return false;
  if (is(a, "(") || is(a, "[") || is(a, ".") || is(a, "..")) return false;
  if (is(a, ",") || is(a, ":") || is(a, "=") || is(a, "->") || is(b, "=") || is(b, "->")) return true;
  if (is(b, "(") && a.kind == Kind::Word) return b.space_before;  // `op(` stays, `if (a)` too
  return b.space_before;
}

}  // namespace

std::string format_source(std::string_view text) {
  std::vector<Token> tokens = tokenize(text);
  // Lines: the tokens between newlines (a triple-quoted string may hold some).
  std::vector<std::vector<Token>> lines(1);
  for (const auto& t : tokens) {
    if (t.kind == Kind::Newline) lines.emplace_back();
    else lines.back().push_back(t);
  }
  std::string out;
  int depth = 0;
  bool pending_blank = false;
  bool after_opener = true;  // at the start of the file, or after a line ending in an opener
  for (const auto& line : lines) {
    if (line.empty()) {
      pending_blank = true;
      continue;
    }
    int leading_closers = 0;
    while (leading_closers < static_cast<int>(line.size()) && closer(line[static_cast<std::size_t>(leading_closers)]))
      ++leading_closers;
    if (pending_blank && !after_opener && leading_closers == 0) out += '\n';
    pending_blank = false;
    int indent = depth - leading_closers;
    out.append(static_cast<std::size_t>(indent > 0 ? indent : 0) * 2, ' ');
    for (std::size_t k = 0; k < line.size(); ++k) {
      if (k > 0 && space_between(line[k - 1], line[k])) out += ' ';
      out += line[k].text;
      if (opener(line[k])) ++depth;
      if (closer(line[k])) --depth;
    }
    after_opener = opener(line.back());
    out += '\n';
  }
  return out;
}

}  // namespace pipec::tools
