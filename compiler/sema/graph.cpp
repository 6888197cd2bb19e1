// check_graph(): cycle detection over the step graph. Expects every name in
// `depends` to be in `order` (resolve errors stop checking before this pass).
#include "compiler/sema/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace pipec::sema {

namespace {

class CycleFinder {
 public:
  CycleFinder(const StepGraph& graph, Diagnostics& diags) : graph_(graph), diags_(diags) {
    for (std::size_t i = 0; i < graph.order.size(); ++i) position_[graph.order[i]] = i;
  }

  bool run() {
    std::map<std::string, int> state;  // 0 new, 1 on the stack, 2 done
    static const std::vector<std::string> kNone;
    for (const auto& start : graph_.order) {
      if (state[start] != 0) continue;
      // Depth first over "depends on" edges; the stack holds (step, next edge index).
      std::vector<std::pair<std::string, std::size_t>> stack{{start, 0}};
      state[start] = 1;
      while (!stack.empty()) {
        const std::string name = stack.back().first;
        auto it = graph_.depends.find(name);
        const auto& deps = it == graph_.depends.end() ? kNone : it->second;
        if (stack.back().second == deps.size()) {
          state[name] = 2;
          stack.pop_back();
          continue;
        }
        const std::string dep = deps[stack.back().second++];
        if (state[dep] == 0) {
          state[dep] = 1;
          stack.push_back({dep, 0});
        } else if (state[dep] == 1) {
          report(stack, dep);
        }
      }
    }
    return ok_;
  }

 private:
  void report(const std::vector<std::pair<std::string, std::size_t>>& stack,
              const std::string& dep) {
    std::vector<std::string> cycle;  // in "depends on" order, from dep to the top of the stack
    auto it =
        std::find_if(stack.begin(), stack.end(), [&](const auto& e) { return e.first == dep; });
    for (; it != stack.end(); ++it) cycle.push_back(it->first);
    for (const auto& n : cycle)
      if (reported_.count(n)) return;
    ok_ = false;
    reported_.insert(cycle.begin(), cycle.end());
    std::reverse(cycle.begin(), cycle.end());  // run order
    // Start at the step declared first, so the message does not depend on the walk.
    auto first = std::min_element(cycle.begin(), cycle.end(), [&](const auto& a, const auto& b) {
      return position_.at(a) < position_.at(b);
    });
    std::rotate(cycle.begin(), first, cycle.end());
    std::string text;
    for (const auto& n : cycle) text += n + " -> ";
    text += cycle.front();
    diags_.error(graph_.names.at(cycle.front()), fmt::format("steps form a cycle: {}", text));
  }

  const StepGraph& graph_;
  Diagnostics& diags_;
  std::map<std::string, std::size_t> position_;
  std::set<std::string> reported_;
  bool ok_ = true;
};

}  // namespace

bool check_graph(const StepGraph& graph, Diagnostics& diags) {
  return CycleFinder(graph, diags).run();
}

}  // namespace pipec::sema
