#pragma once

// The checker behind check_program() (check.hpp): its state, and the declarations of
// the passes that the check_*.cpp files implement, one concept each:
//   check.cpp           the passes in order: load, ops, pipeline, step graph
//   check_op_body.cpp   container op bodies: image, command, env, resources, outputs, ...
//   check_params.cpp    pipeline parameters, their constraints, and `settings`
//   check_steps.cpp     steps and their arguments, `if`, `for`, scopes and dependencies
//   check_training.cpp  the training ops' arguments
//   check_calls.cpp     pipelines as steps: the one built, callees, recursion, outputs
//   check_values.cpp    values, names, conditions, types and the shared helpers
// Private to compiler/sema: only those files include it.

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/sema/graph.hpp"
#include "compiler/sema/load.hpp"
#include "compiler/sema/program.hpp"
#include "compiler/sema/symbols.hpp"
#include "compiler/sema/types.hpp"

namespace pipec::sema::detail {

namespace ast = syntax::ast;
namespace x3 = boost::spirit::x3;
using ir::Type;
using ir::TypeKind;
using ir::Value;

//// AST helpers ///////////////////////////////////////////////////////////

/// The node `e` holds when it is a T, else nullptr.
template <class T>
const T* node(const ast::Expression& e) {
  if constexpr (std::is_same_v<T, ast::StringLit> || std::is_same_v<T, ast::NumberLit> ||
                std::is_same_v<T, ast::BoolLit> || std::is_same_v<T, ast::Reference>) {
    return boost::get<T>(&e.get());
  } else {
    if (const auto* p = boost::get<x3::forward_ast<T>>(&e.get())) return &p->get();
    return nullptr;
  }
}

/// The operand a one-element or/and/compare level stands for.
const ast::Expression& strip(const ast::Expression& e);
SourceRange range_of(const ast::Expression& e);
/// 'a', 'b', 'c'
std::string join_quoted(const std::vector<std::string>& names);
/// "90s", "30m", "2h", "1h30m" as whole seconds: the launcher's rule.
std::optional<long long> duration_seconds(const std::string& text);

//// The checker ///////////////////////////////////////////////////////////

// Where a value is written; decides which references it may hold.
enum class Context { Default, Arg, Body, Condition };

enum class ScopeKind { Loop, IfBranch, Finally };

struct StepEntry {
  const ast::StepDecl* decl = nullptr;
  std::vector<int> scopes;  // enclosing scopes, outermost first
  const OpInfo* op = nullptr;
  std::uint32_t first_dep = 0;  // its edges in the step graph: edges_[first_dep, +dep_count)
  std::uint32_t dep_count = 0;
};

// Where a dns name was first taken: the source name (owned by the AST) and its range.
using DnsNames = std::unordered_map<std::string, std::pair<std::string_view, SourceRange>>;

struct LoopVar {
  std::string name;
  Type type;
  SourceRange range;
  bool items_bad = false;  // its items had an error: uses are not checked (no follow-on errors)
  std::size_t symbol = 0;  // in the SymbolTable, when index() records one
};

// A row of the op body table (check_op_body.cpp).
struct BodyRow;

// One op body while check_body() reads its fields: the op being made, and what the checks
// after the last field need.
struct BodyState {
  const ast::OpDecl& op;
  OpInfo& info;
  ir::ContainerOp& c;
  bool has_image = false;
  std::map<std::string, std::string> paths;        // output -> its path
  std::set<std::string> mentioned;                 // outputs given a path, valid or not
  std::map<std::string, std::string> input_paths;  // file parameters placed by `inputs`
  std::map<std::string, SourceRange> env_keys, secret_keys;  // where each variable is set
};

// The rule a literal resource value follows ("" when it holds, else the message), and the
// metric specs a literal holds (check_op_body.cpp).
std::string resource_problem(const std::string& key, const ir::Literal& literal);
std::vector<std::string> metric_texts(const ir::Literal& literal);

// The one rule of a label or annotation key, a label value (node selectors too) and a
// toleration (its JSON, or nullopt when reported), for container ops and training ops
// alike (check_op_fields.cpp).
bool label_key_ok(Diagnostics& diags, const std::string& key, SourceRange at, std::string_view field);
bool label_value_ok(Diagnostics& diags, const std::string& text, SourceRange at);
std::optional<rules::Toleration> toleration_of(Diagnostics& diags, const Value& item);

class Checker {
 public:
  Checker(SourceManager& sources, Diagnostics& diags, const Host& host)
      : sources_(sources), diags_(diags), host_(host) {}
  /// Builds pipeline `name` of the main file rather than the one no other pipeline calls.
  void choose(std::string name) { wanted_ = std::move(name); }

  std::shared_ptr<Program> run(FileId main);
  /// symbols.cpp: the passes of run() with every declaration and resolved name recorded
  /// in `table`, going on past errors (diags_ is a sink nobody reads).
  void index(FileId main, SymbolTable& table);

  // The rule of each op body field, a row each of the body table (check_op_body.cpp,
  // kBodyRows, which names them: public for that table only).
  void body_text(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_image(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_command(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_args(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_env(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_count(const BodyRow& row, const ast::BodyField& field, BodyState& b);  // retries, timeout
  void body_metadata(const BodyRow& row, const ast::BodyField& field, BodyState& b);  // node_selector, labels, annotations
  void body_volumes(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_secret_env(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_image_pull_policy(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_metrics(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_metrics_from(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_working_dir(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_run_as_id(const BodyRow& row, const ast::BodyField& field, BodyState& b);  // run_as_user, run_as_group
  void body_run_as_non_root(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_tolerations(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_cache(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_resources(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_inputs(const BodyRow& row, const ast::BodyField& field, BodyState& b);
  void body_outputs(const BodyRow& row, const ast::BodyField& field, BodyState& b);

 private:
  // check.cpp
  StepGraph step_graph();
  void collect_ops();
  void note_op_place(const LoadedModule& m, SourceRange op_range, bool error, const std::string& message);
  OpInfo check_op(const ast::OpDecl& op, const LoadedModule& m);
  void check_pipeline(const ast::PipelineDecl& p);
  void check_workspace_users();

  // check_calls.cpp
  const ast::PipelineDecl* check_pipelines(FileId main);
  void reset_pipeline();
  void add_callee(const ast::PipelineDecl& p);
  void check_outputs(const ast::PipelineDecl& p);

  // check_op_body.cpp: the body table (kBodyRows) and its reading
  ir::ContainerOp check_body(const ast::OpDecl& op, OpInfo& info);
  std::vector<Value> words(const ast::Expression& e, const std::string& what);
  // A map literal whose values are scalars; `key_ok` says whether a key is taken (and
  // reports it when not).
  using KeyOk = std::function<bool(const ast::MapEntry&, const std::string&)>;
  std::vector<std::pair<std::string, Value>> entries(const ast::Expression& e, const std::string& what,
                                                     const KeyOk& key_ok);
  void retry_map(const ast::Expression& e, ir::ContainerOp& c);
  void retry_on(const ast::Expression& e, ir::ContainerOp& c);
  void retry_on_items(const std::vector<Value>& items, std::vector<rules::RetryOn>& out);
  std::optional<double> retry_memory_factor(const Value& v);
  std::optional<std::string> retry_memory_max(const Value& v);
  void retry_memory(ir::ContainerOp& c);
  // A training step's `retry_limit`, `retry_on`, `memory_factor`, `memory_max` (the
  // launcher's re-created job): literals, by the container op's rules.
  void check_training_retries(const std::vector<std::pair<std::string, Value>>& args, const std::string& op);
  static const ir::OpParam* bound_param(const OpInfo& op, const Value& v);
  static SourceRange param_range(const OpInfo& op, const ir::OpParam& p);
  void check_bound_fields(const OpInfo& op, const std::vector<std::pair<std::string, Value>>& args);
  // check_train_job.cpp
  void check_train_job(const std::vector<std::pair<std::string, Value>>& args);
  // check_training.cpp: every training op's arguments, `step` where a default stands
  void check_training(const OpInfo& op, const std::vector<std::pair<std::string, Value>>& args, SourceRange step);

  // check_params.cpp
  void check_param(const ast::ParamDecl& p);
  void check_constraint(const ast::ParamDecl& p, const Type& type, ir::Constraint& out);
  /// `v` (the default, or a constant argument of a called pipeline: `what`) against the
  /// constraint of `p`.
  void check_against(const ir::Param& p, const ir::Literal& v, SourceRange at, const char* what);
  static std::string bound(double b, const Type& type);
  void check_settings(const ast::SettingsStmt& s);
  void workspace_setting(const ast::Expression& e);

  // check_steps.cpp
  void collect_steps(const std::vector<ast::Statement>& body, std::vector<int> scopes, bool top);
  int new_scope(ScopeKind kind);
  std::vector<Stmt> statements(const std::vector<ast::Statement>& body);
  Stmt check_if(const ast::IfStmt& s);
  int next_if_scope(const ast::IfStmt& s, bool else_branch);
  Stmt check_for(const ast::ForStmt& s);
  int loop_limit(const ast::Expression& expr);
  void loop_tolerance(const ast::ForStmt& s, Stmt& out);
  bool check_step(const ast::StepDecl& s, Stmt& out);
  void check_upon(const ast::AfterItem& item, const StepEntry& after,
                  const std::vector<std::uint32_t>& reads, Stmt& out);
  std::string component_variant(const OpInfo& sig,
                                const std::vector<std::pair<std::string, Value>>& args,
                                SourceRange call);
  static const char* callable_kind(const OpInfo& op);  // "op" or "pipeline"
  const StepEntry* find_step(std::string_view name) const;
  std::uint32_t id_of(const StepEntry& step) const;
  std::vector<std::string> step_names() const;
  void finish_uses(std::vector<std::uint32_t>& uses) const;
  std::vector<std::string> dep_names(const std::vector<std::uint32_t>& uses) const;
  bool check_reach(const StepEntry& step, SourceRange at, bool output, int* loops = nullptr);

  // check_values.cpp
  std::optional<Value> value(const ast::Expression& expr, Context ctx);
  bool join_element(Type& container, const Value& item, std::string_view what);
  static void fold(Value& v, bool literal);
  std::optional<Value> number(const ast::NumberLit& n);
  std::optional<ir::Ref> resolve(const ast::Identifier& head, const ast::Identifier* field,
                                 SourceRange range, Context ctx);
  std::optional<ir::Ref> run_value(const ast::Identifier* field, SourceRange range);
  std::optional<ir::Condition> condition(const ast::Expression& expr);
  std::optional<Type> resolve_type(const ast::TypeExpr& t);
  /// False, with an error at `t`, when `type` is a visual kind (html, ...): an op output only.
  bool visual_param_ok(const ast::TypeExpr& t, const Type& type);
  bool declare(std::map<std::string, SourceRange>& seen, const ast::Identifier& id,
               const char* what);
  bool suggest(SourceRange at, const std::string& word, const std::vector<std::string>& names);
  bool dns_name_ok(const std::string& name, SourceRange at, const char* what);
  void check_dns_name(const ast::Identifier& id, const char* what, DnsNames& seen);
  static std::string map_key(const ast::MapKey& key);

  // symbols.cpp: what index() records; called only when symbols_ is set.
  std::size_t declare_symbol(Symbol::Kind kind, const ast::Identifier& id, std::string type,
                             std::string doc, std::string op);
  void index_op(const ast::OpDecl& op);
  void index_param(const ast::ParamDecl& p);
  void index_step(const ast::StepDecl& s);
  void index_pipeline(const ast::PipelineDecl& p);
  void index_argument(const ast::Identifier& callee, const ast::Identifier& param, std::size_t id);
  bool index_callable(const ast::Identifier& name, std::string sig, const std::string& doc);
  void index_outputs(const ast::Identifier& owner, const std::vector<ast::OpOutputDecl>& outputs, bool first);
  void use_symbol(SourceRange at, const std::map<std::string, std::size_t, std::less<>>& names,
                  std::string_view name);
  void use_member(SourceRange at, Symbol::Kind kind, const std::string& op, const std::string& name);

  // `what` names the value in the message: a string, or a function that builds it
  // (so the common case, no error, formats nothing).
  template <class What>
  bool check_assign(Value& v, const Type& to, const What& what) {
    if (!assignable(to, v.type)) {
      std::string subject;
      if constexpr (std::is_invocable_v<const What&>)
        subject = what();
      else
        subject = what;
      diags_.error(v.range,
                   fmt::format("{} must be {}, got {}", subject, type_str(to), type_str(v.type)));
      return false;
    }
    coerce(v, to);
    return true;
  }

  // Whether a did-you-mean note would still be shown: past the error limit nothing is,
  // and building the candidates for each of thousands of errors made reporting quadratic.
  bool suggesting() const { return diags_.error_count() <= Diagnostics::kMaxErrors; }

  SourceManager& sources_;
  Diagnostics& diags_;
  const Host& host_;
  std::vector<LoadedModule> modules_;
  Program program_;
  bool description_seen_ = false;
  std::map<std::string, const ast::ParamDecl*, std::less<>> params_;
  std::map<std::string, Type, std::less<>> param_types_;  // in name order, for suggestions
  std::vector<StepEntry> steps_;                           // in collect_steps() order
  std::unordered_map<std::string_view, std::uint32_t> step_ids_;  // name -> index in steps_
  std::uint32_t next_step_ = 0;  // the steps_ entry check_step() expects next
  DnsNames step_dns_;
  std::vector<std::uint32_t> edges_;  // the steps each step depends on, see StepEntry
  std::vector<ScopeKind> scope_kinds_;
  std::map<const ast::ForStmt*, int> loop_scopes_;
  std::unordered_map<int, const ast::ForStmt*> scope_loops_;  // the other way round
  std::deque<std::string> loop_labels_;
  bool settings_seen_ = false;  // names of loops in the step graph ("for VAR")
  std::map<std::pair<const ast::IfStmt*, bool>, int> if_scopes_;
  int finally_scope_ = -1;
  std::vector<int> scope_path_;
  std::vector<LoopVar> loop_vars_;
  std::vector<std::vector<std::uint32_t>> inherited_;  // step uses of enclosing conditions
  std::vector<std::uint32_t>* uses_ = nullptr;          // collects the steps a value uses
  const OpInfo* current_op_ = nullptr;
  std::optional<SourceRange> memory_factor_at_;  // the op's `retries {memory_factor: F}`
  std::map<std::string, OpInfo> component_sigs_;  // components' signatures, by op name
  std::string wanted_;  // choose(): the pipeline to build
  bool root_ = true;    // the pipeline being checked is the one built (else a callee)
  std::map<std::string, std::vector<ir::Param>, std::less<>> callee_params_;  // by pipeline
  std::map<std::string, std::map<std::string, std::string>> component_variants_;  // op -> key -> name
  SymbolTable* symbols_ = nullptr;  // set by index(): where declarations and uses are recorded
  // index(): the symbol of each op parameter and output, by (kind, op, name)
  std::map<std::tuple<Symbol::Kind, std::string, std::string>, std::size_t> members_;
};

}  // namespace pipec::sema::detail
