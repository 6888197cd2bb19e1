#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/base/diagnostics.hpp"

namespace pipec::sema {

/// The step graph: each step with the steps it depends on (`after` and output uses).
struct StepGraph {
  std::vector<std::string> order;                           // declaration order
  std::map<std::string, std::vector<std::string>> depends;  // step -> steps it runs after
  std::map<std::string, SourceRange> names;                 // where each step is named
};

/// Reports every cycle once, as `steps form a cycle: a -> b -> a` in the order the
/// steps would run, starting at the step declared first, at that step's name.
/// Iterative, so long chains cannot overflow the stack. Returns false on error.
[[nodiscard]] bool check_graph(const StepGraph& graph, Diagnostics& diags);

}  // namespace pipec::sema
