#pragma once

// Definitions of the expression rules. Included only by expression.cpp.

#include <boost/spirit/home/x3.hpp>
#include <type_traits>
#include <utility>
#include <vector>

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
struct compare_level_class;
struct not_op_class;
struct not_expr_class;
struct and_expr_class;
struct and_level_class;
struct or_expr_class;
struct or_level_class;
struct simple_value_class;
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
x3::rule<compare_class, ast::Expression> const compare = "expression";
x3::rule<compare_level_class, ast::Expression> const compare_level = "expression";
x3::rule<not_op_class, ast::NotExpr> const not_op = "'not'";
x3::rule<not_expr_class, ast::Expression> const not_expr = "expression";
x3::rule<and_expr_class, ast::Expression> const and_expr = "expression";
x3::rule<and_level_class, ast::Expression> const and_level = "expression";
x3::rule<or_expr_class, ast::Expression> const or_expr = "expression";
x3::rule<or_level_class, ast::Expression> const or_level = "expression";
x3::rule<simple_value_class, ast::Expression> const simple_value = "expression";
expression_type const expression = "expression";

//// Operator levels ///////////////////////////////////////////////////////
// A level with no operator is its operand: `a or b` builds an OrExpr, a plain `a` stays
// the operand itself, so a value costs no heap node per precedence level. Each level's
// level is two rules with an Expression attribute: the inner one's action gets the operand
// and what followed it; the outer one's on_success (annotate_level) gives a node the inner
// one built the range matched (X3 passes an action's rule no attribute to annotate).
inline bool has_operator(const boost::optional<ast::CompareTail>& tail) { return bool(tail); }
inline bool has_operator(const std::vector<ast::Expression>& rest) { return !rest.empty(); }

template <typename Node>
struct build_level {
  template <typename Context>
  void operator()(Context const& ctx) const {
    auto& attr = x3::_attr(ctx);
    auto& first = boost::fusion::at_c<0>(attr);
    auto& rest = boost::fusion::at_c<1>(attr);
    if (!has_operator(rest)) {
      x3::_val(ctx) = std::move(first);
      return;
    }
    Node node;
    if constexpr (std::is_same_v<Node, ast::CompareExpr>) {
      node.lhs = std::move(first);
      node.tail = std::move(rest);
    } else {
      node.first = std::move(first);
      node.rest = std::move(rest);
    }
    x3::_val(ctx) = std::move(node);
  }
};

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
auto const compare_op_def = punct_text("==") | punct_text("!=") | punct_text("<=") |
                            punct_text(">=") | punct_text("<") | punct_text(">");
// == 3
auto const compare_tail_def = compare_op > primary;
// a == b
auto const compare_def = compare_level;
auto const compare_level_def = (primary >> -compare_tail)[build_level<ast::CompareExpr>{}];
// not a
auto const not_op_def = keyword_text("not") > not_expr;
auto const not_expr_def = not_op | compare;
// a and b
auto const and_expr_def = and_level;
auto const and_level_def = (not_expr >> *(kw_and > not_expr))[build_level<ast::AndExpr>{}];
// a or b
auto const or_expr_def = or_level;
auto const or_level_def = (and_expr >> *(kw_or > and_expr))[build_level<ast::OrExpr>{}];
// A literal or a name that is the whole value (`,` `)` `]` `}` next): nearly every argument,
// list item and map value. Every operator level would hand it up unchanged, so it skips them:
// they were a quarter of a 5,000-step build's parse. The tree is the same either way.
auto const value_end = &(x3::lit(',') | ')' | ']' | '}');
auto const simple_value_def = (string_lit >> value_end) | (number_lit >> value_end) |
                              (bool_lit >> value_end) | (reference >> value_end);
auto const expression_def = simple_value | or_expr;

BOOST_SPIRIT_DEFINE(reference, list_expr, map_key, map_entry, map_expr, primary, compare_op,
                    compare_tail, compare, compare_level, not_op, not_expr, and_expr, and_level,
                    or_expr, or_level, simple_value, expression)

//// Annotation ////////////////////////////////////////////////////////////
struct reference_class : annotate_range {};
struct list_expr_class : annotate_range {};
struct map_key_class {};
struct map_entry_class : annotate_range {};
struct map_expr_class : annotate_range {};
struct primary_class {};
struct compare_op_class {};
struct compare_tail_class : annotate_range {};
struct compare_class : annotate_level {};
struct compare_level_class {};
struct not_op_class : annotate_range {};
struct not_expr_class {};
struct and_expr_class : annotate_level {};
struct and_level_class {};
struct or_expr_class : annotate_level {};
struct or_level_class {};
struct simple_value_class {};
struct expression_class {};

}  // namespace pipec::syntax::grammar

namespace pipec::syntax {
const grammar::expression_type& expression() { return grammar::expression; }
}  // namespace pipec::syntax
