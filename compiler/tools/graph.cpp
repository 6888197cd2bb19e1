#include "compiler/tools/graph.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rules/names.hpp"

namespace pipec::tools {

namespace {

using Json = nlohmann::ordered_json;

struct Node {
  std::string id, kind, op, loop, condition;
  bool in_finally = false;
  int limit = 0;  // a loop's
  /// A loop's label: its name, and its limit if any.
  std::string label() const { return limit > 0 ? fmt::format("{} (limit {})", id, limit) : id; }
};
struct Edge {
  std::string from, to, kind;
};
struct Graph {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

void step_refs(const ir::Value& v, std::set<std::string>& out) {
  if (v.ref && v.ref->kind == ir::Ref::Kind::StepOutput) out.insert(v.ref->name);
  for (const auto& part : v.parts)
    if (part.ref && part.ref->kind == ir::Ref::Kind::StepOutput) out.insert(part.ref->name);
  for (const auto& item : v.items) step_refs(item, out);
  for (const auto& [k, item] : v.entries) step_refs(item, out);
}

void condition_refs(const ir::Condition& c, std::set<std::string>& out) {
  if (c.value) step_refs(*c.value, out);
  for (const auto& o : c.operands) condition_refs(o, out);
}

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

// Each step inside a loop, with the loops around it (fan-in reads it through them).
void enclosing_loops(const std::vector<ir::Node>& nodes, std::vector<std::string>& around,
                     std::map<std::string, std::vector<std::string>>& out) {
  for (const auto& node : nodes) {
    if (const auto* step = std::get_if<ir::Step>(&node)) {
      if (!around.empty()) out[step->name] = around;
    } else {
      const auto& l = std::get<ir::Loop>(node);
      around.push_back(l.name);
      enclosing_loops(l.body, around, out);
      around.pop_back();
    }
  }
}

// The steps whose outputs anything in `nodes` reads (a loop passes what its body reads).
void body_refs(const std::vector<ir::Node>& nodes, std::set<std::string>& out) {
  for (const auto& node : nodes) {
    if (const auto* step = std::get_if<ir::Step>(&node)) {
      for (const auto& [name, value] : step->args) step_refs(value, out);
      if (step->when) condition_refs(*step->when, out);
    } else {
      const auto& l = std::get<ir::Loop>(node);
      if (l.items) step_refs(*l.items, out);
      if (l.when) condition_refs(*l.when, out);
      body_refs(l.body, out);
    }
  }
}

void walk(const std::vector<ir::Node>& nodes, const std::string& loop, bool in_finally,
          const std::map<std::string, std::vector<std::string>>& loops_of, Graph& g) {
  for (const auto& node : nodes) {
    Node n;
    n.loop = loop;
    n.in_finally = in_finally;
    std::set<std::string> data;
    const std::vector<std::string>* depends = nullptr;
    if (const auto* step = std::get_if<ir::Step>(&node)) {
      n.id = step->name;
      n.kind = step->kind == ir::OpKind::Container ? "step" : "training";
      n.op = step->op;
      if (step->when) n.condition = condition_text(*step->when);
      for (const auto& [name, value] : step->args) step_refs(value, data);
      if (step->when) condition_refs(*step->when, data);
      depends = &step->depends;
    } else {
      const auto& l = std::get<ir::Loop>(node);
      n.id = l.name;
      n.kind = "loop";
      n.limit = l.limit;
      if (l.when) n.condition = condition_text(*l.when);
      if (l.items) step_refs(*l.items, data);
      if (l.when) condition_refs(*l.when, data);
      body_refs(l.body, data);
      depends = &l.depends;
    }
    // A step read from inside a loop is read through the loop (fan-in).
    for (const auto& step : std::set<std::string>(data))
      if (auto it = loops_of.find(step); it != loops_of.end()) data.insert(it->second.begin(), it->second.end());
    g.nodes.push_back(n);
    for (const auto& d : *depends) g.edges.push_back({d, n.id, data.count(d) ? "data" : "after"});
    if (const auto* l = std::get_if<ir::Loop>(&node)) walk(l->body, l->name, in_finally, loops_of, g);
  }
}

Graph build(const ir::Pipeline& p) {
  Graph g;
  std::map<std::string, std::vector<std::string>> loops_of;
  std::vector<std::string> around;
  enclosing_loops(p.dag, around, loops_of);
  enclosing_loops(p.exit_handler, around, loops_of);
  walk(p.dag, "", false, loops_of, g);
  walk(p.exit_handler, "", true, loops_of, g);
  return g;
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
  Json nodes = Json::array();
  for (const auto& n : g.nodes) {
    Json j = {{"id", n.id}, {"task", to_dns1123(n.id)}, {"kind", n.kind}};
    j["op"] = n.op.empty() ? Json(nullptr) : Json(n.op);
    j["loop"] = n.loop.empty() ? Json(nullptr) : Json(n.loop);
    j["condition"] = n.condition.empty() ? Json(nullptr) : Json(n.condition);
    j["finally"] = n.in_finally;
    if (n.kind == "loop") j["limit"] = n.limit > 0 ? Json(n.limit) : Json(nullptr);
    nodes.push_back(std::move(j));
  }
  Json edges = Json::array();
  for (const auto& e : g.edges) edges.push_back({{"from", e.from}, {"to", e.to}, {"kind", e.kind}});
  Json out = {{"pipeline", p.name}, {"nodes", std::move(nodes)}, {"edges", std::move(edges)}};
  return out.dump(2) + "\n";
}

std::string graph_dot(const ir::Pipeline& p) {
  Graph g = build(p);
  std::string out = fmt::format("digraph {} {{\n  rankdir=TB;\n  node [shape=box, style=rounded];\n", quote(p.name));
  // Clusters: a loop holds its nodes; a condition groups the nodes that run under it.
  std::map<std::string, std::vector<const Node*>> by_loop;
  for (const auto& n : g.nodes) by_loop[n.loop].push_back(&n);
  int cluster = 0;
  std::function<void(const std::string&, int)> emit = [&](const std::string& loop, int depth) {
    std::string indent(2 * depth, ' ');
    std::map<std::string, std::vector<const Node*>> by_condition;
    for (const Node* n : by_loop[loop]) by_condition[n->in_finally ? "\x01finally" : n->condition].push_back(n);
    for (const auto& [cond, list] : by_condition) {
      bool boxed = !cond.empty();
      std::string inner = indent;
      if (boxed) {
        out += fmt::format("{}subgraph cluster_{} {{\n{}  label={}; style=dashed;\n", indent, cluster++, indent,
                           quote(cond == "\x01finally" ? "finally" : "if " + cond));
        inner += "  ";
      }
      for (const Node* n : list) {
        if (n->kind == "loop") {
          out += fmt::format("{}subgraph cluster_{} {{\n{}  label={};\n", inner, cluster++, inner, quote(n->label()));
          out += fmt::format("{}  {} [shape=point];\n", inner, quote(n->id));
          emit(n->id, static_cast<int>(inner.size() / 2) + 1);
          out += inner + "}\n";
        } else {
          out += fmt::format("{}{} [label={}{}];\n", inner, quote(n->id),
                             quote(n->id + (n->op.empty() ? "" : "\n" + n->op)),
                             n->kind == "training" ? ", style=\"rounded,bold\", peripheries=2" : "");
        }
      }
      if (boxed) out += indent + "}\n";
    }
  };
  emit("", 1);
  for (const auto& e : g.edges)
    out += fmt::format("  {} -> {}{};\n", quote(e.from), quote(e.to), e.kind == "after" ? " [style=dashed]" : "");
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
  auto id = [](const std::string& name) { return "n_" + to_dns1123(name); };
  std::string out = "flowchart TD\n";
  std::map<std::string, std::vector<const Node*>> by_loop;
  for (const auto& n : g.nodes) by_loop[n.loop].push_back(&n);
  int sub = 0;
  std::function<void(const std::string&, int)> emit = [&](const std::string& loop, int depth) {
    std::string indent(2 * depth, ' ');
    std::map<std::string, std::vector<const Node*>> by_condition;
    for (const Node* n : by_loop[loop]) by_condition[n->in_finally ? "\x01finally" : n->condition].push_back(n);
    for (const auto& [cond, list] : by_condition) {
      bool boxed = !cond.empty();
      std::string inner = indent;
      if (boxed) {
        out += fmt::format("{}subgraph s{}[{}]\n", indent, sub++, quote(cond == "\x01finally" ? "finally" : "if " + cond));
        inner += "  ";
      }
      for (const Node* n : list) {
        if (n->kind == "loop") {
          out += fmt::format("{}subgraph {}[{}]\n", inner, id(n->id), quote(n->label()));
          emit(n->id, static_cast<int>(inner.size() / 2) + 1);
          out += inner + "end\n";
        } else {
          std::string label = quote(n->id + (n->op.empty() ? "" : " (" + n->op + ")"));
          out += fmt::format("{}{}{}{}{}\n", inner, id(n->id), n->kind == "training" ? "[[" : "(", label,
                             n->kind == "training" ? "]]" : ")");
        }
      }
      if (boxed) out += indent + "end\n";
    }
  };
  emit("", 1);
  for (const auto& e : g.edges)
    out += fmt::format("  {} {} {}\n", id(e.from), e.kind == "after" ? "-.->" : "-->", id(e.to));
  return out;
}

}  // namespace pipec::tools
