#include "compiler/tools/graph.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rules/names.hpp"

namespace pipec::tools {

namespace {

using OrderedJson = nlohmann::ordered_json;

struct Node {
  std::string id, kind, op, loop, condition;
  std::string task;  // its task's name in the workflow (a called pipeline's: in its template)
  bool in_finally = false;
  int limit = 0;  // a loop's
  /// A box's label: a loop's name and its limit if any; a call's step and pipeline.
  std::string label() const {
    if (kind == "call") return fmt::format("{}: pipeline {}", id, op);
    return limit > 0 ? fmt::format("{} (limit {})", id, limit) : id;
  }
  bool box() const { return kind == "loop" || kind == "call"; }
};
struct Edge {
  std::string from, to, kind;
};
struct Graph {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

std::string value_text(const ir::Value& v) {
  if (v.ref) {
    std::string t = v.ref->name;
    if (!v.ref->field.empty()) t += "." + v.ref->field;
    return t;
  }
  if (v.is_literal()) return v.literal.dump();
  std::string t;
  for (const auto& part : v.parts) t += part.ref ? "${" + part.ref->name + (part.ref->field.empty() ? "" : "." + part.ref->field) + "}" : part.text;
  return "\"" + t + "\"";
}

std::string condition_text(const ir::Condition& c) {
  using Op = ir::Condition::Op;
  auto binary = [&](const char* op) {
    return condition_text(c.operands[0]) + " " + op + " " + condition_text(c.operands[1]);
  };
  switch (c.op) {
    case Op::Leaf: return c.value ? value_text(*c.value) : "";
    case Op::Eq: return binary("==");
    case Op::Ne: return binary("!=");
    case Op::Lt: return binary("<");
    case Op::Le: return binary("<=");
    case Op::Gt: return binary(">");
    case Op::Ge: return binary(">=");
    case Op::And: return "(" + binary("and") + ")";
    case Op::Or: return "(" + binary("or") + ")";
    case Op::Not: return "not " + condition_text(c.operands[0]);
  }
  return "";
}

// The nodes in DAG order, each after the loop that holds it; an edge per dependency, `data`
// when the node reads the other's outputs (directly, or through the loop that holds the
// producer: ir::Plan's reads), `failed` or `done` for `after a.failed` / `after a.done`,
// else `after`. A step that calls a pipeline is a box (kind
// `call`) holding that pipeline's nodes, whose ids start with the call's (`te/train`), so
// two calls of one pipeline draw two boxes.
void walk(const ir::Pipeline& program, const std::vector<ir::Node>& nodes, const std::string& loop,
          bool in_finally, const ir::Plan& plan, const std::string& prefix, Graph& g) {
  for (const auto& node : nodes) {
    Node n;
    n.loop = loop;
    n.in_finally = in_finally;
    const std::vector<std::string>* depends = nullptr;
    const std::map<std::string, ir::Upon>* upon = nullptr;
    const ir::Pipeline* callee = nullptr;
    std::string local;  // the node's name in its DAG
    if (const auto* step = std::get_if<ir::Step>(&node)) {
      local = step->name;
      n.task = to_dns1123(step->name);
      n.kind = step->kind == ir::OpKind::Container  ? "step"
               : step->kind == ir::OpKind::Pipeline ? "call"
                                                    : "training";
      if (step->kind == ir::OpKind::Pipeline) callee = program.callee(step->op);
      n.op = step->op;
      if (step->when) n.condition = condition_text(*step->when);
      depends = &step->depends;
      upon = &step->upon;
    } else {
      const auto& l = std::get<ir::Loop>(node);
      local = l.name;
      n.task = l.name;
      n.kind = "loop";
      n.limit = l.limit;
      if (l.when) n.condition = condition_text(*l.when);
      depends = &l.depends;
    }
    n.id = prefix + local;
    std::set<std::string_view> data;  // the nodes of this DAG it reads from
    if (auto reads = plan.reads.find(local); reads != plan.reads.end())
      for (const auto& r : reads->second)
        data.insert(r.route.kind == ir::Plan::Route::Kind::FanIn ? std::string_view(r.route.through.front())
                                                                  : std::string_view(r.step));
    g.nodes.push_back(n);
    for (const auto& d : *depends) {
      auto u = upon ? upon->find(d) : std::map<std::string, ir::Upon>::const_iterator{};
      const char* kind = upon && u != upon->end() ? (u->second == ir::Upon::Failed ? "failed" : "done")
                         : data.count(d)          ? "data"
                                                  : "after";
      g.edges.push_back({prefix + d, n.id, kind});
    }
    if (const auto* l = std::get_if<ir::Loop>(&node)) walk(program, l->body, n.id, in_finally, plan, prefix, g);
    if (callee) walk(program, callee->dag, n.id, in_finally, callee->plan, n.id + "/", g);
  }
}

Graph build(const ir::Pipeline& p) {
  Graph g;
  walk(p, p.dag, "", false, p.plan, "", g);
  walk(p, p.exit_handler, "", true, p.plan, "", g);
  return g;
}

/// How a drawing language writes the clusters of a graph: a box around the nodes of one
/// condition (or of `finally`), a box around a loop's nodes, a node, a box's end.
struct Drawing {
  std::function<std::string(const std::string& indent, const std::string& label)> open_group;
  std::function<std::string(const std::string& indent, const Node& loop)> open_loop;
  std::function<std::string(const std::string& indent, const Node& node)> node;
  std::string close;
};

// The nodes, each loop's inside its box, and those of one condition in a box of their
// own: the one layout the DOT and Mermaid drawings share.
std::string clusters(const Graph& g, const Drawing& d) {
  std::map<std::string, std::vector<const Node*>> by_loop;
  for (const auto& n : g.nodes) by_loop[n.loop].push_back(&n);
  std::string out;
  std::function<void(const std::string&, int)> emit = [&](const std::string& loop, int depth) {
    std::string indent(2 * depth, ' ');
    std::map<std::string, std::vector<const Node*>> by_condition;
    for (const Node* n : by_loop[loop]) by_condition[n->in_finally ? "\x01finally" : n->condition].push_back(n);
    for (const auto& [cond, list] : by_condition) {
      bool boxed = !cond.empty();
      std::string inner = indent;
      if (boxed) {
        out += d.open_group(indent, cond == "\x01finally" ? "finally" : "if " + cond);
        inner += "  ";
      }
      for (const Node* n : list) {
        if (n->box()) {
          out += d.open_loop(inner, *n);
          emit(n->id, static_cast<int>(inner.size() / 2) + 1);
          out += inner + d.close;
        } else {
          out += d.node(inner, *n);
        }
      }
      if (boxed) out += indent + d.close;
    }
  };
  emit("", 1);
  return out;
}

// A DOT string: a newline in the text is DOT's line break `\n` (not a backslash and an
// 'n', which is what escaping the two characters would show).
std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string graph_json(const ir::Pipeline& p) {
  Graph g = build(p);
  OrderedJson nodes = OrderedJson::array();
  for (const auto& n : g.nodes) {
    OrderedJson j = {{"id", n.id}, {"task", n.task}, {"kind", n.kind}};
    j["op"] = n.op.empty() ? OrderedJson(nullptr) : OrderedJson(n.op);
    j["loop"] = n.loop.empty() ? OrderedJson(nullptr) : OrderedJson(n.loop);
    j["condition"] = n.condition.empty() ? OrderedJson(nullptr) : OrderedJson(n.condition);
    j["finally"] = n.in_finally;
    if (n.kind == "loop") j["limit"] = n.limit > 0 ? OrderedJson(n.limit) : OrderedJson(nullptr);
    nodes.push_back(std::move(j));
  }
  OrderedJson edges = OrderedJson::array();
  for (const auto& e : g.edges) edges.push_back({{"from", e.from}, {"to", e.to}, {"kind", e.kind}});
  OrderedJson out = {{"pipeline", p.name}, {"nodes", std::move(nodes)}, {"edges", std::move(edges)}};
  return out.dump(2) + "\n";
}

std::string graph_dot(const ir::Pipeline& p) {
  Graph g = build(p);
  std::string out = fmt::format("digraph {} {{\n  rankdir=TB;\n  node [shape=box, style=rounded];\n", quote(p.name));
  // Clusters: a loop holds its nodes; a condition groups the nodes that run under it.
  int cluster = 0;
  Drawing dot;
  dot.open_group = [&](const std::string& indent, const std::string& label) {
    return fmt::format("{}subgraph cluster_{} {{\n{}  label={}; style=dashed;\n", indent, cluster++, indent,
                       quote(label));
  };
  dot.open_loop = [&](const std::string& indent, const Node& n) {
    return fmt::format("{}subgraph cluster_{} {{\n{}  label={};\n{}  {} [shape=point];\n", indent, cluster++,
                       indent, quote(n.label()), indent, quote(n.id));
  };
  dot.node = [&](const std::string& indent, const Node& n) {
    return fmt::format("{}{} [label={}{}];\n", indent, quote(n.id), quote(n.id + (n.op.empty() ? "" : "\n" + n.op)),
                       n.kind == "training" ? ", style=\"rounded,bold\", peripheries=2" : "");
  };
  dot.close = "}\n";
  out += clusters(g, dot);
  for (const auto& e : g.edges)
    out += fmt::format("  {} -> {}{};\n", quote(e.from), quote(e.to),
                       e.kind == "after"  ? " [style=dashed]"
                       : e.kind == "data" ? ""
                                          : " [style=dashed, label=" + quote(e.kind) + "]");
  return out + "}\n";
}

// Mermaid labels: quotes are written as its entity #quot;.
std::string mermaid_label(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += "#quot;";
    else out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string graph_mermaid(const ir::Pipeline& p) {
  Graph g = build(p);
  const auto& quote = mermaid_label;
  // A called pipeline's node `te/train` is n_te--train: '/' is no character of a step's name.
  auto id = [](const std::string& name) {
    std::string out = "n_";
    for (std::size_t at = 0, slash; at <= name.size(); at = slash + 1) {
      slash = std::min(name.find('/', at), name.size());
      out += (at ? "--" : "") + to_dns1123(name.substr(at, slash - at));
    }
    return out;
  };
  std::string out = "flowchart TD\n";
  int sub = 0;
  Drawing mermaid;
  mermaid.open_group = [&](const std::string& indent, const std::string& label) {
    return fmt::format("{}subgraph s{}[{}]\n", indent, sub++, quote(label));
  };
  mermaid.open_loop = [&](const std::string& indent, const Node& n) {
    return fmt::format("{}subgraph {}[{}]\n", indent, id(n.id), quote(n.label()));
  };
  mermaid.node = [&](const std::string& indent, const Node& n) {
    std::string label = quote(n.id + (n.op.empty() ? "" : " (" + n.op + ")"));
    bool training = n.kind == "training";
    return fmt::format("{}{}{}{}{}\n", indent, id(n.id), training ? "[[" : "(", label, training ? "]]" : ")");
  };
  mermaid.close = "end\n";
  out += clusters(g, mermaid);
  for (const auto& e : g.edges)
    out += fmt::format("  {} {} {}\n", id(e.from),
                       e.kind == "after" ? "-.->" : e.kind == "data" ? "-->" : "-.->|" + e.kind + "|", id(e.to));
  return out;
}

}  // namespace pipec::tools
