#pragma once

// The terminals shared by every grammar group: the skipper (spaces and `#` comments),
// identifiers, keywords, operators, and string, number and bool literals, each over the
// lexer's scanner for it (lexer.hpp), which owns the lexical rules.

#include <boost/spirit/home/x3.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "compiler/syntax/ast.hpp"
#include "compiler/syntax/ast_adapted.hpp"
#include "compiler/syntax/error_handler.hpp"
#include "compiler/syntax/lexer.hpp"

// X3 appends each item of a list to its vector; a call's arguments would grow theirs
// one reallocation (and one move of every argument) at a time. Most calls have a
// few, so start with room for four.
template <>
struct boost::spirit::x3::traits::push_back_container<std::vector<pipec::syntax::ast::Argument>> {
  template <typename T>
  static bool call(std::vector<pipec::syntax::ast::Argument>& c, T&& val) {
    if (c.capacity() == 0) c.reserve(4);
    c.push_back(static_cast<T&&>(val));
    return true;
  }
};

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

//// The lexer's scanners as X3 primitives ///////////////////////////////
// The grammar reads no character on its own: spaces, comments, words, numbers, strings and
// operators are the lexer's (lexer.hpp). Each primitive runs one scanner from where it
// stands; put it in a lexeme[] (or use it as the skipper) so that X3 skips before it.

// Skips a whole run of spaces, newlines and `#` comments in one call; X3 calls a skipper
// until it fails, so a parser of one character would be entered once per byte.
struct skip_run : x3::parser<skip_run> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;
  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const&, RContext&, Attribute&) const {
    Iterator it = lex::skip_space(first, last);
    bool skipped = it != first;
    first = it;
    return skipped;
  }
};

struct skipper_class;
x3::rule<skipper_class> const skipper = "whitespace";
// ' ', tabs, newlines, and `# ...` to the end of the line (`##` doc comments too).
auto const skipper_def = skip_run{};
BOOST_SPIRIT_DEFINE(skipper)
using skipper_type = x3::rule<skipper_class>;

/// The lexeme that `Scan` reads here, when it is `text` (a keyword, an operator).
/// `Keep`: the lexeme is the attribute.
template <const char* (*Scan)(const char*, const char*), bool Keep>
struct exact_lexeme : x3::parser<exact_lexeme<Scan, Keep>> {
  using attribute_type = std::conditional_t<Keep, std::string, x3::unused_type>;
  static bool const has_attribute = Keep;
  std::string_view text;
  constexpr explicit exact_lexeme(std::string_view t) : text(t) {}
  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const&, RContext&,
             Attribute& attr) const {
    if (first == last || *first != text.front()) return false;  // the common case, at once
    Iterator end = Scan(first, last);
    if (std::string_view(first, static_cast<std::size_t>(end - first)) != text) return false;
    x3::traits::move_to(first, end, attr);
    first = end;
    return true;
  }
};

/// A keyword: the whole word, so `op` does not start `ops`.
inline auto keyword(std::string_view word) { return x3::lexeme[exact_lexeme<lex::scan_word, false>(word)]; }
/// A keyword that is kept in the AST as text (X3 needs a member before single-member structs).
inline auto keyword_text(std::string_view word) {
  return x3::lexeme[exact_lexeme<lex::scan_word, true>(word)];
}
/// An operator of two characters (`->`, `..`, `==`) or a comparison, as the lexer groups them.
inline auto punct(std::string_view text) { return x3::lexeme[exact_lexeme<lex::scan_punct, false>(text)]; }
inline auto punct_text(std::string_view text) { return x3::lexeme[exact_lexeme<lex::scan_punct, true>(text)]; }

//// Identifiers and keywords ////////////////////////////////////////////

/// The lexeme that `Scan` reads here, as written (a name, a number). Use inside a lexeme.
template <const char* (*Scan)(const char*, const char*)>
struct scanned_lexeme : x3::parser<scanned_lexeme<Scan>> {
  using attribute_type = std::string;
  static bool const has_attribute = true;
  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const&, RContext&,
             Attribute& attr) const {
    Iterator it = Scan(first, last);
    if (it == first) return false;
    x3::traits::move_to(first, it, attr);
    first = it;
    return true;
  }
};

#define PIPEC_KEYWORD(word)                                    \
  struct kw_##word##_class;                                    \
  x3::rule<kw_##word##_class> const kw_##word = "'" #word "'"; \
  auto const kw_##word##_def = keyword(#word);                 \
  BOOST_SPIRIT_DEFINE(kw_##word)

PIPEC_KEYWORD(use)
PIPEC_KEYWORD(pipeline)
PIPEC_KEYWORD(param)
PIPEC_KEYWORD(step)
PIPEC_KEYWORD(op)
PIPEC_KEYWORD(after)
PIPEC_KEYWORD(if)
PIPEC_KEYWORD(else)
PIPEC_KEYWORD(for)
PIPEC_KEYWORD(in)
PIPEC_KEYWORD(true)
PIPEC_KEYWORD(false)
PIPEC_KEYWORD(and)
PIPEC_KEYWORD(or)
#undef PIPEC_KEYWORD

struct identifier_text_class;
struct identifier_class : annotate_range {};
x3::rule<identifier_text_class, std::string> const identifier_text = "name";
x3::rule<identifier_class, ast::Identifier> const identifier = "name";
// all_reduce, batch_size, _x1
auto const identifier_text_def = x3::lexeme[scanned_lexeme<lex::scan_name>{}];
auto const identifier_def = identifier_text;
BOOST_SPIRIT_DEFINE(identifier_text, identifier)

//// Literals ////////////////////////////////////////////////////////////

// A string literal, raw (quotes included; parse() decodes it with lex::decode_string). One
// never closed is an expectation failure where the closing quote was due, as if the grammar
// had read `'"' > ... > '"'`. Use inside a lexeme.
struct string_token : x3::parser<string_token> {
  using attribute_type = std::string;
  static bool const has_attribute = true;
  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const&, RContext&,
             Attribute& attr) const {
    if (first == last || *first != '"') return false;
    lex::StringEnd string = lex::scan_string(first, last);
    if (!string.closed)
      throw x3::expectation_failure<Iterator>(
          string.end, string.triple ? "'\"\"\"' to close the string" : "'\"' before the end of the line");
    x3::traits::move_to(first, string.end, attr);
    first = string.end;
    return true;
  }
};

// A raw block, ``` to a line of only ```: the whole token (scan_raw_block finds its end;
// parse() takes its text). Fails unless it starts with ```; after that, a problem is an
// expectation failure at its place.
struct raw_block_token : x3::parser<raw_block_token> {
  using attribute_type = std::string;
  static bool const has_attribute = true;
  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const&, RContext&,
             Attribute& attr) const {
    if (first == last) return false;
    std::string_view text(&*first, static_cast<std::size_t>(last - first));
    if (!raw_block_at(text, 0)) return false;
    RawBlock b = scan_raw_block(text, 0);
    if (b.junk != RawBlock::npos)
      boost::throw_exception(x3::expectation_failure<Iterator>(
          first + static_cast<std::ptrdiff_t>(b.junk),
          "a line end after the opening ``` (a raw block starts on the next line)"));
    if (b.end == RawBlock::npos)
      boost::throw_exception(x3::expectation_failure<Iterator>(
          first, "a line of only " + std::string(b.fence, '`') + " to close this raw block"));
    Iterator end = first + static_cast<std::ptrdiff_t>(b.end);
    x3::traits::move_to(first, end, attr);
    first = end;
    return true;
  }
};

struct string_text_class;
struct string_lit_class : annotate_range {};
x3::rule<string_text_class, std::string> const string_text = "string";
x3::rule<string_lit_class, ast::StringLit> const string_lit = "string";
// """ ... """ spanning lines; "..." on one line; a raw block.
auto const string_text_def = x3::lexeme[string_token{} | raw_block_token{}];
auto const string_lit_def = string_text;
BOOST_SPIRIT_DEFINE(string_text, string_lit)

struct number_text_class;
struct number_lit_class : annotate_range {};
x3::rule<number_text_class, std::string> const number_text = "number";
x3::rule<number_lit_class, ast::NumberLit> const number_lit = "number";
// 64, -3, 0.001, 1e-3
auto const number_text_def = x3::lexeme[scanned_lexeme<lex::scan_number>{}];
auto const number_lit_def = number_text;
BOOST_SPIRIT_DEFINE(number_text, number_lit)

struct bool_value_class;
struct bool_lit_class : annotate_range {};
x3::rule<bool_value_class, bool> const bool_value = "'true' or 'false'";
x3::rule<bool_lit_class, ast::BoolLit> const bool_lit = "'true' or 'false'";
auto const bool_value_def = (kw_true >> x3::attr(true)) | (kw_false >> x3::attr(false));
auto const bool_lit_def = bool_value;
BOOST_SPIRIT_DEFINE(bool_value, bool_lit)

}  // namespace pipec::syntax::grammar
