// ir::lower(): turns a checked sema::Program into the IR. Expects check_program() to
// have succeeded, so names resolve and types fit. Guarantees: every step's args are
// in signature order with defaults filled in; depends are same-scope node names,
// sorted (a dependency on a step outside an enclosing loop moves to that loop);
// `when` is the conjunction of the enclosing ifs of the same DAG (else: `not`);
// loops get unique names "for-<var>[-N]" that no step name takes; `ops` holds the
// container ops some step calls, by name. Invents nothing else.
#include "compiler/ir/lower.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/base/names.hpp"
#include "compiler/sema/program.hpp"

namespace pipec::ir {

namespace {

using sema::Stmt;

class Lowerer {
 public:
  explicit Lowerer(const sema::Program& program) : program_(program) {}

  Pipeline run() {
    Pipeline p;
    p.name = program_.name;
    p.description = program_.description;
    p.range = program_.range;
    p.params = program_.params;
    collect_names(program_.body);
    collect_names(program_.finally_body);
    place(program_.body, {});
    place(program_.finally_body, {});
    p.dag = nodes(program_.body, {});
    p.exit_handler = nodes(program_.finally_body, {});
    for (const auto& name : used_ops_) {
      const auto& op = program_.ops.at(name);
      if (op.container) p.ops.push_back(*op.container);
    }
    return p;
  }

 private:
  void collect_names(const std::vector<Stmt>& body) {
    for (const auto& s : body) {
      if (s.kind == Stmt::Kind::Step) taken_.insert(to_dns1123(s.name));
      collect_names(s.then_body);
      collect_names(s.else_body);
      collect_names(s.body);
    }
  }

  // Gives every loop its name and records, for every step, the loops around it.
  void place(const std::vector<Stmt>& body, const std::vector<std::string>& loops) {
    for (const auto& s : body) {
      switch (s.kind) {
        case Stmt::Kind::Step:
          loops_of_[s.name] = loops;
          break;
        case Stmt::Kind::If:
          place(s.then_body, loops);
          place(s.else_body, loops);
          break;
        case Stmt::Kind::For: {
          std::string base = "for-" + to_dns1123(s.var);
          std::string name = base;
          for (int n = 2; taken_.count(name); ++n) name = base + "-" + std::to_string(n);
          taken_.insert(name);
          loop_names_[&s] = name;
          auto inner = loops;
          inner.push_back(name);
          place(s.body, inner);
          break;
        }
      }
    }
  }

  // The node of the DAG at `scope` (loops around it) that a dependency of a node
  // inside, at `inner`, on step `dep` lands on: `dep` itself at the same level,
  // nothing if `dep` is inside the scope's own loops (the loop body handles it).
  struct Lifted {
    bool here = false;    // the dependency belongs to the node itself
    std::string carrier;  // otherwise: the loop directly inside `scope` that carries it
  };

  Lifted lift(const std::vector<std::string>& scope, const std::string& dep) const {
    const auto& dep_loops = loops_of_.at(dep);
    Lifted out;
    if (dep_loops == scope) {
      out.here = true;
    } else if (dep_loops.size() < scope.size()) {
      out.carrier = scope[dep_loops.size()];
    }
    return out;
  }

  std::vector<Node> nodes(const std::vector<Stmt>& body, const std::vector<std::string>& scope) {
    std::vector<Node> out;
    std::vector<Condition> when;
    emit(body, scope, when, out);
    return out;
  }

  void emit(const std::vector<Stmt>& body, const std::vector<std::string>& scope,
            std::vector<Condition>& when, std::vector<Node>& out) {
    for (const auto& s : body) {
      switch (s.kind) {
        case Stmt::Kind::Step:
          out.emplace_back(step(s, scope, when));
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

  Step step(const Stmt& s, const std::vector<std::string>& scope,
            const std::vector<Condition>& when) {
    const auto& op = program_.ops.at(s.op);
    Step out;
    out.name = s.name;
    out.op = s.op;
    out.kind = op.kind;
    out.range = s.range;
    out.outputs = op.outputs;
    for (const auto& p : op.params) {
      auto given = std::find_if(s.args.begin(), s.args.end(),
                                [&](const auto& a) { return a.first == p.name; });
      if (given != s.args.end()) {
        out.args.emplace_back(p.name, given->second);
      } else if (p.default_value) {
        Value v;
        v.kind = Value::Kind::Literal;
        v.type = p.type;
        v.literal = *p.default_value;
        out.args.emplace_back(p.name, std::move(v));
      }
    }
    std::set<std::string> depends;
    for (const auto& dep : s.deps)
      if (lift(scope, dep).here) depends.insert(dep);
    out.depends.assign(depends.begin(), depends.end());
    out.when = conjunction(when);
    if (op.kind == OpKind::Container) used_ops_.insert(s.op);
    return out;
  }

  Loop loop(const Stmt& s, const std::vector<std::string>& scope,
            const std::vector<Condition>& when) {
    Loop out;
    out.name = loop_names_.at(&s);
    out.var = s.var;
    out.item_type = s.item_type;
    out.items = *s.items;
    out.range = s.range;
    out.when = conjunction(when);
    auto inner = scope;
    inner.push_back(out.name);
    out.body = nodes(s.body, inner);
    // The loop depends on what its items use and on what any step inside it uses
    // from this scope.
    std::set<std::string> depends;
    for (const auto& dep : s.deps)
      if (lift(scope, dep).here) depends.insert(dep);
    collect_outer_deps(s.body, scope, out.name, depends);
    out.depends.assign(depends.begin(), depends.end());
    return out;
  }

  void collect_outer_deps(const std::vector<Stmt>& body, const std::vector<std::string>& scope,
                          const std::string& loop_name, std::set<std::string>& depends) {
    for (const auto& s : body) {
      if (s.kind == Stmt::Kind::Step) {
        const auto& loops = loops_of_.at(s.name);
        for (const auto& dep : s.deps) {
          if (loops_of_.at(dep) != scope) continue;
          // `dep` is at this scope's level; the loop carries it only if the step is inside it.
          if (loops.size() > scope.size() && loops[scope.size()] == loop_name) depends.insert(dep);
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
  std::set<std::string> taken_;
  std::map<const Stmt*, std::string> loop_names_;
  std::map<std::string, std::vector<std::string>> loops_of_;
  std::set<std::string> used_ops_;
};

}  // namespace

std::optional<Pipeline> lower(const sema::Program& program, Diagnostics& /*diags*/) {
  // Every error lowering could find (name collisions after sanitising, unknown ops)
  // is already reported by check_program(), so lowering itself cannot fail.
  return Lowerer(program).run();
}

}  // namespace pipec::ir
