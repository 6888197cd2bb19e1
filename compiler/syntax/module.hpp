#pragma once

// The top rule: a whole file, `use`, `op` and `pipeline` declarations to the end.

#include <boost/spirit/home/x3/nonterminal/rule.hpp>
#include <vector>

#include "compiler/syntax/ast.hpp"

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

struct module_class;
using module_type = x3::rule<module_class, std::vector<ast::TopDecl>>;
BOOST_SPIRIT_DECLARE(module_type)

}  // namespace pipec::syntax::grammar

namespace pipec::syntax {
const grammar::module_type& module_rule();
}  // namespace pipec::syntax
