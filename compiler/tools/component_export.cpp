// A container op as a KFP v1 ComponentSpec. Every string is written as a JSON string (YAML
// reads JSON's quoting), so a value's quotes, newlines or braces stay text; placeholders are
// flow maps (`{"inputValue": "n"}`).
#include "compiler/tools/component_export.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include <filesystem>

#include "compiler/compile/compile.hpp"
#include "compiler/shell/shell_script.hpp"
#include "compiler/sema/check.hpp"
#include "compiler/sema/component.hpp"
#include "compiler/sema/op_body.hpp"
#include "compiler/compile/host.hpp"

namespace pipec::tools {

namespace {

using OrderedJson = nlohmann::ordered_json;

// The prologue a wrapped op runs under: places the file inputs where the op reads them
// (not when KFP's path is that place already: `cp` would fail on the same file), exports
// the environment variables whose values are parameters, changes to the working directory,
// runs the command, then copies each output to the path KFP gives (`{outputPath}`),
// creating its folder. An input that cannot be placed or a working directory that cannot
// be made or entered stops it before the command, saying which (exit 1). Its arguments: N
// (FROM TO)*N, N (NAME VALUE)*N, N (TO FROM)*N, DIR, then the command. Paths and values are
// arguments, never script text (printf's format is fixed; they are its operands).
constexpr const char* kPrologue =
    "n=$1; shift\n"
    "while [ \"$n\" -gt 0 ]; do\n"
    "  if ! [ \"$1\" = \"$2\" ] && ! [ \"$1\" -ef \"$2\" ]; then\n"
    "    mkdir -p -- \"$(dirname -- \"$2\")\" && cp -R -- \"$1\" \"$2\" ||\n"
    "      { printf 'pipec: cannot place the input %s at %s\\n' \"$1\" \"$2\" >&2; exit 1; }\n"
    "  fi\n"
    "  shift 2; n=$((n - 1))\n"
    "done\n"
    "n=$1; shift\n"
    "while [ \"$n\" -gt 0 ]; do export \"$1=$2\"; shift 2; n=$((n - 1)); done\n"
    "n=$1; shift; i=0\n"
    "while [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); eval \"pipec_to_$i=\\$1 pipec_from_$i=\\$2\"; shift 2; done\n"
    "if [ -n \"$1\" ]; then\n"
    "  mkdir -p -- \"$1\" && cd -- \"$1\" ||\n"
    "    { printf 'pipec: cannot make or enter the working directory %s\\n' \"$1\" >&2; exit 1; }\n"
    "fi; shift\n"
    "\"$@\"; rc=$?; i=0\n"
    "while [ \"$rc\" -eq 0 ] && [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); eval \"to=\\$pipec_to_$i from=\\$pipec_from_$i\"; "
    "mkdir -p -- \"$(dirname -- \"$to\")\" && cp -- \"$from\" \"$to\" || rc=1; done\n"
    "exit \"$rc\"\n";

std::string kfp_type(const ir::Type& t) {
  switch (t.kind) {
    case ir::TypeKind::Int: return "Integer";
    case ir::TypeKind::Float: return "Float";
    case ir::TypeKind::Bool: return "Boolean";
    case ir::TypeKind::String: return "String";
    case ir::TypeKind::List: return "JsonArray";
    case ir::TypeKind::Map: return "JsonObject";
    case ir::TypeKind::File: return "";  // an artifact, untyped: any file
  }
  return "";
}

class Exporter {
 public:
  Exporter(const ir::ContainerOp& op, Diagnostics& diags) : op_(op), diags_(diags) {}

  bool run(std::string& yaml) {
    unsupported();
    if (!op_.image.is_literal()) {
      error(op_.image.range, "the image of an exported op must be a literal: a KFP v1 component's "
                             "image is fixed text");
    }
    OrderedJson argv = OrderedJson::array();
    OrderedJson args = OrderedJson::array();
    std::vector<std::pair<std::string, OrderedJson>> env_values;  // exported by the prologue
    OrderedJson env = OrderedJson::object();
    if (op_.shell) {
      // The script is pipec's own (compiler/shell): each `${p}` an environment variable that the
      // prologue exports from the parameter's value.
      SourceRange whole = op_.range;
      std::vector<ir::Part> parts = shell::command_parts(op_.command, whole);
      std::vector<std::string> vars;
      auto variable = [&](const ir::Ref& r) {
        if (std::find(vars.begin(), vars.end(), r.name) == vars.end()) vars.push_back(r.name);
        return shell::script_variable(r.name);
      };
      std::string script;
      if (!shell::write_script(parts, variable, whole, script, diags_)) ok_ = false;
      for (const auto& v : vars) env_values.emplace_back(shell::script_variable(v), ref_word(v));
      argv = OrderedJson::array({"sh", "-c", script, op_.name});
      for (const auto& a : op_.args) argv.push_back(word(a));
    } else {
      for (const auto& w : op_.command) argv.push_back(word(w));
      for (const auto& w : op_.args) args.push_back(word(w));
    }
    for (const auto& [name, value] : op_.env) {
      if (value.is_literal()) env[name] = ir::literal_text(value.literal);
      else env_values.emplace_back(name, word(value));
    }

    OrderedJson files = OrderedJson::array();
    for (const auto& p : op_.params)
      if (p.type.kind == ir::TypeKind::File) {
        files.push_back({{"inputPath", p.name}});
        files.push_back(p.path);
      }
    bool wrap = !files.empty() || !env_values.empty() || !op_.outputs.empty() || !op_.working_dir.empty();
    if (wrap) {
      if (op_.command.empty()) {
        error(op_.range, "an op with file parameters, outputs, a working_dir or an environment variable "
                         "from a value needs a `command` to be exported (the files are placed and the "
                         "outputs copied around it)");
      }
      OrderedJson wrapped = OrderedJson::array({"sh", "-c", kPrologue, "pipec-component"});
      wrapped.push_back(std::to_string(files.size() / 2));
      for (auto& f : files) wrapped.push_back(std::move(f));
      wrapped.push_back(std::to_string(env_values.size()));
      for (auto& [name, value] : env_values) {
        wrapped.push_back(name);
        wrapped.push_back(std::move(value));
      }
      wrapped.push_back(std::to_string(op_.outputs.size()));
      for (const auto& out : op_.outputs) {
        wrapped.push_back({{"outputPath", out.name}});
        wrapped.push_back(out.path);
      }
      wrapped.push_back(op_.working_dir);
      for (auto& w : argv) wrapped.push_back(std::move(w));
      argv = std::move(wrapped);
    }
    if (!ok_) return false;

    yaml = "name: " + q(op_.name) + "\n";
    if (!op_.doc.empty()) yaml += "description: " + q(op_.doc) + "\n";
    if (!op_.params.empty()) {
      yaml += "inputs:\n";
      for (const auto& p : op_.params) {
        OrderedJson in = {{"name", p.name}};
        if (auto t = kfp_type(p.type); !t.empty()) in["type"] = t;
        if (p.default_value) {
          in["default"] = ir::literal_text(*p.default_value);
          in["optional"] = true;
        }
        if (!p.doc.empty()) in["description"] = p.doc;
        yaml += "- " + in.dump() + "\n";
      }
    }
    if (!op_.outputs.empty()) {
      yaml += "outputs:\n";
      for (const auto& o : op_.outputs) {
        OrderedJson out = {{"name", o.name}};
        if (auto t = kfp_type(o.type); !t.empty()) out["type"] = t;
        if (!o.doc.empty()) out["description"] = o.doc;
        yaml += "- " + out.dump() + "\n";
      }
    }
    yaml += "implementation:\n  container:\n";
    yaml += "    image: " + q(ir::literal_text(op_.image.literal)) + "\n";
    auto list = [&](const char* key, const OrderedJson& items) {
      if (items.empty()) return;
      yaml += fmt::format("    {}:\n", key);
      for (const auto& item : items) yaml += "    - " + item.dump() + "\n";
    };
    list("command", argv);
    list("args", args);
    if (!env.empty()) {
      yaml += "    env:\n";
      for (const auto& [k, v] : env.items()) yaml += "      " + q(k) + ": " + v.dump() + "\n";
    }
    return true;
  }

 private:
  static std::string q(const std::string& s) { return OrderedJson(s).dump(); }

  void error(SourceRange at, std::string message) {
    diags_.error(at, std::move(message));
    ok_ = false;
  }

  const ir::OpParam* param(const std::string& name) const {
    auto it = std::find_if(op_.params.begin(), op_.params.end(),
                           [&](const ir::OpParam& p) { return p.name == name; });
    return it == op_.params.end() ? nullptr : &*it;
  }

  // `${p}`: the value (inputValue), or for a file the path the prologue places it at.
  OrderedJson ref_word(const std::string& name) const {
    const ir::OpParam* p = param(name);
    if (p && p->type.kind == ir::TypeKind::File) return p->path;
    return OrderedJson{{"inputValue", name}};
  }

  OrderedJson word(const ir::Value& v) {
    switch (v.kind) {
      case ir::Value::Kind::Literal: return ir::literal_text(v.literal);
      case ir::Value::Kind::Ref: return ref_word(v.ref->name);
      case ir::Value::Kind::Interpolation: {
        OrderedJson items = OrderedJson::array();
        for (const auto& part : v.parts)
          if (part.ref || !part.text.empty())
            items.push_back(part.ref ? ref_word(part.ref->name) : OrderedJson(part.text));
        if (items.size() == 1) return items.front();  // `"${n}"`: the value itself
        return OrderedJson{{"concat", std::move(items)}};
      }
      default:
        error(v.range, "a list or map built from values cannot be a word of an exported command");
        return "";
    }
  }

  // What a KFP v1 ComponentSpec has no field for: said, not dropped in silence.
  void unsupported() {
    for (const auto& f : sema::op_body_fields())
      if (!f.exported && f.is_set(op_))
        diags_.warning(op_.range, fmt::format("'{}' is not exported: a KFP v1 component has no such "
                                              "field (set it on the KFP task)",
                                              f.name));
  }

  const ir::ContainerOp& op_;
  Diagnostics& diags_;
  bool ok_ = true;
};

}  // namespace

bool export_component(const ir::ContainerOp& op, std::string& yaml, Diagnostics& diags) {
  return Exporter(op, diags).run(yaml);
}

bool export_component_of(SourceManager& sources, const std::string& file, const std::string& op,
                         std::string& yaml, Diagnostics& diags) {
  FileId main = compile::load_input(sources, file, diags);
  if (main == kNoFile) return false;
  // A file of ops alone declares no pipeline: it is checked as a pipeline that uses it would
  // check it (its ops, as `use` loads them).
  Diagnostics first;
  auto program = sema::check_program(sources, main, first, compile::machine_host());
  bool library = !program && first.error_count() == 1 &&
                 first.all().front().message.find("declares no pipeline") != std::string::npos;
  if (library && file != "-") {
    // A pipeline beside the file that uses it: diagnostics name the file as it was given.
    std::filesystem::path path(file);
    std::string text = "use " + nlohmann::json(path.filename().string()).dump() + "\npipeline component_export {}\n";
    std::string name = (path.parent_path() / "<component export>").string();
    program = sema::check_program(sources, sources.add(name, text), diags, compile::machine_host());
  } else {
    for (const auto& d : first.all()) diags.add(d);
  }
  if (!program) return false;
  std::string why;
  const ir::ContainerOp* container = sema::component::container_op(*program, op, why);
  if (!container) {
    diags.error(SourceRange{main, 0, 0}, why);
    return false;
  }
  return export_component(*container, yaml, diags);
}

}  // namespace pipec::tools
