#pragma once

// Fusion adapters for the AST (ranges and doc comments are left out: they are filled
// by annotation and by parse(), not by the grammar).

#include <boost/fusion/include/adapt_struct.hpp>

#include "compiler/syntax/ast.hpp"

BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::Reference, head, field)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::ListExpr, open, items)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::MapEntry, key, value)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::MapExpr, open, entries)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::OrExpr, first, rest)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::AndExpr, first, rest)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::NotExpr, keyword, operand)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::CompareTail, op, rhs)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::CompareExpr, lhs, tail)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::TypeExpr, name, args)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::ConstraintExpr, low, high)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::ParamDecl, name, type, constraint, default_value)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::Argument, name, value)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::AfterItem, step, outcome)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::StepDecl, name, op, args, after, allow_failure)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::Description, keyword, text)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::Block, open, statements)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::IfStmt, condition, then_block, else_block)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::ForStmt, var, items, limit, max_failures, min_success, body)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::FinallyStmt, keyword, body)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::SettingsStmt, keyword, body)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::OutputStmt, keyword, name, value)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::OpParamDecl, name, type, default_value)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::OpOutputDecl, name, type)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::BodyField, name, value)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::OpBody, open, fields)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::OpDecl, name, params, outputs, body)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::PipelineDecl, name, outputs, body)
BOOST_FUSION_ADAPT_STRUCT(pipec::syntax::ast::UseDecl, keyword, target)
