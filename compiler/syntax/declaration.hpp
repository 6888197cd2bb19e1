#pragma once

// The declaration rule group: `op` declarations, `pipeline` declarations and the
// statements inside a pipeline (param, step, description, if, for, finally).

#include <boost/spirit/home/x3/nonterminal/rule.hpp>

#include "compiler/syntax/ast.hpp"

namespace pipec::syntax::grammar {

namespace x3 = boost::spirit::x3;

struct op_decl_class;
struct pipeline_decl_class;
using op_decl_type = x3::rule<op_decl_class, ast::OpDecl>;
using pipeline_decl_type = x3::rule<pipeline_decl_class, ast::PipelineDecl>;
BOOST_SPIRIT_DECLARE(op_decl_type, pipeline_decl_type)

}  // namespace pipec::syntax::grammar

namespace pipec::syntax {
const grammar::op_decl_type& op_declaration();
const grammar::pipeline_decl_type& pipeline_declaration();
}  // namespace pipec::syntax
