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
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "compiler/emit/kubeflow/launcher_call.hpp"
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

// --- scopes ----------------------------------------------------------------------------

/// One DAG template being written: the pipeline's, the exit handler's, or a loop body's
/// (`dag`, whose nodes are its tasks: ir::Plan says where each value comes from). Values
/// from outside arrive as the template's inputs.
struct Scope {
  ir::Plan::DagId dag = ir::Plan::kNoDag;  // kNoDag: a template of no DAG of the plan
                                           // (a loop's limit): every value is an input
  /// Values imported from outside: key -> (input name, the ref as the parent renders it).
  std::map<std::string, std::pair<std::string, ir::Ref>> imports;
  std::vector<std::string> import_order;  // keys, in first-use order
};

bool is_file(const ir::Ref& r) { return r.type.kind == ir::TypeKind::File; }

std::string ref_key(const ir::Ref& r) {
  return fmt::format("{}/{}/{}", static_cast<int>(r.kind), r.name, r.field);
}

/// The output of a loop's template that carries a step output from inside it: the
/// list of its values, one per iteration.
std::string export_name(const std::string& step, const std::string& field) { return step + "-" + field; }

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
  std::string argo_word(const ir::Word& w);
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
  Json container_template_json(const ir::ContainerOp* op, const std::string& name, const std::string& display);
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

  std::map<std::string, std::string> templates_;  // YAML text by name: written in name order
  std::map<std::string, std::pair<std::string, SourceRange>> template_owner_;
  std::map<std::string, int> op_template_count_;  // op name -> templates made for it
  // A container op's template text, made once: everything but the template's name and the
  // step's display name, which each step's copy puts between the three pieces.
  struct OpText {
    std::string head, middle, tail;
    bool whole = false;  // false: the op's text could not be cut; each step renders its own
  };
  std::map<std::string, OpText, std::less<>> op_text_;
  std::set<std::string> reserved_names_;  // names other templates will take
  std::map<std::string, const ir::Loop*, std::less<>> loops_;  // written, by name
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
      if (scope.dag == ir::Plan::kNoDag) break;
      ir::Plan::Route route = p_.plan.route(scope.dag, r.name);
      if (route.kind == ir::Plan::Route::Kind::Sibling) return {"tasks", to_dns1123(r.name), r.field};
      if (route.kind == ir::Plan::Route::Kind::FanIn)
        return {"tasks", route.through.front(), export_name(r.name, r.field)};
      break;
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
  RefPath path = resolve(r, scope);
  const char* kind = is_file(r) ? "artifacts" : "parameters";
  if (path.output.empty()) return "{{" + std::string(path.root) + "." + kind + "." + path.name + "}}";
  return "{{tasks." + path.name + ".outputs." + kind + "." + path.output + "}}";
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
  // Argo's expr: numbers through asInt/asFloat, truth values as the text "true".
  struct Expr : ir::ConditionSyntax {
    WorkflowWriter& w;
    Scope& scope;
    Expr(WorkflowWriter& writer, Scope& s) : w(writer), scope(s) {}
    std::string truth(const ir::Value& v) override { return w.expr_bool(v, scope); }
    std::string operand(const ir::Value& v, ir::Comparison how) override {
      return w.expr_value(v, scope, how == ir::Comparison::Int     ? "asInt"
                                    : how == ir::Comparison::Float ? "asFloat"
                                                                   : nullptr);
    }
  } expr(*this, scope);
  return ir::print_condition(c, expr);
}

std::string WorkflowWriter::when_of(const Box<ir::Condition>& when, Scope& scope) {
  if (!when) return "";
  return "{{=" + expr_condition(*when, scope) + "}}";
}

// Templates are items of spec.templates (indent 2); their keys are at indent 4.
void WorkflowWriter::add_template(const std::string& name, const Json& t) {
  std::string text;
  append_item(text, t, 2);
  templates_[name] = std::move(text);
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
  templates_[name] = std::move(tasks);
}

// --- container ops ----------------------------------------------------------------------

// A word of the container as the plan gives it: an op parameter as the template's input,
// a `file` parameter as its path.
std::string WorkflowWriter::argo_word(const ir::Word& w) {
  if (w.invalid) {
    // Sema lets run-time values into lists and maps only where an op takes them apart
    // (training ops' env and data); a container op's argument is one value.
    error(w.range, "a list or map built from run-time values cannot be passed to a "
                   "container op; pass a list parameter or a literal list");
    return "";
  }
  std::string s;
  for (std::size_t i = 0; i < w.pieces.size(); ++i) {
    const ir::Piece& piece = w.pieces[i];
    switch (piece.kind) {
      case ir::Piece::Kind::Text:
        s += argo_text(piece.text, i + 1 < w.pieces.size() && w.pieces[i + 1].kind != ir::Piece::Kind::Text);
        break;
      case ir::Piece::Kind::Param: s += "{{inputs.parameters." + piece.name + "}}"; break;
      case ir::Piece::Kind::File: s += piece.text; break;
    }
  }
  return s;
}

Json WorkflowWriter::container_body(const ir::ContainerOp& op, Json& inputs, Json& pod_spec_patch) {
  Scope op_scope;  // refs here are the op's own parameters
  const ir::Invocation& call = p_.plan.container(op.name);
  Json c = Json::object();
  c["image"] = argo_word(call.image);
  Json command = Json::array();
  Json args = Json::array();
  if (call.shell) {
    // Shell form: each `${p}` of the script is an environment variable (ir::Invocation);
    // `args` become the script's "$1", "$2", ...: whole words either way.
    command = Json::array({"sh", "-c", argo_text(call.script), call.name});
    for (const auto& a : call.args) command.push_back(argo_word(a));
  } else {
    // Exec form: no shell. A word that mixes text and values is one argv word that Argo
    // fills in; an op with only `args` keeps the image's ENTRYPOINT.
    for (const auto& w : call.command) command.push_back(argo_word(w));
    for (const auto& w : call.args) args.push_back(argo_word(w));
  }
  // Metrics: pipec-metrics (copied into the pod by an init container, container_template)
  // runs the command and writes KFP's metrics file from its output, with the launcher's
  // scraper; a spec from a parameter is one whole argv word it checks at run time.
  if (!call.metrics.empty() && !command.empty()) {
    Json wrapped = Json::array({std::string(kMetricsTool)});
    for (const auto& m : call.metrics) {
      wrapped.push_back("--metric");
      wrapped.push_back(argo_word(m));
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
  for (const auto& [name, value] : call.env) env.push_back({{"name", name}, {"value", argo_word(value)}});
  for (const auto& value : call.script_values)
    env.push_back({{"name", ir::script_variable(value.name)},
                   {"value", argo_word(ir::Word{{value}, {}, false})}});
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
  if (!op || scalar_style(name) == ScalarStyle::Literal || scalar_style(display) == ScalarStyle::Literal) {
    add_template(name, container_template_json(op, name, display));
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
    append_item(text, container_template_json(op, std::string(kNameMark), std::string(kDisplayMark)), 2);
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
    add_template(name, container_template_json(op, name, display));
    return name;
  }
  std::string text;
  text.reserve(cut.head.size() + cut.middle.size() + cut.tail.size() + name.size() + display.size() + 4);
  text += cut.head;
  append_scalar(text, name, 4);
  text += cut.middle;
  append_scalar(text, display, 8);
  text += cut.tail;
  templates_[name] = std::move(text);
  return name;
}

// The template of a container step: `name`, and `display` as the KFP UI's task name.
Json WorkflowWriter::container_template_json(const ir::ContainerOp* op, const std::string& name,
                                             const std::string& display) {
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
    if (!op->doc.empty()) annotations["pipec.dev/doc"] = argo_text(op->doc);
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
  // The launcher's words, its values as the template's inputs.
  Json args = Json::array();
  for (const auto& w : call.args) {
    switch (w.kind) {
      case kubeflow::LauncherWord::Kind::Text: args.push_back(w.text); break;
      case kubeflow::LauncherWord::Kind::Input: args.push_back("{{inputs.parameters." + w.text + "}}"); break;
      case kubeflow::LauncherWord::Kind::Binding:
        args.push_back(w.text + "={{inputs.parameters." + w.text + "}}");
        break;
      case kubeflow::LauncherWord::Kind::WorkflowName: args.push_back("{{workflow.name}}"); break;
      case kubeflow::LauncherWord::Kind::PodName: args.push_back("{{pod.name}}"); break;
    }
  }
  t["container"] = {
      {"image", options_.launcher_image},
      {"command", Json::array({"pipec-launcher"})},
      {"args", std::move(args)},
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
  loops_[loop.name] = &loop;
  Scope body;
  body.dag = p_.plan.place(loop.name)->body;
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
// of its template (and of the template holding its limit), as the plan lists them; Argo
// makes each a JSON list, one value per iteration in item order.
void WorkflowWriter::add_loop_outputs() {
  auto append_outputs = [&](const std::string& tmpl, const auto& values) {
    std::string& text = templates_.at(tmpl);
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
  for (const auto& [loop_name, exports] : p_.plan.exports) {
    auto written = loops_.find(loop_name);
    if (written == loops_.end()) continue;
    const ir::Loop& loop = *written->second;
    Scope body;
    body.dag = p_.plan.place(loop_name)->body;
    std::map<std::string, std::string> values;  // output name -> value, in name order
    for (const auto& e : exports) {
      ir::Ref r;
      r.kind = ir::Ref::Kind::StepOutput;
      r.name = e.step;
      r.field = e.field;
      values.emplace(export_name(e.step, e.field), argo_ref(r, body));
    }
    append_outputs(loop_name, values);
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
  Scope main;
  main.dag = ir::Plan::kMain;
  std::string tasks;
  tasks.reserve(p_.dag.size() * 512);
  dag_tasks(p_.dag, main, tasks);
  add_dag_template(entry, {}, std::move(tasks));
  if (!exit_name.empty()) {
    Scope fin;
    fin.dag = ir::Plan::kFinally;
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
  for (auto it = templates_.begin(); it != templates_.end(); it = templates_.erase(it)) text += it->second;
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
