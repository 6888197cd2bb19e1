#pragma once

// Lexical rules shared by every grammar group: the skipper (spaces and `#` comments),
// identifiers, keywords, and string, number and bool literals. Only character sets
// are used (no locale classification), so bytes >= 0x80 never reach <cctype>.

#include <boost/spirit/home/x3.hpp>
#include <string>

#include "compiler/syntax/ast.hpp"
#include "compiler/syntax/ast_adapted.hpp"
#include "compiler/syntax/error_handler.hpp"

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

//// Skipper /////////////////////////////////////////////////////////////
struct skipper_class;
x3::rule<skipper_class> const skipper = "whitespace";
// ' ', tabs, newlines, and `# ...` to the end of the line (`##` doc comments too).
auto const skipper_def = x3::char_(" \t\r\n") | x3::lexeme['#' >> *(x3::char_ - '\n')];
BOOST_SPIRIT_DEFINE(skipper)
using skipper_type = x3::rule<skipper_class>;

//// Identifiers and keywords ////////////////////////////////////////////
auto const ident_start = x3::char_("a-zA-Z_");
auto const ident_char = x3::char_("a-zA-Z0-9_");

/// The reserved words; see docs/language.md.
struct Keywords : x3::symbols<int> {
  Keywords() {
    for (const char* k : {"use", "pipeline", "description", "param", "step", "op", "after", "if",
                          "else", "for", "in", "finally", "true", "false", "and", "or", "not"})
      add(k, 0);
  }
};
inline Keywords const keywords;

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
auto const identifier_text_def =
    x3::lexeme[!(keywords >> !ident_char) >> ident_start >> *ident_char];
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
// """ ... """ spanning lines; "..." on one line. Escapes and ${...} are decoded by parse().
auto const string_text_def =
    x3::lexeme[x3::raw[((x3::lit("\"\"\"") >> *(!x3::lit("\"\"\"") >> (escape | x3::char_))) >
                        triple_close) |
                       ((x3::lit('"') >> *(escape | (x3::char_ - '"' - '\n'))) > quote_close)]];
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
