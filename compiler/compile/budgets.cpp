#include "compiler/compile/budgets.hpp"

#include <cstdint>
#include <map>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace pipec::compile {

namespace {

// A size beside a limit: three decimals, so "just over" shows (1.002 MiB over 1 MiB).
std::string mib(std::size_t bytes) { return fmt::format("{:.3f} MiB", static_cast<double>(bytes) / (1 << 20)); }
std::string limit(std::size_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// a + b, at most SIZE_MAX: calls of calls may double what is drawn at each level.
std::size_t add(std::size_t a, std::size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

// The nodes and edges drawn for a DAG: a node per step and per loop (the loop's body drawn
// inside it), an edge per dependency; a step that calls a pipeline is a box holding that
// pipeline's nodes and edges, drawn once per call (as `pipec graph` draws it). Each called
// pipeline is counted once (`drawn`, by name) and its figures added per call: linear in the
// program, however many nodes the calls of calls make.
struct Counter {
  const ir::Pipeline& program;
  std::map<std::string, std::pair<std::size_t, std::size_t>, std::less<>> drawn;  // nodes, edges

  void count(const std::vector<ir::Node>& nodes, std::size_t& n, std::size_t& edges) {
    for (const auto& node : nodes) {
      n = add(n, 1);
      if (const auto* step = std::get_if<ir::Step>(&node)) {
        edges = add(edges, step->depends.size());
        if (step->kind != ir::OpKind::Pipeline) continue;
        auto [inner_nodes, inner_edges] = callee(step->op);
        n = add(n, inner_nodes);
        edges = add(edges, inner_edges);
      } else {
        const auto& loop = std::get<ir::Loop>(node);
        edges = add(edges, loop.depends.size());
        count(loop.body, n, edges);
      }
    }
  }

  std::pair<std::size_t, std::size_t> callee(const std::string& name) {
    if (auto it = drawn.find(name); it != drawn.end()) return it->second;
    std::pair<std::size_t, std::size_t> figures{0, 0};
    if (const ir::Pipeline* p = program.callee(name)) count(p->dag, figures.first, figures.second);
    drawn.emplace(name, figures);
    return figures;
  }
};

}  // namespace

void count_graph(const ir::Pipeline& p, std::size_t& nodes, std::size_t& edges) {
  nodes = edges = 0;
  Counter counter{p, {}};
  counter.count(p.dag, nodes, edges);
  counter.count(p.exit_handler, nodes, edges);
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
