#pragma once

// Definitions of the top rules. Included only by module.cpp.

#include <boost/spirit/home/x3.hpp>

#include "compiler/syntax/ast.hpp"
#include "compiler/syntax/ast_adapted.hpp"
#include "compiler/syntax/common.hpp"
#include "compiler/syntax/declaration.hpp"
#include "compiler/syntax/error_handler.hpp"
#include "compiler/syntax/module.hpp"

namespace pipec::syntax::grammar {

//// Rule IDs ////////////////////////////////////////////////////////////
struct use_target_class;
struct use_decl_class;
struct top_decl_class;
struct top_expected_class;
struct top_item_class;
struct module_end_class;
struct module_class;

//// Rules ///////////////////////////////////////////////////////////////
x3::rule<use_target_class, ast::UseTarget> const use_target =
    "module name or file path (e.g. arena or \"lib/ops.pipe\")";
x3::rule<use_decl_class, ast::UseDecl> const use_decl = "'use'";
x3::rule<top_decl_class, ast::TopDecl> const top_decl = "declaration";
x3::rule<top_expected_class, ast::TopDecl> const top_expected = "'use', 'op' or 'pipeline'";
x3::rule<top_item_class, ast::TopDecl> const top_item = "declaration";
x3::rule<module_end_class> const module_end = "'use', 'op' or 'pipeline'";
module_type const module = "module";

//// Grammar /////////////////////////////////////////////////////////////
// use arena | use "lib/ops.pipe"
auto const use_target_def = string_lit | identifier;
auto const use_decl_def = keyword_text("use") > use_target;
auto const top_decl_def = use_decl | op_declaration() | pipeline_declaration();
auto const module_end_def = x3::eoi;
// a declaration with a syntax error is reported and skipped (top_item)
auto const top_expected_def = top_decl;
auto const top_item_def = x3::eps > top_expected;
auto const module_def = *(!x3::eoi >> top_item) > module_end;

BOOST_SPIRIT_DEFINE(use_target, use_decl, top_decl, top_expected, top_item, module_end, module)

//// Annotation ////////////////////////////////////////////////////////////
struct use_target_class {};
struct use_decl_class : annotate_range {};
struct top_decl_class {};
struct top_expected_class {};
struct top_item_class : recover_at<Recovery::Level::Declaration> {};
struct module_end_class {};
struct module_class {};

}  // namespace pipec::syntax::grammar

namespace pipec::syntax {
const grammar::module_type& module_rule() { return grammar::module; }
}  // namespace pipec::syntax
