// lower::lower(): turns a checked sema::Program into the IR. Expects check_program() to
// have succeeded, so names resolve and types fit. Guarantees: every step's args are
// in signature order with defaults filled in; depends are same-scope node names,
// sorted (a dependency on a step outside an enclosing loop moves to that loop, one on
// a step inside a loop of the scope names that loop); `when` is the conjunction of the
// enclosing ifs of the same DAG (else: `not`); loops get unique names "for-<var>[-N]"
// (and "<loop>-limit" for a limit) that no step name takes; `ops` holds the container
// ops some step calls, by name. The pipelines steps call are lowered the same way, once
// each, into `callees` (callees first); loop names are unique across all of them, and
// `ops` holds theirs too. Invents nothing else.
#include "compiler/lower/lower.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "rules/names.hpp"
#include "compiler/lower/plan.hpp"
#include "compiler/sema/program.hpp"

namespace pipec::lower {

using namespace pipec::ir;  // the vocabulary lowering speaks

namespace {

using sema::Stmt;

// What the lowerings of the built pipeline and of the pipelines it calls share: the names
// loops take (each loop has a template of its own, so no two may meet) and the container
// ops some step calls.
struct Shared {
  bool names_collected = false;
  std::unordered_set<std::string> taken;  // dns names of steps and loops, once a loop needs them
  std::set<std::string_view> used_ops;    // in name order
};

// Takes the checked program's step arguments instead of copying them: each step is
// lowered once, and the program is dropped after (compile_program), so a large pipeline's
// values are held once, not twice.
class Lowerer {
 public:
  Lowerer(const sema::Program& program, sema::PipelineDef& def, Shared& shared)
      : program_(program), def_(def), names_collected_(shared.names_collected),
        taken_(shared.taken), used_ops_(shared.used_ops) {}

  Pipeline run() {
    Pipeline p;
    p.name = def_.name;
    p.description = def_.description;
    p.range = def_.range;
    p.params = def_.params;
    p.settings = def_.settings;
    p.outputs = def_.outputs;
    scopes_.emplace_back();  // kTop: no loops around
    place(def_.body, kTop);
    place(def_.finally_body, kTop);
    p.dag = nodes(def_.body, kTop);
    p.exit_handler = nodes(def_.finally_body, kTop);
    return p;
  }

 private:
  // A scope is the list of loops around a place, outermost first; each loop body has
  // its own (loop names are unique), so scopes compare by index.
  using ScopeId = std::uint32_t;
  static constexpr ScopeId kTop = 0;

  void collect_names(const std::vector<Stmt>& body) {
    for (const auto& s : body) {
      if (s.kind == Stmt::Kind::Step) taken_.insert(to_dns1123(s.name));
      collect_names(s.then_body);
      collect_names(s.else_body);
      collect_names(s.body);
    }
  }

  // Gives every loop its name and records, for every step inside a loop, its scope.
  void place(const std::vector<Stmt>& body, ScopeId scope) {
    for (const auto& s : body) {
      switch (s.kind) {
        case Stmt::Kind::Step:
          if (scope != kTop) scope_of_[s.name] = scope;
          break;
        case Stmt::Kind::If:
          place(s.then_body, scope);
          place(s.else_body, scope);
          break;
        case Stmt::Kind::For: {
          if (!names_collected_) {  // only loops need the step names, to avoid them
            collect_names(program_.body);
            collect_names(program_.finally_body);
            for (const auto& callee : program_.callees) {  // their templates, their steps
              taken_.insert(to_dns1123(callee.name));
              collect_names(callee.body);
            }
            names_collected_ = true;
          }
          std::string base = "for-" + to_dns1123(s.var);
          std::string name = base;
          for (int n = 2; taken_.count(name); ++n) name = base + "-" + std::to_string(n);
          taken_.insert(name);
          if (s.limit > 0 || s.max_failures >= 0 || s.min_success > 0) {
            // the name of the template around the loop (its limit, its failure check)
            std::string suffix = s.limit > 0 ? "-limit" : "-outcome";
            std::string limit = name + suffix;
            for (int n = 2; taken_.count(limit); ++n) limit = name + suffix + "-" + std::to_string(n);
            taken_.insert(limit);
            limit_names_[&s] = std::move(limit);
          }
          auto inner = scopes_[scope];
          inner.push_back(name);
          loop_names_[&s] = std::move(name);
          scopes_.push_back(std::move(inner));
          auto inner_id = static_cast<ScopeId>(scopes_.size() - 1);
          loop_scopes_[&s] = inner_id;
          place(s.body, inner_id);
          break;
        }
      }
    }
  }

  ScopeId scope_of(const std::string& step) const {
    if (scope_of_.empty()) return kTop;
    auto it = scope_of_.find(step);
    return it == scope_of_.end() ? kTop : it->second;
  }

  // The node of `scope` that a dependency of a node at `scope` on step `dep` names:
  // `dep` itself at the same level, or the loop of this scope that holds it (fan-in:
  // the loop ends when every iteration has). None for a `dep` outside the scope's
  // loops: the outermost loop inside the common scope carries it (collect_outer_deps).
  const std::string* node_in(ScopeId scope, const std::string& dep) const {
    const auto& here = scopes_[scope];
    const auto& there = scopes_[scope_of(dep)];
    if (there.size() < here.size() || !std::equal(here.begin(), here.end(), there.begin()))
      return nullptr;
    return there.size() == here.size() ? &dep : &there[here.size()];
  }

  std::vector<Node> nodes(std::vector<Stmt>& body, ScopeId scope) {
    std::vector<Node> out;
    out.reserve(body.size());
    std::vector<Condition> when;
    emit(body, scope, when, out);
    return out;
  }

  void emit(std::vector<Stmt>& body, ScopeId scope, std::vector<Condition>& when,
            std::vector<Node>& out) {
    for (auto& s : body) {
      switch (s.kind) {
        case Stmt::Kind::Step:
          // Built in place: a Step is large, and most nodes are steps.
          step(s, scope, when, std::get<Step>(out.emplace_back(std::in_place_type<Step>)));
          break;
        case Stmt::Kind::If: {
          when.push_back(*s.condition);
          emit(s.then_body, scope, when, out);
          when.back() = negate(*s.condition);
          emit(s.else_body, scope, when, out);
          when.pop_back();
          break;
        }
        case Stmt::Kind::For:
          out.emplace_back(loop(s, scope, when));
          break;
      }
    }
  }

  void step(Stmt& s, ScopeId scope, const std::vector<Condition>& when, Step& out) {
    const auto& op = program_.ops.at(s.op);
    out.name = s.name;
    out.op = s.op;
    out.kind = op.kind;
    out.range = s.range;
    // The given arguments, taken and put in signature order in place, defaults filled in
    // where none is given (sema has rejected unknown and repeated names).
    auto& args = out.args;
    args = std::move(s.args);
    std::size_t next = 0;
    for (const auto& p : op.params) {
      auto given = std::find_if(args.begin() + static_cast<std::ptrdiff_t>(next), args.end(),
                                [&](const auto& a) { return a.first == p.name; });
      if (given != args.end()) {
        std::rotate(args.begin() + static_cast<std::ptrdiff_t>(next), given, given + 1);
        ++next;
      } else if (p.default_value) {
        Value v;
        v.kind = Value::Kind::Literal;
        v.type = p.type;
        v.literal = *p.default_value;
        args.emplace(args.begin() + static_cast<std::ptrdiff_t>(next), p.name, std::move(v));
        ++next;
      }
    }
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(next), args.end());
    std::set<std::string> depends;
    for (const auto& dep : s.deps)
      if (const std::string* node = node_in(scope, dep)) depends.insert(*node);
    out.depends.assign(depends.begin(), depends.end());
    // `after a.failed` on a step inside a loop of this scope names that loop: it failed
    // when an iteration did (sema keeps `a` inside the step's loops).
    for (const auto& [dep, upon] : s.upon)
      if (const std::string* node = node_in(scope, dep)) out.upon[*node] = upon;
    out.allow_failure = s.allow_failure;
    out.policy_range = s.policy_range;
    out.when = conjunction(when);
    if (op.kind == OpKind::Container) used_ops_.insert(s.op);
  }

  Loop loop(Stmt& s, ScopeId scope, const std::vector<Condition>& when) {
    Loop out;
    out.name = loop_names_.at(&s);
    out.var = s.var;
    out.limit = s.limit;
    out.max_failures = s.max_failures;
    out.min_success = s.min_success;
    out.tolerance_range = s.tolerance_range;
    if (limit_names_.contains(&s)) out.limit_name = limit_names_.at(&s);
    out.item_type = s.item_type;
    out.items = *s.items;
    out.range = s.range;
    out.when = conjunction(when);
    out.body = nodes(s.body, loop_scopes_.at(&s));
    // The loop depends on what its items use and on what any step inside it uses
    // from this scope.
    std::set<std::string> depends;
    for (const auto& dep : s.deps)
      if (const std::string* node = node_in(scope, dep)) depends.insert(*node);
    collect_outer_deps(s.body, scope, out.name, depends);
    out.depends.assign(depends.begin(), depends.end());
    return out;
  }

  void collect_outer_deps(const std::vector<Stmt>& body, ScopeId scope,
                          const std::string& loop_name, std::set<std::string>& depends) {
    const auto& outer = scopes_[scope];
    for (const auto& s : body) {
      if (s.kind == Stmt::Kind::Step) {
        const auto& loops = scopes_[scope_of(s.name)];
        if (loops.size() <= outer.size() || loops[outer.size()] != loop_name) continue;
        for (const auto& dep : s.deps) {
          // A `dep` at this scope's level, or in another loop of it, is the loop's.
          const std::string* node = node_in(scope, dep);
          if (node && *node != loop_name) depends.insert(*node);
        }
      }
      collect_outer_deps(s.then_body, scope, loop_name, depends);
      collect_outer_deps(s.else_body, scope, loop_name, depends);
      collect_outer_deps(s.body, scope, loop_name, depends);
    }
  }

  static Condition negate(const Condition& c) {
    Condition out;
    out.op = Condition::Op::Not;
    out.range = c.range;
    out.operands.push_back(c);
    return out;
  }

  static std::optional<Condition> conjunction(const std::vector<Condition>& when) {
    if (when.empty()) return std::nullopt;
    Condition acc = when.front();
    for (std::size_t i = 1; i < when.size(); ++i) {
      Condition both;
      both.op = Condition::Op::And;
      both.range = when[i].range;
      both.operands.push_back(std::move(acc));
      both.operands.push_back(when[i]);
      acc = std::move(both);
    }
    return acc;
  }

  const sema::Program& program_;
  sema::PipelineDef& def_;  // its steps' arguments are taken
  bool& names_collected_;
  std::unordered_set<std::string>& taken_;
  std::map<const Stmt*, std::string> loop_names_;
  std::map<const Stmt*, std::string> limit_names_;  // loops with a limit
  std::map<const Stmt*, ScopeId> loop_scopes_;  // the scope of each loop's body
  std::vector<std::vector<std::string>> scopes_;  // by ScopeId: the loops, outermost first
  std::unordered_map<std::string_view, ScopeId> scope_of_;  // steps inside loops only
  std::set<std::string_view>& used_ops_;
};

}  // namespace

std::optional<Pipeline> lower(sema::Program&& program, Diagnostics& diags, const Options& options) {
  // Every error of names and graph (name collisions after sanitising, unknown ops) is
  // already reported by check_program(). What lowering itself finds is where a value
  // stands in a shell-form script (compiler/shell: inside backticks, `$((...))`, a quoted
  // here-document), once for every target.
  const std::size_t errors = diags.error_count();
  Shared shared;
  std::vector<Pipeline> callees;
  callees.reserve(program.callees.size());
  for (auto& def : program.callees) {
    Pipeline callee = Lowerer(program, def, shared).run();
    callee.plan = plan_of(callee, callees, diags, options);
    callees.push_back(std::move(callee));
  }
  Pipeline p = Lowerer(program, program, shared).run();
  p.callees = std::move(callees);
  for (const auto& name : shared.used_ops) {
    const auto& op = program.ops.find(name)->second;
    if (op.container) p.ops.push_back(*op.container);
  }
  p.plan = plan_of(p, diags, options);
  if (diags.error_count() > errors) return std::nullopt;
  return p;
}

}  // namespace pipec::lower
