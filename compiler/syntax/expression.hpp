#pragma once

// The expression rule group: literals, lists, maps, references, comparisons and
// `and`/`or`/`not`. Other groups reach it through expression().

#include <boost/spirit/home/x3/nonterminal/rule.hpp>

#include "compiler/syntax/ast.hpp"

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

struct expression_class;
using expression_type = x3::rule<expression_class, ast::Expression>;
BOOST_SPIRIT_DECLARE(expression_type)

}  // namespace pipec::syntax::grammar

namespace pipec::syntax {
/// The expression rule, for the other grammar groups.
const grammar::expression_type& expression();
}  // namespace pipec::syntax
