// A component's command line for one step: every placeholder resolved for the arguments the
// step gives, as kfp 1.8.22's _components.py (_resolve_command_line_and_paths) and
// dsl/_component_bridge.py (defaults are arguments) resolve them. Nothing here runs or
// interprets a value: every word becomes an ir::Value of literal text and op-parameter
// references.
#include "compiler/sema/component_detail.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pipec::sema::component {

namespace {

using detail::lower;
using ir::Type;
using ir::TypeKind;

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
  const Output& output(const std::string& kfp) const {
    return *std::find_if(c_.outputs.begin(), c_.outputs.end(),
                         [&](const Output& o) { return o.kfp_name == kfp; });
  }
  // A placeholder KFP v2's launcher resolves; `v1` is what kfp 1.8.22 writes on Argo.
  static Word kfp_v2(std::string v1, std::string v2) {
    Word w;
    w.push_back(ir::Part{std::move(v1), std::nullopt, std::move(v2)});
    return w;
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
      case Arg::Kind::InputValue: {
        const Input& in = input(a.text);
        if (!present(in)) return std::nullopt;  // optional: left out (kfp raises otherwise)
        // A constant not given in the step (a default) is written as kfp writes it.
        return std::vector<Word>{ref(in)};
      }
      case Arg::Kind::InputPath: {  // kfp-v2: the path KFP downloads the artifact to
        const Input& in = input(a.text);
        if (!present(in)) return std::nullopt;
        return std::vector<Word>{kfp_v2(detail::input_file(in.kfp_name),
                                        fmt::format("{{{{$.inputs.artifacts['{}'].path}}}}", in.name))};
      }
      case Arg::Kind::OutputPath: {  // kfp-v2: the file KFP collects the output from
        const Output& o = output(a.text);
        if (!o.kfp_writes) return std::vector<Word>{text(o.path)};
        return std::vector<Word>{kfp_v2(o.path, o.type.kind == TypeKind::File
                                                    ? fmt::format("{{{{$.outputs.artifacts['{}'].path}}}}", o.name)
                                                    : fmt::format("{{{{$.outputs.parameters['{}'].output_file}}}}", o.name))};
      }
      case Arg::Kind::InputUri: {
        const Input& in = input(a.text);
        if (!present(in)) return std::nullopt;
        return std::vector<Word>{kfp_v2(fmt::format("{{{{$.inputs.artifacts['{}'].uri}}}}", in.kfp_name),
                                        fmt::format("{{{{$.inputs.artifacts['{}'].uri}}}}", in.name))};
      }
      case Arg::Kind::OutputUri: {
        const Output& o = output(a.text);
        return std::vector<Word>{kfp_v2(fmt::format("{{{{$.outputs.artifacts['{}'].uri}}}}", o.kfp_name),
                                        fmt::format("{{{{$.outputs.artifacts['{}'].uri}}}}", o.name))};
      }
      case Arg::Kind::ExecutorInput:
        return std::vector<Word>{kfp_v2("{{$}}", "{{$}}")};
      case Arg::Kind::V2Text:
        return std::vector<Word>{kfp_v2(a.text, a.items.front().text)};
      case Arg::Kind::OutputMetadata:  // kfp 1.8.22's OUTPUT_METADATA_JSON
        return std::vector<Word>{text("/tmp/outputs/executor_output.json")};
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
    bool plain = !p.ref && p.kfp_v2.empty();
    if (plain && !merged.empty() && !merged.back().ref && merged.back().kfp_v2.empty()) {
      merged.back().text += p.text;
    } else if (!plain || !p.text.empty()) {
      merged.push_back(std::move(p));
    }
  }
  bool all_text = std::none_of(merged.begin(), merged.end(), [](const ir::Part& p) {
    return p.ref.has_value() || !p.kfp_v2.empty();
  });
  if (all_text) {
    v.kind = ir::Value::Kind::Literal;
    v.literal = merged.empty() ? std::string() : merged.front().text;
    return v;
  }
  v.kind = ir::Value::Kind::Interpolation;
  v.parts = std::move(merged);
  return v;
}

}  // namespace

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
    if (p.type.kind == TypeKind::File) {
      p.path = detail::input_file(in.kfp_name);
      p.kfp_reads = true;  // through its placeholders, where KFP says
    }
    op.params.push_back(std::move(p));
  }
  r.key += ':';
  op.image.type = Type::scalar(TypeKind::String);
  op.image.range = c.range;
  if (c.image_param.empty()) {
    op.image.kind = ir::Value::Kind::Literal;
    op.image.literal = c.image;
  } else {  // the step's argument (component.hpp)
    op.image.kind = ir::Value::Kind::Ref;
    ir::Ref r;
    r.kind = ir::Ref::Kind::OpParam;
    r.name = c.image_param;
    op.image.ref = std::move(r);
  }
  // Each word is placed at the command-line item it comes from (an error about it points there).
  auto words = [&](const std::vector<Arg>& items, std::vector<ir::Value>& out) {
    for (const auto& a : items)
      for (auto& w : r.list({a})) out.push_back(word_value(std::move(w), a.range.valid() ? a.range : c.range));
  };
  words(c.command, op.command);
  words(c.args, op.args);
  for (const auto& [k, v] : c.env) {
    ir::Value value;
    value.type = Type::scalar(TypeKind::String);
    value.literal = v;
    value.range = c.range;
    op.env.emplace_back(k, std::move(value));
  }
  for (const auto& o : c.outputs)
    op.outputs.push_back(ir::OpOutput{o.name, o.type, o.path, o.doc, o.kfp_writes});
  key = r.key;
  if (!r.ok) return std::nullopt;
  return op;
}

}  // namespace pipec::sema::component
