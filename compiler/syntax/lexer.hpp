#pragma once

// The lexical rules of a .pipe file, written once. Everything that reads the characters of a
// program goes through here:
//  * the X3 grammar, whose skipper, identifiers, keywords, numbers, strings and operators are
//    these scanners (common.hpp), and whose raw blocks are read by scan_raw_block()
//    (raw_block.hpp, through scan_raw here);
//  * parse(), whose checks before the grammar (invisible characters, nesting, `##` doc
//    comments) walk the Lexer's tokens and whose error recovery skips with the scanners, and
//    whose string decoding (escapes, `"""` dedent, `${...}`, raw blocks) is decode_string();
//  * `pipec fmt`, which lays out the Lexer's tokens.
//
// Each scanner takes the place `p` where its lexeme would start (p <= end) and returns the end
// of the lexeme, or `p` itself when none starts there. They look at bytes only (no locale
// classification), so bytes >= 0x80 never reach <cctype>.
//
// To add a lexical form: write its scanner here, give it a TokenKind and a case in
// Lexer::next(), and, if the grammar reads it, an X3 primitive over the scanner in
// common.hpp.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "compiler/syntax/raw_block.hpp"

namespace pipec {
class Diagnostics;
}

namespace pipec::syntax {
namespace ast {
struct StringLit;
}

namespace lex {

//// Character classes ///////////////////////////////////////////////////////

/// Spaces between tokens on a line: ' ', tabs and the '\r' of a CRLF line end.
constexpr bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

//// Keywords ////////////////////////////////////////////////////////////////

/// The reserved words; see docs/language.md. (`limit` and `settings` are keywords only where
/// the grammar reads them.)
inline constexpr std::array<std::string_view, 17> kKeywords = {
    "use", "pipeline", "description", "param", "step", "op",  "after", "if",  "else",
    "for", "in",       "finally",     "true",  "false", "and", "or",    "not"};

namespace detail {
// For each first byte, the keywords that start with it (bit k: kKeywords[k]).
constexpr std::array<std::uint32_t, 128> keywords_by_first_letter() {
  std::array<std::uint32_t, 128> table{};
  for (std::size_t k = 0; k < kKeywords.size(); ++k)
    table[static_cast<unsigned char>(kKeywords[k][0])] |= 1u << k;
  return table;
}
inline constexpr std::array<std::uint32_t, 128> kKeywordsByFirstLetter = keywords_by_first_letter();
}  // namespace detail

/// Whether `word` is one of kKeywords; compares only the keywords with its first letter.
constexpr bool is_keyword(std::string_view word) {
  if (word.empty() || static_cast<unsigned char>(word[0]) >= 128) return false;
  for (std::uint32_t m = detail::kKeywordsByFirstLetter[static_cast<unsigned char>(word[0])]; m != 0; m &= m - 1)
    if (kKeywords[static_cast<std::size_t>(std::countr_zero(m))] == word) return true;
  return false;
}

//// Scanners ////////////////////////////////////////////////////////////////

/// A run of ' ', tabs and '\r'.
inline const char* scan_blank(const char* p, const char* end) {
  while (p != end && is_blank(*p)) ++p;
  return p;
}

/// A comment: `#` to the end of its line, the '\n' left out. `##` starts a doc comment.
inline const char* scan_comment(const char* p, const char* end) {
  if (p == end || *p != '#') return p;
  const void* newline = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  return newline ? static_cast<const char*>(newline) : end;
}

/// Whether the comment `comment` (from its `#`) is a `##` doc comment.
constexpr bool is_doc_comment(std::string_view comment) { return comment.substr(0, 2) == "##"; }

/// All that may stand between two tokens, in one call: blanks, newlines and comments.
inline const char* skip_space(const char* p, const char* end) {
  while (p != end) {
    char c = *p;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++p;
    } else if (c == '#') {
      p = scan_comment(p, end);
    } else {
      break;
    }
  }
  return p;
}

/// An identifier or keyword: [A-Za-z_][A-Za-z0-9_]*.
inline const char* scan_word(const char* p, const char* end) {
  if (p == end || !is_ident_start(*p)) return p;
  ++p;
  while (p != end && is_ident_char(*p)) ++p;
  return p;
}

/// A name: a word that is not a keyword.
inline const char* scan_name(const char* p, const char* end) {
  const char* q = scan_word(p, end);
  return is_keyword(std::string_view(p, static_cast<std::size_t>(q - p))) ? p : q;
}

inline const char* scan_digits(const char* p, const char* end) {
  while (p != end && is_digit(*p)) ++p;
  return p;
}

/// A number: 64, -3, 0.001, 1e-3. A '.' needs digits after it (so `1..64` is a range), an
/// exponent needs digits, and no letter, digit or '_' may follow (`1x` is no number).
inline const char* scan_number(const char* p, const char* end) {
  const char* it = p;
  if (it != end && *it == '-') ++it;
  const char* digits_end = scan_digits(it, end);
  if (digits_end == it) return p;
  it = digits_end;
  if (it != end && *it == '.') {
    const char* fraction = scan_digits(it + 1, end);
    if (fraction != it + 1) it = fraction;
  }
  if (it != end && (*it == 'e' || *it == 'E')) {
    const char* exponent = it + 1;
    if (exponent != end && (*exponent == '+' || *exponent == '-')) ++exponent;
    const char* exponent_end = scan_digits(exponent, end);
    if (exponent_end != exponent) it = exponent_end;
  }
  if (it != end && is_ident_char(*it)) return p;
  return it;
}

inline bool starts_triple_quote(const char* p, const char* end) {
  return end - p >= 3 && p[0] == '"' && p[1] == '"' && p[2] == '"';
}

/// Where a string literal ends, and whether it was closed.
struct StringEnd {
  const char* end;
  bool closed;
  bool triple;  // `"""`
};

/// A string literal at `p` (a '"'): `"""` to the next `"""`, across lines; otherwise `"` to
/// the next `"` on its line. A backslash takes the character after it (a `\` at a line's end
/// continues a `"` string on the next). Unclosed: a `"` string ends before its '\n', a `"""`
/// one at the end of the text.
inline StringEnd scan_string(const char* p, const char* end) {
  bool triple = starts_triple_quote(p, end);
  const char* it = p + (triple ? 3 : 1);
  while (it < end) {
    if (*it == '\\') {
      it = end - it >= 2 ? it + 2 : end;
    } else if (triple ? starts_triple_quote(it, end) : *it == '"') {
      return {it + (triple ? 3 : 1), true, triple};
    } else if (!triple && *it == '\n') {
      return {it, false, triple};
    } else {
      ++it;
    }
  }
  return {end, false, triple};
}

/// Where a raw block ends, and whether it was closed.
struct RawEnd {
  const char* end;
  bool closed;
};

/// A raw block at `p` (three or more backticks, see raw_block.hpp): to just after its closing
/// fence, as scan_raw_block() finds it. Unclosed: it ends at the end of the text. `{p, false}`
/// when none starts at `p`.
inline RawEnd scan_raw(const char* p, const char* end) {
  std::string_view text(p, static_cast<std::size_t>(end - p));
  if (!raw_block_at(text, 0)) return {p, false};
  RawBlock b = scan_raw_block(text, 0);
  if (b.end == RawBlock::npos) return {end, false};
  return {p + b.end, true};
}

/// An operator or a punctuation character: `->`, `..`, `==`, `!=`, `<=`, `>=` (maximal munch
/// takes two characters before one), or one of `{ } ( ) [ ] , : = . < >`.
inline const char* scan_punct(const char* p, const char* end) {
  if (p == end) return p;
  char next = end - p >= 2 ? p[1] : '\0';
  switch (*p) {
    case '-': return next == '>' ? p + 2 : p;
    case '!': return next == '=' ? p + 2 : p;
    case '.': return next == '.' ? p + 2 : p + 1;
    case '=':
    case '<':
    case '>': return next == '=' ? p + 2 : p + 1;
    case '{':
    case '}':
    case '(':
    case ')':
    case '[':
    case ']':
    case ',':
    case ':': return p + 1;
    default: return p;
  }
}

//// Tokens //////////////////////////////////////////////////////////////////

enum class TokenKind : std::uint8_t {
  Blank,       // ' ', tabs, '\r'
  Newline,     // one '\n'
  Comment,     // `# ...` to the end of the line
  DocComment,  // `## ...` to the end of the line
  Word,        // an identifier or a keyword (is_keyword)
  Number,
  String,      // `"..."` or `"""..."""`, quotes included (maybe unclosed: scan_string)
  RawBlock,    // ``` to a line of only ```, fences included (maybe unclosed: scan_raw)
  Punct,       // an operator or a punctuation character
  Invalid,     // anything else: one UTF-8 sequence, or `1x` (digits run into a word)
};

/// One token: its kind and its byte offsets in the text.
struct Token {
  TokenKind kind;
  std::uint32_t begin;
  std::uint32_t end;
  std::string_view text(std::string_view source) const { return source.substr(begin, end - begin); }
};

/// The tokens of a text, one at a time, comments and blanks included: their texts, in order,
/// are the text. Any text lexes (a text the parser refuses gives Invalid tokens, or an unclosed
/// String or RawBlock); the text must outlive the Lexer.
/// The length of the Invalid token at `p` (p < end), where no token of the language starts:
/// digits that run into a word (`1x`), one UTF-8 sequence, or one byte.
std::size_t invalid_length(const char* p, const char* end);

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}
  bool done() const { return pos_ >= text_.size(); }
  /// Skips blanks and newlines, for a reader that needs neither: then done(), or the next
  /// token is of another kind.
  void skip_layout() {
    while (pos_ < text_.size() && (is_blank(text_[pos_]) || text_[pos_] == '\n')) ++pos_;
  }
  /// The next token. Requires !done(). Inlined into each walk: parse() walks every token
  /// before the grammar runs, and a call per token cost a tenth of the parse.
  [[gnu::always_inline]] Token next() {
    const char* base = text_.data();
    const char* end = base + text_.size();
    const char* p = base + pos_;
    const char* q = p + 1;
    TokenKind kind = TokenKind::Punct;
    switch (*p) {
      case ' ':
      case '\t':
      case '\r':
        kind = TokenKind::Blank;
        q = scan_blank(p, end);
        break;
      case '\n':
        kind = TokenKind::Newline;
        break;
      case '#':
        q = scan_comment(p, end);
        kind = is_doc_comment(std::string_view(p, static_cast<std::size_t>(q - p))) ? TokenKind::DocComment
                                                                                     : TokenKind::Comment;
        break;
      case '"':
        kind = TokenKind::String;
        q = scan_string(p, end).end;
        break;
      default:
        if (is_ident_start(*p)) {
          kind = TokenKind::Word;
          q = scan_word(p, end);
        } else if (const char* number = scan_number(p, end); number != p) {
          kind = TokenKind::Number;
          q = number;
        } else if (const char* punct = scan_punct(p, end); punct != p) {
          q = punct;
        } else if (RawEnd raw = scan_raw(p, end); raw.end != p) {
          kind = TokenKind::RawBlock;
          q = raw.end;
        } else {
          kind = TokenKind::Invalid;
          q = p + invalid_length(p, end);
        }
    }
    Token token{kind, static_cast<std::uint32_t>(pos_), static_cast<std::uint32_t>(q - base)};
    pos_ = static_cast<std::size_t>(q - base);
    return token;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

/// Every token of `text`.
std::vector<Token> tokenize(std::string_view text);

//// Meaning of lexemes //////////////////////////////////////////////////////

/// The text of a `##` doc comment (from its `#`): after the `##` and one space, without the
/// spaces and '\r' that end its line.
std::string_view doc_comment_text(std::string_view comment);

/// Decodes the raw text of a string literal (`lit.raw`, quotes included, at `lit.range`) into
/// `lit.parts`: for `"""`, the indentation common to its lines and its blank first and last
/// lines removed; escapes (\" \\ \n \t \$, and `\` before a line break joins the lines);
/// `${name}` and `${name.field}` as references. A raw block (its fences included) is taken as
/// written: its lines without the closing fence's indentation. Reports each bad escape, `${`
/// or under-indented raw block line at its place; returns false then.
bool decode_string(ast::StringLit& lit, Diagnostics& diags);

}  // namespace lex
}  // namespace pipec::syntax
