#include "compiler/compile/budgets.hpp"

#include <variant>

#include <fmt/format.h>

namespace pipec::compile {

namespace {

// A size beside a limit: three decimals, so "just over" shows (1.002 MiB over 1 MiB).
std::string mib(std::size_t bytes) { return fmt::format("{:.3f} MiB", static_cast<double>(bytes) / (1 << 20)); }
std::string limit(std::size_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// The nodes and edges the KFP UI draws for a DAG: a node per step and per loop (the
// loop's body drawn inside it), an edge per dependency.
void count(const std::vector<ir::Node>& nodes, std::size_t& n, std::size_t& edges) {
  for (const auto& node : nodes) {
    ++n;
    if (const auto* step = std::get_if<ir::Step>(&node)) {
      edges += step->depends.size();
    } else {
      const auto& loop = std::get<ir::Loop>(node);
      edges += loop.depends.size();
      count(loop.body, n, edges);
    }
  }
}

}  // namespace

void count_graph(const ir::Pipeline& p, std::size_t& nodes, std::size_t& edges) {
  nodes = edges = 0;
  count(p.dag, nodes, edges);
  count(p.exit_handler, nodes, edges);
}

void check_budgets(const ir::Pipeline& p, std::size_t workflow, std::size_t package,
                   Diagnostics& diags, const Budgets& b, bool allow_oversize) {
  auto refused = [&](SourceRange at, std::string message) {
    if (allow_oversize) diags.warning(at, std::move(message) + " (--allow-oversize)");
    else diags.error(at, std::move(message));
  };
  for (const auto& param : p.params) {
    if (!param.default_value) continue;
    std::string text = param.default_value->is_string() ? param.default_value->get<std::string>()
                                                         : param.default_value->dump();
    if (text.size() > b.parameter_bytes)
      refused(param.range, fmt::format("the default of parameter '{}' is {} bytes; KFP refuses "
                                           "parameter values over {} bytes: pass a path or a URL "
                                           "to the data instead",
                                           param.name, text.size(), b.parameter_bytes));
  }
  if (workflow > b.request_bytes) {
    refused(p.range, fmt::format("the workflow is {}; the Kubernetes API refuses a request over "
                                     "{}, so it can never be created: write repeated steps as a "
                                     "'for' loop over a list",
                                     mib(workflow), limit(b.request_bytes)));
  } else if (workflow > b.workflow_bytes) {
    diags.warning(p.range, fmt::format("the workflow is {}; Argo refuses workflows over {} "
                                       "(MAX_WORKFLOW_SIZE) unless its controller offloads them: "
                                       "write repeated steps as a 'for' loop over a list",
                                       mib(workflow), limit(b.workflow_bytes)));
  }
  if (package > b.package_bytes)
    refused(p.range, fmt::format("the package is {}; KFP refuses uploads over {}",
                                     mib(package), limit(b.package_bytes)));
  std::size_t nodes = 0, edges = 0;
  count_graph(p, nodes, edges);
  if (nodes > b.ui_nodes || edges > b.ui_nodes)
    diags.warning(p.range, fmt::format("the pipeline has {} steps and loops and {} dependencies; the "
                                       "KFP UI draws no graph above {} nodes or edges: a 'for' "
                                       "loop is one node however many items it has",
                                       nodes, edges, b.ui_nodes));
}

}  // namespace pipec::compile
