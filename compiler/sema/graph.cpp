// check_graph(): cycle detection over the step graph. Expects every edge to be an
// index into `steps` (resolve errors stop checking before this pass).
#include "compiler/sema/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

namespace pipec::sema {

namespace {

class CycleFinder {
 public:
  CycleFinder(const StepGraph& graph, Diagnostics& diags)
      : graph_(graph), diags_(diags), state_(graph.steps.size(), State::New) {}

  bool run() {
    // Depth first over "depends on" edges; the stack holds (step, next edge index).
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;
    const auto count = static_cast<std::uint32_t>(graph_.steps.size());
    for (std::uint32_t start = 0; start < count; ++start) {
      if (state_[start] != State::New) continue;
      stack.push_back({start, 0});
      state_[start] = State::OnStack;
      while (!stack.empty()) {
        auto& [step, next] = stack.back();
        const StepGraph::Step& s = graph_.steps[step];
        if (next == s.dep_count) {
          state_[step] = State::Done;
          stack.pop_back();
          continue;
        }
        std::uint32_t dep = graph_.deps[s.first_dep + next++];
        if (state_[dep] == State::New) {
          state_[dep] = State::OnStack;
          stack.push_back({dep, 0});  // invalidates `step` and `next`
        } else if (state_[dep] == State::OnStack) {
          report(stack, dep);
        }
      }
    }
    return ok_;
  }

 private:
  enum class State : unsigned char { New, OnStack, Done };

  void report(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& stack,
              std::uint32_t dep) {
    std::vector<std::uint32_t> cycle;  // in "depends on" order, from dep to the top of the stack
    auto it = std::find_if(stack.begin(), stack.end(), [&](const auto& e) { return e.first == dep; });
    for (; it != stack.end(); ++it) cycle.push_back(it->first);
    if (reported_.empty()) reported_.assign(graph_.steps.size(), false);
    for (std::uint32_t n : cycle)
      if (reported_[n]) return;
    ok_ = false;
    for (std::uint32_t n : cycle) reported_[n] = true;
    std::reverse(cycle.begin(), cycle.end());  // run order
    // Start at the step declared first, so the message does not depend on the walk.
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::string text;
    for (std::uint32_t n : cycle) {
      text += graph_.steps[n].name;
      text += " -> ";
    }
    text += graph_.steps[cycle.front()].name;
    diags_.error(graph_.steps[cycle.front()].range,
                 fmt::format("steps form a cycle: {}", text));
  }

  const StepGraph& graph_;
  Diagnostics& diags_;
  std::vector<State> state_;
  std::vector<bool> reported_;  // steps of a cycle already reported; sized on the first cycle
  bool ok_ = true;
};

}  // namespace

bool check_graph(const StepGraph& graph, Diagnostics& diags) {
  return CycleFinder(graph, diags).run();
}

}  // namespace pipec::sema
