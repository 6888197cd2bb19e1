#pragma once

// Lexical rules shared by every grammar group: the skipper (spaces and `#` comments),
// identifiers, keywords, and string, number and bool literals. Only character sets
// are used (no locale classification), so bytes >= 0x80 never reach <cctype>.

#include <array>
#include <boost/spirit/home/x3.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/syntax/ast.hpp"
#include "compiler/syntax/ast_adapted.hpp"
#include "compiler/syntax/error_handler.hpp"
#include "compiler/syntax/raw_block.hpp"

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

//// Skipper /////////////////////////////////////////////////////////////
// Skips a whole run of ' ', tabs, newlines and `# ...` comments (to the end of the
// line, `##` doc comments too) in one call; X3 calls a skipper until it fails, so
// a parser of one character would be entered once per byte.
struct skip_run : x3::parser<skip_run> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;
  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const&, RContext&, Attribute&) const {
    Iterator it = first;
    while (it != last) {
      char c = *it;
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++it;
      } else if (c == '#') {
        while (it != last && *it != '\n') ++it;
      } else {
        break;
      }
    }
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

//// Identifiers and keywords ////////////////////////////////////////////
auto const ident_start = x3::char_("a-zA-Z_");
auto const ident_char = x3::char_("a-zA-Z0-9_");

/// The reserved words; see docs/language.md.
inline constexpr std::array<std::string_view, 17> kKeywords = {
    "use", "pipeline", "description", "param", "step", "op",  "after", "if",  "else",
    "for", "in",       "finally",     "true",  "false", "and", "or",    "not"};

inline bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

/// Whether `word` is one of kKeywords; compares only the keywords with its first letter.
inline bool is_keyword(std::string_view word) {
  if (word.size() < 2 || word.size() > 11) return false;
  for (std::string_view k : kKeywords)
    if (k[0] == word[0] && k == word) return true;
  return false;
}

// [A-Za-z_][A-Za-z0-9_]* unless the whole word is a keyword, in one pass (no
// per-character push_back, no symbol-table walk). Use inside a lexeme.
struct identifier_word : x3::parser<identifier_word> {
  using attribute_type = std::string;
  static bool const has_attribute = true;
  template <typename Iterator, typename Context, typename RContext, typename Attribute>
  bool parse(Iterator& first, Iterator const& last, Context const&, RContext&,
             Attribute& attr) const {
    if (first == last || !is_ident_start(*first)) return false;
    Iterator it = first;
    ++it;
    while (it != last && is_ident_char(*it)) ++it;
    if (is_keyword(std::string_view(&*first, static_cast<std::size_t>(it - first)))) return false;
    x3::traits::move_to(first, it, attr);
    first = it;
    return true;
  }
};

#define PIPEC_KEYWORD(word)                                               \
  struct kw_##word##_class;                                               \
  x3::rule<kw_##word##_class> const kw_##word = "'" #word "'";            \
  auto const kw_##word##_def = x3::lexeme[x3::lit(#word) >> !ident_char]; \
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

/// A keyword that is kept in the AST as text (X3 needs a member before single-member structs).
inline auto keyword_text(const char* word) { return x3::lexeme[x3::string(word) >> !ident_char]; }

struct identifier_text_class;
struct identifier_class : annotate_range {};
x3::rule<identifier_text_class, std::string> const identifier_text = "name";
x3::rule<identifier_class, ast::Identifier> const identifier = "name";
// all_reduce, batch_size, _x1
auto const identifier_text_def = x3::lexeme[identifier_word{}];
auto const identifier_def = identifier_text;
BOOST_SPIRIT_DEFINE(identifier_text, identifier)

//// Literals ////////////////////////////////////////////////////////////
struct string_text_class;
struct string_lit_class : annotate_range {};
struct triple_close_class;
struct quote_close_class;
x3::rule<string_text_class, std::string> const string_text = "string";
x3::rule<string_lit_class, ast::StringLit> const string_lit = "string";
x3::rule<triple_close_class> const triple_close = "'\"\"\"' to close the string";
x3::rule<quote_close_class> const quote_close = "'\"' before the end of the line";
auto const triple_close_def = x3::lit("\"\"\"");
auto const quote_close_def = x3::lit('"');
auto const escape = '\\' >> x3::char_;
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

// """ ... """ spanning lines; "..." on one line; a raw block. Escapes and ${...} are
// decoded by parse().
auto const string_text_def =
    x3::lexeme[x3::raw[((x3::lit("\"\"\"") >> *(!x3::lit("\"\"\"") >> (escape | x3::char_))) >
                        triple_close) |
                       ((x3::lit('"') >> *(escape | (x3::char_ - '"' - '\n'))) > quote_close)] |
               raw_block_token{}];
auto const string_lit_def = string_text;
BOOST_SPIRIT_DEFINE(string_text, string_lit, triple_close, quote_close)

struct number_text_class;
struct number_lit_class : annotate_range {};
x3::rule<number_text_class, std::string> const number_text = "number";
x3::rule<number_lit_class, ast::NumberLit> const number_lit = "number";
auto const digits = +x3::char_("0-9");
// 64, -3, 0.001, 1e-3 (a '.' needs digits after it, so 1..64 is a range)
auto const number_text_def =
    x3::lexeme[x3::raw[-x3::lit('-') >> digits >> -('.' >> digits) >>
                       -(x3::char_("eE") >> -x3::char_("+-") >> digits) >> !ident_char]];
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
