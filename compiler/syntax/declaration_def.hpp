#pragma once

// Definitions of the declaration and statement rules. Included only by declaration.cpp.

#include <boost/spirit/home/x3.hpp>

#include "compiler/syntax/ast.hpp"
#include "compiler/syntax/ast_adapted.hpp"
#include "compiler/syntax/common.hpp"
#include "compiler/syntax/declaration.hpp"
#include "compiler/syntax/error_handler.hpp"
#include "compiler/syntax/expression.hpp"

namespace pipec::syntax::grammar {

//// Rule IDs ////////////////////////////////////////////////////////////
struct type_expr_class;
struct constraint_class;
struct param_decl_class;
struct argument_class;
struct after_item_class;
struct allow_failure_text_class;
struct allow_failure_class;
struct step_decl_class;
struct description_class;
struct block_class;
struct block_end_class;
struct if_stmt_class;
struct else_body_class;
struct else_if_class;
struct if_statement_class;
struct for_stmt_class;
struct settings_stmt_class;
struct finally_stmt_class;
struct output_stmt_class;
struct statement_class;
struct statement_expected_class;
struct statement_item_class;
struct op_param_class;
struct op_output_class;
struct op_outputs_class;
struct body_field_class;
struct body_end_class;
struct op_body_class;
struct op_decl_class;
struct pipeline_decl_class;

//// Rules ///////////////////////////////////////////////////////////////
x3::rule<type_expr_class, ast::TypeExpr> const type_expr = "type (e.g. int, list<string>)";
x3::rule<constraint_class, ast::ConstraintExpr> const constraint =
    "allowed values (e.g. [\"a\", \"b\"] or 1..10)";
x3::rule<param_decl_class, ast::ParamDecl> const param_decl = "parameter declaration";
x3::rule<argument_class, ast::Argument> const argument = "argument (name: value)";
x3::rule<after_item_class, ast::AfterItem> const after_item = "step name (e.g. a, a.failed, a.done)";
x3::rule<allow_failure_text_class, std::string> const allow_failure_text = "'allow_failure'";
x3::rule<allow_failure_class, ast::Identifier> const allow_failure = "'allow_failure'";
x3::rule<step_decl_class, ast::StepDecl> const step_decl = "step declaration";
x3::rule<description_class, ast::Description> const description = "description";
x3::rule<block_class, ast::Block> const block = "'{'";
x3::rule<block_end_class> const block_end = "statement or '}'";
x3::rule<if_stmt_class, ast::IfStmt> const if_stmt = "'if'";
x3::rule<else_body_class, ast::Block> const else_body = "'{' or 'if'";
x3::rule<else_if_class, ast::Block> const else_if = "'if'";
x3::rule<if_statement_class, ast::Statement> const if_statement = "'if'";
x3::rule<for_stmt_class, ast::ForStmt> const for_stmt = "'for'";
x3::rule<settings_stmt_class, ast::SettingsStmt> const settings_stmt = "'settings'";
x3::rule<finally_stmt_class, ast::FinallyStmt> const finally_stmt = "'finally'";
x3::rule<output_stmt_class, ast::OutputStmt> const output_stmt = "'output'";
x3::rule<statement_class, ast::Statement> const statement = "statement";
x3::rule<statement_expected_class, ast::Statement> const statement_expected = "statement or '}'";
x3::rule<statement_item_class, ast::Statement> const statement_item = "statement or '}'";
x3::rule<op_param_class, ast::OpParamDecl> const op_param = "parameter (name: type)";
x3::rule<op_output_class, ast::OpOutputDecl> const op_output = "output (name: type)";
x3::rule<op_outputs_class, std::vector<ast::OpOutputDecl>> const op_outputs = "'->'";
x3::rule<body_field_class, ast::BodyField> const body_field =
    "op body field (e.g. image \"python:3.11\")";
x3::rule<body_end_class> const body_end = "op body field or '}'";
x3::rule<op_body_class, ast::OpBody> const op_body = "op body";
op_decl_type const op_decl = "op declaration";
pipeline_decl_type const pipeline_decl = "pipeline declaration";

//// Grammar /////////////////////////////////////////////////////////////
// list<string>
auto const type_expr_def = identifier >> -(x3::lit('<') > (type_expr % ',') > '>');
// ["momentum", "sgd"] | 1..64
auto const constraint_def = expression() >> -(punct("..") > expression());
// param workers: int in 1..64 = 1
auto const param_decl_def = kw_param > identifier > ':' > type_expr > -(kw_in > constraint) >
                            -('=' > expression());
// workers: workers
auto const argument_def = identifier > ':' > expression();
// setup, check.failed, train.done
auto const after_item_def = identifier >> -(x3::lit('.') > identifier);
// allow_failure: a keyword only here
auto const allow_failure_text_def = keyword_text("allow_failure");
auto const allow_failure_def = allow_failure_text;
// step train = trainer(data: fetch.path) after setup allow_failure
auto const step_decl_def = kw_step > identifier > '=' > identifier > '(' >
                           -(argument % ',' >> -x3::lit(',')) > ')' >
                           -(kw_after > ((after_item % ',') >> -x3::lit(','))) >> -allow_failure;
// description "text"
auto const description_def = keyword_text("description") > string_lit;
// { statements }: a statement with a syntax error is reported and skipped (statement_item)
auto const block_def =
    x3::char_('{') > *(!(x3::lit('}') | x3::eoi) >> statement_item) > block_end;
auto const block_end_def = x3::lit('}');
// if a == 1 { ... } else { ... }
auto const if_stmt_def = kw_if > expression() > block > -(kw_else > else_body);
auto const else_body_def = block | else_if;
// else if ...: a block holding the one nested if
auto const else_if_def = x3::attr('{') >> x3::repeat(1)[if_statement];
auto const if_statement_def = if_stmt;
// for shard in shards limit 4 max_failures 1 min_success 0.5 { ... }: `limit`,
// `max_failures` and `min_success` are keywords only here
auto const for_stmt_def = kw_for > identifier > kw_in > expression() >
                          -(keyword("limit") > expression()) >
                          -(keyword("max_failures") > expression()) >
                          -(keyword("min_success") > expression()) > block;
// finally { ... }
auto const finally_stmt_def = keyword_text("finally") > block;
// settings { timeout "6h" }: `settings` is a keyword only here
auto const settings_stmt_def = keyword_text("settings") > op_body;
// output model = train.model: `output` is a keyword only here
auto const output_stmt_def = keyword_text("output") > identifier > '=' > expression();
auto const statement_def = description | param_decl | step_decl | if_stmt | for_stmt |
                           finally_stmt | settings_stmt | output_stmt;
auto const statement_expected_def = statement;
auto const statement_item_def = x3::eps > statement_expected;
// epochs: int = 10
auto const op_param_def = identifier > ':' > type_expr > -('=' > expression());
// model: string
auto const op_output_def = identifier > ':' > type_expr;
// -> (model: string, score: float)
auto const op_outputs_def = punct("->") > '(' > -(op_output % ',' >> -x3::lit(',')) > ')';
// image "python:3.11"
auto const body_field_def = identifier > expression();
auto const op_body_def = x3::char_('{') > *body_field > body_end;
auto const body_end_def = x3::lit('}');
// op train(epochs: int = 10) -> (model: string) { image "..." command [...] }
auto const op_decl_def = kw_op > identifier > '(' > -(op_param % ',' >> -x3::lit(',')) > ')' >
                         -op_outputs > -op_body;
// pipeline name [-> (model: file)] { ... }
auto const pipeline_decl_def = kw_pipeline > identifier > -op_outputs > block;

BOOST_SPIRIT_DEFINE(type_expr, constraint, param_decl, argument, after_item, allow_failure_text, allow_failure, step_decl, description, block,
                    block_end, if_stmt, else_body, else_if, if_statement, for_stmt, finally_stmt, settings_stmt, output_stmt,
                    statement, statement_expected, statement_item, op_param, op_output, op_outputs, body_field, body_end, op_body,
                    op_decl, pipeline_decl)

//// Annotation ////////////////////////////////////////////////////////////
struct type_expr_class : annotate_range {};
struct constraint_class : annotate_range {};
struct param_decl_class : annotate_range {};
struct argument_class : annotate_range {};
struct after_item_class : annotate_range {};
struct allow_failure_text_class {};
struct allow_failure_class : annotate_range {};
struct step_decl_class : annotate_range {};
struct description_class : annotate_range {};
struct block_class : annotate_range {};
struct block_end_class {};
struct if_stmt_class : annotate_range {};
struct else_body_class {};
struct else_if_class : annotate_range {};
struct if_statement_class {};
struct for_stmt_class : annotate_range {};
struct settings_stmt_class : annotate_range {};
struct finally_stmt_class : annotate_range {};
struct output_stmt_class : annotate_range {};
struct statement_class {};
struct statement_expected_class {};
struct statement_item_class : recover_at<Recovery::Level::Statement> {};
struct op_param_class : annotate_range {};
struct op_output_class : annotate_range {};
struct op_outputs_class {};
struct body_field_class : annotate_range {};
struct body_end_class {};
struct op_body_class : annotate_range {};
struct op_decl_class : annotate_range {};
struct pipeline_decl_class : annotate_range {};

}  // namespace pipec::syntax::grammar

namespace pipec::syntax {
const grammar::op_decl_type& op_declaration() { return grammar::op_decl; }
const grammar::pipeline_decl_type& pipeline_declaration() { return grammar::pipeline_decl; }
}  // namespace pipec::syntax
