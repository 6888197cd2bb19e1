#pragma once

// The syntax tree of a .pipe file, as the X3 grammar builds it. Every node that a
// diagnostic can point at derives ast::Located and carries its byte range. Leaf
// nodes (Identifier, StringLit, NumberLit, BoolLit) are built from one value, so
// they are not Fusion-adapted (X3 mishandles one-member structs); they convert
// from it instead.

#include <boost/optional.hpp>
#include <boost/spirit/home/x3/support/ast/position_tagged.hpp>
#include <boost/spirit/home/x3/support/ast/variant.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/base/source_manager.hpp"

namespace pipec::syntax::ast {

namespace x3 = boost::spirit::x3;

/// Base of every node with a place in the source.
struct Located {
  SourceRange range;
};

/// A name: `[A-Za-z_][A-Za-z0-9_]*`, not a keyword.
struct Identifier : Located {
  Identifier() = default;
  Identifier(std::string n) : name(std::move(n)) {}  // NOLINT: X3 converts from the lexeme
  std::string name;
};

/// One piece of a decoded string literal: text, or a `${head}` / `${head.field}` reference.
struct StringPart {
  std::string text;
  bool is_ref = false;
  Identifier head;
  std::optional<Identifier> field;
  SourceRange range;  // of the text, or of the whole `${...}`
};

/// A string literal, `"..."` or `"""..."""`. The grammar stores the raw token (quotes
/// included); parse() decodes escapes, dedent and `${...}` into `parts`.
struct StringLit : Located {
  StringLit() = default;
  StringLit(std::string r) : raw(std::move(r)) {}  // NOLINT: X3 converts from the lexeme
  std::string raw;
  std::vector<StringPart> parts;
  /// True when the string has no `${...}`.
  bool is_plain() const;
  /// The text of a plain string (references, if any, are left out).
  std::string text() const;
};

/// An integer or float literal, kept as written (`64`, `-3`, `1e-3`).
struct NumberLit : Located {
  NumberLit() = default;
  NumberLit(std::string t) : text(std::move(t)) {}  // NOLINT: X3 converts from the lexeme
  std::string text;
  bool is_float() const { return text.find_first_of(".eE") != std::string::npos; }
};

struct BoolLit : Located {
  BoolLit() = default;
  BoolLit(bool v) : value(v) {}  // NOLINT: X3 converts from the parsed bool
  bool value = false;
};

/// `name` or `name.field` (a parameter, loop variable or step output).
struct Reference : Located {
  Identifier head;
  boost::optional<Identifier> field;
};

struct ListExpr;
struct MapExpr;
struct OrExpr;
struct AndExpr;
struct NotExpr;
struct CompareExpr;

/// Any expression. OrExpr/AndExpr with no `rest` and CompareExpr with no `tail` are
/// just their first operand (the grammar builds one node per precedence level).
struct Expression
    : x3::variant<StringLit, NumberLit, BoolLit, Reference, x3::forward_ast<ListExpr>,
                  x3::forward_ast<MapExpr>, x3::forward_ast<OrExpr>, x3::forward_ast<AndExpr>,
                  x3::forward_ast<NotExpr>, x3::forward_ast<CompareExpr>> {
  using base_type::base_type;
  using base_type::operator=;
};

/// `[a, b, c]`
struct ListExpr : Located {
  char open = '[';
  std::vector<Expression> items;
};

/// A map key: a name or a string (`{KEY: v, "k-2": w}`).
struct MapKey : x3::variant<Identifier, StringLit> {
  using base_type::base_type;
  using base_type::operator=;
};

struct MapEntry : Located {
  MapKey key;
  Expression value;
};

/// `{KEY: value, ...}`
struct MapExpr : Located {
  char open = '{';
  std::vector<MapEntry> entries;
};

/// `a or b or c`
struct OrExpr : Located {
  Expression first;
  std::vector<Expression> rest;
};

/// `a and b and c`
struct AndExpr : Located {
  Expression first;
  std::vector<Expression> rest;
};

/// `not a`
struct NotExpr : Located {
  std::string keyword;
  Expression operand;
};

struct CompareTail : Located {
  std::string op;  // == != < <= > >=
  Expression rhs;
};

/// `a == b` (comparisons do not chain).
struct CompareExpr : Located {
  Expression lhs;
  boost::optional<CompareTail> tail;
};

/// `string`, `int`, `list<string>`, `map<int>`.
struct TypeExpr : Located {
  Identifier name;
  std::vector<TypeExpr> args;
};

/// `in ["a", "b"]` (low is the list) or `in 1..64` (low and high).
struct ConstraintExpr : Located {
  Expression low;
  boost::optional<Expression> high;
};

/// `param NAME: TYPE [in CONSTRAINT] [= DEFAULT]`
struct ParamDecl : Located {
  Identifier name;
  TypeExpr type;
  boost::optional<ConstraintExpr> constraint;
  boost::optional<Expression> default_value;
  std::string doc;  // from `##` lines above; filled by parse()
};

/// `name: expr` in a call.
struct Argument : Located {
  Identifier name;
  Expression value;
};

/// A step named in `after`: `a`, or `a.failed` / `a.done` (run when `a` failed, or
/// whatever its outcome).
struct AfterItem : Located {
  Identifier step;
  boost::optional<Identifier> outcome;
};

/// `step NAME = OP(args) [after a, b.failed] [allow_failure]`
struct StepDecl : Located {
  Identifier name;
  Identifier op;
  std::vector<Argument> args;
  std::vector<AfterItem> after;
  boost::optional<Identifier> allow_failure;  // the keyword, where given
};

/// `description "..."`
struct Description : Located {
  std::string keyword;
  StringLit text;
};

/// `image "python:3.11"` and the other fields of a container op body (and of `settings`).
struct BodyField : Located {
  Identifier name;
  Expression value;
};

struct OpBody : Located {
  char open = '{';
  std::vector<BodyField> fields;
};

/// `settings { timeout "6h" ... }`: the pipeline's own settings.
struct SettingsStmt : Located {
  std::string keyword;
  OpBody body;
};

/// `output NAME = STEP.OUTPUT`: one of the pipeline's declared outputs, when the
/// pipeline is called as a step.
struct OutputStmt : Located {
  std::string keyword;
  Identifier name;
  Expression value;
};

struct IfStmt;
struct ForStmt;
struct FinallyStmt;

/// A statement of a pipeline body. Steps, the bulk of a large pipeline, are held inline;
/// the larger declarations live on the heap so a statement stays small.
struct Statement
    : x3::variant<Description, x3::forward_ast<ParamDecl>, StepDecl, x3::forward_ast<IfStmt>,
                  x3::forward_ast<ForStmt>, x3::forward_ast<FinallyStmt>,
                  x3::forward_ast<SettingsStmt>, x3::forward_ast<OutputStmt>> {
  using base_type::base_type;
  using base_type::operator=;
};

/// `{ statements }`
struct Block : Located {
  char open = '{';
  std::vector<Statement> statements;
};

/// `if COND { ... } [else { ... } | else if ...]`
struct IfStmt : Located {
  Expression condition;
  Block then_block;
  boost::optional<Block> else_block;
};

/// `for VAR in ITEMS [limit N] [max_failures N] [min_success R] { ... }`
struct ForStmt : Located {
  Identifier var;
  Expression items;
  boost::optional<Expression> limit;         // at most this many iterations at once
  boost::optional<Expression> max_failures;  // the loop succeeds with at most N failed items
  boost::optional<Expression> min_success;   // ... with at least this share succeeded
  Block body;
};

/// `finally { ... }`
struct FinallyStmt : Located {
  std::string keyword;
  Block body;
};

/// `name: type [= default]` in an op signature.
struct OpParamDecl : Located {
  Identifier name;
  TypeExpr type;
  boost::optional<Expression> default_value;
  std::string doc;
};

/// `name: type` after `->`.
struct OpOutputDecl : Located {
  Identifier name;
  TypeExpr type;
  std::string doc;
};

/// `op NAME(PARAMS) [-> (OUTPUTS)] [{ BODY }]`; no body: a built-in training op.
struct OpDecl : Located {
  Identifier name;
  std::vector<OpParamDecl> params;
  std::vector<OpOutputDecl> outputs;
  boost::optional<OpBody> body;
  std::string doc;
};

/// `pipeline NAME [-> (OUTPUTS)] { ... }`; outputs are given by `output` statements.
struct PipelineDecl : Located {
  Identifier name;
  std::vector<OpOutputDecl> outputs;
  Block body;
  std::string doc;
};

struct UseTarget : x3::variant<Identifier, StringLit> {
  using base_type::base_type;
  using base_type::operator=;
};

/// `use NAME` (stdlib module) or `use "path.pipe"` (file).
struct UseDecl : Located {
  std::string keyword;
  UseTarget target;
};

struct TopDecl : x3::variant<UseDecl, OpDecl, PipelineDecl> {
  using base_type::base_type;
  using base_type::operator=;
};

/// A whole file.
struct Module {
  FileId file = kNoFile;
  std::vector<TopDecl> decls;
};

}  // namespace pipec::syntax::ast
