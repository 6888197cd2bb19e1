#include "compiler/ir/plan.hpp"
#include "compiler/ir/ir.hpp"  // Value, complete for LauncherCall::inputs

namespace pipec::ir {

Plan::Route Plan::route(DagId dag, std::string_view step) const {
  Route r;
  const Place* p = place(step);
  if (!p) return r;
  std::vector<std::string> path;  // innermost first while climbing
  for (DagId cur = p->dag; cur != kNoDag; cur = dags[cur].parent) {
    if (cur == dag) {
      r.kind = path.empty() ? Route::Kind::Sibling : Route::Kind::FanIn;
      r.through.assign(path.rbegin(), path.rend());
      return r;
    }
    if (dags[cur].owner.empty()) break;
    path.push_back(dags[cur].owner);
  }
  return r;
}

const LauncherCall* Plan::launcher(std::string_view step) const {
  auto it = launchers.find(step);
  return it == launchers.end() ? nullptr : &it->second;
}

const Invocation& Plan::container(std::string_view op) const {
  static const Invocation kNone;
  auto it = containers.find(op);
  return it == containers.end() ? kNone : it->second;
}

const Pod& Plan::pod(std::string_view op) const {
  static const Pod kNone;
  auto it = pods.find(op);
  return it == pods.end() ? kNone : it->second;
}

std::string_view Plan::loop_of_var(DagId dag, std::string_view var) const {
  for (DagId cur = dag; cur != kNoDag && cur < dags.size(); cur = dags[cur].parent)
    if (!dags[cur].owner.empty() && dags[cur].var == var) return dags[cur].owner;
  return {};
}

}  // namespace pipec::ir
