#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "compiler/base/diagnostics.hpp"

namespace pipec::sema {

/// The step graph: each step with the steps it depends on (`after` and output uses).
/// Steps are numbered in declaration order; edges are indices into `steps`.
struct StepGraph {
  struct Step {
    std::string_view name;
    SourceRange range;             // where the step is named
    std::uint32_t first_dep = 0;   // its edges are deps[first_dep, first_dep + dep_count)
    std::uint32_t dep_count = 0;
  };
  std::vector<Step> steps;           // declaration order
  std::vector<std::uint32_t> deps;   // step -> steps it runs after, in the order to walk them
};

/// Reports every cycle once, as `steps form a cycle: a -> b -> a` in the order the
/// steps would run, starting at the step declared first, at that step's name.
/// Iterative, so long chains cannot overflow the stack. Linear in steps + edges.
/// Returns false on error.
[[nodiscard]] bool check_graph(const StepGraph& graph, Diagnostics& diags);

}  // namespace pipec::sema
