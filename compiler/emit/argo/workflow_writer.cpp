// write_workflow(): the IR as an Argo Workflow in the shape Kubeflow Pipelines v1
// expects (docs/language.md, "What `pipec build` writes").
//
// Expects a lowered pipeline (ir::lower) whose names, types and graph were checked.
// Guarantees:
//  - template and task names are DNS-1123 names derived from the source names; two
//    sources that give one name are an error at the later one, never a silent rename;
//  - a run-time value reaches a process only as a whole argv word, a whole environment
//    variable, or through an environment variable that a shell script quotes: it never
//    becomes script text, and embedded JSON is built by Argo's `toJson`, not spliced;
//  - conditions are Argo expressions over the values (`{{=...}}`), so a value cannot
//    change the expression either;
//  - the same IR and options give the same bytes (no time stamps, fixed orders).
// Invents: template inputs for the values a loop body takes from outside (`<var>`,
// `<var>-<field>`, `<step>-<output>`), environment variables `PIPEC_<param>` for shell
// scripts, and the exit-handler template `<pipeline>-finally`.
#include "compiler/emit/argo/workflow_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "compiler/emit/kubeflow/launcher_call.hpp"
#include "compiler/emit/shell/shell_script.hpp"
#include "runtime/job_render.hpp"

namespace pipec::emit::argo {
namespace {

using namespace yaml;  // the shared YAML writer (compiler/emit/yaml)

using Json = nlohmann::ordered_json;

/// KFP v1's type names for the pipeline_spec annotation.
const char* kfp_type(const ir::Type& t) {
  switch (t.kind) {
    case ir::TypeKind::String: return "String";
    case ir::TypeKind::Int: return "Integer";
    case ir::TypeKind::Float: return "Float";
    case ir::TypeKind::Bool: return "Bool";
    case ir::TypeKind::File: return "String";
    case ir::TypeKind::List: return "JsonArray";
    case ir::TypeKind::Map: return "JsonObject";
  }
  return "String";
}

/// An expr-lang string literal ('...') holding `text`. Braces are escaped so that the
/// literal can never close Argo's `{{=...}}` tag.
std::string expr_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '{': out += "\\u007b"; break;
      case '}': out += "\\u007d"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out += "'";
  return out;
}

/// User text as Argo must be given it so that it arrives unchanged: Argo reads `{{` as the
/// start of a tag in every string of a template, with no escape of its own. A run of two
/// or more `{` (or one `{` right before a tag of ours, when `tag_follows`) is written as
/// the expression tag `{{='\u007b...'}}`, which Argo evaluates to exactly those braces.
std::string argo_text(std::string_view text, bool tag_follows = false) {
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

/// Where an op with metrics finds pipec-metrics: an emptyDir its init container fills.
constexpr const char* kMetricsVolume = "pipec-metrics";
constexpr const char* kMetricsDir = "/.pipec";
constexpr const char* kMetricsTool = "/.pipec/pipec-metrics";

/// The environment variable that carries op parameter `name` into a shell script.
std::string script_var(const std::string& name) { return shell::script_variable(name); }

// --- scopes ----------------------------------------------------------------------------

/// One DAG template being written: the pipeline's, the exit handler's, or a loop body's.
/// Values from outside a loop body arrive as the body template's inputs.
struct Scope {
  // Source names of the steps that are tasks here (views into the IR, which outlives
  // the writer).
  std::unordered_set<std::string_view> steps;
  /// Steps inside the loops of this DAG (at any depth): step -> the loop task here that
  /// holds it. Their outputs are read from the loop's outputs (fan-in).
  std::unordered_map<std::string_view, const ir::Loop*> in_loops;
  /// Values imported from outside: key -> (input name, the ref as the parent renders it).
  std::map<std::string, std::pair<std::string, ir::Ref>> imports;
  std::vector<std::string> import_order;  // keys, in first-use order
  /// In a container op's body: the op (a `file` parameter stands for its path).
  const ir::ContainerOp* op = nullptr;
};

bool is_file(const ir::Ref& r) { return r.type.kind == ir::TypeKind::File; }

/// The path a container op's `file` parameter is placed at.
std::string file_path(const ir::ContainerOp& op, const std::string& param) {
  for (const auto& p : op.params)
    if (p.name == param) return p.path;
  return "";
}

std::string ref_key(const ir::Ref& r) {
  return fmt::format("{}/{}/{}", static_cast<int>(r.kind), r.name, r.field);
}

void add_loop_steps(const std::vector<ir::Node>& nodes, const ir::Loop& loop, Scope& scope) {
  for (const auto& node : nodes) {
    if (const auto* s = std::get_if<ir::Step>(&node)) {
      scope.in_loops.emplace(s->name, &loop);
    } else {
      add_loop_steps(std::get<ir::Loop>(node).body, loop, scope);
    }
  }
}

/// The scope of a DAG of `nodes`: its steps, and the steps inside its loops.
Scope scope_of(const std::vector<ir::Node>& nodes) {
  Scope s;
  for (const auto& node : nodes) {
    if (const auto* st = std::get_if<ir::Step>(&node)) {
      s.steps.insert(st->name);
    } else {
      const auto& loop = std::get<ir::Loop>(node);
      add_loop_steps(loop.body, loop, s);
    }
  }
  return s;
}

/// The output of a loop's template that carries a step output from inside it: the
/// list of its values, one per iteration.
std::string export_name(const ir::Ref& r) { return r.name + "-" + r.field; }

// --- the writer ------------------------------------------------------------------------

class WorkflowWriter {
 public:
  WorkflowWriter(const ir::Pipeline& pipeline, const WriteOptions& options, Diagnostics& diags)
      : p_(pipeline), options_(options), diags_(diags) {}

  bool run(std::string& out);

 private:
  // Names.
  std::string k8s_name(const std::string& source, SourceRange range, const char* what);
  void claim_template(const std::string& name, SourceRange range, const std::string& what);

  // Values.
  struct RefPath {
    const char* root;    // "workflow", "inputs" or "tasks"
    std::string name;    // parameter, input or task name
    std::string output;  // for "tasks": the output parameter
  };
  RefPath resolve(const ir::Ref& r, Scope& scope);
  std::string argo_ref(const ir::Ref& r, Scope& scope);
  std::string argo_value(const ir::Value& v, Scope& scope);
  std::string expr_ref(const ir::Ref& r, Scope& scope);
  /// `as_number`: "asInt" or "asFloat" to compare numerically, nullptr for text.
  std::string expr_value(const ir::Value& v, Scope& scope, const char* as_number);
  std::string expr_condition(const ir::Condition& c, Scope& scope);
  std::string expr_bool(const ir::Value& v, Scope& scope);

  // Templates.
  // DAG templates are written straight to text (they hold one task per step, the bulk
  // of a large pipeline); the few other templates are built as trees, then written.
  void dag_tasks(const std::vector<ir::Node>& nodes, Scope& scope, std::string& out);
  void task_for(const ir::Step& step, Scope& scope, std::string& out);
  void task_for(const ir::Loop& loop, Scope& scope, std::string& out);
  std::string when_of(const Box<ir::Condition>& when, Scope& scope);
  void add_template(const std::string& name, const Json& t);
  void add_dag_template(const std::string& name, const std::vector<std::string>& inputs,
                        std::string tasks, int parallelism = 0,
                        const std::vector<std::string>& file_inputs = {});
  void loop_task(const ir::Loop& loop, const std::string& tmpl, Scope& inner, Scope& scope,
                 bool here, std::string& out);
  void add_loop_outputs();
  std::string container_template(const ir::Step& step);
  Json container_template_json(const ir::ContainerOp* op, const std::string& name, const std::string& display,
                               bool with_doc);
  void reserve_names(const std::vector<ir::Node>& nodes);
  std::string launcher_template(const ir::Step& step, kubeflow::LauncherCall& call);
  Json container_body(const ir::ContainerOp& op, Json& inputs, Json& pod_spec_patch);

  // Annotations and arguments.
  Json workflow_arguments() const;
  std::string pipeline_spec_annotation() const;
  std::string parameters_annotation() const;

  void error(SourceRange range, std::string message) {
    diags_.error(range.valid() ? range : p_.range, std::move(message));
    ok_ = false;
  }

  const ir::Pipeline& p_;
  const WriteOptions& options_;
  Diagnostics& diags_;
  bool ok_ = true;

  // A container op's template text, made once: everything but the template's name and the
  // step's display name, which each step's copy puts between the three pieces.
  struct OpText {
    std::string head, middle, tail;
    bool whole = false;  // false: the op's text could not be cut; each step renders its own
  };
  // A template's YAML text; or, for a step's copy of its op's template, the op's pieces and
  // the two names as YAML scalars, put together only when the document is assembled, so
  // that the copies of a large pipeline are written once (into the document), not twice.
  struct TemplateText {
    std::string text;
    const OpText* op = nullptr;
    std::string name, display;  // with `op`: the scalars that go between its pieces
    std::size_t size() const {
      return op ? op->head.size() + name.size() + op->middle.size() + display.size() + op->tail.size()
                : text.size();
    }
    void append_to(std::string& out) const {
      if (!op) {
        out += text;
        return;
      }
      out += op->head;
      out += name;
      out += op->middle;
      out += display;
      out += op->tail;
    }
  };
  std::map<std::string, TemplateText> templates_;  // by name: written in name order
  std::map<std::string, std::pair<std::string, SourceRange>> template_owner_;
  std::map<std::string, int> op_template_count_;  // op name -> templates made for it
  std::map<std::string, OpText, std::less<>> op_text_;
  std::set<std::string> reserved_names_;  // names other templates will take
  // Fan-in: loop name -> (output name -> the step output it carries out of the loop).
  std::map<std::string, std::map<std::string, ir::Ref>> exports_;
  std::map<std::string, std::pair<const ir::Loop*, Scope>> loop_scopes_;  // bodies, by loop
};

std::string WorkflowWriter::k8s_name(const std::string& source, SourceRange range,
                                     const char* what) {
  std::string name = to_dns1123(source);
  if (name.empty() || !is_dns1123_label(name, kMaxK8sNameLength)) {
    error(range, fmt::format("{} name '{}' does not give a valid Kubernetes name", what, source));
    return name.empty() ? "invalid" : name;
  }
  if (name.front() >= '0' && name.front() <= '9') {
    error(range, fmt::format("{} name '{}' becomes '{}', which Argo does not accept as a "
                             "task name (it starts with a digit)",
                             what, source, name));
  }
  return name;
}

void WorkflowWriter::claim_template(const std::string& name, SourceRange range,
                                    const std::string& what) {
  auto [it, inserted] = template_owner_.emplace(name, std::make_pair(what, range));
  if (inserted) return;
  error(range, fmt::format("{} and {} both become the Argo template '{}'; rename one of them",
                           it->second.first, what, name));
  if (it->second.second.valid()) diags_.note(it->second.second, it->second.first + " is here");
}

// Where a ref's value lives in the scope of a DAG template: a workflow parameter, an
// input of the template, or an output of a task of the same DAG. Values that come from
// outside a loop body are imported as inputs of its template.
WorkflowWriter::RefPath WorkflowWriter::resolve(const ir::Ref& r, Scope& scope) {
  switch (r.kind) {
    case ir::Ref::Kind::Param: return {"workflow", r.name, {}};
    case ir::Ref::Kind::OpParam: return {"inputs", r.name, {}};
    case ir::Ref::Kind::StepOutput: {
      if (scope.steps.count(r.name)) return {"tasks", to_dns1123(r.name), r.field};
      auto in = scope.in_loops.find(r.name);
      if (in == scope.in_loops.end()) break;
      std::string output = export_name(r);
      exports_[in->second->name].emplace(output, r);
      return {"tasks", in->second->name, std::move(output)};
    }
    case ir::Ref::Kind::LoopItem: break;
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
  if (r.kind == ir::Ref::Kind::OpParam && is_file(r) && scope.op) return file_path(*scope.op, r.name);
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
      // Sema lets run-time values into lists and maps only where an op takes them apart
      // (training ops' env and data); a container op's argument is one value.
      error(v.range, "a list or map built from run-time values cannot be passed to a "
                     "container op; pass a list parameter or a literal list");
      break;
  }
  return "";
}

// A ref inside `{{=...}}` expressions (conditions, podSpecPatch): names are indexed
// (`tasks['fetch-data'].outputs.parameters['files']`), which works for any name.
std::string WorkflowWriter::expr_ref(const ir::Ref& r, Scope& scope) {
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
    default:
      error(v.range, "lists and maps cannot be compared");
      return "''";
  }
  return as_number ? std::string(as_number) + "(" + text + ")" : text;
}

std::string WorkflowWriter::expr_bool(const ir::Value& v, Scope& scope) {
  if (v.is_literal() && v.literal.is_boolean()) return v.literal.get<bool>() ? "true" : "false";
  return "(" + expr_value(v, scope, nullptr) + " == 'true')";
}

std::string WorkflowWriter::expr_condition(const ir::Condition& c, Scope& scope) {
  using Op = ir::Condition::Op;
  auto binary = [&] {
    return "(" + expr_condition(c.operands[0], scope) + " " + ir::op_symbol(c.op) + " " +
           expr_condition(c.operands[1], scope) + ")";
  };
  switch (c.op) {
    case Op::Leaf: return expr_bool(*c.value, scope);
    case Op::And:
    case Op::Or: return binary();
    case Op::Not: return "!" + expr_condition(c.operands[0], scope);
    default: break;
  }
  // A comparison: both operands are leaves holding values, compared as ir::comparison_of says.
  const ir::Value& a = *c.operands[0].value;
  const ir::Value& b = *c.operands[1].value;
  std::string left, right;
  switch (ir::comparison_of(c)) {
    case ir::Comparison::Int:
    case ir::Comparison::Float: {
      const char* as = ir::comparison_of(c) == ir::Comparison::Int ? "asInt" : "asFloat";
      left = expr_value(a, scope, as);
      right = expr_value(b, scope, as);
      break;
    }
    case ir::Comparison::Bool:
      left = expr_bool(a, scope);
      right = expr_bool(b, scope);
      break;
    case ir::Comparison::Text:
      left = expr_value(a, scope, nullptr);
      right = expr_value(b, scope, nullptr);
      break;
  }
  return "(" + left + " " + ir::op_symbol(c.op) + " " + right + ")";
}

std::string WorkflowWriter::when_of(const Box<ir::Condition>& when, Scope& scope) {
  if (!when) return "";
  return "{{=" + expr_condition(*when, scope) + "}}";
}

// Templates are items of spec.templates (indent 2); their keys are at indent 4.
void WorkflowWriter::add_template(const std::string& name, const Json& t) {
  std::string text;
  append_item(text, t, 2);
  templates_[name] = TemplateText{std::move(text)};
}

// `tasks` becomes the template's text: the header goes in front of it, so the tasks of a
// large DAG are not copied.
void WorkflowWriter::add_dag_template(const std::string& name, const std::vector<std::string>& inputs,
                                      std::string tasks, int parallelism,
                                      const std::vector<std::string>& file_inputs) {
  std::string text;
  new_line(text, 2);
  text += "- name: ";
  append_scalar(text, name, 4);
  if (!inputs.empty() || !file_inputs.empty()) {
    new_line(text, 4);
    text += "inputs:";
  }
  for (const auto* list : {&inputs, &file_inputs}) {
    if (list->empty()) continue;
    new_line(text, 6);
    text += list == &inputs ? "parameters:" : "artifacts:";
    for (const auto& input : *list) {
      new_line(text, 6);
      text += "- name: ";
      append_scalar(text, input, 8);
    }
  }
  if (parallelism > 0) append_entry(text, "parallelism", Json(parallelism), 4);
  new_line(text, 4);
  text += "dag:";
  new_line(text, 6);
  text += "tasks:";
  tasks.insert(0, text);
  templates_[name] = TemplateText{std::move(tasks)};
}

// --- container ops ----------------------------------------------------------------------

Json WorkflowWriter::container_body(const ir::ContainerOp& op, Json& inputs, Json& pod_spec_patch) {
  Scope op_scope;  // refs here are the op's own parameters
  op_scope.op = &op;
  std::vector<std::string> script_vars;  // op parameters a shell script reads, first-use order
  auto use_var = [&](const ir::Ref& r) {
    if (std::find(script_vars.begin(), script_vars.end(), r.name) == script_vars.end())
      script_vars.push_back(r.name);
    return script_var(r.name);
  };

  Json c = Json::object();
  c["image"] = argo_value(op.image, op_scope);
  Json command = Json::array();
  Json args = Json::array();
  if (op.shell) {
    // Shell form: the script is the op's own text; each `${p}` is an environment
    // variable placed by the quoting context it stands in (emit/shell).
    SourceRange whole = op.range;
    std::vector<ir::Part> parts = shell::command_parts(op.command, whole);
    std::string script;
    if (!shell::write_script(parts, use_var, whole, script, diags_)) ok_ = false;
    command = Json::array({"sh", "-c", argo_text(script), to_dns1123(op.name)});
    for (const auto& a : op.args) args.push_back(argo_value(a, op_scope));
    // `args` become the script's "$1", "$2", ...: whole words either way.
    for (auto& a : args) command.push_back(std::move(a));
    args = Json::array();
  } else {
    // Exec form: no shell. A word that mixes text and values is one argv word that Argo
    // fills in; an op with only `args` keeps the image's ENTRYPOINT.
    for (const auto& w : op.command) command.push_back(argo_value(w, op_scope));
    for (const auto& w : op.args) args.push_back(argo_value(w, op_scope));
  }
  // Metrics: pipec-metrics (copied into the pod by an init container, container_template)
  // runs the command and writes KFP's metrics file from its output, with the launcher's
  // scraper; a spec from a parameter is one whole argv word it checks at run time.
  if (!op.metrics.empty() && !command.empty()) {
    Json wrapped = Json::array({std::string(kMetricsTool)});
    for (const auto& m : op.metrics) {
      wrapped.push_back("--metric");
      wrapped.push_back(argo_value(m, op_scope));
    }
    if (!op.metrics_from.empty()) {
      wrapped.push_back("--from");
      wrapped.push_back(op.metrics_from);
    }
    wrapped.push_back("--");
    for (auto& w : command) wrapped.push_back(std::move(w));
    command = std::move(wrapped);
  }
  if (!command.empty()) c["command"] = std::move(command);
  if (!args.empty()) c["args"] = std::move(args);

  Json env = Json::array();
  for (const auto& [name, value] : op.env) env.push_back({{"name", name}, {"value", argo_value(value, op_scope)}});
  for (const auto& var : script_vars)
    env.push_back({{"name", script_var(var)},
                   {"value", op.params.end() != std::find_if(op.params.begin(), op.params.end(), [&](const auto& p) {
                      return p.name == var && p.type.kind == ir::TypeKind::File;
                    }) ? file_path(op, var) : "{{inputs.parameters." + var + "}}"}});
  // A Secret's key: only the names reach the workflow, never the value.
  for (const auto& s : op.secret_env)
    env.push_back({{"name", s.var}, {"valueFrom", {{"secretKeyRef", {{"name", s.secret}, {"key", s.key}}}}}});
  if (!env.empty()) c["env"] = std::move(env);
  if (!op.volumes.empty() || !op.metrics.empty()) {
    Json mounts = Json::array();
    for (std::size_t i = 0; i < op.volumes.size(); ++i)
      mounts.push_back({{"name", "vol-" + std::to_string(i)}, {"mountPath", op.volumes[i].path}});
    if (!op.metrics.empty()) mounts.push_back({{"name", kMetricsVolume}, {"mountPath", kMetricsDir}});
    c["volumeMounts"] = std::move(mounts);
  }
  if (!op.image_pull_policy.empty()) c["imagePullPolicy"] = op.image_pull_policy;
  if (!op.working_dir.empty()) c["workingDir"] = op.working_dir;
  if (op.run_as_user || op.run_as_group || op.run_as_non_root) {
    Json security = Json::object();
    if (op.run_as_user) security["runAsUser"] = *op.run_as_user;
    if (op.run_as_group) security["runAsGroup"] = *op.run_as_group;
    if (op.run_as_non_root) security["runAsNonRoot"] = *op.run_as_non_root;
    c["securityContext"] = std::move(security);
  }

  // Resources: requests = limits. Literal quantities go into the container; values known
  // only at run time go through podSpecPatch, built as JSON by Argo's toJson.
  Json limits = Json::object();
  // podSpecPatch fields: (the key as JSON text, the value as a toJson tag).
  std::vector<std::pair<std::string, std::string>> patch_limits;
  // gpu_vendor: "nvidia" or "amd" (as KFP's set_gpu_limit) mean <vendor>.com/gpu; a name
  // with '/' is the resource itself. From a value, Argo computes the key the same way.
  std::string vendor = "nvidia.com/gpu";
  std::string vendor_key;  // a run-time key: a toJson tag
  for (const auto& [key, value] : op.resources) {
    if (key != "gpu_vendor") continue;
    if (value.is_literal()) {
      std::string v = ir::literal_text(value.literal);
      vendor = rules::gpu_resource_name(v);  // sema checked it
    } else {
      std::string v = expr_value(value, op_scope, nullptr);
      vendor_key = "{{=toJson(sprig.ternary(" + v + ", " + v + " + '.com/gpu', sprig.contains('/', " + v + ")))}}";
    }
  }
  for (const auto& [key, value] : op.resources) {
    if (key == "gpu_vendor") continue;
    std::string field = key == "gpus" ? vendor : key;
    bool runtime_key = key == "gpus" && !vendor_key.empty();
    if (value.is_literal() && !runtime_key) {
      std::string text = ir::literal_text(value.literal);
      if (key == "gpus" && text == "0") continue;
      limits[field] = text;  // a quantity: sema checked it
    } else {
      std::string v = value.is_literal() ? Json(ir::literal_text(value.literal)).dump()
                                         : "{{=toJson(" + expr_value(value, op_scope, nullptr) + ")}}";
      patch_limits.emplace_back(runtime_key ? vendor_key : Json(field).dump(), v);
    }
  }
  if (!limits.empty()) {
    Json requests = limits;
    c["resources"] = {{"limits", limits}, {"requests", requests}};
  }
  if (!patch_limits.empty()) {
    // {"containers":[{"name":"main","resources":{"limits":{..},"requests":{..}}}]}, with each
    // value a whole toJson(...) tag: the JSON around the values is fixed text.
    std::string fields;
    for (const auto& [k, v] : patch_limits) {
      if (!fields.empty()) fields += ",";
      fields += k + ":" + v;
    }
    // A key that is a tag must not follow the object's `{` directly: `{{{` is no tag.
    if (fields.compare(0, 2, "{{") == 0) fields.insert(0, " ");
    pod_spec_patch = R"({"containers":[{"name":"main","resources":{"limits":{)" + fields +
                     R"(},"requests":{)" + fields + "}}}]}";
  }
  for (const auto& param : op.params)
    if (param.type.kind != ir::TypeKind::File) inputs.push_back({{"name", param.name}});
  return c;
}

// Every step's template carries the step's name as `pipelines.kubeflow.org/task_display_name`:
// the Pipelines UI labels a DAG task with that annotation of its template (else the
// template's name), so steps sharing an op would all read as the op. An op used by one
// step keeps one template named after the op; the second and later steps of a shared op
// get a copy named `<op>-2`, `<op>-3`, ... (skipping every name another template takes).
std::string WorkflowWriter::container_template(const ir::Step& step) {
  const ir::ContainerOp* op = nullptr;
  for (const auto& o : p_.ops)
    if (o.name == step.op) op = &o;
  int& made = op_template_count_[step.op];
  std::string base = k8s_name(step.op, op ? op->range : step.range, "op");
  std::string name = base;
  if (made == 0) {
    claim_template(name, op ? op->range : step.range, "op '" + step.op + "'");
  } else {
    for (int k = made + 1;; ++k) {
      std::string suffix = "-" + std::to_string(k);
      name = base.substr(0, kMaxK8sNameLength - suffix.size()) + suffix;
      if (!reserved_names_.count(name) && !template_owner_.count(name)) break;
    }
    template_owner_.emplace(name, std::make_pair("step '" + step.name + "'", step.range));
  }
  ++made;
  std::string display = argo_text(step.name);
  // The op's own template (its first step's, named after the op) carries the op's doc
  // comment; the copies for its other steps leave it out rather than repeat it per step.
  if (!op || made == 1 || scalar_style(name) == ScalarStyle::Literal ||
      scalar_style(display) == ScalarStyle::Literal) {
    add_template(name, container_template_json(op, name, display, made == 1));
    return name;
  }
  // Every step of an op has the same template but for its name and display name (kept
  // for the KFP UI): the op's is printed once, with markers where those two go.
  static constexpr std::string_view kNameMark = "pipec-template-name-mark";
  static constexpr std::string_view kDisplayMark = "pipec-display-name-mark";
  auto [it, fresh] = op_text_.try_emplace(op->name);
  OpText& cut = it->second;
  if (fresh) {
    std::string text;
    append_item(text, container_template_json(op, std::string(kNameMark), std::string(kDisplayMark), false), 2);
    std::size_t at_name = text.find(kNameMark);
    std::size_t at_display = text.find(kDisplayMark);
    cut.whole = at_name != std::string::npos && at_display != std::string::npos && at_name < at_display &&
                text.find(kNameMark, at_name + 1) == std::string::npos &&
                text.find(kDisplayMark, at_display + 1) == std::string::npos;
    if (cut.whole) {
      cut.head = text.substr(0, at_name);
      cut.middle = text.substr(at_name + kNameMark.size(), at_display - at_name - kNameMark.size());
      cut.tail = text.substr(at_display + kDisplayMark.size());
    }
  }
  if (!cut.whole) {
    add_template(name, container_template_json(op, name, display, false));
    return name;
  }
  TemplateText& copy = templates_[name];
  copy.op = &cut;
  append_scalar(copy.name, name, 4);
  append_scalar(copy.display, display, 8);
  return name;
}

// The template of a container step: `name`, and `display` as the KFP UI's task name;
// `with_doc`: with the op's doc comment (`pipec.dev/doc`).
Json WorkflowWriter::container_template_json(const ir::ContainerOp* op, const std::string& name,
                                             const std::string& display, bool with_doc) {
  Json t = Json::object();
  t["name"] = name;
  Json annotations = {{"pipelines.kubeflow.org/task_display_name", display}};
  if (op) {
    Json inputs = Json::array();
    Json patch = nullptr;
    Json container = container_body(*op, inputs, patch);
    if (!inputs.empty()) t["inputs"] = {{"parameters", std::move(inputs)}};
    // A file parameter is an input artifact placed at its path.
    for (const auto& param : op->params)
      if (param.type.kind == ir::TypeKind::File)
        t["inputs"]["artifacts"].push_back({{"name", param.name}, {"path", param.path}});
    if (!op->outputs.empty()) {
      Json params = Json::array();
      Json artifacts = Json::array();
      for (const auto& out : op->outputs) {
        // A file is an artifact only: no parameter holds binary data or a large file.
        if (out.type.kind != ir::TypeKind::File)
          params.push_back({{"name", out.name}, {"valueFrom", {{"path", out.path}}}});
        artifacts.push_back({{"name", out.name}, {"path", out.path}});
      }
      if (!params.empty()) t["outputs"]["parameters"] = std::move(params);
      t["outputs"]["artifacts"] = std::move(artifacts);
    }
    if (!op->metrics.empty()) {
      t["outputs"]["artifacts"].push_back({{"name", "mlpipeline-metrics"},
                                           {"path", "/tmp/outputs/mlpipeline-metrics.json"},
                                           {"optional", true}});
      // pipec-metrics is static: the launcher image's copy runs in any image.
      t["initContainers"] = Json::array(
          {{{"name", "pipec-metrics"},
            {"image", options_.launcher_image},
            {"command", Json::array({"/usr/local/bin/pipec-metrics", "--install", std::string(kMetricsTool)})},
            {"volumeMounts", Json::array({{{"name", kMetricsVolume}, {"mountPath", kMetricsDir}}})}}});
    }
    t["container"] = std::move(container);
    if (!patch.is_null()) t["podSpecPatch"] = std::move(patch);
    if (op->retries) {
      Json retry = {{"limit", *op->retries}, {"retryPolicy", op->retry_policy}};
      if (op->retry_backoff_seconds) {
        Json backoff = {{"duration", fmt::format("{}s", *op->retry_backoff_seconds)}};
        if (op->retry_factor) backoff["factor"] = *op->retry_factor;
        if (op->retry_max_duration_seconds)
          backoff["maxDuration"] = fmt::format("{}s", *op->retry_max_duration_seconds);
        retry["backoff"] = std::move(backoff);
      }
      t["retryStrategy"] = std::move(retry);
    }
    if (op->timeout_seconds) t["activeDeadlineSeconds"] = *op->timeout_seconds;
    if (with_doc && !op->doc.empty()) annotations["pipec.dev/doc"] = argo_text(op->doc);
  }
  Json labels = Json::object();
  if (op) {
    if (!op->node_selector.empty()) {
      Json selector = Json::object();
      for (const auto& [k, v] : op->node_selector) selector[k] = v;
      t["nodeSelector"] = std::move(selector);
    }
    if (!op->volumes.empty() || !op->metrics.empty()) {
      Json volumes = Json::array();
      for (std::size_t i = 0; i < op->volumes.size(); ++i) {
        const auto& v = op->volumes[i];
        Json vol = {{"name", "vol-" + std::to_string(i)}};
        if (v.kind == "pvc") vol["persistentVolumeClaim"] = {{"claimName", v.name}};
        if (v.kind == "empty") vol["emptyDir"] = Json::object();
        if (v.kind == "configmap") vol["configMap"] = {{"name", v.name}};
        if (v.kind == "secret") vol["secret"] = {{"secretName", v.name}};
        volumes.push_back(std::move(vol));
      }
      if (!op->metrics.empty()) volumes.push_back({{"name", kMetricsVolume}, {"emptyDir", Json::object()}});
      t["volumes"] = std::move(volumes);
    }
    if (!op->tolerations.empty()) {
      Json tolerations = Json::array();
      for (const auto& text : op->tolerations) tolerations.push_back(Json::parse(text));
      t["tolerations"] = std::move(tolerations);
    }
    for (const auto& [k, v] : op->labels) labels[k] = v;
    for (const auto& [k, v] : op->annotations) annotations[k] = argo_text(v);
    // KFP v1's cache server: a label turns caching off, max_cache_staleness bounds reuse.
    if (op->cache && !*op->cache) {
      labels["pipelines.kubeflow.org/enable_caching"] = "false";
      annotations["pipelines.kubeflow.org/max_cache_staleness"] = "P0D";
    } else if (op->cache_staleness_seconds) {
      annotations["pipelines.kubeflow.org/max_cache_staleness"] =
          runtime::iso8601_duration(std::chrono::seconds(*op->cache_staleness_seconds));
    }
  }
  t["metadata"] = {{"annotations", std::move(annotations)}};
  if (!labels.empty()) t["metadata"]["labels"] = std::move(labels);
  return t;
}

std::string WorkflowWriter::launcher_template(const ir::Step& step, kubeflow::LauncherCall& call) {
  kubeflow::JobOptions job;
  job.mpi_v1 = options_.mpi_v1;
  job.default_runtime = options_.training_runtime;
  job.params = &p_.params;
  if (!kubeflow::build_launcher_call(step, job, call, diags_)) {
    ok_ = false;
    return "";
  }
  std::string name = k8s_name(step.name, step.range, "step");
  claim_template(name, step.range, "training step '" + step.name + "'");
  Json t = Json::object();
  t["name"] = name;
  if (!call.inputs.empty()) {
    Json params = Json::array();
    for (const auto& [input, value] : call.inputs) params.push_back({{"name", input}});
    t["inputs"] = {{"parameters", std::move(params)}};
  }
  Json artifacts = Json::array();
  if (call.writes_metrics)
    artifacts.push_back({{"name", "mlpipeline-metrics"},
                         {"path", "/tmp/outputs/mlpipeline-metrics.json"},
                         {"optional", true}});
  if (call.writes_ui_metadata)
    artifacts.push_back({{"name", "mlpipeline-ui-metadata"},
                         {"path", "/tmp/outputs/mlpipeline-ui-metadata.json"},
                         {"optional", true}});
  if (!artifacts.empty()) t["outputs"] = {{"artifacts", std::move(artifacts)}};
  t["container"] = {
      {"image", options_.launcher_image},
      {"command", Json::array({"pipec-launcher"})},
      {"args", call.args},
      {"env", Json::array({{{"name", "POD_UID"},
                            {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}}})}};
  t["metadata"] = {{"annotations", {{"pipelines.kubeflow.org/task_display_name", argo_text(step.name)}}},
                   {"labels", {{"pipelines.kubeflow.org/pipeline-sdk-type", "pipec"}}}};
  add_template(name, t);
  return name;
}

// --- DAGs --------------------------------------------------------------------------------

// Tasks are items of dag.tasks (indent 6); their keys are at indent 8.
namespace {
void begin_task(std::string& out, const std::string& name, const std::string& tmpl) {
  new_line(out, 6);
  out += "- name: ";
  append_scalar(out, name, 8);
  append_scalar_entry(out, "template", tmpl, 8);
}

void task_dependencies(std::string& out, const std::vector<std::string>& depends) {
  if (depends.empty()) return;
  new_line(out, 8);
  out += "dependencies:";
  for (const auto& d : depends) {
    new_line(out, 8);
    out += "- ";
    append_scalar(out, to_dns1123(d), 10);
  }
}

using Arguments = std::vector<std::pair<std::string, std::string>>;

/// A task's `arguments`: parameters (name, value) and artifacts (name, `from`).
void task_arguments(std::string& out, const Arguments& params, const Arguments& artifacts = {}) {
  if (params.empty() && artifacts.empty()) return;
  new_line(out, 8);
  out += "arguments:";
  if (!params.empty()) {
    new_line(out, 10);
    out += "parameters:";
  }
  for (const auto& [name, value] : params) {
    new_line(out, 10);
    out += "- name: ";
    append_scalar(out, name, 12);
    append_scalar_entry(out, "value", value, 12);
  }
  if (!artifacts.empty()) {
    new_line(out, 10);
    out += "artifacts:";
  }
  for (const auto& [name, from] : artifacts) {
    new_line(out, 10);
    out += "- name: ";
    append_scalar(out, name, 12);
    append_scalar_entry(out, "from", from, 12);
  }
}
}  // namespace

void WorkflowWriter::task_for(const ir::Step& step, Scope& scope, std::string& out) {
  std::vector<std::pair<std::string, std::string>> params, artifacts;
  std::string tmpl;
  if (step.kind == ir::OpKind::Container) {
    tmpl = container_template(step);
    params.reserve(step.args.size());
    for (const auto& [name, value] : step.args) {
      const ir::Ref* r = ir::whole_ref(value);
      (r && is_file(*r) ? artifacts : params).emplace_back(name, argo_value(value, scope));
    }
  } else {
    kubeflow::LauncherCall call;
    tmpl = launcher_template(step, call);
    for (const auto& [name, value] : call.inputs) params.emplace_back(name, argo_value(value, scope));
  }
  begin_task(out, to_dns1123(step.name), tmpl);
  task_dependencies(out, step.depends);
  if (std::string when = when_of(step.when, scope); !when.empty()) append_scalar_entry(out, "when", when, 8);
  task_arguments(out, params, artifacts);
}

void WorkflowWriter::task_for(const ir::Loop& loop, Scope& scope, std::string& out) {
  auto& [loop_ptr, body] = loop_scopes_[loop.name];
  loop_ptr = &loop;
  body = scope_of(loop.body);
  claim_template(loop.name, loop.range, "the loop over '" + loop.var + "'");
  std::string tasks;
  dag_tasks(loop.body, body, tasks);
  std::vector<std::string> inputs, files;
  for (const auto& key : body.import_order) {
    const auto& [input, ref] = body.imports.at(key);
    (is_file(ref) ? files : inputs).push_back(input);
  }
  add_dag_template(loop.name, inputs, std::move(tasks), 0, files);
  if (loop.limit <= 0) {
    loop_task(loop, loop.name, body, scope, true, out);
    return;
  }
  // Argo's `parallelism` counts the running tasks of one DAG template: a template that
  // holds only the loop task bounds the loop's iterations and nothing else.
  claim_template(loop.limit_name, loop.range, "the limit of the loop over '" + loop.var + "'");
  Scope limit;
  std::string limit_tasks;
  loop_task(loop, loop.name, body, limit, false, limit_tasks);
  std::vector<std::pair<std::string, std::string>> params, artifacts;
  std::vector<std::string> limit_inputs, limit_files;
  for (const auto& key : limit.import_order) {
    const auto& [input, ref] = limit.imports.at(key);
    (is_file(ref) ? artifacts : params).emplace_back(input, argo_ref(ref, scope));
    (is_file(ref) ? limit_files : limit_inputs).push_back(input);
  }
  add_dag_template(loop.limit_name, limit_inputs, std::move(limit_tasks), loop.limit, limit_files);
  begin_task(out, loop.name, loop.limit_name);
  task_dependencies(out, loop.depends);
  if (std::string when = when_of(loop.when, scope); !when.empty()) append_scalar_entry(out, "when", when, 8);
  task_arguments(out, params, artifacts);
}

// The task that runs template `tmpl` (the body of `loop`, whose scope is `inner`) once per
// item, written into the DAG of `scope`; `here`: with the loop's dependencies and `when`
// (false inside the template that holds a limit, whose own task carries them).
void WorkflowWriter::loop_task(const ir::Loop& loop, const std::string& tmpl, Scope& inner,
                               Scope& scope, bool here, std::string& out) {
  std::vector<std::pair<std::string, std::string>> params, artifacts;
  for (const auto& key : inner.import_order) {
    const auto& [input, ref] = inner.imports.at(key);
    std::string value;
    if (ref.kind == ir::Ref::Kind::LoopItem && ref.name == loop.var) {
      value = ref.field.empty() ? "{{item}}" : "{{item." + ref.field + "}}";
    } else {
      value = argo_ref(ref, scope);
    }
    (is_file(ref) ? artifacts : params).emplace_back(input, std::move(value));
  }
  begin_task(out, loop.name, tmpl);
  if (here) {
    task_dependencies(out, loop.depends);
    if (std::string when = when_of(loop.when, scope); !when.empty()) append_scalar_entry(out, "when", when, 8);
  }
  task_arguments(out, params, artifacts);
  if (loop.items->is_literal()) {
    append_entry(out, "withItems", Json(loop.items->literal), 8);
  } else {
    append_scalar_entry(out, "withParam", argo_value(*loop.items, scope), 8);
  }
}

// Fan-in: each loop whose steps' outputs are read from outside it gives them as outputs
// of its template (and of the template holding its limit); Argo makes each a JSON list,
// one value per iteration in item order. Reading one from a loop nested inside exports
// it from that loop in turn, so this runs until nothing new is asked for.
void WorkflowWriter::add_loop_outputs() {
  std::map<std::string, std::map<std::string, std::string>> outputs;  // loop -> name -> value
  for (bool changed = true; changed;) {
    changed = false;
    auto asked = exports_;  // resolving may ask inner loops for more
    for (const auto& [loop_name, refs] : asked) {
      auto& done = outputs[loop_name];
      auto& [loop, body] = loop_scopes_.at(loop_name);
      for (const auto& [name, ref] : refs) {
        if (done.count(name)) continue;
        done.emplace(name, argo_ref(ref, body));
        changed = true;
      }
    }
  }
  auto append_outputs = [&](const std::string& tmpl, const auto& values) {
    std::string& text = templates_.at(tmpl).text;  // a loop's DAG template: text
    new_line(text, 4);
    text += "outputs:";
    new_line(text, 6);
    text += "parameters:";
    for (const auto& [name, value] : values) {
      new_line(text, 6);
      text += "- name: ";
      append_scalar(text, name, 8);
      new_line(text, 8);
      text += "valueFrom:";
      append_scalar_entry(text, "parameter", value, 10);
    }
  };
  for (const auto& [loop_name, values] : outputs) {
    append_outputs(loop_name, values);
    const ir::Loop& loop = *loop_scopes_.at(loop_name).first;
    if (loop.limit <= 0) continue;
    std::map<std::string, std::string> passed;
    for (const auto& [name, value] : values)
      passed.emplace(name, "{{tasks." + loop_name + ".outputs.parameters." + name + "}}");
    append_outputs(loop.limit_name, passed);
  }
}

void WorkflowWriter::dag_tasks(const std::vector<ir::Node>& nodes, Scope& scope, std::string& out) {
  for (const auto& node : nodes) {
    if (const auto* s = std::get_if<ir::Step>(&node)) {
      task_for(*s, scope, out);
    } else {
      task_for(std::get<ir::Loop>(node), scope, out);
    }
  }
}

// --- the workflow ------------------------------------------------------------------------

Json WorkflowWriter::workflow_arguments() const {
  Json params = Json::array();
  for (const auto& param : p_.params) {
    Json p = Json::object();
    p["name"] = param.name;
    if (param.default_value) p["value"] = ir::literal_text(*param.default_value);
    if (!param.constraint.one_of.empty()) {
      Json e = Json::array();
      for (const auto& v : param.constraint.one_of) e.push_back(ir::literal_text(v));
      p["enum"] = std::move(e);
    }
    if (!param.doc.empty()) p["description"] = param.doc;
    params.push_back(std::move(p));
  }
  return params;
}

std::string WorkflowWriter::pipeline_spec_annotation() const {
  // As dsl-compile writes it (sorted keys), with the types it leaves out.
  nlohmann::json spec = nlohmann::json::object();  // std::map: sorted keys
  if (!p_.description.empty()) spec["description"] = p_.description;
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& param : p_.params) {
    nlohmann::json in = nlohmann::json::object();
    in["name"] = param.name;
    in["type"] = kfp_type(param.type);
    if (param.default_value) {
      in["default"] = ir::literal_text(*param.default_value);
      in["optional"] = true;
    }
    if (!param.doc.empty()) in["description"] = param.doc;
    inputs.push_back(std::move(in));
  }
  spec["inputs"] = std::move(inputs);
  spec["name"] = p_.name;
  return spec.dump();
}

std::string WorkflowWriter::parameters_annotation() const {
  Json params = Json::array();
  for (const auto& param : p_.params) {
    Json p = Json::object();
    p["name"] = param.name;
    p["type"] = param.type.str();
    p["required"] = !param.default_value.has_value();
    if (param.default_value) p["default"] = *param.default_value;
    if (!param.constraint.one_of.empty()) p["enum"] = param.constraint.one_of;
    if (param.constraint.min) p["min"] = *param.constraint.min;
    if (param.constraint.max) p["max"] = *param.constraint.max;
    if (param.type.kind == ir::TypeKind::Int) {
      // Integral bounds print as integers.
      for (const char* k : {"min", "max"})
        if (p.contains(k)) p[k] = static_cast<long long>(p[k].get<double>());
    }
    params.push_back(std::move(p));
  }
  return params.dump();
}

void WorkflowWriter::reserve_names(const std::vector<ir::Node>& nodes) {
  for (const auto& node : nodes) {
    if (const auto* st = std::get_if<ir::Step>(&node)) {
      if (st->kind != ir::OpKind::Container) reserved_names_.insert(to_dns1123(st->name));
    } else {
      const auto& loop = std::get<ir::Loop>(node);
      reserved_names_.insert(loop.name);
      if (!loop.limit_name.empty()) reserved_names_.insert(loop.limit_name);
      reserve_names(loop.body);
    }
  }
}

// Moves every line of `text` from `from` on `by` spaces to the right. The writer's text is
// block YAML written line-first, and a literal block's empty lines stay empty, so this
// nests the spec without changing a value.
void indent_lines(std::string& text, std::size_t from, int by) {
  std::string pad(static_cast<std::size_t>(by), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  out.append(text, 0, from);
  for (std::size_t i = from; i < text.size(); ++i) {
    out.push_back(text[i]);
    if (text[i] == '\n' && i + 1 < text.size() && text[i + 1] != '\n') out += pad;
  }
  text = std::move(out);
}

bool WorkflowWriter::run(std::string& out) {
  std::string entry = k8s_name(p_.name, p_.range, "pipeline");
  claim_template(entry, p_.range, "pipeline '" + p_.name + "'");
  std::string exit_name;
  if (!p_.exit_handler.empty()) {
    exit_name = entry + "-finally";
    claim_template(exit_name, p_.range, "the 'finally' block of '" + p_.name + "'");
  }
  reserved_names_.insert(entry);
  reserved_names_.insert(exit_name);
  for (const auto& op : p_.ops) reserved_names_.insert(to_dns1123(op.name));
  reserve_names(p_.dag);
  reserve_names(p_.exit_handler);
  // Task names: sema has already rejected two steps that give the same name.
  Scope main = scope_of(p_.dag);
  std::string tasks;
  tasks.reserve(p_.dag.size() * 512);
  dag_tasks(p_.dag, main, tasks);
  add_dag_template(entry, {}, std::move(tasks));
  if (!exit_name.empty()) {
    Scope fin = scope_of(p_.exit_handler);
    std::string exit_tasks;
    dag_tasks(p_.exit_handler, fin, exit_tasks);
    add_dag_template(exit_name, {}, std::move(exit_tasks));
  }
  add_loop_outputs();
  if (!ok_) return false;

  // The document, line-first (see yaml_writer.hpp) after its first line; each template's
  // text is freed as soon as it is copied, so the output is held about once.
  std::string& text = out;  // written in place
  text.clear();
  std::size_t size = 0;
  for (const auto& [name, t] : templates_) size += t.size();
  text.reserve(size + 4096);
  const DocumentKind kind = options_.kind;
  text += "apiVersion: argoproj.io/v1alpha1";
  append_scalar_entry(text, "kind",
                      kind == DocumentKind::Workflow           ? "Workflow"
                      : kind == DocumentKind::WorkflowTemplate ? "WorkflowTemplate"
                                                               : "CronWorkflow",
                      0);
  // A Workflow gets a fresh name per run; a template or cron workflow is one object.
  Json metadata = kind == DocumentKind::Workflow ? Json{{"generateName", entry + "-"}}
                                                 : Json{{"name", entry}};
  metadata["annotations"] = {{"pipelines.kubeflow.org/pipeline_spec", pipeline_spec_annotation()},
                             {"pipec.dev/parameters", parameters_annotation()}};
  metadata["labels"] = {{"pipelines.kubeflow.org/pipeline-sdk-type", "pipec"}};
  append_entry(text, "metadata", metadata, 0);
  new_line(text, 0);
  text += "spec:";
  // A CronWorkflow's schedule, then the workflow's spec one level down, under workflowSpec.
  const bool cron = kind == DocumentKind::CronWorkflow;
  std::size_t spec_start = text.size();
  if (cron) {
    append_scalar_entry(text, "schedule", options_.cron.schedule, 2);
    if (!options_.cron.timezone.empty()) append_scalar_entry(text, "timezone", options_.cron.timezone, 2);
    if (!options_.cron.concurrency_policy.empty())
      append_scalar_entry(text, "concurrencyPolicy", options_.cron.concurrency_policy, 2);
    new_line(text, 2);
    text += "workflowSpec:";
    spec_start = text.size();
  }
  append_scalar_entry(text, "entrypoint", entry, 2);
  if (!p_.params.empty()) append_entry(text, "arguments", Json{{"parameters", workflow_arguments()}}, 2);
  // As dsl-compile orders PipelineConf's fields after serviceAccountName.
  const ir::Settings& set = p_.settings;
  append_scalar_entry(text, "serviceAccountName",
                      !options_.service_account.empty() ? options_.service_account
                      : !set.service_account.empty()    ? set.service_account
                                                        : "pipeline-runner",
                      2);
  if (set.parallelism) append_entry(text, "parallelism", Json(*set.parallelism), 2);
  if (set.ttl_seconds) append_entry(text, "ttlStrategy", Json{{"secondsAfterCompletion", *set.ttl_seconds}}, 2);
  if (!set.image_pull_secrets.empty()) {
    Json secrets = Json::array();
    for (const auto& s : set.image_pull_secrets) secrets.push_back({{"name", s}});
    append_entry(text, "imagePullSecrets", secrets, 2);
  }
  if (set.timeout_seconds) append_entry(text, "activeDeadlineSeconds", Json(*set.timeout_seconds), 2);
  if (!set.pod_gc.empty()) append_entry(text, "podGC", Json{{"strategy", set.pod_gc}}, 2);
  if (!exit_name.empty()) append_scalar_entry(text, "onExit", exit_name, 2);
  new_line(text, 2);
  text += "templates:";
  for (auto it = templates_.begin(); it != templates_.end(); it = templates_.erase(it)) it->second.append_to(text);
  if (cron) indent_lines(text, spec_start, 2);
  text.push_back('\n');
  return true;
}

}  // namespace

bool write_workflow(const ir::Pipeline& pipeline, const WriteOptions& options, std::string& out,
                    Diagnostics& diags) {
  return WorkflowWriter(pipeline, options, diags).run(out);
}

}  // namespace pipec::emit::argo
