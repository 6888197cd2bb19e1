#include "compiler/tools/format.hpp"

#include <cstddef>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/syntax/ast_printer.hpp"
#include "compiler/syntax/lexer.hpp"
#include "compiler/syntax/parser.hpp"

namespace pipec::tools {

namespace {

using syntax::lex::TokenKind;

// What layout needs of the lexer's tokens: kinds and texts, and whether the source had spaces
// or tabs before each on its line.
struct Token {
  TokenKind kind;
  std::string_view text;
  bool space_before = false;
};

// The tokens of a program the parser accepted, from the parser's own lexer; blanks become
// `space_before`, and comments lose the spaces that end their line. A string or raw block is
// one token, kept as written (a raw block line for line, the closing fence's indentation too:
// it decides the text).
std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  bool space = false;
  syntax::lex::Lexer lexer(s);
  while (!lexer.done()) {
    syntax::lex::Token t = lexer.next();
    std::string_view text = t.text(s);
    if (t.kind == TokenKind::Blank) {
      space = true;
      continue;
    }
    if (t.kind == TokenKind::Comment || t.kind == TokenKind::DocComment)
      while (text.size() > 1 && syntax::lex::is_blank(text.back())) text.remove_suffix(1);
    out.push_back({t.kind, text, space});
    space = false;
  }
  return out;
}

bool is(const Token& t, std::string_view p) { return t.kind == TokenKind::Punct && t.text == p; }
bool opener(const Token& t) { return is(t, "{") || is(t, "[") || is(t, "("); }
bool closer(const Token& t) { return is(t, "}") || is(t, "]") || is(t, ")"); }

// Whether one space goes between `a` and `b` on a line.
bool space_between(const Token& a, const Token& b) {
  if (b.kind == TokenKind::Comment || b.kind == TokenKind::DocComment) return true;
  if (is(b, ",") || is(b, ":") || is(b, ")") || is(b, "]") || is(b, ".") || is(b, "..")) return false;
  if (is(a, "(") || is(a, "[") || is(a, ".") || is(a, "..")) return false;
  if (is(a, ",") || is(a, ":") || is(a, "=") || is(a, "->") || is(b, "=") || is(b, "->")) return true;
  return b.space_before;
}

}  // namespace

std::string format_source(std::string_view text) {
  std::vector<Token> tokens = tokenize(text);
  // Lines: the tokens between newlines (a triple-quoted string may hold some).
  std::vector<std::vector<Token>> lines(1);
  for (const auto& t : tokens) {
    if (t.kind == TokenKind::Newline) lines.emplace_back();
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

Layout format_file(SourceManager& sources, FileId id, Diagnostics& diags) {
  auto module = syntax::parse(sources, id, diags);
  if (!module || diags.has_errors()) return {};
  std::string formatted = format_source(sources.text(id));
  Diagnostics again;
  auto reparsed = syntax::parse(sources, sources.add(std::string(sources.name(id)), formatted), again);
  if (!reparsed || syntax::print_ast(*reparsed) != syntax::print_ast(*module)) return {Layout::WouldChangeProgram, {}};
  return {Layout::Formatted, std::move(formatted)};
}

}  // namespace pipec::tools
