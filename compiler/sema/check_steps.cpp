// Steps and the statements around them: each step's op and arguments, `after`, `if`
// and `for` with their scopes, and the dependencies each step gets from what it uses.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/base/spellcheck.hpp"
#include "compiler/sema/checker.hpp"
#include "rules/kubernetes.hpp"

namespace pipec::sema::detail {

// First walk: every step and its scopes, so that references may point forward.
void Checker::collect_steps(const std::vector<ast::Statement>& body, std::vector<int> scopes, bool top) {
  for (const auto& s : body) {
    if (const auto* step = boost::get<ast::StepDecl>(&s.get())) {
      if (symbols_) index_step(*step);
      auto [id, inserted] =
          step_ids_.emplace(step->name.name, static_cast<std::uint32_t>(steps_.size()));
      if (!inserted) {
        diags_.error(step->name.range, fmt::format("duplicate step '{}'", step->name.name));
        diags_.note(steps_[id->second].decl->name.range, "previous declaration here");
        continue;
      }
      if (auto it = params_.find(step->name.name); it != params_.end()) {
        diags_.error(step->name.range,
                     fmt::format("step '{}' has the name of a parameter", step->name.name));
        diags_.note(it->second->name.range, "parameter declared here");
      }
      check_dns_name(step->name, "step", step_dns_);
      StepEntry entry{step, scopes, nullptr};
      if (auto it = program_.ops.find(step->op.name); it != program_.ops.end())
        entry.op = &it->second;
      steps_.push_back(std::move(entry));
    } else if (const auto* f = boost::get<x3::forward_ast<ast::IfStmt>>(&s.get())) {
      auto then_scopes = scopes;
      then_scopes.push_back(next_if_scope(f->get(), false));
      collect_steps(f->get().then_block.statements, then_scopes, false);
      if (f->get().else_block) {
        auto else_scopes = scopes;
        else_scopes.push_back(next_if_scope(f->get(), true));
        collect_steps(f->get().else_block->statements, else_scopes, false);
      }
    } else if (const auto* l = boost::get<x3::forward_ast<ast::ForStmt>>(&s.get())) {
      auto inner = scopes;
      inner.push_back(new_scope(ScopeKind::Loop));
      loop_scopes_[&l->get()] = inner.back();
      scope_loops_[inner.back()] = &l->get();
      collect_steps(l->get().body.statements, inner, false);
    } else if (const auto* fin = boost::get<x3::forward_ast<ast::FinallyStmt>>(&s.get())) {
      if (!top) {
        diags_.error(fin->get().range, "'finally' is only allowed at the top of a pipeline");
        continue;
      }
      if (finally_scope_ < 0) {
        finally_scope_ = new_scope(ScopeKind::Finally);
        collect_steps(fin->get().body.statements, {finally_scope_}, false);
      }
    } else if (!top) {
      if (const auto* d = boost::get<ast::Description>(&s.get()))
        diags_.error(d->range, "'description' is only allowed at the top of a pipeline");
      if (const auto* p = boost::get<x3::forward_ast<ast::ParamDecl>>(&s.get()))
        diags_.error(p->get().range, "'param' is only allowed at the top of a pipeline");
      if (const auto* set = boost::get<x3::forward_ast<ast::SettingsStmt>>(&s.get()))
        diags_.error(set->get().range, "'settings' is only allowed at the top of a pipeline");
      if (const auto* o = boost::get<x3::forward_ast<ast::OutputStmt>>(&s.get()))
        diags_.error(o->get().range,
                     "'output' is only allowed at the top of a pipeline (an output of a step "
                     "inside a 'for' is given there as the list of its values)");
    }
  }
}

int Checker::new_scope(ScopeKind kind) {
  scope_kinds_.push_back(kind);
  return static_cast<int>(scope_kinds_.size() - 1);
}

// Second walk: checks and converts each statement.
std::vector<Stmt> Checker::statements(const std::vector<ast::Statement>& body) {
  std::vector<Stmt> out;
  out.reserve(body.size());
  for (const auto& s : body) {
    if (const auto* step = boost::get<ast::StepDecl>(&s.get())) {
      // Built in place: a Stmt is large, and most statements are steps.
      if (!check_step(*step, out.emplace_back())) out.pop_back();
    } else if (const auto* f = boost::get<x3::forward_ast<ast::IfStmt>>(&s.get())) {
      out.push_back(check_if(f->get()));
    } else if (const auto* l = boost::get<x3::forward_ast<ast::ForStmt>>(&s.get())) {
      out.push_back(check_for(l->get()));
    }
  }
  return out;
}

Stmt Checker::check_if(const ast::IfStmt& s) {
  Stmt out;
  out.kind = Stmt::Kind::If;
  out.range = s.range;
  std::vector<std::uint32_t> uses;
  uses_ = &uses;
  out.condition = condition(s.condition);
  uses_ = nullptr;
  inherited_.push_back(std::move(uses));
  // Scope ids follow the order collect_steps() gave them.
  scope_path_.push_back(next_if_scope(s, false));
  out.then_body = statements(s.then_block.statements);
  scope_path_.pop_back();
  if (s.else_block) {
    scope_path_.push_back(next_if_scope(s, true));
    out.else_body = statements(s.else_block->statements);
    scope_path_.pop_back();
  }
  inherited_.pop_back();
  return out;
}

// If branches get scope ids on first sight, so both walks agree on them.
int Checker::next_if_scope(const ast::IfStmt& s, bool else_branch) {
  auto key = std::make_pair(&s, else_branch);
  auto it = if_scopes_.find(key);
  if (it == if_scopes_.end()) it = if_scopes_.emplace(key, new_scope(ScopeKind::IfBranch)).first;
  return it->second;
}

Stmt Checker::check_for(const ast::ForStmt& s) {
  Stmt out;
  out.kind = Stmt::Kind::For;
  out.range = s.range;
  out.var = s.var.name;
  std::vector<std::uint32_t> uses;
  uses_ = &uses;
  auto items = value(s.items, Context::Arg);
  uses_ = nullptr;
  Type item_type = Type::scalar(TypeKind::String);
  bool items_bad = true;
  if (items) {
    if (items->type.kind != TypeKind::List) {
      diags_.error(items->range,
                   fmt::format("'for' needs a list to go over, got {}", type_str(items->type)));
    } else if (is_open(items->type)) {
      diags_.error(items->range, "'for' over an empty list runs nothing");
    } else if (items->kind == Value::Kind::List) {
      // Argo takes withItems (constants) or withParam (one run-time list), nothing between.
      diags_.error(items->range,
                   "'for' goes over a list of constants, a list parameter or a step's list "
                   "output; this list mixes in run-time values");
    } else {
      item_type = items->type.element[0];
      items_bad = false;
    }
  }
  for (const auto& v : loop_vars_) {
    if (v.name == s.var.name) {
      diags_.error(s.var.range,
                   fmt::format("loop variable '{}' hides the one of an enclosing 'for'", v.name));
      diags_.note(v.range, "declared here");
    }
  }
  if (auto it = params_.find(s.var.name); it != params_.end()) {
    diags_.error(s.var.range,
                 fmt::format("loop variable '{}' has the name of a parameter", s.var.name));
    diags_.note(it->second->name.range, "parameter declared here");
  }
  if (const StepEntry* step = find_step(s.var.name)) {
    diags_.error(s.var.range,
                 fmt::format("loop variable '{}' has the name of a step", s.var.name));
    diags_.note(step->decl->name.range, "step declared here");
  }
  if (s.limit) out.limit = loop_limit(*s.limit);
  loop_tolerance(s, out);
  out.item_type = item_type;
  out.items = std::move(items);
  // Steps in the body depend on what the items use (lowering lifts that to the loop).
  finish_uses(uses);
  out.deps = dep_names(uses);
  loop_vars_.push_back({s.var.name, item_type, s.var.range, items_bad});
  if (symbols_)
    loop_vars_.back().symbol = declare_symbol(Symbol::Kind::LoopVariable, s.var,
                                              items_bad ? "" : type_str(item_type), "", "");
  scope_path_.push_back(loop_scopes_.at(&s));
  inherited_.push_back(std::move(uses));
  out.body = statements(s.body.statements);
  inherited_.pop_back();
  scope_path_.pop_back();
  loop_vars_.pop_back();
  return out;
}

// `limit N`: a literal positive int (Argo's `parallelism` and KFP's
// `parallelismLimit` are numbers in the workflow, fixed before the run starts).
int Checker::loop_limit(const ast::Expression& expr) {
  const ast::Expression& e = strip(expr);
  const auto* n = node<ast::NumberLit>(e);
  auto v = n ? number(*n) : std::nullopt;
  if (n && !v) return 0;  // out of range, reported
  if (!v || !v->literal.is_number_integer()) {
    diags_.error(range_of(e), "a loop's 'limit' must be a literal int: Argo and KFP fix the "
                              "number of iterations run at once before the run starts");
    return 0;
  }
  auto i = v->literal.get<std::int64_t>();
  if (i < 1 || i > 2147483647) {
    diags_.error(range_of(e), fmt::format("a loop's 'limit' must be 1 to 2147483647, got {}", i));
    return 0;
  }
  return static_cast<int>(i);
}

// `max_failures N` (a literal int >= 0) and `min_success R` (a literal number in (0, 1]):
// how many failed items, or what share of succeeded ones, the loop tolerates.
void Checker::loop_tolerance(const ast::ForStmt& s, Stmt& out) {
  if (s.max_failures) {
    const ast::Expression& e = strip(*s.max_failures);
    const auto* n = node<ast::NumberLit>(e);
    auto v = n ? number(*n) : std::nullopt;
    out.tolerance_range = range_of(e);
    if (n && !v) {
      // out of range, reported
    } else if (!v || !v->literal.is_number_integer() || v->literal.get<std::int64_t>() < 0 ||
               v->literal.get<std::int64_t>() > 2147483647) {
      diags_.error(range_of(e), "a loop's 'max_failures' must be a literal int from 0 to 2147483647");
    } else {
      out.max_failures = static_cast<int>(v->literal.get<std::int64_t>());
    }
  }
  if (s.min_success) {
    const ast::Expression& e = strip(*s.min_success);
    const auto* n = node<ast::NumberLit>(e);
    auto v = n ? number(*n) : std::nullopt;
    if (!out.tolerance_range.valid()) out.tolerance_range = range_of(e);
    double r = v && v->literal.is_number() ? v->literal.get<double>() : -1;
    if (n && !v) {
      // out of range, reported
    } else if (!(r > 0 && r <= 1)) {
      diags_.error(range_of(e), "a loop's 'min_success' must be a literal number above 0 and at most 1 "
                                "(the share of items that must succeed, e.g. 0.75)");
    } else {
      out.min_success = r;
    }
  }
}

// Fills `out`; returns false for a duplicate step, which has no statement.
bool Checker::check_step(const ast::StepDecl& s, Stmt& out) {
  // Steps are checked in the order collect_steps() found them, so the next entry is
  // nearly always this one; the name lookup is the fallback (and finds duplicates).
  std::uint32_t id = next_step_;
  if (id >= steps_.size() || steps_[id].decl != &s) {
    auto id_it = step_ids_.find(s.name.name);
    if (id_it == step_ids_.end() || steps_[id_it->second].decl != &s) return false;
    id = id_it->second;
  }
  next_step_ = id + 1;
  StepEntry& entry = steps_[id];
  out.kind = Stmt::Kind::Step;
  out.range = s.name.range;
  out.name = s.name.name;
  out.op = s.op.name;
  const OpInfo* op = entry.op;
  if (symbols_) use_symbol(s.op.range, symbols_->ops, s.op.name);
  // A component's steps are checked against its signature; program_.ops holds the
  // resolved containers (component_variant()).
  if (op && op->component) op = &component_sigs_.at(op->name);
  if (!op) {
    diags_.error(s.op.range, fmt::format("unknown op '{}'", s.op.name));
    std::vector<std::string> names;
    for (const auto& [name, info] : program_.ops) names.push_back(name);
    if (!suggest(s.op.range, s.op.name, names) && program_.ops.count("mpi_job") == 0 &&
        (s.op.name == "mpi_job" || s.op.name == "tf_job" || s.op.name == "pytorch_job" ||
         s.op.name == "train_job"))
      diags_.note(s.op.range, "training ops come from the stdlib: add 'use arena'");
  }
  std::vector<std::uint32_t> uses;
  // Arguments are few, so a vector beats a map here.
  std::vector<std::pair<std::string_view, SourceRange>> given;
  given.reserve(s.args.size());
  auto find_given = [&](std::string_view name) {
    return std::find_if(given.begin(), given.end(),
                        [&](const auto& g) { return g.first == name; });
  };
  std::set<std::string> suggested;  // a misspelt argument is not also reported missing
  out.args.reserve(s.args.size());
  for (const auto& arg : s.args) {
    if (auto it = find_given(arg.name.name); it != given.end()) {
      diags_.error(arg.name.range, fmt::format("duplicate argument '{}'", arg.name.name));
      diags_.note(it->second, "first given here");
      continue;
    }
    given.emplace_back(arg.name.name, arg.name.range);
    uses_ = &uses;
    auto v = value(arg.value, Context::Arg);
    uses_ = nullptr;
    if (!op) continue;
    auto p = std::find_if(op->params.begin(), op->params.end(),
                          [&](const ir::OpParam& q) { return q.name == arg.name.name; });
    if (p == op->params.end()) {
      diags_.error(arg.name.range, fmt::format("unknown argument '{}' for {} '{}'", arg.name.name,
                                               callable_kind(*op), op->name));
      std::vector<std::string> names;
      for (const auto& q : op->params) names.push_back(q.name);
      if (suggest(arg.name.range, arg.name.name, names))
        suggested.insert(spellcheck(arg.name.name, names));
      if (op->kind == ir::OpKind::TrainJob &&
          std::find(rules::kNotInTrainJob.begin(), rules::kNotInTrainJob.end(), arg.name.name) !=
              rules::kNotInTrainJob.end())
        diags_.note(arg.name.range, std::string(rules::kNotInTrainJobWhy));
      diags_.note(op->range, fmt::format("'{}' declared here", op->name));
      continue;
    }
    if (symbols_) use_member(arg.name.range, Symbol::Kind::OpParameter, op->name, arg.name.name);
    if (!v) continue;
    if (!check_assign(*v, p->type, [&] {
          return fmt::format("argument '{}' of {} '{}'", arg.name.name, callable_kind(*op), op->name);
        }))
      continue;
    // A list or map with run-time values in it: only a training op takes one apart (its
    // env, data, ...); a container's argument and a pipeline's parameter are one value.
    if ((v->kind == Value::Kind::List || v->kind == Value::Kind::Map) &&
        (op->kind == ir::OpKind::Container || op->kind == ir::OpKind::Pipeline)) {
      diags_.error(v->range, fmt::format("a list or map built from run-time values cannot be passed to {} '{}'; "
                                         "pass a list parameter or a literal list",
                                         callable_kind(*op), op->name));
      continue;
    }
    // A called pipeline's parameter keeps its constraint (`in 1..64`): a constant argument
    // is checked against it here, as a default is.
    if (auto c = callee_params_.find(op->name); c != callee_params_.end() && v->is_literal())
      for (const auto& param : c->second)
        if (param.name == arg.name.name) check_against(param, v->literal, v->range, "argument");
    out.args.emplace_back(arg.name.name, std::move(*v));
  }
  if (op && op->container) check_bound_fields(*op, out.args);
  if (op && op->kind == ir::OpKind::TrainJob) {
    // The arguments train_job shares with the other training ops, once its own hold.
    std::size_t errors = diags_.error_count();
    check_train_job(out.args);
    if (diags_.error_count() == errors) check_training(*op, out.args, s.name.range);
  }
  if (op && (op->kind == ir::OpKind::MpiJob || op->kind == ir::OpKind::TfJob || op->kind == ir::OpKind::PyTorchJob)) {
    check_training_retries(out.args, op->name);
    check_training(*op, out.args, s.name.range);
  }
  if (op) {
    for (std::size_t i = 0; i < op->params.size(); ++i) {
      const auto& p = op->params[i];
      if (p.default_value || find_given(p.name) != given.end() || suggested.count(p.name))
        continue;
      if (op->component && component::may_leave_out(*op->component, p.name)) continue;
      diags_.error(s.op.range, fmt::format("missing argument '{}' for {} '{}'", p.name,
                                           callable_kind(*op), op->name));
      diags_.note(op->param_ranges[i], fmt::format("'{}' declared here", p.name));
    }
  }
  if (op && op->component) out.op = component_variant(*op, out.args, s.op.range);
  const std::vector<std::uint32_t> reads = uses;  // the steps whose outputs it uses
  for (const auto& item : s.after) {
    const auto& a = item.step;
    const StepEntry* after = find_step(a.name);
    if (!after) {
      diags_.error(a.range, fmt::format("unknown step '{}' in 'after'", a.name));
      if (suggesting()) suggest(a.range, a.name, step_names());
      continue;
    }
    if (symbols_) use_symbol(a.range, symbols_->steps, a.name);
    if (!check_reach(*after, a.range, false)) continue;
    uses.push_back(id_of(*after));
    if (item.outcome) check_upon(item, *after, reads, out);
  }
  if (s.allow_failure) {
    out.allow_failure = true;
    if (!out.policy_range.valid()) out.policy_range = s.allow_failure->range;
  }
  finish_uses(uses);
  out.deps = dep_names(uses);
  entry.first_dep = static_cast<std::uint32_t>(edges_.size());
  entry.dep_count = static_cast<std::uint32_t>(uses.size());
  edges_.insert(edges_.end(), uses.begin(), uses.end());
  return true;
}

// `after a.failed` / `after a.done`: the step runs when `a` failed, or whatever its outcome.
// It cannot read `a`'s outputs (a failed step has none), and `a` is of its own loop or inside
// one of it (a dependency on a step outside the loop would move to the loop).
void Checker::check_upon(const ast::AfterItem& item, const StepEntry& after,
                         const std::vector<std::uint32_t>& reads, Stmt& out) {
  const std::string& word = item.outcome->name;
  const std::string& name = item.step.name;
  if (word != "failed" && word != "done") {
    diags_.error(item.outcome->range, fmt::format("'after {}.{}': a step named in 'after' is followed by "
                                                  "'.failed' (run when it failed) or '.done' (run whatever "
                                                  "its outcome), not '.{}'",
                                                  name, word, word));
    suggest(item.outcome->range, word, {"failed", "done"});
    return;
  }
  if (std::find(reads.begin(), reads.end(), id_of(after)) != reads.end()) {
    diags_.error(item.range, fmt::format("step '{}' runs after '{}' {} and cannot use its outputs "
                                         "(a step that failed has none)",
                                         out.name, name, word == "failed" ? "failed" : "whatever its outcome"));
    return;
  }
  for (int scope : scope_path_) {
    if (scope_kinds_[scope] != ScopeKind::Loop) continue;
    if (std::find(after.scopes.begin(), after.scopes.end(), scope) != after.scopes.end()) continue;
    diags_.error(item.range, fmt::format("'after {}.{}' names a step outside the 'for' loop this step "
                                         "is in: a step may run after a failure of a step of its own "
                                         "loop, or after the whole loop from outside it",
                                         name, word));
    return;
  }
  if (!out.upon.emplace(name, word == "failed" ? ir::Upon::Failed : ir::Upon::Done).second) {
    diags_.error(item.range, fmt::format("step '{}' is named twice in 'after'", name));
    return;
  }
  if (!out.policy_range.valid()) out.policy_range = item.range;
}

// The op a step of a component runs: the component resolved for the arguments given
// (component::instantiate), registered once per resolution: the first under the op's
// name, others under NAME_2, NAME_3, ... (the first name no op has).
std::string Checker::component_variant(const OpInfo& sig,
                                       const std::vector<std::pair<std::string, Value>>& args,
                                       SourceRange call) {
  std::map<std::string, component::Given> given;
  for (const auto& [name, v] : args)
    given[name] = component::Given{true, v.is_literal() ? &v.literal : nullptr};
  std::string key;
  auto container = component::instantiate(*sig.component, given, call, diags_, key);
  if (!container) return sig.name;
  auto& names = component_variants_[sig.name];
  if (auto it = names.find(key); it != names.end()) return it->second;
  std::string name = sig.name;
  if (!names.empty())
    for (int k = 2; program_.ops.count(name = fmt::format("{}_{}", sig.name, k)); ++k) {}
  if (name != sig.name) (void)dns_name_ok(name, call, "op");  // the targets' name of this variant
  names.emplace(key, name);
  OpInfo info = sig;
  info.name = name;
  container->name = name;
  info.params = container->params;
  info.param_ranges.clear();
  std::map<std::string_view, std::size_t> at;  // each parameter's place in sig (not a scan each)
  for (std::size_t i = 0; i < sig.params.size(); ++i) at.emplace(sig.params[i].name, i);
  for (const auto& p : info.params) info.param_ranges.push_back(sig.param_ranges[at.at(p.name)]);
  info.container = std::move(*container);
  program_.ops[name] = std::move(info);
  return name;
}

const char* Checker::callable_kind(const OpInfo& op) {
  return op.kind == ir::OpKind::Pipeline ? "pipeline" : "op";
}

const StepEntry* Checker::find_step(std::string_view name) const {
  auto it = step_ids_.find(name);
  return it == step_ids_.end() ? nullptr : &steps_[it->second];
}

std::uint32_t Checker::id_of(const StepEntry& step) const {
  return static_cast<std::uint32_t>(&step - steps_.data());
}

// Every step name in declaration order, for suggestions.
std::vector<std::string> Checker::step_names() const {
  std::vector<std::string> names;
  names.reserve(steps_.size());
  for (const auto& step : steps_) names.push_back(step.decl->name.name);
  return names;
}

// Adds the uses of the enclosing conditions and loop items to a step's (or loop's)
// own, then sorts them by name without duplicates: the step's dependencies.
void Checker::finish_uses(std::vector<std::uint32_t>& uses) const {
  for (const auto& inherited : inherited_)
    uses.insert(uses.end(), inherited.begin(), inherited.end());
  std::sort(uses.begin(), uses.end(), [&](std::uint32_t a, std::uint32_t b) {
    return steps_[a].decl->name.name < steps_[b].decl->name.name;
  });
  uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
}

std::vector<std::string> Checker::dep_names(const std::vector<std::uint32_t>& uses) const {
  std::vector<std::string> names;
  names.reserve(uses.size());
  for (std::uint32_t id : uses) names.push_back(steps_[id].decl->name.name);
  return names;
}

// Whether the current place may refer to `step`: not into `finally` from outside,
// and (for outputs) not into an `if` branch from outside. Into a loop from outside is
// fan-in: `after` waits for the whole loop, and an output is the list of every
// iteration's value; `loops`, when given, is set to the number of loops crossed.
bool Checker::check_reach(const StepEntry& step, SourceRange at, bool output, int* loops) {
  const auto& name = step.decl->name.name;
  if (loops) *loops = 0;
  for (int scope : step.scopes) {
    if (std::find(scope_path_.begin(), scope_path_.end(), scope) != scope_path_.end()) continue;
    ScopeKind kind = scope_kinds_[scope];
    if (kind == ScopeKind::Loop) {
      if (loops) ++*loops;
      continue;
    }
    if (kind == ScopeKind::Finally) {
      diags_.error(
          at, fmt::format("step '{}' runs in 'finally' and cannot be referred to from outside it",
                          name));
    } else if (output) {
      diags_.error(at,
                   fmt::format("step '{}' runs only in one branch of an 'if'; its outputs cannot "
                               "be used outside that branch",
                               name));
    } else {
      continue;
    }
    diags_.note(step.decl->name.range, fmt::format("'{}' declared here", name));
    return false;
  }
  if (finally_scope_ >= 0 && !scope_path_.empty() && scope_path_[0] == finally_scope_ &&
      (step.scopes.empty() || step.scopes[0] != finally_scope_)) {
    diags_.error(
        at,
        fmt::format("steps in 'finally' cannot refer to step '{}' of the main pipeline", name));
    return false;
  }
  return true;
}

}  // namespace pipec::sema::detail
