// How values reach Argo: `{{...}}` tags, expr-lang expressions for conditions and
// podSpecPatch, user text kept from being read as a tag.
#include "compiler/emit/argo/writer.hpp"

#include "compiler/emit/yaml/yaml_writer.hpp"
#include "rules/names.hpp"
#include "compiler/ir/print.hpp"

namespace pipec::emit::argo::detail {

using namespace yaml;  // the shared YAML writer (compiler/emit/yaml)

/// An expr-lang string literal ('...') holding `text`. Braces are escaped so that the
/// literal can never close Argo's `{{=...}}` tag.
std::string expr_string(std::string_view text) { return ir::quoted_string(text, true); }

/// User text as Argo must be given it so that it arrives unchanged: Argo reads `{{` as the
/// start of a tag in every string of a template, with no escape of its own. A run of two
/// or more `{` (or one `{` right before a tag of ours, when `tag_follows`) is written as
/// the expression tag `{{='\u007b...'}}`, which Argo evaluates to exactly those braces.
std::string argo_text(std::string_view text, bool tag_follows) {
  if (text.find('{') == std::string_view::npos) return std::string(text);
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '{') {
      out += text[i++];
      continue;
    }
    std::size_t run = 0;
    while (i + run < text.size() && text[i + run] == '{') ++run;
    bool at_end = i + run == text.size();
    if (run >= 2 || (at_end && tag_follows)) {
      out += "{{='";
      for (std::size_t k = 0; k < run; ++k) out += "\\u007b";
      out += "'}}";
    } else {
      out.append(run, '{');
    }
    i += run;
  }
  return out;
}

// Where a ref's value lives in the scope of a DAG template: a workflow parameter, an
// input of the template, or an output of a task of the same DAG. Values that come from
// outside a loop body are imported as inputs of its template.
WorkflowWriter::RefPath WorkflowWriter::resolve(const ir::Ref& r, Scope& scope) {
  switch (r.kind) {
    case ir::Ref::Kind::Param:
      // A called pipeline's parameters are inputs of its template, imported by its loops.
      if (cur_ == &p_) return {"workflow", r.name, {}};
      if (scope.dag == ir::Plan::kMain) return {"inputs", r.name, {}};
      break;
    case ir::Ref::Kind::OpParam: return {"inputs", r.name, {}};
    case ir::Ref::Kind::StepOutput: {
      if (scope.dag == ir::Plan::kNoDag) break;
      ir::Plan::Route route = cur_->plan.route(scope.dag, r.name);
      if (route.kind == ir::Plan::Route::Kind::Sibling) return {"tasks", to_dns1123(r.name), r.field};
      if (route.kind == ir::Plan::Route::Kind::FanIn)
        return {"tasks", route.through.front(), export_name(r.name, r.field)};
      break;
    }
    case ir::Ref::Kind::LoopItem: break;
    case ir::Ref::Kind::Run: return {"workflow", r.field, {}};  // argo_ref, expr_ref
  }
  std::string key = ref_key(r);
  auto it = scope.imports.find(key);
  if (it == scope.imports.end()) {
    std::string input = r.field.empty() ? r.name : r.name + "-" + r.field;
    it = scope.imports.emplace(key, std::make_pair(input, r)).first;
    scope.import_order.push_back(key);
  }
  return {"inputs", it->second.first, {}};
}

// A ref as an Argo `{{...}}` tag.
// A file is an artifact: `{{tasks.T.outputs.artifacts.O}}` or `{{inputs.artifacts.I}}`
// (for a task's `from`); inside its op's body, its path.
std::string WorkflowWriter::argo_ref(const ir::Ref& r, Scope& scope) {
  // `run.status`, `run.failures` in `finally`: Argo's own globals of an exit handler.
  if (r.kind == ir::Ref::Kind::Run) return "{{workflow." + r.field + "}}";
  RefPath path = resolve(r, scope);
  std::string_view kind = is_file(r) ? "artifacts" : "parameters";
  std::string tag;  // built in place: this runs for every argument of every step
  if (path.output.empty()) {
    std::string_view root = path.root;
    tag.reserve(root.size() + kind.size() + path.name.size() + 6);
    tag.append("{{").append(root).append(".").append(kind).append(".").append(path.name).append("}}");
  } else {
    tag.reserve(kind.size() + path.name.size() + path.output.size() + 20);
    tag.append("{{tasks.").append(path.name).append(".outputs.").append(kind).append(".");
    tag.append(path.output).append("}}");
  }
  return tag;
}

std::string WorkflowWriter::argo_value(const ir::Value& v, Scope& scope) {
  if (const ir::Ref* r = ir::whole_ref(v)) return argo_ref(*r, scope);
  switch (v.kind) {
    case ir::Value::Kind::Literal: return argo_text(ir::literal_text(v.literal));
    case ir::Value::Kind::Interpolation: {
      // A word that mixes text and values: Argo puts each value into the word. Argo
      // substitutes once, so a value holding `{{x}}` or quotes arrives as that text.
      std::string s;
      for (std::size_t i = 0; i < v.parts.size(); ++i) {
        const ir::Part& part = v.parts[i];
        s += part.ref ? argo_ref(*part.ref, scope)
                      : argo_text(part.text, i + 1 < v.parts.size() && v.parts[i + 1].ref);
      }
      return s;
    }
    case ir::Value::Kind::Ref:  // a whole ref, above
      break;
    case ir::Value::Kind::List:
    case ir::Value::Kind::Map:
      // sema lets run-time values into lists and maps only where an op takes them apart
      // (training ops' env and data): a container's or a pipeline's argument is one value.
      break;
  }
  throw std::logic_error("an argument from a list or map of run-time values");
}

// A ref inside `{{=...}}` expressions (conditions, podSpecPatch): names are indexed
// (`tasks['fetch-data'].outputs.parameters['files']`), which works for any name.
std::string WorkflowWriter::expr_ref(const ir::Ref& r, Scope& scope) {
  if (r.kind == ir::Ref::Kind::Run) return "workflow." + r.field;
  RefPath path = resolve(r, scope);
  if (path.output.empty())
    return std::string(path.root) + ".parameters[" + expr_string(path.name) + "]";
  return "tasks[" + expr_string(path.name) + "].outputs.parameters[" +
         expr_string(path.output) + "]";
}

std::string WorkflowWriter::expr_value(const ir::Value& v, Scope& scope, const char* as_number) {
  std::string text;
  switch (v.kind) {
    case ir::Value::Kind::Literal:
      if (as_number && v.literal.is_number()) return v.literal.dump();
      return expr_string(ir::literal_text(v.literal));
    case ir::Value::Kind::Ref: text = expr_ref(*v.ref, scope); break;
    case ir::Value::Kind::Interpolation:
      for (const auto& part : v.parts) {
        if (!text.empty()) text += " + ";
        text += part.ref ? expr_ref(*part.ref, scope) : expr_string(part.text);
      }
      if (text.empty()) text = "''";
      text = "(" + text + ")";
      break;
    default:  // sema compares scalars only
      throw std::logic_error("a list or map in a comparison");
  }
  return as_number ? std::string(as_number) + "(" + text + ")" : text;
}

std::string WorkflowWriter::expr_bool(const ir::Value& v, Scope& scope) {
  if (v.is_literal() && v.literal.is_boolean()) return v.literal.get<bool>() ? "true" : "false";
  // A text ir::is_true_text reads as true (`true`, kfp 1.8's `True`, ...). Not
  // "(" + std::string&&: GCC 12's false -Wrestrict at -O3 (bug 105651).
  std::string texts;
  for (std::string_view t : ir::kTrueTexts) texts.append(texts.empty() ? "" : ", ").append(expr_string(t));
  return std::string("(").append(expr_value(v, scope, nullptr)).append(" in [").append(texts).append("])");
}

std::string WorkflowWriter::expr_condition(const ir::Condition& c, Scope& scope) {
  // Argo's expr: numbers through asInt/asFloat, truth values by their text (expr_bool).
  return ir::print_condition(
      c, [&](const ir::Value& v) { return expr_bool(v, scope); },
      [&](const ir::Value& v, ir::Comparison how) {
        const char* as = how == ir::Comparison::Int ? "asInt" : how == ir::Comparison::Float ? "asFloat" : nullptr;
        return expr_value(v, scope, as);
      });
}

std::string WorkflowWriter::when_of(const Box<ir::Condition>& when, Scope& scope) {
  if (!when) return "";
  return "{{=" + expr_condition(*when, scope) + "}}";
}

}  // namespace pipec::emit::argo::detail
