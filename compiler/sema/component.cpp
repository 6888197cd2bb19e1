// KFP v1 ComponentSpec reading and placeholder resolution. The rules follow kfp 1.8.22's
// sdk/python/kfp/components (_structures.py, _components.py's
// _resolve_command_line_and_paths, _naming.py) and dsl/_component_bridge.py (defaults are
// arguments). Nothing here runs or interprets a value: every word becomes an ir::Value of
// literal text and op-parameter references.
#include "compiler/sema/component.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "compiler/syntax/lexer.hpp"

namespace pipec::sema::component {

namespace {

using ir::Type;
using ir::TypeKind;

//// A YAML tree with places, built from yaml-cpp's events ////////////////////////////

struct YNode {
  enum class Kind { Null, Scalar, Seq, Map };
  Kind kind = Kind::Null;
  std::string text;
  bool plain = false;  // an unquoted scalar (YAML 1.1 may read it as a number or bool)
  std::vector<YNode> items;
  std::vector<std::pair<YNode, YNode>> entries;
  SourceRange range;

  const YNode* get(std::string_view key) const;

  // Declared here, defaulted below, where a pair of YNodes is complete: clang cannot
  // instantiate the vector of pairs while YNode's implicit members are being defined (the
  // fuzz build is clang's).
  YNode();
  YNode(const YNode&);
  YNode(YNode&&) noexcept;
  YNode& operator=(const YNode&);
  YNode& operator=(YNode&&) noexcept;
  ~YNode();
};

YNode::YNode() = default;
YNode::YNode(const YNode&) = default;
YNode::YNode(YNode&&) noexcept = default;
YNode& YNode::operator=(const YNode&) = default;
YNode& YNode::operator=(YNode&&) noexcept = default;
YNode::~YNode() = default;

const YNode* YNode::get(std::string_view key) const {
  for (const auto& entry : entries)
    if (entry.first.kind == Kind::Scalar && entry.first.text == key) return &entry.second;
  return nullptr;
}

struct Refused : std::runtime_error {
  Refused(const std::string& what, SourceRange at) : std::runtime_error(what), range(at) {}
  SourceRange range;
};

class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(FileId file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_anchor(mark, anchor);
    YNode n;
    n.range = at(mark, 1);
    add(std::move(n));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw Refused("YAML aliases (*name) are not accepted in a component", at(mark, 1));
  }
  void OnAnchor(const YAML::Mark& mark, const std::string&) override {
    throw Refused("YAML anchors (&name) are not accepted in a component", at(mark, 1));
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_anchor(mark, anchor);
    YNode n;
    n.kind = YNode::Kind::Scalar;
    n.text = value;
    n.plain = tag == "?";
    n.range = at(mark, std::max<std::size_t>(1, value.size()));
    add(std::move(n));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, YNode::Kind::Seq);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, YNode::Kind::Map);
  }
  void OnMapEnd() override { close(); }

  bool done() const { return has_root_; }
  YNode take() { return std::move(root_); }

 private:
  SourceRange at(const YAML::Mark& mark, std::size_t length) const {
    auto begin = static_cast<std::uint32_t>(std::max(0, mark.pos));
    return {file_, begin, begin + static_cast<std::uint32_t>(length)};
  }
  void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor)
      throw Refused("YAML anchors (&name) are not accepted in a component", at(mark, 1));
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor, YNode::Kind kind) {
    check_anchor(mark, anchor);
    if (static_cast<int>(stack_.size()) >= kMaxDepth)
      throw Refused(fmt::format("the component nests deeper than {} levels", kMaxDepth),
                    at(mark, 1));
    YNode n;
    n.kind = kind;
    n.range = at(mark, 1);
    stack_.push_back(std::move(n));
    pending_key_.emplace_back();
  }
  void close() {
    YNode n = std::move(stack_.back());
    stack_.pop_back();
    pending_key_.pop_back();
    add(std::move(n));
  }
  void add(YNode n) {
    if (stack_.empty()) {
      root_ = std::move(n);
      has_root_ = true;
      return;
    }
    YNode& top = stack_.back();
    if (top.kind == YNode::Kind::Seq) {
      top.items.push_back(std::move(n));
      return;
    }
    auto& key = pending_key_.back();
    if (!key) {
      if (n.kind == YNode::Kind::Seq || n.kind == YNode::Kind::Map)
        throw Refused("a map key must be a scalar", n.range);
      key = std::move(n);
      return;
    }
    for (const auto& [k, v] : top.entries)
      if (k.text == key->text)
        throw Refused(fmt::format("duplicate key '{}'", key->text), key->range);
    top.entries.emplace_back(std::move(*key), std::move(n));
    key.reset();
  }

  FileId file_;
  std::vector<YNode> stack_;
  std::vector<std::optional<YNode>> pending_key_;
  YNode root_;
  bool has_root_ = false;
};

//// Reading the spec ///////////////////////////////////////////////////////////////

const char* kind_name(YNode::Kind k) {
  switch (k) {
    case YNode::Kind::Null: return "nothing";
    case YNode::Kind::Scalar: return "a scalar";
    case YNode::Kind::Seq: return "a list";
    case YNode::Kind::Map: return "a map";
  }
  return "?";
}

bool is_true_word(const std::string& s) {
  static const std::set<std::string> words = {"yes", "Yes", "YES", "true", "True", "TRUE",
                                              "on",  "On",  "ON"};
  return words.count(s) > 0;
}
bool is_false_word(const std::string& s) {
  static const std::set<std::string> words = {"no", "No", "NO", "false", "False", "FALSE",
                                              "off", "Off", "OFF"};
  return words.count(s) > 0;
}

// Whether PyYAML (YAML 1.1) reads an unquoted scalar as a string, not as an int, a float,
// a bool or null.
bool is_yaml_string(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return false;
  if (is_true_word(s) || is_false_word(s)) return false;
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return true;
  if (s.compare(i, std::string::npos, ".inf") == 0 || s.compare(i, std::string::npos, ".Inf") == 0 ||
      s == ".nan" || s == ".NaN")
    return false;
  bool digit = false, dot = false;
  for (std::size_t k = i; k < s.size(); ++k) {
    char ch = s[k];
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '_') {
      digit = digit || ch != '_';
    } else if (ch == '.' && !dot) {
      dot = true;
    } else if ((ch == 'e' || ch == 'E') && dot && digit && k + 1 < s.size() &&
               (s[k + 1] == '-' || s[k + 1] == '+')) {
      ++k;  // YAML 1.1 floats need a '.' and a signed exponent
    } else if ((ch == 'x' || ch == 'o') && k == i + 1 && s[i] == '0') {
      continue;
    } else {
      return true;
    }
  }
  return !digit;
}

// The text kfp gives a YAML scalar it turns into a word: str() of what PyYAML (YAML 1.1)
// read, so an unquoted `true` is "True".
std::string word_text(const YNode& n) {
  if (!n.plain) return n.text;
  if (is_true_word(n.text)) return "True";
  if (is_false_word(n.text)) return "False";
  return n.text;
}

// The KFP type's name: a string, or the one key of a map (`{GCSPath: {data_type: CSV}}`).
std::string type_name(const YNode* t) {
  if (!t || t->kind == YNode::Kind::Null) return "";
  if (t->kind == YNode::Kind::Scalar) return t->text;
  if (t->kind == YNode::Kind::Map && !t->entries.empty()) return t->entries.front().first.text;
  return "";
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

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

// pipec's keywords: a KFP name that is one gets a trailing `_`.
bool is_keyword(const std::string& s) { return syntax::lex::is_keyword(s); }

std::string op_name_of(const std::string& kfp) {
  std::string n = python_name(kfp);
  if (n.empty()) n = "component";
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
  for (std::size_t i : convert) {
    std::string n = python_name(names[i]);
    for (int k = 2; used.count(n); ++k) n = python_name(names[i] + " " + std::to_string(k));
    out[i] = n;
    used.insert(n);
  }
  for (auto& n : out) {
    if (n.empty()) n = "input";
    if (is_keyword(n)) n += "_";
  }
  return out;
}

class Reader {
 public:
  Reader(Diagnostics& diags) : diags_(diags) {}

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
        if (impl->get("graph"))
          fail(impl->range, "'implementation.graph' (a graph component) is not supported; "
                            "only 'implementation.container'");
        else
          fail(impl->range, "the component has no 'implementation.container'");
      } else {
        read_container(*container, c);
        file_inputs(c);
      }
    }
    return ok_;
  }

 private:
  bool fail(SourceRange at, std::string message) {
    diags_.error(at, std::move(message));
    ok_ = false;
    return false;
  }
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
    std::vector<std::string> kfp_names;
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
      if (std::any_of(c.inputs.begin(), c.inputs.end(),
                      [&](const Input& o) { return o.kfp_name == in.kfp_name; })) {
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
      kfp_names.push_back(in.kfp_name);
      c.inputs.push_back(std::move(in));
    }
    auto names = unique_names(kfp_names);
    for (std::size_t i = 0; i < c.inputs.size(); ++i) c.inputs[i].name = names[i];
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
    std::vector<std::string> kfp_names;
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
      if (std::any_of(c.outputs.begin(), c.outputs.end(),
                      [&](const Output& o) { return o.kfp_name == out.kfp_name; })) {
        fail(name->range, fmt::format("duplicate output '{}'", out.kfp_name));
        continue;
      }
      out.kfp_type = type_name(item.get("type"));
      out.type = output_type(out.kfp_type);
      if (const YNode* d = scalar(item, "description")) out.doc = d->text;
      out.path = "/tmp/outputs/" + sanitize_file_name(out.kfp_name) + "/data";
      kfp_names.push_back(out.kfp_name);
      c.outputs.push_back(std::move(out));
    }
    auto names = unique_names(kfp_names);
    for (std::size_t i = 0; i < c.outputs.size(); ++i) c.outputs[i].name = names[i];
  }

  void read_container(const YNode& container, Component& c) {
    if (const YNode* image = scalar(container, "image", true)) {
      c.image = image->text;
      if (c.image.empty()) fail(image->range, "field 'image' is empty: a container needs an image");
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
        if (v.kind != YNode::Kind::Scalar || v.text.empty() || v.text[0] != '/') {
          fail(v.range, fmt::format("the path of output '{}' must be absolute", k.text));
          continue;
        }
        it->path = v.text;
      }
    }
  }

  // inputPath inputs are files: a step passes another step's file output. A default
  // cannot be a file, so one with a default becomes optional (left out unless given).
  static void file_inputs(Component& c) {
    std::set<std::string> paths;
    auto walk = [&](auto&& self, const std::vector<Arg>& items) -> void {
      for (const auto& a : items) {
        if (a.kind == Arg::Kind::InputPath) paths.insert(a.text);
        self(self, a.items);
        self(self, a.then_items);
        self(self, a.else_items);
      }
    };
    walk(walk, c.command);
    walk(walk, c.args);
    for (auto& in : c.inputs) {
      if (!paths.count(in.kfp_name)) continue;
      in.type = Type::scalar(TypeKind::File);
      if (in.default_value) in.optional = true;
      in.default_value.reset();
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
    if (k == "outputPath") {
      if (value.kind != YNode::Kind::Scalar ||
          std::none_of(c.outputs.begin(), c.outputs.end(),
                       [&](const Output& o) { return o.kfp_name == value.text; })) {
        fail(value.range, fmt::format("'outputPath' names '{}', which is not an output",
                                      value.text));
        return std::nullopt;
      }
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
    if (k == "inputUri" || k == "outputUri" || k == "inputMetadata" || k == "outputMetadata" ||
        k == "executorInput" || k == "inputOutputPortName") {
      fail(key.range, fmt::format("placeholder '{}' (KFP's v2-compatible mode) is not supported "
                                  "yet: pipec's Argo target has no artifact URIs or executor "
                                  "input to give it",
                                  k));
      return std::nullopt;
    }
    fail(key.range, fmt::format("unknown placeholder '{}' (inputValue, inputPath, outputPath, "
                                "concat, if, isPresent)",
                                k));
    return std::nullopt;
  }

  Diagnostics& diags_;
  bool ok_ = true;
  bool in_condition_ = false;
};

//// Resolution ///////////////////////////////////////////////////////////////////

// One resolved word: parts of literal text and op-parameter references.
using Word = std::vector<ir::Part>;

class Resolver {
 public:
  Resolver(const Component& c, const std::map<std::string, Given>& given, SourceRange call,
           Diagnostics& diags)
      : c_(c), given_(given), call_(call), diags_(diags) {}

  bool ok = true;
  std::string key;

  // expand_argument_list: every item's words, None dropped.
  std::vector<Word> list(const std::vector<Arg>& items) {
    std::vector<Word> out;
    for (const auto& a : items) {
      auto words = part(a);
      if (words) out.insert(out.end(), words->begin(), words->end());
    }
    return out;
  }

 private:
  const Input& input(const std::string& kfp) const {
    return *std::find_if(c_.inputs.begin(), c_.inputs.end(),
                         [&](const Input& i) { return i.kfp_name == kfp; });
  }
  // Present: given, or has a default (kfp's bridge adds defaults to the arguments).
  bool present(const Input& in) const {
    auto it = given_.find(in.name);
    return (it != given_.end() && it->second.present) || in.default_value.has_value();
  }
  const ir::Literal* literal(const Input& in) const {
    auto it = given_.find(in.name);
    if (it != given_.end() && it->second.present) return it->second.literal;
    return in.default_value ? &*in.default_value : nullptr;
  }
  static Word text(std::string s) {
    Word w;
    w.push_back(ir::Part{std::move(s), std::nullopt});
    return w;
  }
  Word ref(const Input& in) const {
    ir::Ref r;
    r.kind = ir::Ref::Kind::OpParam;
    r.name = in.name;
    r.type = in.type;
    r.range = in.range;
    Word w;
    w.push_back(ir::Part{"", std::move(r)});
    return w;
  }

  // expand_command_part: nullopt for None, else a list of words (a string is one).
  std::optional<std::vector<Word>> part(const Arg& a) {
    switch (a.kind) {
      case Arg::Kind::Text:
        return std::vector<Word>{text(a.text)};
      case Arg::Kind::InputValue:
      case Arg::Kind::InputPath: {
        const Input& in = input(a.text);
        if (!present(in)) return std::nullopt;  // optional: left out (kfp raises otherwise)
        // A constant not given in the step (a default) is written as kfp writes it.
        return std::vector<Word>{ref(in)};
      }
      case Arg::Kind::OutputPath: {
        auto it = std::find_if(c_.outputs.begin(), c_.outputs.end(),
                               [&](const Output& o) { return o.kfp_name == a.text; });
        return std::vector<Word>{text(it->path)};
      }
      case Arg::Kind::IsPresent:
        return std::vector<Word>{text(present(input(a.text)) ? "True" : "False")};
      case Arg::Kind::Concat: {
        Word joined;
        for (auto& w : list(a.items)) joined.insert(joined.end(), w.begin(), w.end());
        return std::vector<Word>{std::move(joined)};
      }
      case Arg::Kind::If: {
        bool holds = condition(a.items.front());
        key += holds ? '1' : '0';
        return list(holds ? a.then_items : a.else_items);
      }
    }
    return std::nullopt;
  }

  // The condition's value, known when the step is checked: isPresent, a constant, or an
  // input given a constant (kfp resolves it when it compiles, with strtobool).
  bool condition(const Arg& cond) {
    std::string value;
    if (cond.kind == Arg::Kind::Text || cond.kind == Arg::Kind::IsPresent) {
      auto words = part(cond);
      value = words->front().front().text;
    } else if (cond.kind == Arg::Kind::InputValue) {
      const Input& in = input(cond.text);
      if (!present(in)) return false;
      const ir::Literal* l = literal(in);
      if (!l) {
        diags_.error(call_, fmt::format("the component's 'if' at input '{}' is decided when the "
                                        "pipeline is built: give '{}' a constant",
                                        in.kfp_name, in.name));
        ok = false;
        return false;
      }
      value = l->is_boolean() ? (l->get<bool>() ? "True" : "False") : ir::literal_text(*l);
    } else {
      diags_.error(cond.range, "a condition of 'if' must be isPresent, inputValue or a constant");
      ok = false;
      return false;
    }
    std::string v = lower(value);
    if (v == "y" || v == "yes" || v == "t" || v == "true" || v == "on" || v == "1") return true;
    if (v == "n" || v == "no" || v == "f" || v == "false" || v == "off" || v == "0") return false;
    diags_.error(cond.range, fmt::format("the condition's value '{}' is not a truth value",
                                         value));
    ok = false;
    return false;
  }

  const Component& c_;
  const std::map<std::string, Given>& given_;
  SourceRange call_;
  Diagnostics& diags_;
};

ir::Value word_value(Word w, SourceRange range) {
  ir::Value v;
  v.type = Type::scalar(TypeKind::String);
  v.range = range;
  // Merge neighbouring text; an all-text word is a literal.
  Word merged;
  for (auto& p : w) {
    if (!p.ref && !merged.empty() && !merged.back().ref) {
      merged.back().text += p.text;
    } else if (p.ref || !p.text.empty()) {
      merged.push_back(std::move(p));
    }
  }
  bool all_text = std::none_of(merged.begin(), merged.end(), [](const ir::Part& p) { return p.ref.has_value(); });
  if (all_text) {
    v.kind = ir::Value::Kind::Literal;
    v.literal = merged.empty() ? std::string() : merged.front().text;
    return v;
  }
  v.kind = ir::Value::Kind::Interpolation;
  v.parts = std::move(merged);
  return v;
}

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
  std::string text(sources.text(file));
  SourceRange whole{file, 0, 1};
  TreeBuilder builder(file);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    parser.HandleNextDocument(builder);
    if (!builder.done()) {
      diags.error(whole, "the file is empty: a component is a YAML map");
      return false;
    }
    // A second document: kfp's loader (yaml.safe_load) refuses it, so does this one.
    TreeBuilder rest(file);
    if (parser.HandleNextDocument(rest) && rest.done()) {
      diags.error(whole, "the file holds more than one YAML document; a component is one");
      return false;
    }
  } catch (const Refused& e) {
    diags.error(e.range, e.what());
    return false;
  } catch (const YAML::Exception& e) {
    auto begin = static_cast<std::uint32_t>(std::max(0, e.mark.pos));
    diags.error({file, begin, begin + 1}, fmt::format("not valid YAML: {}", e.msg));
    return false;
  }
  YNode root = builder.take();
  Reader reader(diags);
  return reader.read(root, out);
}

std::string declaration(const Component& c) {
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

std::optional<ir::ContainerOp> instantiate(const Component& c,
                                           const std::map<std::string, Given>& given,
                                           SourceRange call, Diagnostics& diags,
                                           std::string& key) {
  Resolver r(c, given, call, diags);
  ir::ContainerOp op;
  op.name = c.name;
  op.doc = c.doc;
  op.range = c.range;
  for (const auto& in : c.inputs) {
    auto it = given.find(in.name);
    bool present = (it != given.end() && it->second.present) || in.default_value;
    r.key += present ? 'p' : 'a';
    if (!present) continue;  // left out: no parameter in the container
    ir::OpParam p;
    p.name = in.name;
    p.type = in.type;
    p.default_value = in.default_value;
    p.doc = in.doc;
    if (p.type.kind == TypeKind::File)
      p.path = "/tmp/inputs/" + sanitize_file_name(in.kfp_name) + "/data";
    op.params.push_back(std::move(p));
  }
  r.key += ':';
  op.image.kind = ir::Value::Kind::Literal;
  op.image.type = Type::scalar(TypeKind::String);
  op.image.literal = c.image;
  op.image.range = c.range;
  for (auto& w : r.list(c.command)) op.command.push_back(word_value(std::move(w), c.range));
  for (auto& w : r.list(c.args)) op.args.push_back(word_value(std::move(w), c.range));
  for (const auto& [k, v] : c.env) {
    ir::Value value;
    value.type = Type::scalar(TypeKind::String);
    value.literal = v;
    value.range = c.range;
    op.env.emplace_back(k, std::move(value));
  }
  for (const auto& o : c.outputs) op.outputs.push_back(ir::OpOutput{o.name, o.type, o.path, o.doc});
  key = r.key;
  if (!r.ok) return std::nullopt;
  return op;
}

}  // namespace pipec::sema::component
