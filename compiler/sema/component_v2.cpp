// Reading a KFP v2 component: a pipeline spec with one component, as `kfp dsl compile`
// (kfp 2.17) writes it for a `@dsl.component` or `@dsl.container_component`. Its inputs and
// outputs come from the component's inputDefinitions and outputDefinitions, its container
// from the executor, and the placeholders in the command's strings (`{{$.inputs.parameters
// ['x']}}`, `{{$.outputs.artifacts['y'].path}}`, `{{$}}`, and the JSON `{"Concat": ...}` and
// `{"IfPresent": ...}` words) become the same Arg tree a v1 ComponentSpec gives.
#include "compiler/sema/component_detail.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace pipec::sema::component::detail {

namespace {

using ir::Type;
using ir::TypeKind;
using Json = nlohmann::json;

// A parameterType as the KFP v1 type of the same meaning (the type table reads those).
std::optional<std::string> v1_type(const std::string& t) {
  if (t == "NUMBER_INTEGER") return "Integer";
  if (t == "NUMBER_DOUBLE") return "Float";
  if (t == "BOOLEAN") return "Boolean";
  if (t == "STRING") return "String";
  if (t == "STRUCT") return "JsonObject";
  if (t == "LIST") return "JsonArray";
  return std::nullopt;
}

// A YAML value as JSON text (a STRUCT or LIST default is passed as its JSON text).
std::string json_text(const YNode& n) {
  switch (n.kind) {
    case YNode::Kind::Null: return "null";
    case YNode::Kind::Scalar:
      if (n.plain && !is_yaml_string(n.text)) {
        if (is_true_word(n.text)) return "true";
        if (is_false_word(n.text)) return "false";
        Json number = Json::parse(n.text, nullptr, false);
        if (number.is_number()) return number.dump();
        if (n.text == "~" || lower(n.text) == "null") return "null";
      }
      return Json(n.text).dump();
    case YNode::Kind::Seq: {
      std::string out = "[";
      for (const auto& item : n.items) out += (out.size() > 1 ? ", " : "") + json_text(item);
      return out + "]";
    }
    case YNode::Kind::Map: {
      std::string out = "{";
      for (const auto& [k, v] : n.entries)
        out += (out.size() > 1 ? ", " : "") + Json(k.text).dump() + ": " + json_text(v);
      return out + "}";
    }
  }
  return "null";
}

// Whether a placeholder names an input or output the component has.
bool names_own(const V2Ref& ref, const Component& c) {
  if (ref.kind == V2Ref::Kind::ExecutorInput) return true;
  if (ref.is_input())
    return std::any_of(c.inputs.begin(), c.inputs.end(), [&](const Input& i) { return i.kfp_name == ref.name; });
  return std::any_of(c.outputs.begin(), c.outputs.end(), [&](const Output& o) { return o.kfp_name == ref.name; });
}

class V2Reader : ReaderBase {
 public:
  explicit V2Reader(Diagnostics& diags) : ReaderBase(diags) {}

  bool read(const YNode& root, Component& c) {
    c.range = root.range;
    const YNode* components = map(root, "components");
    const YNode* deployment = map(root, "deploymentSpec");
    const YNode* executors = deployment ? map(*deployment, "executors") : nullptr;
    if (!components || !executors) return false;
    if (components->entries.size() != 1) {
      fail(components->range, fmt::format("a KFP v2 component file holds one component; this one "
                                          "holds {} (a pipeline of several steps is not an op)",
                                          components->entries.size()));
      return false;
    }
    const YNode& spec = components->entries.front().second;
    if (spec.kind != YNode::Kind::Map) return fail(spec.range, "a component is a map");
    if (spec.get("dag"))
      return fail(components->entries.front().first.range,
                  "this component is a pipeline (a 'dag'), not a container: not an op");
    std::string name = components->entries.front().first.text;
    if (name.rfind("comp-", 0) == 0) name.erase(0, 5);
    if (const YNode* info = root.get("pipelineInfo"); info && info->kind == YNode::Kind::Map) {
      if (const YNode* n = info->get("name"); n && n->kind == YNode::Kind::Scalar) {
        name = n->text;
        c.range = n->range;
      }
      if (const YNode* d = info->get("description"); d && d->kind == YNode::Kind::Scalar) c.doc = d->text;
    }
    c.kfp_name = name;
    c.name = op_name_of(name);
    if (const YNode* defs = spec.get("inputDefinitions")) read_inputs(*defs, c);
    if (const YNode* defs = spec.get("outputDefinitions")) read_outputs(*defs, c);
    const YNode* label = spec.get("executorLabel");
    if (!label || label->kind != YNode::Kind::Scalar)
      return fail(spec.range, "missing field 'executorLabel'");
    const YNode* executor = executors->get(label->text);
    if (!executor || executor->kind != YNode::Kind::Map)
      return fail(label->range, fmt::format("executor '{}' is not in deploymentSpec.executors",
                                            label->text));
    const YNode* container = map(*executor, "container");
    if (!container) return false;
    read_container(*container, c);
    settle_files(c);
    for (auto& in : c.inputs)  // artifacts are files whether or not a placeholder names them
      if (artifact_inputs_.count(in.kfp_name)) in.type = Type::scalar(TypeKind::File);
    return ok_;
  }

 private:
  const YNode* map(const YNode& m, const char* key) {
    const YNode* n = m.get(key);
    if (!n) {
      fail(m.range, fmt::format("missing field '{}'", key));
      return nullptr;
    }
    if (n->kind != YNode::Kind::Map) {
      fail(n->range, fmt::format("field '{}' must be a map, got {}", key, kind_name(n->kind)));
      return nullptr;
    }
    return n;
  }
  static const YNode* scalar(const YNode& m, const char* key) {
    const YNode* n = m.get(key);
    return n && n->kind == YNode::Kind::Scalar ? n : nullptr;
  }

  // The KFP type of a parameter or artifact definition, "" when it has none we read.
  std::string kind_of(const YNode& def, bool artifact) {
    if (artifact) {
      const YNode* t = def.get("artifactType");
      const YNode* title = t && t->kind == YNode::Kind::Map ? scalar(*t, "schemaTitle") : nullptr;
      return title ? title->text : "system.Artifact";
    }
    const YNode* t = scalar(def, "parameterType");
    if (!t) {
      fail(def.range, "missing field 'parameterType'");
      return "String";
    }
    auto v1 = v1_type(t->text);
    if (!v1) {
      fail(t->range, fmt::format("parameterType '{}' is not one an op can take (NUMBER_INTEGER, "
                                 "NUMBER_DOUBLE, BOOLEAN, STRING, STRUCT, LIST)",
                                 t->text));
      return "String";
    }
    return *v1;
  }

  void read_inputs(const YNode& defs, Component& c) {
    for (const char* group : {"parameters", "artifacts"}) {
      const YNode* g = defs.get(group);
      if (!g) continue;
      if (g->kind != YNode::Kind::Map) {
        fail(g->range, fmt::format("field '{}' must be a map", group));
        continue;
      }
      bool artifact = group[0] == 'a';
      for (const auto& [k, def] : g->entries) {
        if (def.kind != YNode::Kind::Map) {
          fail(def.range, fmt::format("input '{}' must be a map", k.text));
          continue;
        }
        Input in;
        in.kfp_name = k.text;
        in.range = k.range;
        in.kfp_type = kind_of(def, artifact);
        in.type = artifact ? Type::scalar(TypeKind::File) : input_type(in.kfp_type);
        if (artifact) artifact_inputs_.insert(in.kfp_name);
        if (const YNode* d = scalar(def, "description")) in.doc = d->text;
        if (const YNode* list = scalar(def, "isArtifactList"); list && is_true_word(list->text))
          fail(list->range, fmt::format("input '{}' is a list of artifacts, which an op cannot take",
                                        in.kfp_name));
        bool optional = false;
        if (const YNode* o = scalar(def, "isOptional")) optional = is_true_word(o->text);
        if (const YNode* d = def.get("defaultValue"); d && d->kind != YNode::Kind::Null && !artifact)
          in.default_value = default_literal(*d, in);
        in.optional = optional && !in.default_value;
        c.inputs.push_back(std::move(in));
      }
    }
    give_names(c.inputs);
  }

  // kfp 2.17 writes every number as a double (`defaultValue: 3.0` of an int).
  ir::Literal default_literal(const YNode& d, Input& in) {
    if (d.kind != YNode::Kind::Scalar) return json_text(d);
    switch (in.type.kind) {
      case TypeKind::Int: {
        Json v = Json::parse(d.text, nullptr, false);
        if (v.is_number() && std::trunc(v.get<double>()) == v.get<double>() &&
            std::fabs(v.get<double>()) < 9.0e15)
          return static_cast<long long>(v.get<double>());
        break;
      }
      case TypeKind::Float: {
        Json v = Json::parse(d.text, nullptr, false);
        if (v.is_number()) return v.get<double>();
        break;
      }
      case TypeKind::Bool:
        if (is_true_word(d.text)) return true;
        if (is_false_word(d.text)) return false;
        break;
      default:
        if (lower(in.kfp_type) == "string") return d.text;
        return json_text(d);
    }
    fail(d.range, fmt::format("the default of '{}' is not a {}", in.kfp_name, in.type.str()));
    return d.text;
  }

  void read_outputs(const YNode& defs, Component& c) {
    for (const char* group : {"parameters", "artifacts"}) {
      const YNode* g = defs.get(group);
      if (!g || g->kind != YNode::Kind::Map) continue;
      bool artifact = group[0] == 'a';
      for (const auto& [k, def] : g->entries) {
        if (def.kind != YNode::Kind::Map) {
          fail(def.range, fmt::format("output '{}' must be a map", k.text));
          continue;
        }
        Output out;
        out.kfp_name = k.text;
        out.range = k.range;
        out.kfp_type = kind_of(def, artifact);
        out.type = artifact ? Type::scalar(TypeKind::File) : output_type(out.kfp_type);
        if (const YNode* d = scalar(def, "description")) out.doc = d->text;
        out.path = output_file(out.kfp_name);
        c.outputs.push_back(std::move(out));
      }
    }
    give_names(c.outputs);
  }

  void read_container(const YNode& container, Component& c) {
    const YNode* image = scalar(container, "image");
    if (!image || image->text.empty()) {
      fail(container.range, "missing field 'image'");
    } else {
      c.image = image->text;
    }
    for (const char* key : {"command", "args"}) {
      const YNode* list = container.get(key);
      if (!list) continue;
      if (list->kind != YNode::Kind::Seq) {
        fail(list->range, fmt::format("field '{}' must be a list", key));
        continue;
      }
      auto& out = key[0] == 'c' ? c.command : c.args;
      if (key[0] == 'c') c.has_command = true;
      for (const auto& item : list->items) {
        if (item.kind != YNode::Kind::Scalar) {
          fail(item.range, fmt::format("an item of '{}' is a string", key));
          continue;
        }
        if (auto a = word(item.text, item.range, c)) out.push_back(std::move(*a));
      }
    }
    if (const YNode* env = container.get("env")) {
      if (env->kind != YNode::Kind::Seq) {
        fail(env->range, "field 'env' must be a list of {name, value}");
      } else {
        for (const auto& e : env->items) {
          const YNode* n = e.kind == YNode::Kind::Map ? scalar(e, "name") : nullptr;
          const YNode* v = e.kind == YNode::Kind::Map ? scalar(e, "value") : nullptr;
          if (!n || !v) {
            fail(e.range, "an env entry is a map with 'name' and 'value'");
            continue;
          }
          c.env.emplace_back(n->text, v->text);
        }
      }
    }
    if (const YNode* r = container.get("resources"))
      fail(r->range, "field 'resources' of a KFP v2 component is not read: give the op's "
                     "resources in the .pipe file");
  }

  // One command-line string: a JSON Concat or IfPresent, or text with placeholders in it.
  std::optional<Arg> word(const std::string& s, SourceRange at, const Component& c) {
    if (s.rfind("{\"Concat\"", 0) == 0 || s.rfind("{\"IfPresent\"", 0) == 0) {
      Json j = Json::parse(s, nullptr, false);
      if (!j.is_discarded()) return structured(j, at, c);
    }
    Arg concat;
    concat.kind = Arg::Kind::Concat;
    concat.range = at;
    std::size_t pos = 0;
    while (pos < s.size()) {
      std::size_t open = s.find("{{$", pos);
      if (open == std::string::npos) open = s.size();
      if (open > pos) concat.items.push_back(text(s.substr(pos, open - pos), at));
      if (open == s.size()) break;
      std::size_t close = s.find("}}", open);
      if (close == std::string::npos) {
        fail(at, fmt::format("'{}' opens a placeholder '{{{{$' that does not close", s));
        return std::nullopt;
      }
      auto a = placeholder(s.substr(open + 3, close - open - 3), at, c);
      if (!a) return std::nullopt;
      concat.items.push_back(std::move(*a));
      pos = close + 2;
    }
    if (concat.items.size() == 1) return std::move(concat.items.front());
    if (concat.items.empty()) return text("", at);
    return concat;
  }

  static Arg text(std::string s, SourceRange at) {
    Arg a;
    a.text = std::move(s);
    a.range = at;
    return a;
  }

  // The inside of `{{$...}}`: "" (the executor input), `.inputs.parameters['x']`, ...
  std::optional<Arg> placeholder(const std::string& inner, SourceRange at, const Component& c) {
    auto ref = parse_v2_ref(inner);
    if (!ref || ref->kind == V2Ref::Kind::InputMetadata) {
      fail(at, fmt::format("placeholder '{{{{${}}}}}' is not supported (the executor input "
                           "{{{{$}}}}, inputs' and outputs' parameters, paths and URIs are)",
                           inner));
      return std::nullopt;
    }
    if (!names_own(*ref, c)) {
      fail(at, fmt::format("placeholder '{{{{${}}}}}' names '{}', which is not an {}", inner, ref->name,
                           ref->is_input() ? "input" : "output"));
      return std::nullopt;
    }
    Arg a;
    a.range = at;
    a.text = ref->name;
    switch (ref->kind) {
      case V2Ref::Kind::ExecutorInput: a.kind = Arg::Kind::ExecutorInput; break;
      case V2Ref::Kind::InputValue: a.kind = Arg::Kind::InputValue; break;
      case V2Ref::Kind::InputPath: a.kind = Arg::Kind::InputPath; break;
      case V2Ref::Kind::InputUri: a.kind = Arg::Kind::InputUri; break;
      case V2Ref::Kind::OutputPath: a.kind = Arg::Kind::OutputPath; break;
      case V2Ref::Kind::OutputUri: a.kind = Arg::Kind::OutputUri; break;
      case V2Ref::Kind::InputMetadata: break;
    }
    return a;
  }

  // kfp 2.17's ConcatPlaceholder and IfPresentPlaceholder as JSON; items are strings or
  // nested placeholders.
  std::optional<Arg> structured(const Json& j, SourceRange at, const Component& c) {
    if (j.is_string()) return word(j.get<std::string>(), at, c);
    auto list = [&](const Json& items, std::vector<Arg>& out) {
      if (items.is_null()) return true;
      if (!items.is_array()) {
        auto one = structured(items, at, c);
        if (one) out.push_back(std::move(*one));
        return one.has_value();
      }
      for (const auto& item : items) {
        auto one = structured(item, at, c);
        if (!one) return false;
        out.push_back(std::move(*one));
      }
      return true;
    };
    if (j.is_object() && j.size() == 1 && j.contains("Concat")) {
      Arg a;
      a.kind = Arg::Kind::Concat;
      a.range = at;
      if (!list(j["Concat"], a.items)) return std::nullopt;
      return a;
    }
    if (j.is_object() && j.size() == 1 && j.contains("IfPresent") && j["IfPresent"].is_object() &&
        j["IfPresent"].contains("InputName") && j["IfPresent"]["InputName"].is_string()) {
      const Json& body = j["IfPresent"];
      std::string input = body["InputName"].get<std::string>();
      if (std::none_of(c.inputs.begin(), c.inputs.end(),
                       [&](const Input& i) { return i.kfp_name == input; })) {
        fail(at, fmt::format("'IfPresent' names '{}', which is not an input", input));
        return std::nullopt;
      }
      Arg a;
      a.kind = Arg::Kind::If;
      a.range = at;
      Arg cond;
      cond.kind = Arg::Kind::IsPresent;
      cond.text = input;
      cond.range = at;
      a.items.push_back(std::move(cond));
      if (body.contains("Then") && !list(body["Then"], a.then_items)) return std::nullopt;
      if (body.contains("Else") && !list(body["Else"], a.else_items)) return std::nullopt;
      return a;
    }
    fail(at, fmt::format("'{}' is not a placeholder kfp 2.17 writes (Concat, IfPresent)", j.dump()));
    return std::nullopt;
  }

  std::set<std::string> artifact_inputs_;
};

}  // namespace

std::optional<V2Ref> parse_v2_ref(const std::string& inner) {
  V2Ref ref;
  if (inner.empty()) return ref;
  // In `text`, PREFIX['name'] (or ["name"]) and what follows it.
  auto named_in = [](const std::string& text, const std::string& prefix, std::string& name, std::string& rest) {
    if (text.rfind(prefix, 0) != 0) return false;
    std::size_t q = prefix.size();
    if (q >= text.size() || (text[q] != '\'' && text[q] != '"')) return false;
    std::size_t end = text.find(std::string(1, text[q]) + "]", q + 1);
    if (end == std::string::npos) return false;
    name = text.substr(q + 1, end - q - 1);
    rest = text.substr(end + 2);
    return true;
  };
  auto named = [&](const std::string& prefix, std::string& name, std::string& rest) {
    return named_in(inner, prefix, name, rest);
  };
  std::string rest, key;
  using K = V2Ref::Kind;
  if (named(".inputs.parameters[", ref.name, rest) && rest.empty()) {
    ref.kind = K::InputValue;
  } else if (named(".inputs.artifacts[", ref.name, rest) && (rest == ".path" || rest == ".uri")) {
    ref.kind = rest == ".path" ? K::InputPath : K::InputUri;
  } else if (named(".inputs.artifacts[", ref.name, rest) && rest.rfind(".metadata[", 0) == 0 &&
             named_in(rest.substr(9), "[", key, rest) && rest.empty()) {
    ref.kind = K::InputMetadata;
    ref.key = key;
  } else if (named(".outputs.parameters[", ref.name, rest) && rest == ".output_file") {
    ref.kind = K::OutputPath;
  } else if (named(".outputs.artifacts[", ref.name, rest) && (rest == ".path" || rest == ".uri")) {
    ref.kind = rest == ".path" ? K::OutputPath : K::OutputUri;
  } else {
    return std::nullopt;
  }
  return ref;
}

std::optional<std::string> v2_text_for(const std::string& text, const Component& c,
                                       std::vector<std::string>& artifact_inputs) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find("{{$", pos);
    if (open == std::string::npos) break;
    std::size_t close = text.find("}}", open);
    if (close == std::string::npos) return std::nullopt;
    auto ref = parse_v2_ref(text.substr(open + 3, close - open - 3));
    if (!ref || !names_own(*ref, c)) return std::nullopt;
    out += text.substr(pos, open - pos);
    auto pipec_name = [&]() -> std::string {
      if (ref->is_input())
        for (const auto& in : c.inputs)
          if (in.kfp_name == ref->name) return in.name;
      for (const auto& o : c.outputs)
        if (o.kfp_name == ref->name) return o.name;
      return ref->name;
    };
    using K = V2Ref::Kind;
    switch (ref->kind) {
      case K::ExecutorInput: out += "{{$}}"; break;
      case K::InputValue: out += fmt::format("{{{{$.inputs.parameters['{}']}}}}", pipec_name()); break;
      case K::InputPath:
      case K::InputUri:
      case K::InputMetadata:
        artifact_inputs.push_back(ref->name);
        out += fmt::format("{{{{$.inputs.artifacts['{}']{}}}}}", pipec_name(),
                           ref->kind == K::InputPath   ? ".path"
                           : ref->kind == K::InputUri  ? ".uri"
                                                       : ".metadata['" + ref->key + "']");
        break;
      case K::OutputPath:
      case K::OutputUri: {
        bool value = std::any_of(c.outputs.begin(), c.outputs.end(), [&](const Output& o) {
          return o.kfp_name == ref->name && o.type.kind != ir::TypeKind::File;
        });
        out += ref->kind == K::OutputUri ? fmt::format("{{{{$.outputs.artifacts['{}'].uri}}}}", pipec_name())
               : value ? fmt::format("{{{{$.outputs.parameters['{}'].output_file}}}}", pipec_name())
                       : fmt::format("{{{{$.outputs.artifacts['{}'].path}}}}", pipec_name());
        break;
      }
    }
    pos = close + 2;
  }
  out += text.substr(pos);
  return out;
}

bool read_v2(const YNode& root, Diagnostics& diags, Component& out) {
  V2Reader reader(diags);
  return reader.read(root, out);
}

}  // namespace pipec::sema::component::detail
