#pragma once
// Scale budgets checked at build time (issue 16): the limits that otherwise break a big
// pipeline only once it reaches the server, from Argo's, Kubernetes' and KFP's sources.

#include <cstddef>
#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::compile {

struct Budgets {
  std::size_t workflow_bytes = std::size_t{1} << 20;        ///< Argo MAX_WORKFLOW_SIZE (1 MiB)
  std::size_t request_bytes = std::size_t{3} << 20;         ///< a Kubernetes API request (3 MiB)
  std::size_t package_bytes = std::size_t{32} << 20;        ///< KFP's MaxFileLength (32 MiB)
  std::size_t parameter_bytes = 10000;                      ///< KFP's longest parameter value
  std::size_t ui_nodes = 1000;                              ///< KFP's UI draws no graph above
};

/// The nodes (steps and loops) and edges (dependencies) of the pipeline's graph, as the
/// KFP UI and `pipec graph` draw it: a pipeline call's box holds the called pipeline's
/// nodes (a graph component's tasks too), counted once per call (at most SIZE_MAX).
void count_graph(const ir::Pipeline& pipeline, std::size_t& nodes, std::size_t& edges);

/// Reports, at the pipeline's name (or the parameter's), each budget the output exceeds:
/// an error where the server must refuse it (a request over 3 MiB, a package over 32 MiB,
/// a parameter default over 10,000 bytes), a warning where it only may (a workflow over
/// Argo's 1 MiB default, a graph the KFP UI will not draw). `workflow` is the size of the
/// Argo YAML (0 for another target), `package` the bytes written.
/// With `allow_oversize` the errors are warnings too.
void check_budgets(const ir::Pipeline& pipeline, std::size_t workflow, std::size_t package,
                   Diagnostics& diags, const Budgets& budgets = {}, bool allow_oversize = false);

}  // namespace pipec::compile
