// KFP components as ops: reading a component file (v1 ComponentSpec or v2 pipeline spec,
// component_spec.cpp and component_v2.cpp) and the op's declaration as .pipe source.
#include "compiler/sema/component.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <sstream>

#include "compiler/sema/component_detail.hpp"
#include "compiler/sema/program.hpp"

namespace pipec::sema::component {

namespace {

std::string literal_source(const ir::Literal& l) {
  if (l.is_string()) {
    std::string out = "\"";
    for (char ch : l.get<std::string>()) {
      switch (ch) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '$': out += "\\$"; break;
        case '\r': out += "\\n"; break;
        default: out += ch;
      }
    }
    return out + "\"";
  }
  if (l.is_number_float()) {
    std::string s = l.dump();
    if (s.find_first_of(".eE") == std::string::npos) s += ".0";
    return s;
  }
  return l.dump();
}

void doc_lines(std::string& out, const std::string& doc, const char* indent) {
  std::istringstream in(doc);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string::npos)
    lines.pop_back();
  for (const auto& l : lines) out += fmt::format("{}##{}{}\n", indent, l.empty() ? "" : " ", l);
}

}  // namespace

std::string python_name(const std::string& name) {
  std::string out;
  bool gap = false;
  for (char ch : name) {
    auto u = static_cast<unsigned char>(ch);
    // Python's \w also takes non-ASCII letters; kfp keeps them, an identifier here cannot.
    if (std::isalnum(u)) {
      if (gap && !out.empty()) out += '_';
      gap = false;
      out += static_cast<char>(std::tolower(u));
    } else {
      gap = true;
    }
  }
  if (!out.empty() && std::isdigit(static_cast<unsigned char>(out[0]))) out = "n" + out;
  return out;
}

FileId load_file(SourceManager& sources, const std::string& path, std::string& error) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxFileBytes) {
    error = fmt::format("a component is at most {} bytes, this file has {}", kMaxFileBytes, size);
    return kNoFile;
  }
  return sources.load(path, error);
}

bool may_leave_out(const Component& c, const std::string& param) {
  return std::any_of(c.inputs.begin(), c.inputs.end(), [&](const Input& in) {
    return in.name == param && in.optional && !in.default_value;
  });
}

bool read(const SourceManager& sources, FileId file, Diagnostics& diags, Component& out) {
  detail::YNode root;
  if (!detail::parse_yaml(sources, file, diags, root)) return false;
  // A KFP v2 component is a pipeline spec (deploymentSpec, pipelineInfo); a v1 one is not.
  if (root.get("deploymentSpec") || root.get("pipelineInfo")) return detail::read_v2(root, diags, out);
  if (!detail::read_v1(root, diags, out)) return false;
  detail::finish_v1(out);
  return true;
}

void detail::finish_v1(Component& out) {
  if (out.image.empty() && !out.graph) {
    // The image is given by each step: `image`, or `container_image` when an input has that name.
    auto taken = [&](const std::string& n) {
      return std::any_of(out.inputs.begin(), out.inputs.end(), [&](const Input& in) { return in.name == n; });
    };
    Input image;
    image.name = out.image_param = taken("image") ? "container_image" : "image";
    image.type = ir::Type::scalar(ir::TypeKind::String);
    image.doc = "The container image. The component's own is empty: its authors leave it to be set before use.";
    image.range = out.range;
    out.inputs.push_back(std::move(image));
  }
}

namespace {

// A graph component as .pipe source: a pipeline of its tasks (component.hpp).
std::string graph_declaration(const Component& c) {
  std::string out;
  doc_lines(out, c.doc.empty() && c.kfp_name != c.name ? fmt::format("KFP graph component '{}'.", c.kfp_name) : c.doc, "");
  out += fmt::format("pipeline {}", c.name);
  if (!c.outputs.empty()) {
    out += " -> (";
    for (std::size_t i = 0; i < c.outputs.size(); ++i)
      out += fmt::format("{}{}: {}", i ? ", " : "", c.outputs[i].name, c.outputs[i].type.str());
    out += ")";
  }
  out += " {\n";
  auto input = [&](const Component& of, const std::string& kfp) -> const Input& {
    return *std::find_if(of.inputs.begin(), of.inputs.end(), [&](const Input& i) { return i.kfp_name == kfp; });
  };
  std::map<std::string, const Task*> tasks;
  for (const auto& t : c.tasks) tasks.emplace(t.kfp_name, &t);
  auto task = [&](const std::string& kfp) -> const Task& { return *tasks.at(kfp); };
  auto output_ref = [&](const GraphArg& a) {
    const Task& from = task(a.task);
    const auto& outs = from.component->outputs;
    auto o = std::find_if(outs.begin(), outs.end(), [&](const Output& x) { return x.kfp_name == a.text; });
    return fmt::format("{}.{}", from.name, o->name);
  };
  for (const auto& in : c.inputs) {
    doc_lines(out, in.doc, "  ");
    out += fmt::format("  param {}: {}", in.name, in.type.str());
    if (in.default_value) out += " = " + literal_source(*in.default_value);
    out += "\n";
  }
  auto output_type = [&](const GraphArg& a) {
    const auto& outs = task(a.task).component->outputs;
    return std::find_if(outs.begin(), outs.end(), [&](const Output& x) { return x.kfp_name == a.text; })->type;
  };
  for (const auto& t : c.tasks) {
    // KFP passes a constant or a value output where a file is read as that file: a step of
    // kValueAsFileOp writes it first.
    std::map<std::string, std::string> as_file;
    for (const auto& [kfp, a] : t.args) {
      const Input& to = input(*t.component, kfp);
      if (to.type.kind != ir::TypeKind::File || a.kind == GraphArg::Kind::GraphInput) continue;
      if (a.kind == GraphArg::Kind::TaskOutput && output_type(a).kind == ir::TypeKind::File) continue;
      std::string step = fmt::format("{}_{}_file", t.name, to.name);
      std::string value = a.kind == GraphArg::Kind::Constant ? literal_source(ir::Literal(a.text))
                                                              : fmt::format("\"${{{}}}\"", output_ref(a));
      out += fmt::format("  step {} = {}(value: {})\n", step, kValueAsFileOp, value);
      as_file[kfp] = step + ".file";
    }
    out += fmt::format("  step {} = {}(", t.name, t.component->name);
    bool first = true;
    for (const auto& [kfp, a] : t.args) {
      const Input& to = input(*t.component, kfp);
      out += fmt::format("{}{}: ", first ? "" : ", ", to.name);
      first = false;
      if (auto f = as_file.find(kfp); f != as_file.end()) {
        out += f->second;
        continue;
      }
      switch (a.kind) {
        case GraphArg::Kind::Constant:
          out += literal_source(*detail::constant_literal(a.text, to.type));
          break;
        case GraphArg::Kind::GraphInput: {
          const Input& from = input(c, a.text);
          // KFP passes every value as its text: a number or bool where a string is taken is its text.
          bool as_text = to.type.kind == ir::TypeKind::String && (from.type.kind == ir::TypeKind::Int ||
                                                                  from.type.kind == ir::TypeKind::Float ||
                                                                  from.type.kind == ir::TypeKind::Bool);
          out += as_text ? fmt::format("\"${{{}}}\"", from.name) : from.name;
          break;
        }
        case GraphArg::Kind::TaskOutput:
          out += output_ref(a);
          break;
      }
    }
    out += ")\n";
  }
  for (const auto& [kfp_name, a] : c.output_values) {
    const std::string& kfp = kfp_name;  // a lambda may not capture a structured binding (clang)
    auto o = std::find_if(c.outputs.begin(), c.outputs.end(), [&](const Output& x) { return x.kfp_name == kfp; });
    out += fmt::format("  output {} = {}\n", o->name, output_ref(a));
  }
  out += "}\n";
  return out;
}

}  // namespace

std::string value_as_file_source() {
  return fmt::format(
      "## Writes a value to a file: a KFP graph component passes a constant or a task's value\n"
      "## output to a task that reads the input as a file (docs/language.md).\n"
      "op {}(value: string) -> (file: file) {{\n"
      "  image \"{}\"\n"
      "  command [\"sh\", \"-c\", \"printf '%s' \\\"$1\\\" > /tmp/value\", \"{}\", \"${{value}}\"]\n"
      "  outputs {{file: \"/tmp/value\"}}\n"
      "}}\n",
      kValueAsFileOp, kValueAsFileImage, kValueAsFileOp);
}

std::string declaration(const Component& c) {
  if (c.graph) return graph_declaration(c);
  std::string out;
  std::string doc = c.doc;
  if (!c.kfp_name.empty() && c.kfp_name != c.name)
    doc = doc.empty() ? fmt::format("KFP component '{}'.", c.kfp_name) : doc;
  doc_lines(out, doc, "");
  out += fmt::format("op {}(", c.name);
  bool any = false;
  for (const auto& in : c.inputs) {
    out += any ? "\n" : "\n";
    any = true;
    std::string doc_text = in.doc;
    if (in.optional && !in.default_value)
      doc_text += std::string(doc_text.empty() ? "" : "\n") +
                  "(optional: a step may leave it out)";
    doc_lines(out, doc_text, "  ");
    out += fmt::format("  {}: {}", in.name, in.type.str());
    if (in.default_value) out += " = " + literal_source(*in.default_value);
    out += ",";
  }
  out += any ? "\n)" : ")";
  if (!c.outputs.empty()) {
    out += " -> (";
    for (const auto& o : c.outputs) {
      out += "\n";
      doc_lines(out, o.doc, "  ");
      out += fmt::format("  {}: {},", o.name, o.type.str());
    }
    out += "\n)";
  }
  out += "\n";
  return out;
}

const ir::ContainerOp* container_op(const Program& program, const std::string& name, std::string& why) {
  auto it = program.ops.find(name);
  if (it == program.ops.end()) {
    why = fmt::format("no op '{}' in the program", name);
    return nullptr;
  }
  if (it->second.component) {
    why = fmt::format("op '{}' is a KFP component already (its file is the component)", name);
    return nullptr;
  }
  if (!it->second.container) {
    why = fmt::format("op '{}' is a built-in training op, not a container op", name);
    return nullptr;
  }
  return &*it->second.container;
}

}  // namespace pipec::sema::component
