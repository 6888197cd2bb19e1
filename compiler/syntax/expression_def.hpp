#pragma once

// Definitions of the expression rules. Included only by expression.cpp.

#include <boost/spirit/home/x3.hpp>

#include "compiler/syntax/ast.hpp"
#include "compiler/syntax/ast_adapted.hpp"
#include "compiler/syntax/common.hpp"
#include "compiler/syntax/error_handler.hpp"
#include "compiler/syntax/expression.hpp"

namespace pipec::syntax::grammar {

//// Rule IDs ////////////////////////////////////////////////////////////
struct reference_class;
struct list_expr_class;
struct map_key_class;
struct map_entry_class;
struct map_expr_class;
struct primary_class;
struct compare_op_class;
struct compare_tail_class;
struct compare_class;
struct not_op_class;
struct not_expr_class;
struct and_expr_class;
struct or_expr_class;
struct expression_class;

//// Rules ///////////////////////////////////////////////////////////////
x3::rule<reference_class, ast::Reference> const reference = "name";
x3::rule<list_expr_class, ast::ListExpr> const list_expr = "list";
x3::rule<map_key_class, ast::MapKey> const map_key = "map key (a name or a string)";
x3::rule<map_entry_class, ast::MapEntry> const map_entry = "map entry (KEY: value)";
x3::rule<map_expr_class, ast::MapExpr> const map_expr = "map";
x3::rule<primary_class, ast::Expression> const primary = "expression";
x3::rule<compare_op_class, std::string> const compare_op = "comparison";
x3::rule<compare_tail_class, ast::CompareTail> const compare_tail = "comparison";
x3::rule<compare_class, ast::CompareExpr> const compare = "expression";
x3::rule<not_op_class, ast::NotExpr> const not_op = "'not'";
x3::rule<not_expr_class, ast::Expression> const not_expr = "expression";
x3::rule<and_expr_class, ast::AndExpr> const and_expr = "expression";
x3::rule<or_expr_class, ast::OrExpr> const or_expr = "expression";
expression_type const expression = "expression";

//// Grammar /////////////////////////////////////////////////////////////
// train.model, batch_size
auto const reference_def = identifier >> -('.' > identifier);
// [a, b, c,]
auto const list_expr_def = x3::char_('[') > -(expression % ',' >> -x3::lit(',')) > ']';
// NCCL_DEBUG or "k-2"
auto const map_key_def = string_lit | identifier;
// NCCL_DEBUG: "INFO"
auto const map_entry_def = map_key > ':' > expression;
// {NCCL_DEBUG: "INFO", "k-2": v,}
auto const map_expr_def = x3::char_('{') > -(map_entry % ',' >> -x3::lit(',')) > '}';
auto const primary_def = string_lit | number_lit | bool_lit | list_expr | map_expr | reference |
                         (x3::lit('(') > expression > ')');
auto const compare_op_def = x3::string("==") | x3::string("!=") | x3::string("<=") |
                            x3::string(">=") | x3::string("<") | x3::string(">");
// == 3
auto const compare_tail_def = compare_op > primary;
// a == b
auto const compare_def = primary >> -compare_tail;
// not a
auto const not_op_def = keyword_text("not") > not_expr;
auto const not_expr_def = not_op | compare;
// a and b
auto const and_expr_def = not_expr >> *(kw_and > not_expr);
// a or b
auto const or_expr_def = and_expr >> *(kw_or > and_expr);
auto const expression_def = or_expr;

BOOST_SPIRIT_DEFINE(reference, list_expr, map_key, map_entry, map_expr, primary, compare_op,
                    compare_tail, compare, not_op, not_expr, and_expr, or_expr, expression)

//// Annotation ////////////////////////////////////////////////////////////
struct reference_class : annotate_range {};
struct list_expr_class : annotate_range {};
struct map_key_class {};
struct map_entry_class : annotate_range {};
struct map_expr_class : annotate_range {};
struct primary_class {};
struct compare_op_class {};
struct compare_tail_class : annotate_range {};
struct compare_class : annotate_range {};
struct not_op_class : annotate_range {};
struct not_expr_class {};
struct and_expr_class : annotate_range {};
struct or_expr_class : annotate_range {};
struct expression_class {};

}  // namespace pipec::syntax::grammar

namespace pipec::syntax {
const grammar::expression_type& expression() { return grammar::expression; }
}  // namespace pipec::syntax
