// plan_of(): the graph decisions of ir/plan.hpp, made once for every back end.
#include "compiler/lower/plan.hpp"
#include "compiler/training/launcher_call.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace pipec::lower {

using namespace pipec::ir;  // the vocabulary lowering speaks

namespace {

class Planner {
 public:
  Planner(const Pipeline& p, const std::vector<Pipeline>& callees) : p_(p), callees_(callees) {}

  Plan run() {
    plan_.dags.resize(2);  // kMain, kFinally
    dag_nodes_.resize(2);
    // Sized once: rehashing tables of every step's name is a pass over all of them.
    std::size_t n = count(p_.dag) + count(p_.exit_handler);
    plan_.places.reserve(n);
    plan_.reads.reserve(n);
    steps_.reserve(n);
    place(p_.dag, Plan::kMain);
    place(p_.exit_handler, Plan::kFinally);
    for (Plan::DagId d = 0; d < plan_.dags.size(); ++d) read(d);
    // A called pipeline's outputs are read at the top of its DAG, as a step there would.
    for (const auto& out : p_.outputs) {
      Plan::Route route = plan_.route(Plan::kMain, out.ref.name);
      export_through(out.ref, route);
      plan_.outputs.push_back({out.ref.name, out.ref.field, std::move(route)});
    }
    return std::move(plan_);
  }

 private:
  static std::size_t count(const std::vector<Node>& nodes) {
    std::size_t n = nodes.size();
    for (const auto& node : nodes)
      if (const auto* l = std::get_if<Loop>(&node)) n += count(l->body);
    return n;
  }

  void place(const std::vector<Node>& nodes, Plan::DagId dag) {
    for (const auto& node : nodes) {
      dag_nodes_[dag].push_back(&node);
      if (const auto* s = std::get_if<Step>(&node)) {
        plan_.dags[dag].nodes.push_back(s->name);
        plan_.places[s->name] = {dag, Plan::kNoDag, false, static_cast<bool>(s->when)};
        if (!s->upon.empty()) plan_.dags[dag].outcomes = true;
        steps_[s->name] = s;
        continue;
      }
      const auto& l = std::get<Loop>(node);
      auto body = static_cast<Plan::DagId>(plan_.dags.size());
      plan_.dags.push_back({l.name, l.var, dag, {}, false});
      dag_nodes_.emplace_back();
      plan_.dags[dag].nodes.push_back(l.name);
      plan_.places[l.name] = {dag, body, true, static_cast<bool>(l.when)};
      place(l.body, body);
    }
  }

  // The reads of every node of `dag`, and the exports of the loops they read through.
  void read(Plan::DagId dag) {
    for (const Node* node : dag_nodes_[dag]) {
      const auto* step = std::get_if<Step>(node);
      const std::string& name = step ? step->name : std::get<Loop>(*node).name;
      std::vector<Plan::Read> reads;
      std::set<std::pair<std::string, std::string>> seen;
      auto add = [&](const Ref& r) {
        if (r.kind != Ref::Kind::StepOutput || !seen.emplace(r.name, r.field).second) return;
        Plan::Route route = plan_.route(dag, r.name);
        // Inside a loop's body, its own steps: no read of the loop.
        if (route.kind == Plan::Route::Kind::FanIn && route.through.front() == name) return;
        export_through(r, route);
        reads.push_back({r.name, r.field, std::move(route)});
      };
      if (step) {
        for (const auto& [arg, value] : step->args) for_each_ref(value, add);
        if (step->when) for_each_ref(*step->when, add);
      } else {
        const Loop& l = std::get<Loop>(*node);
        for_each_ref(*l.items, add);
        if (l.when) for_each_ref(*l.when, add);
        body_refs(l.body, add);
      }
      if (!reads.empty()) plan_.reads[name] = std::move(reads);
    }
  }

  template <typename F>
  void body_refs(const std::vector<Node>& nodes, F& add) {
    for (const auto& node : nodes) {
      if (const auto* s = std::get_if<Step>(&node)) {
        for (const auto& [arg, value] : s->args) for_each_ref(value, add);
        if (s->when) for_each_ref(*s->when, add);
      } else {
        const auto& l = std::get<Loop>(node);
        for_each_ref(*l.items, add);
        if (l.when) for_each_ref(*l.when, add);
        body_refs(l.body, add);
      }
    }
  }

  // A value read through loops L1..Lk (outermost first): each Li gives it out of its body
  // as a list per loop from Li inward.
  void export_through(const Ref& r, const Plan::Route& route) {
    if (route.kind != Plan::Route::Kind::FanIn) return;
    Type base = r.type;
    if (auto s = steps_.find(r.name); s != steps_.end()) {
      for (const auto& op : p_.ops)
        if (op.name == s->second->op)
          for (const auto& out : op.outputs)
            if (out.name == r.field) base = out.type;
      for (const auto& callee : callees_)
        if (s->second->kind == OpKind::Pipeline && callee.name == s->second->op)
          for (const auto& out : callee.outputs)
            if (out.name == r.field) base = out.type;
    }
    for (std::size_t i = 0; i < route.through.size(); ++i) {
      auto& list = plan_.exports[route.through[i]];
      auto at = std::lower_bound(list.begin(), list.end(), std::make_pair(r.name, r.field),
                                 [](const Plan::Export& e, const std::pair<std::string, std::string>& k) {
                                   return std::tie(e.step, e.field) < std::tie(k.first, k.second);
                                 });
      if (at != list.end() && at->step == r.name && at->field == r.field) continue;
      Type t = base;
      for (std::size_t n = i; n < route.through.size(); ++n) t = Type::list_of(std::move(t));
      list.insert(at, {r.name, r.field, std::move(t)});
    }
  }

  const Pipeline& p_;
  const std::vector<Pipeline>& callees_;
  Plan plan_;
  NameMap<const Step*> steps_;
  std::vector<std::vector<const Node*>> dag_nodes_;  // beside plan_.dags: each DAG's nodes, as its `nodes` names them
};

}  // namespace

namespace {

// The launcher call of each training step of `nodes` (loop bodies too), its manifest's
// defaults from the pipeline's parameters.
void launchers_of(const std::vector<Node>& nodes, const training::JobOptions& job, Plan& plan, Diagnostics& diags) {
  for (const auto& node : nodes) {
    if (const auto* l = std::get_if<Loop>(&node)) {
      launchers_of(l->body, job, plan, diags);
      continue;
    }
    const auto& step = std::get<Step>(node);
    if (step.kind == OpKind::Container || step.kind == OpKind::Pipeline) continue;
    LauncherCall call;
    if (training::build_launcher_call(step, job, call, diags)) plan.launchers.emplace(step.name, std::move(call));
  }
}

}  // namespace

Plan plan_of(const Pipeline& pipeline, Diagnostics& diags, const Options& options) {
  return plan_of(pipeline, pipeline.callees, diags, options);
}

Plan plan_of(const Pipeline& pipeline, const std::vector<Pipeline>& callees, Diagnostics& diags,
             const Options& options) {
  Plan plan = Planner(pipeline, callees).run();
  for (const auto& op : pipeline.ops) {
    plan.containers.emplace(op.name, invocation_of(op, diags));
    plan.pods.emplace(op.name, pod_of(op));
  }
  training::JobOptions job;
  job.mpi_v1 = options.mpi_v1;
  job.default_runtime = options.training_runtime;
  job.params = &pipeline.params;
  launchers_of(pipeline.dag, job, plan, diags);
  launchers_of(pipeline.exit_handler, job, plan, diags);
  return plan;
}

}  // namespace pipec::lower
