// Declared parameters come from the workflow's annotations (pipec's own first, then the
// KFP SDK's), and overrides are checked here, before any request: the KFP v1 server
// checks only that a name exists (argo#10482, kfp#5292, kfp#11607).
// yaml-cpp and nlohmann::json exceptions stay inside this file.

#include "compiler/client/kfp/parameters.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/base/spellcheck.hpp"
#include "compiler/base/status.hpp"
#include "input/json.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "input/utf8.hpp"
#include "input/yaml.hpp"

namespace pipec::client::kfp {

namespace {

using json = nlohmann::json;

constexpr std::string_view kPipecAnnotation = "pipec.dev/parameters";
constexpr std::string_view kKfpAnnotation = "pipelines.kubeflow.org/pipeline_spec";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// [+-]?digits, fitting in int64.
std::optional<std::int64_t> parse_int(std::string_view text) {
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return std::nullopt;
  for (char c : digits)
    if (!is_digit(c)) return std::nullopt;
  std::string normal = (negative ? "-" : "") + std::string(digits);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(normal.data(), normal.data() + normal.size(), value);
  if (ec != std::errc() || end != normal.data() + normal.size()) return std::nullopt;
  return value;
}

// [+-]?(digits[.digits*]|.digits)([eE][+-]?digits)?, finite.
std::optional<double> parse_float(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < text.size() && is_digit(text[i])) ++i, ++int_digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < text.size() && is_digit(text[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  std::string copy(text);
  double value = std::strtod(copy.c_str(), nullptr);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "'" : ", '") + item + "'";
  return out;
}

// Shortens a value for a message; user values may be long or hold newlines.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 60)) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  if (text.size() > 60) out += "...";
  return out;
}

// As shown(), with each byte that is not UTF-8 as \xNN: for text refused for that reason.
std::string shown_bytes(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < 60;) {
    std::size_t len = static_cast<unsigned char>(text[i]) < 0x80 ? 1 : utf8_sequence_length(text, i);
    if (len == 0) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      out += shown(text.substr(i, len));
      i += len;
    }
  }
  if (text.size() > 60) out += "...";
  return out;
}

std::string byte_text(char c) { return fmt::format("byte 0x{:02X}", static_cast<unsigned char>(c)); }

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Checks a JSON value against `type`; on success `out` is the value with ints widened
// where a float is declared. `where` names the element for messages ("" at the top).
bool check_json(const ParamType& type, const json& value, const std::string& where, json& out,
                std::string& problem) {
  auto fail = [&](std::string_view expected) {
    problem = fmt::format("{}{} is not {}", where.empty() ? "" : "element " + where + " ",
                          shown(dump(value)), expected);
    return false;
  };
  switch (type.kind) {
    case ParamKind::Any:
      out = value;
      return true;
    case ParamKind::String:
      if (!value.is_string()) return fail("a string");
      out = value;
      return true;
    case ParamKind::Int:
      if (!value.is_number_integer()) return fail("an integer");
      out = value;
      return true;
    case ParamKind::Float:
      if (!value.is_number()) return fail("a number");
      out = value.get<double>();
      return true;
    case ParamKind::Bool:
      if (!value.is_boolean()) return fail("a bool");
      out = value;
      return true;
    case ParamKind::List: {
      if (!value.is_array()) return fail("a list");
      out = json::array();
      for (std::size_t i = 0; i < value.size(); ++i) {
        json item;
        if (!check_json(type.element[0], value[i], fmt::format("{}[{}]", where, i), item, problem))
          return false;
        out.push_back(std::move(item));
      }
      return true;
    }
    case ParamKind::Map: {
      if (!value.is_object()) return fail("a map");
      out = json::object();
      for (const auto& [key, item] : value.items()) {
        json checked;
        if (!check_json(type.element[0], item, fmt::format("{}[{}]", where, dump(json(key))),
                        checked, problem))
          return false;
        out[key] = std::move(checked);
      }
      return true;
    }
  }
  PIPEC_UNREACHABLE();
}

// The canonical text of a JSON default from pipec.dev/parameters.
std::optional<std::string> canonical_json(const ParamType& type, const json& value) {
  json checked;
  std::string problem;
  if (!check_json(type, value, "", checked, problem)) return std::nullopt;
  if (checked.is_string()) return checked.get<std::string>();
  return dump(checked);
}

// "LINE:COLUMN" of the first scalar under `node` that is not UTF-8, or nullopt.
std::optional<std::string> not_utf8(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      if (first_invalid_utf8(node.Scalar()) == std::string_view::npos) return std::nullopt;
      return fmt::format("{}:{}", node.Mark().line + 1, node.Mark().column + 1);
    case YAML::NodeType::Sequence:
      for (const auto& item : node)
        if (auto where = not_utf8(item)) return where;
      return std::nullopt;
    case YAML::NodeType::Map:
      for (const auto& item : node) {
        if (auto where = not_utf8(item.first)) return where;
        if (auto where = not_utf8(item.second)) return where;
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::string scalar_text(const YAML::Node& node) {
  return node && node.IsScalar() ? node.Scalar() : std::string();
}

// A YAML node as JSON: plain scalars typed as YAML 1.2's core schema, quoted ones strings.
// A key a map holds twice (yaml-cpp keeps both) is refused as the language refuses one:
// `duplicate`, when given, is set to "duplicate key 'K' at line L, column C" for the first.
json yaml_to_json(const YAML::Node& node, std::string* duplicate = nullptr) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(yaml_to_json(item, duplicate));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& item : node) {
        const std::string& key = item.first.Scalar();
        if (out.contains(key) && duplicate && duplicate->empty())
          *duplicate = fmt::format("duplicate key '{}' at line {}, column {}", shown(key),
                                   item.first.Mark().line + 1, item.first.Mark().column + 1);
        out[key] = yaml_to_json(item.second, duplicate);
      }
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return text;
      if (text == "true") return true;
      if (text == "false") return false;
      if (text == "null" || text == "~") return nullptr;
      if (auto i = parse_int(text)) return *i;
      if (auto f = parse_float(text)) return *f;
      return text;
    }
    default:
      return nullptr;
  }
}

ParamType kfp_type(const std::string& name) {
  ParamType type;
  if (name == "String") type.kind = ParamKind::String;
  if (name == "Integer") type.kind = ParamKind::Int;
  if (name == "Float") type.kind = ParamKind::Float;
  if (name == "Bool") type.kind = ParamKind::Bool;
  if (name == "JsonArray") type = ParamType{ParamKind::List, {ParamType{}}};
  if (name == "JsonObject") type = ParamType{ParamKind::Map, {ParamType{}}};
  return type;
}

// The annotations are JSON inside YAML, written by a compiler but read back from any file:
// a member of another type than its own is an error that names it, never an exception.
// Returns the problem, or "" when `object[key]` is absent or of the type `is` accepts.
std::string member_problem(const json& object, const char* key, bool (json::*is)() const noexcept,
                           std::string_view expected) {
  auto it = object.find(key);
  if (it == object.end() || ((*it).*is)()) return {};
  return fmt::format("'{}' is {}, not {}", key, shown(dump(*it)), expected);
}

bool read_pipec_annotation(const std::string& text, Signature& out, std::string& error) {
  std::string problem;
  json list;
  if (!input::parse_json(text, list, problem) || !list.is_array()) {
    error = fmt::format("annotation {} is not a JSON list{}", kPipecAnnotation,
                        problem.empty() ? "" : ": " + problem);
    return false;
  }
  for (const json& item : list) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
      error = fmt::format("annotation {} has an entry without a name", kPipecAnnotation);
      return false;
    }
    struct Member {
      const char* key;
      bool (json::*is)() const noexcept;
      const char* expected;
    };
    static const Member kMembers[] = {
        {"type", &json::is_string, "a string"}, {"required", &json::is_boolean, "a bool"},
        {"enum", &json::is_array, "a list"},     {"min", &json::is_number, "a number"},
        {"max", &json::is_number, "a number"},   {"description", &json::is_string, "a string"}};
    for (const Member& m : kMembers) {
      if (std::string p = member_problem(item, m.key, m.is, m.expected); !p.empty()) {
        error = fmt::format("annotation {}: parameter '{}': {}", kPipecAnnotation,
                            shown(item["name"].get<std::string>()), p);
        return false;
      }
    }
    DeclaredParam param;
    param.name = item["name"].get<std::string>();
    if (item.contains("type") && item["type"].is_string())
      param.type = parse_param_type(item["type"].get<std::string>()).value_or(ParamType{});
    if (item.contains("default") && !item.value("required", false)) {
      param.default_value = canonical_json(param.type, item["default"]);
      if (!param.default_value) param.default_value = dump(item["default"]);
    }
    if (item.contains("enum") && item["enum"].is_array()) {
      for (const json& allowed : item["enum"])
        param.allowed.push_back(canonical_json(param.type, allowed).value_or(dump(allowed)));
    }
    if (item.contains("min") && item["min"].is_number()) param.min = item["min"].get<double>();
    if (item.contains("max") && item["max"].is_number()) param.max = item["max"].get<double>();
    if (item.contains("description") && item["description"].is_string())
      param.description = item["description"].get<std::string>();
    out.params.push_back(std::move(param));
  }
  out.source = SignatureSource::PipecParameters;
  return true;
}

bool is_v2_pipeline_spec(const YAML::Node& root) {
  return root.IsMap() && root["pipelineInfo"] && root["root"] && !root["kind"];
}

ParamType v2_type(const std::string& name) {
  ParamType type;
  if (name == "STRING") type.kind = ParamKind::String;
  if (name == "NUMBER_INTEGER") type.kind = ParamKind::Int;
  if (name == "NUMBER_DOUBLE") type.kind = ParamKind::Float;
  if (name == "BOOLEAN") type.kind = ParamKind::Bool;
  if (name == "LIST") type = ParamType{ParamKind::List, {ParamType{}}};
  if (name == "STRUCT") type = ParamType{ParamKind::Map, {ParamType{}}};
  return type;
}

// root.inputDefinitions.parameters of a KFP v2 pipeline spec: typed, with defaults and
// descriptions (the spec has no enumerations or ranges).
bool read_v2_signature(const YAML::Node& root, Signature& out) {
  YAML::Node info = root["pipelineInfo"];
  out.name = info.IsMap() ? scalar_text(info["name"]) : std::string();
  out.description = info.IsMap() ? scalar_text(info["description"]) : std::string();
  YAML::Node inputs = root["root"].IsMap() ? root["root"]["inputDefinitions"] : YAML::Node();
  YAML::Node parameters = inputs && inputs.IsMap() ? inputs["parameters"] : YAML::Node();
  if (parameters && parameters.IsMap()) {
    for (const auto& item : parameters) {
      DeclaredParam param;
      param.name = scalar_text(item.first);
      const YAML::Node& definition = item.second;
      if (definition.IsMap()) {
        param.type = v2_type(scalar_text(definition["parameterType"]));
        if (YAML::Node value = definition["defaultValue"]; value && !value.IsNull()) {
          json as_json = yaml_to_json(value);
          param.default_value = canonical_json(param.type, as_json)
                                    .value_or(as_json.is_string() ? as_json.get<std::string>()
                                                                  : dump(as_json));
        }
        param.description = scalar_text(definition["description"]);
      }
      out.params.push_back(std::move(param));
    }
  }
  out.source = SignatureSource::KfpV2PipelineSpec;
  return true;
}

}  // namespace

bool is_v2_pipeline_spec(std::string_view yaml) {
  try {
    std::vector<YAML::Node> documents;
    std::string error;
    return input::load_yaml_all(yaml, documents, error) && !documents.empty() &&
           is_v2_pipeline_spec(documents.front());
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::string typed_json_value(const ParamType& type, const std::string& canonical) {
  switch (type.kind) {
    case ParamKind::Int:
    case ParamKind::Float:
    case ParamKind::Bool:
    case ParamKind::List:
    case ParamKind::Map: {
      json value = input::parse_json(canonical);
      if (!value.is_discarded()) return dump(value);
      break;
    }
    case ParamKind::String:
    case ParamKind::Any:
      break;
  }
  return dump(json(canonical));
}

std::string ParamType::spelling() const {
  switch (kind) {
    case ParamKind::Any: return "any";
    case ParamKind::String: return "string";
    case ParamKind::Int: return "int";
    case ParamKind::Float: return "float";
    case ParamKind::Bool: return "bool";
    case ParamKind::List: return "list<" + element[0].spelling() + ">";
    case ParamKind::Map: return "map<" + element[0].spelling() + ">";
  }
  PIPEC_UNREACHABLE();
}

std::optional<ParamType> parse_param_type(std::string_view spelling) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  };
  spelling = trim(spelling);
  if (spelling == "string") return ParamType{ParamKind::String, {}};
  if (spelling == "int") return ParamType{ParamKind::Int, {}};
  if (spelling == "float") return ParamType{ParamKind::Float, {}};
  if (spelling == "bool") return ParamType{ParamKind::Bool, {}};
  if (spelling == "any") return ParamType{ParamKind::Any, {}};
  for (auto [prefix, kind] : {std::pair{std::string_view("list<"), ParamKind::List},
                              std::pair{std::string_view("map<"), ParamKind::Map}}) {
    if (spelling.size() > prefix.size() && spelling.substr(0, prefix.size()) == prefix &&
        spelling.back() == '>') {
      auto element = parse_param_type(
          spelling.substr(prefix.size(), spelling.size() - prefix.size() - 1));
      if (!element) return std::nullopt;
      return ParamType{kind, {*element}};
    }
  }
  return std::nullopt;
}

bool read_parameters_json(std::string_view text, Signature& out, std::string& error) {
  return read_pipec_annotation(std::string(text), out, error);
}

const DeclaredParam* Signature::find(std::string_view name) const {
  for (const auto& param : params)
    if (param.name == name) return &param;
  return nullptr;
}

bool read_signature(std::string_view workflow_yaml, Signature& out, std::string& error) {
  out = Signature{};
  YAML::Node root;
  // A KFP v2 file may hold a second document (the platform spec): the first one counts.
  std::vector<YAML::Node> documents;
  std::string problem;
  if (!input::load_yaml_all(workflow_yaml, documents, problem)) {
    error = fmt::format("the workflow is not valid YAML: {}", problem);
    return false;
  }
  if (!documents.empty()) root = documents.front();
  if (is_v2_pipeline_spec(root)) return read_v2_signature(root, out);
  if (!root.IsMap() || scalar_text(root["kind"]) != "Workflow" ||
      scalar_text(root["apiVersion"]).rfind("argoproj.io/", 0) != 0) {
    error = "neither an Argo Workflow (apiVersion argoproj.io/v1alpha1, kind Workflow) nor a "
            "KFP v2 pipeline spec (pipelineInfo, root); pipec runs KFP v1 (Argo) and v2 pipelines";
    return false;
  }
  YAML::Node metadata = root["metadata"];
  YAML::Node annotations = metadata && metadata.IsMap() ? metadata["annotations"] : YAML::Node();
  auto annotation = [&](std::string_view key) -> std::optional<std::string> {
    if (!annotations || !annotations.IsMap()) return std::nullopt;
    YAML::Node node = annotations[std::string(key)];
    if (!node || !node.IsScalar()) return std::nullopt;
    return node.Scalar();
  };

  // spec.arguments.parameters: names, string defaults and Argo enums.
  std::vector<DeclaredParam> arguments;
  YAML::Node spec = root["spec"];
  YAML::Node args = spec && spec.IsMap() && spec["arguments"] && spec["arguments"].IsMap()
                        ? spec["arguments"]["parameters"]
                        : YAML::Node();
  if (args && args.IsSequence()) {
    for (const auto& item : args) {
      if (!item.IsMap() || !item["name"]) continue;
      DeclaredParam param;
      param.name = scalar_text(item["name"]);
      if (item["value"] && item["value"].IsScalar()) param.default_value = item["value"].Scalar();
      if (item["enum"] && item["enum"].IsSequence())
        for (const auto& allowed : item["enum"]) param.allowed.push_back(scalar_text(allowed));
      arguments.push_back(std::move(param));
    }
  }

  json kfp_spec;
  if (auto text = annotation(kKfpAnnotation)) {
    kfp_spec = input::parse_json(*text);
    if (kfp_spec.is_discarded() || !kfp_spec.is_object()) kfp_spec = json();
  }
  // The KFP SDK's annotation: strings where it has text.
  auto kfp_problem = [&](const json& object, std::string_view where) {
    for (const char* key : {"name", "description", "type"}) {
      if (std::string p = member_problem(object, key, &json::is_string, "a string"); !p.empty()) {
        error = fmt::format("annotation {}: {}{}", kKfpAnnotation, where, p);
        return true;
      }
    }
    return false;
  };
  if (kfp_spec.is_object() && kfp_problem(kfp_spec, "")) return false;
  if (kfp_spec.is_object()) {
    out.name = kfp_spec.value("name", "");
    out.description = kfp_spec.value("description", "");
  }
  if (out.name.empty() && metadata && metadata.IsMap()) {
    out.name = scalar_text(metadata["generateName"]);
    while (!out.name.empty() && out.name.back() == '-') out.name.pop_back();
    if (out.name.empty()) out.name = scalar_text(metadata["name"]);
  }

  if (auto text = annotation(kPipecAnnotation)) return read_pipec_annotation(*text, out, error);

  if (kfp_spec.is_object() && kfp_spec.contains("inputs") && kfp_spec["inputs"].is_array()) {
    for (const json& input : kfp_spec["inputs"]) {
      if (!input.is_object() || !input.contains("name") || !input["name"].is_string()) continue;
      if (kfp_problem(input, fmt::format("input '{}': ", shown(input["name"].get<std::string>()))))
        return false;
      DeclaredParam param;
      param.name = input["name"].get<std::string>();
      param.type = kfp_type(input.value("type", ""));
      if (input.contains("default"))
        param.default_value =
            input["default"].is_string() ? input["default"].get<std::string>() : dump(input["default"]);
      param.description = input.value("description", "");
      for (const auto& argument : arguments)
        if (argument.name == param.name) param.allowed = argument.allowed;
      out.params.push_back(std::move(param));
    }
    out.source = SignatureSource::KfpPipelineSpec;
    return true;
  }

  out.params = std::move(arguments);
  out.source = SignatureSource::WorkflowArguments;
  return true;
}

bool parse_override(std::string_view argument, Override& out, std::string& error) {
  std::size_t eq = argument.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    error = fmt::format("-p '{}': expected NAME=VALUE (e.g. -p batch_size=64)", shown(argument));
    return false;
  }
  out = Override{std::string(argument.substr(0, eq)), std::string(argument.substr(eq + 1)), false,
                 "-p"};
  // Values reach JSON documents, the server and processes as text: text is UTF-8.
  if (std::size_t bad = first_invalid_utf8(argument); bad != std::string_view::npos) {
    error = fmt::format("-p '{}': {} at byte {} of the {} is not UTF-8", shown_bytes(argument),
                        byte_text(argument[bad]), bad < eq ? bad + 1 : bad - eq,
                        bad < eq ? "name" : "value");
    return false;
  }
  return true;
}

bool read_params_file(std::string_view content, const std::string& path,
                      std::vector<Override>& out, std::vector<std::string>& errors) {
  YAML::Node root;
  std::string problem;
  if (!input::load_yaml(content, root, problem)) {
    errors.push_back(fmt::format("{}: not valid YAML or JSON: {}", path, problem));
    return false;
  }
  if (root.IsNull()) return true;
  if (!root.IsMap()) {
    errors.push_back(fmt::format("{}: expected a mapping of parameter names to values", path));
    return false;
  }
  bool ok = true;
  std::set<std::string> names;
  for (const auto& item : root) {
    std::string name = item.first.IsScalar() ? item.first.Scalar() : std::string();
    const YAML::Node& value = item.second;
    if (std::string where = not_utf8(item.first).value_or(not_utf8(value).value_or("")); !where.empty()) {
      errors.push_back(fmt::format("{}:{}: parameter '{}' holds text that is not UTF-8", path, where,
                                   shown_bytes(name)));
      ok = false;
      continue;
    }
    if (!names.insert(name).second) {
      // As the language refuses a duplicate key, not the last one winning.
      errors.push_back(fmt::format("{}:{}:{}: parameter '{}' is given twice; keep one", path,
                                   item.first.Mark().line + 1, item.first.Mark().column + 1, shown(name)));
      ok = false;
      continue;
    }
    if (value.IsScalar()) {
      out.push_back(Override{name, value.Scalar(), false, path});
    } else if (value.IsSequence() || value.IsMap()) {
      std::string duplicate;
      json as_json = yaml_to_json(value, &duplicate);
      if (!duplicate.empty()) {
        errors.push_back(fmt::format("{}: parameter '{}': {}; keep one", path, shown(name), duplicate));
        ok = false;
        continue;
      }
      out.push_back(Override{name, dump(as_json), true, path});
    } else {
      errors.push_back(fmt::format("{}: parameter '{}' has no value", path, name));
      ok = false;
    }
  }
  return ok;
}

bool load_params_file(const std::string& path, std::vector<Override>& out,
                      std::vector<std::string>& errors) {
  std::string content, error;
  if (!input::read_file(path, input::kMaxParamsFileBytes, content, error)) {
    errors.push_back(fmt::format("cannot read '{}': {}", path, error));
    return false;
  }
  return read_params_file(content, path, out, errors);
}

bool canonical_value(const ParamType& type, std::string_view text, bool structured,
                     std::string& canonical, std::string& problem) {
  if (structured && type.kind != ParamKind::List && type.kind != ParamKind::Map &&
      type.kind != ParamKind::Any) {
    problem = fmt::format("{} is a list or map, not {}", shown(text), type.spelling());
    return false;
  }
  switch (type.kind) {
    case ParamKind::Any:
    case ParamKind::String:
      canonical.assign(text);
      return true;
    case ParamKind::Int:
      if (auto value = parse_int(text)) {
        canonical = std::to_string(*value);
        return true;
      }
      problem = fmt::format("'{}' is not an integer (e.g. 42)", shown(text));
      return false;
    case ParamKind::Float:
      if (auto value = parse_float(text)) {
        canonical = dump(json(*value));
        return true;
      }
      problem = fmt::format("'{}' is not a number (e.g. 0.5 or 1e-3)", shown(text));
      return false;
    case ParamKind::Bool:
      if (text == "true" || text == "false") {
        canonical.assign(text);
        return true;
      }
      problem = fmt::format("'{}' is not a bool (true or false)", shown(text));
      return false;
    case ParamKind::List:
    case ParamKind::Map: {
      // Bounded nesting first (input/json), then a key an object holds twice is refused
      // (the parser would keep the last one).
      std::vector<std::set<std::string>> keys;  // of each object open
      std::string duplicate;
      json::parser_callback_t track = [&](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        else if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
        else if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
                 duplicate.empty())
          duplicate = parsed.get<std::string>();
        return true;
      };
      json value = input::json_nesting_problem(text).empty() ? json::parse(text, track, false)
                                                             : json(json::value_t::discarded);
      if (!value.is_discarded() && !duplicate.empty()) {
        problem = fmt::format("'{}' has the key '{}' twice; keep one", shown(text), shown(duplicate));
        return false;
      }
      if (value.is_discarded()) {
        std::string nesting = input::json_nesting_problem(text);
        problem = nesting.empty() ? fmt::format("'{}' is not JSON (e.g. {})", shown(text),
                                                type.kind == ParamKind::List ? "[1, 2]" : "{\"a\": 1}")
                                  : fmt::format("'{}' is not accepted: {}", shown(text), nesting);
        return false;
      }
      json checked;
      if (!check_json(type, value, "", checked, problem)) return false;
      canonical = dump(checked);
      return true;
    }
  }
  PIPEC_UNREACHABLE();
}

bool check_overrides(const Signature& signature, const std::vector<Override>& overrides,
                     std::vector<std::pair<std::string, std::string>>& values,
                     std::vector<std::string>& errors) {
  std::size_t errors_before = errors.size();
  std::vector<std::string> names;
  for (const auto& param : signature.params) names.push_back(param.name);

  std::map<std::string, std::string> chosen;  // name -> canonical
  std::set<std::string> seen_on_command_line;
  for (const Override& given : overrides) {
    std::string from = given.origin == "-p" ? std::string() : fmt::format(" (in {})", given.origin);
    const DeclaredParam* param = signature.find(given.name);
    if (!param) {
      std::string near = spellcheck(given.name, names);
      if (!near.empty()) {
        errors.push_back(
            fmt::format("unknown parameter '{}'{}; did you mean '{}'?", given.name, from, near));
      } else if (names.empty()) {
        errors.push_back(fmt::format("unknown parameter '{}'{}; the pipeline has no parameters",
                                     given.name, from));
      } else {
        errors.push_back(fmt::format("unknown parameter '{}'{}; the parameters are: {}",
                                     given.name, from, fmt::join(names, ", ")));
      }
      continue;
    }
    if (given.origin == "-p" && !seen_on_command_line.insert(given.name).second) {
      errors.push_back(fmt::format("parameter '{}' is given twice with -p", given.name));
      continue;
    }
    std::string canonical, problem;
    if (!canonical_value(param->type, given.text, given.structured, canonical, problem)) {
      errors.push_back(fmt::format("parameter '{}' ({}){}: {}", given.name,
                                   param->type.spelling(), from, problem));
      continue;
    }
    if (!param->allowed.empty() &&
        std::find(param->allowed.begin(), param->allowed.end(), canonical) == param->allowed.end()) {
      std::string near = canonical.size() > 2 ? spellcheck(canonical, param->allowed) : "";
      errors.push_back(fmt::format("parameter '{}'{}: '{}' is not one of {}{}", given.name, from,
                                   shown(canonical), quoted_list(param->allowed),
                                   near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
      continue;
    }
    if ((param->min || param->max) &&
        (param->type.kind == ParamKind::Int || param->type.kind == ParamKind::Float)) {
      double number = std::strtod(canonical.c_str(), nullptr);
      if (param->min && number < *param->min) {
        errors.push_back(fmt::format("parameter '{}'{}: {} is below the minimum {}", given.name,
                                     from, canonical, *param->min));
        continue;
      }
      if (param->max && number > *param->max) {
        errors.push_back(fmt::format("parameter '{}'{}: {} is above the maximum {}", given.name,
                                     from, canonical, *param->max));
        continue;
      }
    }
    chosen[given.name] = canonical;
  }
  for (const auto& param : signature.params) {
    if (param.required() && !chosen.count(param.name)) {
      bool attempted = false;
      for (const auto& given : overrides) attempted = attempted || given.name == param.name;
      if (!attempted)
        errors.push_back(fmt::format("parameter '{}' ({}) is required and has no default: give it "
                                     "with -p {}=VALUE",
                                     param.name, param.type.spelling(), param.name));
    }
  }
  if (errors.size() != errors_before) return false;
  values.clear();
  for (const auto& param : signature.params) {
    auto it = chosen.find(param.name);
    if (it != chosen.end()) values.emplace_back(param.name, it->second);
  }
  return true;
}

}  // namespace pipec::client::kfp
