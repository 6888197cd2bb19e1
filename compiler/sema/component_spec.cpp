// Reading a KFP v1 ComponentSpec (what kfp.components.load_component_from_file reads). The
// rules follow kfp 1.8.22's sdk/python/kfp/components (_structures.py, _naming.py).
#include "compiler/sema/component_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <set>

#include "compiler/syntax/lexer.hpp"
#include "rules/names.hpp"

namespace pipec::sema::component::detail {

using ir::Type;
using ir::TypeKind;

// The pipec type of a KFP input type (docs/language.md "KFP components as ops").
Type input_type(const std::string& kfp) {
  std::string t = lower(kfp);
  if (t == "integer" || t == "int") return Type::scalar(TypeKind::Int);
  if (t == "float" || t == "double") return Type::scalar(TypeKind::Float);
  if (t == "bool" || t == "boolean") return Type::scalar(TypeKind::Bool);
  return Type::scalar(TypeKind::String);
}

// Outputs: a value for the types that name one (so a consumer can use it in a `${...}`,
// a condition or a parameter), else a file (artifacts: models, data sets, untyped files).
Type output_type(const std::string& kfp) {
  std::string t = lower(kfp);
  if (t == "integer" || t == "int") return Type::scalar(TypeKind::Int);
  if (t == "float" || t == "double") return Type::scalar(TypeKind::Float);
  if (t == "bool" || t == "boolean") return Type::scalar(TypeKind::Bool);
  static const std::set<std::string> text = {"string", "str", "text", "jsonobject",
                                             "jsonarray", "dict", "list", "gcspath", "uri",
                                             "gcsuri", "bigqueryuri"};
  if (text.count(t)) return Type::scalar(TypeKind::String);
  return Type::scalar(TypeKind::File);
}

std::string sanitize_file_name(const std::string& name) {
  std::string out;
  bool in_run = false;
  for (char ch : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
    if (ok) {
      out += ch;
      in_run = false;
    } else if (!in_run) {
      out += '_';
      in_run = true;
    }
  }
  return out;
}

namespace {

// pipec's keywords: a KFP name that is one gets a trailing `_`.
bool is_keyword(const std::string& s) { return syntax::lex::is_keyword(s); }

}  // namespace

std::string output_file(const std::string& kfp_name) {
  return "/tmp/outputs/" + sanitize_file_name(kfp_name) + "/data";
}

std::string input_file(const std::string& kfp_name) {
  return "/tmp/inputs/" + sanitize_file_name(kfp_name) + "/data";
}

std::string op_name_of(const std::string& kfp) {
  std::string n = python_name(kfp);
  if (n.empty()) n = "component";
  // The op's name is also its Kubernetes name: a longer one keeps its first 63 characters
  // (without a trailing `_`), as `component show` prints.
  if (n.size() > kMaxK8sNameLength) {
    n.resize(kMaxK8sNameLength);
    while (!n.empty() && n.back() == '_') n.pop_back();
  }
  if (is_keyword(n)) n += "_";
  return n;
}

// kfp's generate_unique_name_conversion_table with _sanitize_python_function_name.
std::vector<std::string> unique_names(const std::vector<std::string>& names) {
  std::vector<std::string> out(names.size());
  std::set<std::string> used;
  std::vector<std::size_t> convert;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (python_name(names[i]) == names[i]) {
      out[i] = names[i];
      used.insert(names[i]);
    } else {
      convert.push_back(i);
    }
  }
  // python_name(NAME + " k") is python_name(NAME) + "_k" (or "nk"): a function of the
  // sanitized name, so the numbers tried for one sanitized name go on where the last name
  // that sanitized to it stopped (each one below is taken, and stays taken). 20,000 names
  // that sanitize alike: linear, not 2 * 10^8 tries (issue 42).
  std::map<std::string, int> next;  // a sanitized name's next number to try
  for (std::size_t i : convert) {
    std::string base = python_name(names[i]), n = base;
    int& k = next.try_emplace(base, 2).first->second;
    for (; used.count(n); ++k) n = python_name(names[i] + " " + std::to_string(k));
    out[i] = n;
    used.insert(n);
  }
  for (auto& n : out) {
    if (n.empty()) n = "input";
    if (is_keyword(n)) n += "_";
  }
  return out;
}

// kfp 2.17's type_utils.is_parameter_type: the KFP types that are values, not artifacts.
bool is_parameter_type(const std::string& kfp) {
  static const std::set<std::string> names = {"integer", "int",  "double", "float",
                                              "string",  "str",  "text",   "bool",
                                              "boolean", "dict", "list",   "jsonobject",
                                              "jsonarray"};
  return names.count(lower(kfp)) > 0;
}

void settle_files(Component& c) {
  std::set<std::string> files, output_paths, output_uris;
  auto walk = [&](auto&& self, const std::vector<Arg>& items) -> void {
    for (const auto& a : items) {
      if (a.kind == Arg::Kind::InputPath || a.kind == Arg::Kind::InputUri) files.insert(a.text);
      if (a.kind == Arg::Kind::OutputPath) output_paths.insert(a.text);
      if (a.kind == Arg::Kind::OutputUri) output_uris.insert(a.text);
      if (a.kind == Arg::Kind::ExecutorInput) c.executor_input = true;
      if (a.kind == Arg::Kind::V2Text && a.items.front().text.find("{{$}}") != std::string::npos)
        c.executor_input = true;
      self(self, a.items);
      self(self, a.then_items);
      self(self, a.else_items);
    }
  };
  walk(walk, c.command);
  walk(walk, c.args);
  for (auto& in : c.inputs) {
    // With the executor input, every artifact input reaches the container (kfp 2.17).
    bool artifact = c.executor_input && !is_parameter_type(in.kfp_type);
    if (!files.count(in.kfp_name) && !artifact) continue;
    in.type = Type::scalar(TypeKind::File);
    if (in.default_value) in.optional = true;
    in.default_value.reset();
  }
  // On kfp-v2 the container writes every output where KFP says (its path or URI
  // placeholder, or the executor input), except one at a fixed path (`fileOutputs`).
  for (auto& out : c.outputs)
    out.kfp_writes = out.path == output_file(out.kfp_name) &&
                     (output_paths.count(out.kfp_name) || output_uris.count(out.kfp_name) || c.executor_input);
}

namespace {

// The KFP type's name: a string, or the one key of a map (`{GCSPath: {data_type: CSV}}`).
std::string type_name(const YNode* t) {
  if (!t || t->kind == YNode::Kind::Null) return "";
  if (t->kind == YNode::Kind::Scalar) return t->text;
  if (t->kind == YNode::Kind::Map && !t->entries.empty()) return t->entries.front().first.text;
  return "";
}

class Reader : ReaderBase {
 public:
  Reader(Diagnostics& diags) : ReaderBase(diags) {}

  bool read(const YNode& root, Component& c) {
    c.range = root.range;
    if (root.kind != YNode::Kind::Map)
      return fail(root.range, fmt::format("a component is a map (name, inputs, outputs, "
                                          "implementation), got {}",
                                          kind_name(root.kind)));
    if (const YNode* name = scalar(root, "name")) {
      c.kfp_name = name->text;
      c.range = name->range;
    }
    c.name = op_name_of(c.kfp_name.empty() ? "Component" : c.kfp_name);
    if (const YNode* d = scalar(root, "description")) c.doc = d->text;
    read_inputs(root, c);
    read_outputs(root, c);
    const YNode* impl = map(root, "implementation", true);
    if (impl) {
      const YNode* container = map(*impl, "container", false);
      if (!container) {
        if (const YNode* graph = map(*impl, "graph", false))
          read_graph(*graph, c);
        else if (ok_)
          fail(impl->range, "the component has no 'implementation.container' or "
                            "'implementation.graph'");
      } else {
        read_container(*container, c);
        settle_files(c);
      }
    }
    return ok_;
  }

 private:
  const YNode* field(const YNode& m, const char* key, YNode::Kind kind, bool required,
                     const char* what) {
    const YNode* n = m.get(key);
    if (!n || (n->kind == YNode::Kind::Null && !required)) {
      if (required) fail(m.range, fmt::format("missing field '{}'", key));
      return nullptr;
    }
    if (n->kind != kind) {
      fail(n->range, fmt::format("field '{}' must be {}, got {}", key, what, kind_name(n->kind)));
      return nullptr;
    }
    return n;
  }
  const YNode* scalar(const YNode& m, const char* key, bool required = false) {
    return field(m, key, YNode::Kind::Scalar, required, "a scalar");
  }
  const YNode* map(const YNode& m, const char* key, bool required) {
    return field(m, key, YNode::Kind::Map, required, "a map");
  }
  const YNode* seq(const YNode& m, const char* key) {
    return field(m, key, YNode::Kind::Seq, false, "a list");
  }

  void read_inputs(const YNode& root, Component& c) {
    const YNode* inputs = seq(root, "inputs");
    if (!inputs) return;
    std::set<std::string, std::less<>> seen;  // a set, not a scan per input: 20,000 inputs
    for (const auto& item : inputs->items) {
      if (item.kind != YNode::Kind::Map) {
        fail(item.range, fmt::format("an input is a map with a 'name', got {}",
                                     kind_name(item.kind)));
        continue;
      }
      const YNode* name = scalar(item, "name", true);
      if (!name) continue;
      Input in;
      in.kfp_name = name->text;
      in.range = name->range;
      if (!seen.insert(in.kfp_name).second) {
        fail(name->range, fmt::format("duplicate input '{}'", in.kfp_name));
        continue;
      }
      in.kfp_type = type_name(item.get("type"));
      in.type = input_type(in.kfp_type);
      if (const YNode* d = scalar(item, "description")) in.doc = d->text;
      if (const YNode* o = scalar(item, "optional")) in.optional = is_true_word(o->text);
      if (const YNode* d = item.get("default"); d && d->kind != YNode::Kind::Null) {
        if (d->kind != YNode::Kind::Scalar) {
          fail(d->range, "field 'default' must be a scalar");
        } else {
          in.default_value = default_literal(*d, in);
        }
      }
      c.inputs.push_back(std::move(in));
    }
    give_names(c.inputs);
  }

  // A default as the parameter's type reads it. One the type cannot hold makes the
  // parameter a string (kfp passes defaults as their text).
  ir::Literal default_literal(const YNode& d, Input& in) {
    const std::string& s = d.text;
    switch (in.type.kind) {
      case TypeKind::Int: {
        try {
          std::size_t used = 0;
          long long v = std::stoll(s, &used);
          if (used == s.size()) return v;
        } catch (const std::exception&) {
        }
        break;
      }
      case TypeKind::Float: {
        try {
          std::size_t used = 0;
          double v = std::stod(s, &used);
          if (used == s.size() && std::isfinite(v)) return v;
        } catch (const std::exception&) {
        }
        break;
      }
      case TypeKind::Bool:
        if (is_true_word(s)) return true;
        if (is_false_word(s)) return false;
        break;
      default:
        return word_text(d);
    }
    in.type = Type::scalar(TypeKind::String);
    return word_text(d);
  }

  void read_outputs(const YNode& root, Component& c) {
    const YNode* outputs = seq(root, "outputs");
    if (!outputs) return;
    std::set<std::string, std::less<>> seen;
    for (const auto& item : outputs->items) {
      if (item.kind != YNode::Kind::Map) {
        fail(item.range, fmt::format("an output is a map with a 'name', got {}",
                                     kind_name(item.kind)));
        continue;
      }
      const YNode* name = scalar(item, "name", true);
      if (!name) continue;
      Output out;
      out.kfp_name = name->text;
      out.range = name->range;
      if (!seen.insert(out.kfp_name).second) {
        fail(name->range, fmt::format("duplicate output '{}'", out.kfp_name));
        continue;
      }
      out.kfp_type = type_name(item.get("type"));
      out.type = output_type(out.kfp_type);
      if (const YNode* d = scalar(item, "description")) out.doc = d->text;
      out.path = output_file(out.kfp_name);
      c.outputs.push_back(std::move(out));
    }
    give_names(c.outputs);
  }

  void read_container(const YNode& container, Component& c) {
    if (const YNode* image = scalar(container, "image", true)) {
      c.image = image->text;
      // kfp loads an empty image (components meant to be edited before use); so does pipec,
      // and a step of it is an error (instantiate).
    }
    if (const YNode* command = seq(container, "command")) {
      c.has_command = true;
      c.command = arg_list(*command, c);
    }
    if (const YNode* args = seq(container, "args")) c.args = arg_list(*args, c);
    if (const YNode* env = map(container, "env", false)) {
      for (const auto& entry_ : env->entries) {
        const YNode& k = entry_.first;
        const YNode& v = entry_.second;
        if (v.kind != YNode::Kind::Scalar) {
          fail(v.range, fmt::format("env '{}' must be a scalar", k.text));
          continue;
        }
        bool name_ok = !k.text.empty() &&
                       (std::isalpha(static_cast<unsigned char>(k.text[0])) || k.text[0] == '_') &&
                       std::all_of(k.text.begin(), k.text.end(), [](char ch) {
                         return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
                       });
        if (!name_ok || k.text.rfind("PIPEC_", 0) == 0) {
          fail(k.range, fmt::format("env name '{}' must be [A-Za-z_][A-Za-z0-9_]* and not "
                                    "start with PIPEC_",
                                    k.text));
          continue;
        }
        c.env.emplace_back(k.text, word_text(v));
      }
    }
    if (const YNode* fixed = map(container, "fileOutputs", false)) {
      for (const auto& entry_ : fixed->entries) {
        const YNode& k = entry_.first;
        const YNode& v = entry_.second;
        auto it = std::find_if(c.outputs.begin(), c.outputs.end(),
                               [&](const Output& o) { return o.kfp_name == k.text; });
        if (it == c.outputs.end()) {
          fail(k.range, fmt::format("fileOutputs names '{}', which is not an output", k.text));
          continue;
        }
        // A relative path is relative to the container's working directory, as in kfp.
        if (v.kind != YNode::Kind::Scalar || v.text.empty()) {
          fail(v.range, fmt::format("the path of output '{}' must be a file path", k.text));
          continue;
        }
        it->path = v.text;
      }
    }
  }

  std::vector<Arg> arg_list(const YNode& list, const Component& c) {
    std::vector<Arg> out;
    for (const auto& item : list.items)
      if (auto a = arg(item, c)) out.push_back(std::move(*a));
    return out;
  }

  std::optional<Arg> arg(const YNode& n, const Component& c) {
    Arg a;
    a.range = n.range;
    if (n.kind == YNode::Kind::Scalar) {
      // kfp takes strings only here: PyYAML reads an unquoted 1, 0.5, true or null as a
      // number, a bool or nothing, which kfp's loader refuses.
      if (n.plain && !is_yaml_string(n.text)) {
        fail(n.range, fmt::format("a command-line item must be a string; YAML reads '{}' as "
                                  "a number, a bool or null (quote it)",
                                  n.text));
        return std::nullopt;
      }
      a.text = n.text;
      if (n.text.find("{{$") != std::string::npos) {
        // kfp 2.17 hands such text to KFP's launcher, which resolves it: so does the kfp-v2
        // target, when every `{{$` is a placeholder of this component's own inputs and outputs.
        std::vector<std::string> artifacts;
        if (auto v2 = v2_text_for(n.text, c, artifacts)) {
          a.kind = Arg::Kind::V2Text;
          Arg translated;
          translated.text = *v2;
          a.items.push_back(std::move(translated));
          for (auto& name : artifacts) {
            Arg marker;
            marker.kind = Arg::Kind::InputPath;
            marker.text = std::move(name);
            a.items.push_back(std::move(marker));
          }
        }
      }
      return a;
    }
    if (n.kind != YNode::Kind::Map || n.entries.size() != 1) {
      fail(n.range, "a command-line item is a string or a placeholder map with one key "
                    "(inputValue, inputPath, outputPath, concat, if, isPresent)");
      return std::nullopt;
    }
    const YNode& key = n.entries.front().first;  // not a structured binding: lambdas capture them
    const YNode& value = n.entries.front().second;
    const std::string& k = key.text;
    auto input_ref = [&](Arg::Kind kind) -> std::optional<Arg> {
      if (value.kind != YNode::Kind::Scalar) {
        fail(value.range, fmt::format("'{}' names an input", k));
        return std::nullopt;
      }
      if (std::none_of(c.inputs.begin(), c.inputs.end(),
                       [&](const Input& i) { return i.kfp_name == value.text; })) {
        fail(value.range, fmt::format("'{}' names '{}', which is not an input", k, value.text));
        return std::nullopt;
      }
      a.kind = kind;
      a.text = value.text;
      return a;
    };
    if (k == "inputValue") return input_ref(Arg::Kind::InputValue);
    if (k == "inputPath") return input_ref(Arg::Kind::InputPath);
    if (k == "isPresent") {
      if (!in_condition_) {
        fail(key.range, "'isPresent' is a condition: use it as the 'cond' of an 'if'");
        return std::nullopt;
      }
      return input_ref(Arg::Kind::IsPresent);
    }
    auto output_ref = [&](const YNode& v) {
      if (v.kind == YNode::Kind::Scalar &&
          std::any_of(c.outputs.begin(), c.outputs.end(),
                      [&](const Output& o) { return o.kfp_name == v.text; }))
        return true;
      fail(v.range, fmt::format("'{}' names '{}', which is not an output", k, v.text));
      return false;
    };
    if (k == "outputPath") {
      if (!output_ref(value)) return std::nullopt;
      a.kind = Arg::Kind::OutputPath;
      a.text = value.text;
      return a;
    }
    if (k == "concat") {
      if (value.kind != YNode::Kind::Seq) {
        fail(value.range, "'concat' takes a list");
        return std::nullopt;
      }
      a.kind = Arg::Kind::Concat;
      a.items = arg_list(value, c);
      return a;
    }
    if (k == "if") {
      if (value.kind != YNode::Kind::Map) {
        fail(value.range, "'if' takes a map with 'cond', 'then' and optionally 'else'");
        return std::nullopt;
      }
      a.kind = Arg::Kind::If;
      const YNode* cond = value.get("cond");
      if (!cond) {
        fail(value.range, "missing field 'cond'");
        return std::nullopt;
      }
      std::optional<Arg> cnd;
      if (cond->kind == YNode::Kind::Scalar) {  // a constant: kfp takes a bool or a string
        cnd = Arg{};
        cnd->text = word_text(*cond);
        cnd->range = cond->range;
      } else {
        in_condition_ = true;
        cnd = arg(*cond, c);
        in_condition_ = false;
      }
      if (!cnd) return std::nullopt;
      a.items.push_back(std::move(*cnd));
      for (const auto& entry_ : value.entries) {
        const YNode& bk = entry_.first;
        const YNode& bv = entry_.second;
        if (bk.text == "cond") continue;
        if (bk.text != "then" && bk.text != "else") {
          fail(bk.range, fmt::format("unknown field '{}' of 'if' (cond, then, else)", bk.text));
          continue;
        }
        auto& branch = bk.text == "then" ? a.then_items : a.else_items;
        if (bv.kind == YNode::Kind::Seq) {
          branch = arg_list(bv, c);
        } else if (bv.kind != YNode::Kind::Null) {
          if (auto one = arg(bv, c)) branch.push_back(std::move(*one));
        }
      }
      return a;
    }
    if (k == "inputUri") return input_ref(Arg::Kind::InputUri);
    if (k == "outputUri") {
      if (!output_ref(value)) return std::nullopt;
      a.kind = Arg::Kind::OutputUri;
      a.text = value.text;
      return a;
    }
    if (k == "executorInput" || k == "outputMetadata") {
      a.kind = k == "executorInput" ? Arg::Kind::ExecutorInput : Arg::Kind::OutputMetadata;
      return a;
    }
    if (k == "inputMetadata" || k == "inputOutputPortName") {
      fail(key.range, fmt::format("placeholder '{}' (KFP's v2-compatible mode, which kfp 2.17 "
                                  "no longer reads) is not supported",
                                  k));
      return std::nullopt;
    }
    fail(key.range, fmt::format("unknown placeholder '{}' (inputValue, inputPath, outputPath, "
                                "concat, if, isPresent, inputUri, outputUri, executorInput, "
                                "outputMetadata)",
                                k));
    return std::nullopt;
  }

  // implementation.graph (kfp's GraphSpec): its tasks, in dependency order as kfp sorts
  // them, and its outputValues. Their componentRefs are resolved later (resolve_refs).
  void read_graph(const YNode& graph, Component& c) {
    c.graph = true;
    const YNode* tasks = map(graph, "tasks", true);
    if (!tasks) return;
    std::vector<Task> read;
    for (const auto& entry_ : tasks->entries) {
      const YNode& id = entry_.first;
      const YNode& t = entry_.second;
      if (t.kind != YNode::Kind::Map) {
        fail(t.range, fmt::format("task '{}' is a map with a 'componentRef', got {}", id.text,
                                  kind_name(t.kind)));
        continue;
      }
      Task task;
      task.kfp_name = id.text;
      task.range = id.range;
      for (const auto& field_ : t.entries) {
        const std::string& k = field_.first.text;
        if (k != "componentRef" && k != "arguments" && k != "annotations")
          fail(field_.first.range, fmt::format("task field '{}' is not supported (componentRef, "
                                               "arguments)",
                                               k));
      }
      if (const YNode* ref = map(t, "componentRef", true)) read_ref(*ref, task);
      if (const YNode* args = map(t, "arguments", false)) {
        for (const auto& arg_ : args->entries) {
          if (auto a = graph_arg(arg_.second, c)) task.args.emplace_back(arg_.first.text, std::move(*a));
        }
      }
      read.push_back(std::move(task));
    }
    if (const YNode* outputs = map(graph, "outputValues", false)) {
      for (const auto& entry_ : outputs->entries) {
        const YNode& k = entry_.first;
        if (std::none_of(c.outputs.begin(), c.outputs.end(),
                         [&](const Output& o) { return o.kfp_name == k.text; })) {
          fail(k.range, fmt::format("outputValues names '{}', which is not an output", k.text));
          continue;
        }
        auto a = graph_arg(entry_.second, c);
        if (!a) continue;
        if (a->kind != GraphArg::Kind::TaskOutput) {
          fail(entry_.second.range, fmt::format("output '{}' must be a task's output "
                                                "({{taskOutput: {{taskId, outputName}}}})",
                                                k.text));
          continue;
        }
        c.output_values.emplace_back(k.text, std::move(*a));
      }
    }
    for (const auto& o : c.outputs)
      if (std::none_of(c.output_values.begin(), c.output_values.end(),
                       [&](const auto& v) { return v.first == o.kfp_name; }) && ok_)
        fail(o.range, fmt::format("output '{}' has no source in 'implementation.graph.outputValues'",
                                  o.kfp_name));
    sort_tasks(std::move(read), c);
  }

  void read_ref(const YNode& ref, Task& task) {
    task.ref_range = ref.range;
    if (const YNode* u = scalar(ref, "url")) task.url = u->text;
    if (const YNode* d = scalar(ref, "digest")) task.digest = d->text;
    if (const YNode* spec = ref.get("spec"); spec && spec->kind != YNode::Kind::Null) {
      auto inline_spec = std::make_shared<Component>();
      if (read_v1(*spec, diags_, *inline_spec)) {
        finish_v1(*inline_spec);
        task.component = std::move(inline_spec);
      } else {
        ok_ = false;
      }
    }
  }

  // A task's argument: a constant (kfp takes a string, or a number or bool as its text), a
  // graphInput or a taskOutput.
  std::optional<GraphArg> graph_arg(const YNode& n, const Component& c) {
    GraphArg a;
    a.range = n.range;
    if (n.kind == YNode::Kind::Scalar) {
      a.text = word_text(n);
      return a;
    }
    const YNode* in = n.kind == YNode::Kind::Map ? n.get("graphInput") : nullptr;
    const YNode* out = n.kind == YNode::Kind::Map ? n.get("taskOutput") : nullptr;
    if (n.kind != YNode::Kind::Map || n.entries.size() != 1 || (!in && !out)) {
      fail(n.range, "an argument is a constant, {graphInput: {inputName}} or "
                    "{taskOutput: {taskId, outputName}}");
      return std::nullopt;
    }
    if (in) {
      const YNode* name = in->kind == YNode::Kind::Map ? scalar(*in, "inputName", true) : nullptr;
      if (!name) {
        if (in->kind != YNode::Kind::Map) fail(in->range, "'graphInput' takes a map with 'inputName'");
        return std::nullopt;
      }
      if (std::none_of(c.inputs.begin(), c.inputs.end(),
                       [&](const Input& i) { return i.kfp_name == name->text; })) {
        fail(name->range, fmt::format("graphInput names '{}', which is not an input", name->text));
        return std::nullopt;
      }
      a.kind = GraphArg::Kind::GraphInput;
      a.text = name->text;
      a.range = name->range;
      return a;
    }
    if (out->kind != YNode::Kind::Map) {
      fail(out->range, "'taskOutput' takes a map with 'taskId' and 'outputName'");
      return std::nullopt;
    }
    const YNode* task = scalar(*out, "taskId", true);
    const YNode* name = scalar(*out, "outputName", true);
    if (!task || !name) return std::nullopt;
    a.kind = GraphArg::Kind::TaskOutput;
    a.task = task->text;
    a.text = name->text;
    a.range = task->range;
    return a;
  }

  // kfp's GraphSpec._post_init: every taskOutput names a task; the tasks sorted so that
  // each comes after those it reads (else in their order); a cycle is an error.
  void sort_tasks(std::vector<Task> tasks, Component& c) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < tasks.size(); ++i) index.emplace(tasks[i].kfp_name, i);
    auto known = [&](const GraphArg& a) {
      if (a.kind != GraphArg::Kind::TaskOutput || index.count(a.task)) return true;
      fail(a.range, fmt::format("taskOutput names task '{}', which is not a task of the graph", a.task));
      return false;
    };
    std::vector<std::set<std::size_t>> needs(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i)
      for (const auto& [name, a] : tasks[i].args)
        if (known(a) && a.kind == GraphArg::Kind::TaskOutput) needs[i].insert(index.at(a.task));
    for (const auto& [name, a] : c.output_values) known(a);
    // Kahn's algorithm, the first ready task in the graph's order first.
    std::vector<std::size_t> waiting(tasks.size());
    std::vector<std::vector<std::size_t>> readers(tasks.size());
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      waiting[i] = needs[i].size();
      for (std::size_t d : needs[i]) readers[d].push_back(i);
      if (waiting[i] == 0) ready.push(i);
    }
    std::vector<bool> done(tasks.size(), false);
    std::vector<std::size_t> order;
    while (!ready.empty()) {
      std::size_t i = ready.top();
      ready.pop();
      done[i] = true;
      order.push_back(i);
      for (std::size_t r : readers[i])
        if (--waiting[r] == 0) ready.push(r);
    }
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (!done[i]) {
        fail(tasks[i].range, fmt::format("task '{}' depends on itself through its taskOutput "
                                         "arguments (a cycle)",
                                         tasks[i].kfp_name));
        return;
      }
    std::vector<std::string> kfp;
    for (std::size_t i : order) kfp.push_back(tasks[i].kfp_name);
    auto names = unique_names(kfp);
    for (std::size_t k = 0; k < order.size(); ++k) {
      c.tasks.push_back(std::move(tasks[order[k]]));
      c.tasks.back().name = names[k];
    }
  }

  bool in_condition_ = false;
};

}  // namespace

bool read_v1(const YNode& root, Diagnostics& diags, Component& out) {
  Reader reader(diags);
  return reader.read(root, out);
}

}  // namespace pipec::sema::component::detail
