#pragma once
// `pipec graph`: the step DAG of a checked pipeline as JSON, Graphviz dot, Mermaid, or SVG
// (through Graphviz's `dot`). Loops and conditions are clusters, `finally` apart, training
// steps marked, and an edge says whether it comes from `after` or from a value used.

#include <string>

#include "compiler/ir/ir.hpp"

namespace pipec::tools {

/// A step that calls a pipeline is a node of kind `call` (`op`: the pipeline) holding that
/// pipeline's nodes, whose ids are the call's, '/' and their own (`te/train`).
/// The graph as JSON: {"pipeline", "nodes": [{"id", "task", "kind": step|training|loop|call,
/// "op", "loop", "condition", "finally"}], "edges": [{"from", "to", "kind": after|data}]}.
/// `task` is the node's name in the workflow; `loop` the id of the enclosing loop (or null),
/// `condition` the `if` it runs under (or null). Deterministic.
std::string graph_json(const ir::Pipeline& pipeline);
/// The same as a Graphviz digraph (clusters for loops and conditions).
std::string graph_dot(const ir::Pipeline& pipeline);
/// The same as a Mermaid flowchart (subgraphs for loops and conditions).
std::string graph_mermaid(const ir::Pipeline& pipeline);

}  // namespace pipec::tools
