// write_pipeline_spec(): the IR as a KFP v2 pipeline spec (PipelineSpec, schema 2.1.0), the
// second back end beside emit/argo (docs/kfp-v2.md).
//
// Shape, as kfp 2.x writes it (../shared/reference/kfp-v2-compiled/):
//  - pipeline parameters are root `inputDefinitions` with types and defaults;
//  - a container op is ONE component `comp-<op>` and ONE executor `exec-<op>`, shared by
//    every step that calls it (kfp writes one per task); a training step is a component
//    of its own that runs pipec-launcher;
//  - a step is a task with `componentRef`; its arguments are constants, inputs of the
//    enclosing component (`componentInputParameter`) or outputs of sibling tasks
//    (`taskOutputParameter`, with `dependentTasks`); a string built from values is a
//    constant holding `{{$.inputs.parameters['pipelinechannel--…']}}` placeholders plus
//    those inputs, as kfp compiles an f-string;
//  - a step or loop under `if` is wrapped in a DAG component `comp-condition-<task>` whose
//    task carries `triggerPolicy.condition` (CEL over its inputs) and which passes the
//    step's outputs up as its own;
//  - `for` is a DAG component run with `parameterIterator` (items `raw` JSON, or an input);
//  - `finally`: the main DAG becomes `exit-handler-1`, and the finally steps a DAG
//    `finally` run after it with `ALL_UPSTREAM_TASKS_COMPLETED`.
// Values reach a container only as whole placeholders the KFP launcher replaces, never as
// script text: a shell-form command reads them from variables its prologue sets from its
// positional arguments, as the Argo target reads environment variables.
// Deterministic: every map is written in sorted key order, nothing depends on time.
#include "compiler/emit/kfpv2/pipeline_spec_writer.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "compiler/emit/kubeflow/launcher_call.hpp"
#include "runtime/job_render.hpp"

namespace pipec::emit::kfpv2 {
namespace {

using J = nlohmann::json;  // std::map objects: keys in sorted order, as kfp writes them

constexpr const char* kChannel = "pipelinechannel--";

const char* parameter_type(const ir::Type& t) {
  switch (t.kind) {
    case ir::TypeKind::String: return "STRING";
    case ir::TypeKind::Int: return "NUMBER_INTEGER";
    case ir::TypeKind::Float: return "NUMBER_DOUBLE";
    case ir::TypeKind::Bool: return "BOOLEAN";
    case ir::TypeKind::File: return "STRING";
    case ir::TypeKind::List: return "LIST";
    case ir::TypeKind::Map: return "STRUCT";
  }
  return "STRING";
}

J literal_json(const ir::Literal& l) { return J::parse(l.dump()); }

/// The component input that carries a resource an op builds from text around values.
std::string resource_input(std::string_view key) { return fmt::format("pipec-resource-{}", key); }

std::string input_placeholder(std::string_view name) {
  return fmt::format("{{{{$.inputs.parameters['{}']}}}}", name);
}
std::string output_placeholder(std::string_view name) {
  return fmt::format("{{{{$.outputs.parameters['{}'].output_file}}}}", name);
}
std::string input_artifact_path(std::string_view name) {
  return fmt::format("{{{{$.inputs.artifacts['{}'].path}}}}", name);
}
std::string output_artifact_path(std::string_view name) {
  return fmt::format("{{{{$.outputs.artifacts['{}'].path}}}}", name);
}

bool is_file(const ir::Type& t) { return t.kind == ir::TypeKind::File; }

/// A file passes as an artifact (system.Artifact, kfp's default type).
J artifact_type() { return {{"artifactType", {{"schemaTitle", "system.Artifact"}, {"schemaVersion", "0.0.1"}}}}; }

/// A task input's source as the artifact form of what resolve() gives for a parameter.
J as_artifact(const J& source) {
  if (source.contains("taskOutputParameter"))
    return {{"taskOutputArtifact",
             {{"producerTask", source["taskOutputParameter"]["producerTask"]},
              {"outputArtifactKey", source["taskOutputParameter"]["outputParameterKey"]}}}};
  if (source.contains("componentInputParameter"))
    return {{"componentInputArtifact", source["componentInputParameter"]}};
  return source;
}

/// A CEL string literal ('...') holding `text`.
std::string cel_string(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
        else out.push_back(c);
    }
  }
  return out + "'";
}

/// The script that places a container's file inputs where the op reads them, then runs
/// the command: `sh -c WRAPPER pipec-inputs N FROM1 TO1 ... FROMn TOn COMMAND...`.
constexpr const char* kInputsWrapper =
    "n=$1; shift; i=0\n"
    "while [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); "
    "mkdir -p -- \"$(dirname -- \"$2\")\" && cp -- \"$1\" \"$2\" || exit 1; shift 2; done\n"
    "exec \"$@\"\n";

/// The script that copies a container's declared output files to the paths KFP names:
/// `sh -c WRAPPER pipec-outputs N TO1 FROM1 ... TOn FROMn COMMAND...`. The paths are
/// arguments, never script text; the command's exit code is kept.
constexpr const char* kOutputsWrapper =
    "n=$1; shift; i=0\n"
    "while [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); eval \"pipec_to_$i=\\$1 pipec_from_$i=\\$2\"; shift 2; done\n"
    "\"$@\"; rc=$?; i=0\n"
    "while [ \"$rc\" -eq 0 ] && [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); "
    "eval \"to=\\$pipec_to_$i from=\\$pipec_from_$i\"; cp -- \"$from\" \"$to\" || rc=1; done\n"
    "exit \"$rc\"\n";

// --- scopes ------------------------------------------------------------------------------

/// One DAG component being written: the root, the exit handler's, a loop body (`dag`,
/// whose nodes are its tasks: ir::Plan says where each value comes from) or a condition
/// wrapper (`wrapper`: it holds one task, and every value is an input). Values from
/// outside arrive as inputs of the component.
struct Scope {
  const Scope* parent = nullptr;
  bool root = false;
  ir::Plan::DagId dag = ir::Plan::kNoDag;  // kNoDag: the root around the exit handler
  bool wrapper = false;
  std::string loop_var;    // the variable this DAG iterates, if a loop body
  std::string item_input;  // its input
  ir::Type item_type;
  struct Import {
    std::string input;
    ir::Ref ref;
    ir::Type type;
  };
  std::map<std::string, std::size_t> import_index;  // ref key -> imports
  std::vector<Import> imports;
  std::set<std::string> task_names;
};

std::string ref_key(const ir::Ref& r) {
  return fmt::format("{}/{}/{}", static_cast<int>(r.kind), r.name, r.field);
}

// --- the writer ----------------------------------------------------------------------------

class SpecWriter {
 public:
  SpecWriter(const ir::Pipeline& p, const WriteOptions& o, Diagnostics& d) : p_(p), options_(o), diags_(d) {
    for (const auto& op : p_.ops) ops_[op.name] = &op;
  }

  bool run(std::string& out);

 private:
  void error(SourceRange range, std::string message) {
    diags_.error(range.valid() ? range : p_.range, std::move(message));
    ok_ = false;
  }
  std::string name_of(const std::string& source, SourceRange range, const char* what);
  void claim_component(const std::string& name, SourceRange range, const std::string& what);
  void claim_task(Scope& s, const std::string& name, SourceRange range);

  // Values.
  std::string channel(const ir::Ref& r, const Scope& s) const;
  ir::Type type_of(const ir::Ref& r) const;
  /// A node's task in its DAG (in its condition wrapper's name when it has one), and the
  /// key of its output `field` there.
  std::string task_of(const std::string& node) const;
  J resolve(const ir::Ref& r, Scope& s, std::set<std::string>& deps);
  std::string import(const ir::Ref& r, Scope& s);
  void task_input(J& inputs, const std::string& name, const ir::Value& v, Scope& s,
                  std::set<std::string>& deps);
  ir::Value at_call_site(const ir::Value& body, const ir::Step& step);
  std::string cel_ref(const ir::Ref& r, Scope& s);
  std::string cel_value(const ir::Value& v, Scope& s, const char* as);
  std::string cel_bool(const ir::Value& v, Scope& s);
  std::string cel_condition(const ir::Condition& c, Scope& s);

  // DAGs.
  void dag(const std::vector<ir::Node>& nodes, Scope& s, J& tasks);
  J step_task(const ir::Step& step, Scope& s, std::set<std::string>& deps);
  J loop_task(const ir::Loop& loop, Scope& s, std::set<std::string>& deps);
  void add_loop_outputs();
  void add_dependencies(J& task, const std::vector<std::string>& depends, std::set<std::string> deps) const;
  J component_inputs(const Scope& s) const;
  void pass_imports(const Scope& child, Scope& parent, J& task, std::set<std::string>& deps);

  // Components and executors.
  std::string container_component(const ir::Step& step);
  std::string training_component(const ir::Step& step, kubeflow::LauncherCall& call);
  J op_word(const ir::Word& w);
  bool literal_ok(std::string_view text, SourceRange range);

  const ir::Pipeline& p_;
  const WriteOptions& options_;
  Diagnostics& diags_;
  bool ok_ = true;

  std::map<std::string, const ir::ContainerOp*> ops_;
  std::map<std::string, std::string> component_owner_;
  std::map<std::string, std::string> op_component_;       // op name -> component written
  J components_ = J::object();
  J executors_ = J::object();
  std::map<std::string, const ir::Loop*, std::less<>> loops_;  // written, by name
  J platform_ = J::object();
};

std::string SpecWriter::name_of(const std::string& source, SourceRange range, const char* what) {
  std::string name = to_dns1123(source);
  if (name.empty() || !is_dns1123_label(name, kMaxK8sNameLength)) {
    error(range, fmt::format("{} name '{}' does not give a valid KFP name", what, source));
    return name.empty() ? "invalid" : name;
  }
  return name;
}

void SpecWriter::claim_component(const std::string& name, SourceRange range, const std::string& what) {
  auto [it, inserted] = component_owner_.emplace(name, what);
  if (!inserted)
    error(range, fmt::format("{} and {} both become the KFP component '{}'; rename one of them",
                             it->second, what, name));
}

void SpecWriter::claim_task(Scope& s, const std::string& name, SourceRange range) {
  if (!s.task_names.insert(name).second)
    error(range, fmt::format("two tasks of one DAG become the KFP task '{}'; rename one of them", name));
}

// The name a value takes as an input of a DAG component (kfp's `pipelinechannel--…`).
std::string SpecWriter::channel(const ir::Ref& r, const Scope& s) const {
  switch (r.kind) {
    case ir::Ref::Kind::Param: return kChannel + r.name;
    case ir::Ref::Kind::StepOutput: return kChannel + to_dns1123(r.name) + "-" + r.field;
    case ir::Ref::Kind::LoopItem: {
      std::string_view loop = p_.plan.loop_of_var(s.dag, r.name);
      std::string base = kChannel + std::string(loop.empty() ? std::string_view(r.name) : loop) + "-item";
      return r.field.empty() ? base : base + "-" + r.field;
    }
    case ir::Ref::Kind::OpParam: break;
  }
  return kChannel + r.name;
}

// A value's type where the ref was written; a step output read from outside its loops is
// already the list over their iterations (fan-in).
ir::Type SpecWriter::type_of(const ir::Ref& r) const { return r.type; }

std::string SpecWriter::task_of(const std::string& node) const {
  const ir::Plan::Place* place = p_.plan.place(node);
  std::string task = place && place->loop ? node : to_dns1123(node);
  return place && place->conditional ? "condition-" + task : task;
}

std::string SpecWriter::import(const ir::Ref& r, Scope& s) {
  std::string key = ref_key(r);
  if (auto it = s.import_index.find(key); it != s.import_index.end()) return s.imports[it->second].input;
  s.import_index.emplace(key, s.imports.size());
  s.imports.push_back({channel(r, s), r, type_of(r)});
  return s.imports.back().input;
}

// How a value reaches a task of `s`: an input of the component `s` is, a sibling's
// output, or the loop item. `deps` collects the sibling tasks it comes from.
J SpecWriter::resolve(const ir::Ref& r, Scope& s, std::set<std::string>& deps) {
  switch (r.kind) {
    case ir::Ref::Kind::Param:
      if (s.root) return J{{"componentInputParameter", r.name}};
      break;
    case ir::Ref::Kind::StepOutput: {
      if (s.wrapper || s.dag == ir::Plan::kNoDag) break;
      ir::Plan::Route route = p_.plan.route(s.dag, r.name);
      if (route.kind == ir::Plan::Route::Kind::Outside) break;
      // A sibling's output (its condition wrapper's, under the channel name), or fan-in:
      // the loop (or its condition wrapper) gives the list under the channel name.
      bool sibling = route.kind == ir::Plan::Route::Kind::Sibling;
      std::string task = task_of(sibling ? r.name : route.through.front());
      deps.insert(task);
      std::string key = sibling && !p_.plan.place(r.name)->conditional ? r.field : channel(r, s);
      return J{{"taskOutputParameter", {{"producerTask", std::move(task)}, {"outputParameterKey", std::move(key)}}}};
    }
    case ir::Ref::Kind::LoopItem:
      if (r.name == s.loop_var) {
        J j = {{"componentInputParameter", s.item_input}};
        if (!r.field.empty()) j["parameterExpressionSelector"] = "parseJson(string_value)[" + J(r.field).dump() + "]";
        return j;
      }
      break;
    case ir::Ref::Kind::OpParam:
      error(r.range, "an op's own parameter used outside its body");
      return J::object();
  }
  return J{{"componentInputParameter", import(r, s)}};
}

// One input of a task: a constant, a value from `resolve`, or a string built from values
// (a constant with placeholders, and the values as further inputs, as kfp's f-strings).
void SpecWriter::task_input(J& inputs, const std::string& name, const ir::Value& v, Scope& s,
                            std::set<std::string>& deps) {
  const ir::Ref* whole = ir::whole_ref(v);
  // "${n}" with an int n is a string: it goes the way of text built from values, so the
  // input gets a STRING as declared (KFP checks parameter types).
  bool as_text = whole && v.kind == ir::Value::Kind::Interpolation && type_of(*whole).kind != v.type.kind;
  if (whole && !as_text) {
    inputs[name] = resolve(*whole, s, deps);
    return;
  }
  switch (v.kind) {
    case ir::Value::Kind::Literal:
      inputs[name] = J{{"runtimeValue", {{"constant", literal_json(v.literal)}}}};
      return;
    case ir::Value::Kind::Interpolation: {
      std::string text;
      for (const auto& part : v.parts) {
        if (!part.ref) {
          if (!literal_ok(part.text, v.range)) return;
          text += part.text;
          continue;
        }
        std::string ch = channel(*part.ref, s);
        text += input_placeholder(ch);
        if (!inputs.contains(ch)) inputs[ch] = resolve(*part.ref, s, deps);
      }
      inputs[name] = J{{"runtimeValue", {{"constant", text}}}};
      return;
    }
    default:
      error(v.range, "a list or map built from run-time values cannot be passed to a step; pass a "
                     "list parameter or a literal list");
  }
}

bool SpecWriter::literal_ok(std::string_view text, SourceRange range) {
  if (text.find("{{$") == std::string_view::npos) return true;
  error(range, "on the kfp-v2 target this text holds '{{$', which KFP's launcher would read as a "
               "placeholder of its own (docs/kfp-v2.md); the Argo target passes it unchanged");
  return false;
}

// An op body's string (its parameters as refs) as the step gives it: each parameter
// replaced by the step's argument, literal text kept.
ir::Value SpecWriter::at_call_site(const ir::Value& body, const ir::Step& step) {
  ir::Value out;
  out.kind = ir::Value::Kind::Interpolation;
  out.type = body.type;
  out.range = body.range;
  auto add_text = [&](const std::string& text) {
    if (!out.parts.empty() && !out.parts.back().ref) out.parts.back().text += text;
    else out.parts.push_back(ir::Part{text, {}});
  };
  for (const auto& part : body.parts) {
    if (!part.ref) {
      add_text(part.text);
      continue;
    }
    const ir::Value* arg = nullptr;
    for (const auto& [n, v] : step.args)
      if (n == part.ref->name) arg = &v;
    if (!arg) {
      error(body.range, fmt::format("op parameter '{}' has no value in step '{}'", part.ref->name, step.name));
      continue;
    }
    if (arg->is_literal()) add_text(ir::literal_text(arg->literal));
    else if (const ir::Ref* r = ir::whole_ref(*arg)) out.parts.push_back(ir::Part{{}, *r});
    else if (arg->kind == ir::Value::Kind::Interpolation)
      for (const auto& p : arg->parts) p.ref ? out.parts.push_back(p) : add_text(p.text);
    else error(arg->range, "a list or map cannot be part of a resource");
  }
  if (std::none_of(out.parts.begin(), out.parts.end(), [](const ir::Part& p) { return p.ref.has_value(); })) {
    out.kind = ir::Value::Kind::Literal;
    out.literal = out.parts.empty() ? std::string() : out.parts.front().text;
    out.parts.clear();
  }
  return out;
}

// --- conditions (CEL over the inputs of the wrapper task) -------------------------------------

std::string SpecWriter::cel_ref(const ir::Ref& r, Scope& s) {
  // In a condition wrapper every value is an input of the wrapper: `s` has no steps.
  return "inputs.parameter_values[" + cel_string(import(r, s)) + "]";
}

std::string SpecWriter::cel_value(const ir::Value& v, Scope& s, const char* as) {
  if (const ir::Ref* r = ir::whole_ref(v)) {
    std::string x = cel_ref(*r, s);
    return as ? std::string(as) + "(" + x + ")" : x;
  }
  if (v.kind == ir::Value::Kind::Literal) {
    if (as && v.literal.is_number()) {
      if (std::string_view(as) == "double") {
        std::string t = v.literal.dump();
        if (t.find_first_of(".eE") == std::string::npos) t += ".0";
        return t;
      }
      return v.literal.dump();
    }
    if (v.literal.is_boolean()) return v.literal.get<bool>() ? "true" : "false";
    return cel_string(ir::literal_text(v.literal));
  }
  if (v.kind == ir::Value::Kind::Interpolation) {
    std::string text;
    for (const auto& part : v.parts) {
      if (!text.empty()) text += " + ";
      if (!part.ref) {
        text += cel_string(part.text);
      } else if (part.ref->type.kind == ir::TypeKind::String) {
        text += cel_ref(*part.ref, s);
      } else if (part.ref->type.kind == ir::TypeKind::Int) {
        text += "string(int(" + cel_ref(*part.ref, s) + "))";
      } else {
        error(v.range, "on the kfp-v2 target a condition can build a string only from string and "
                       "int values");
      }
    }
    return "(" + (text.empty() ? std::string("''") : text) + ")";
  }
  error(v.range, "lists and maps cannot be compared");
  return "''";
}

std::string SpecWriter::cel_bool(const ir::Value& v, Scope& s) {
  if (v.is_literal() && v.literal.is_boolean()) return v.literal.get<bool>() ? "true" : "false";
  return "(" + cel_value(v, s, nullptr) + " == true)";
}

std::string SpecWriter::cel_condition(const ir::Condition& c, Scope& s) {
  // CEL over the wrapper's inputs. KFP holds every number as a double; two ints compare
  // as ints (as kfp writes int(...)).
  struct Cel : ir::ConditionSyntax {
    SpecWriter& w;
    Scope& scope;
    Cel(SpecWriter& writer, Scope& sc) : w(writer), scope(sc) {}
    std::string truth(const ir::Value& v) override { return w.cel_bool(v, scope); }
    std::string operand(const ir::Value& v, ir::Comparison how) override {
      return w.cel_value(v, scope, how == ir::Comparison::Int     ? "int"
                                   : how == ir::Comparison::Float ? "double"
                                                                  : nullptr);
    }
  } cel(*this, s);
  return ir::print_condition(c, cel);
}

// --- DAGs ----------------------------------------------------------------------------------------

// Fan-in: each loop whose steps' outputs are read after it gives them as LIST outputs of
// its DAG (and of its condition wrapper), as kfp compiles dsl.Collected; reading one
// from a loop nested inside asks that loop in turn, so this runs until nothing is new.
void SpecWriter::add_loop_outputs() {
  for (const auto& [loop_name, exports] : p_.plan.exports) {
    auto written = loops_.find(loop_name);
    if (written == loops_.end()) continue;
    const ir::Loop& loop = *written->second;
    Scope body;
    body.dag = p_.plan.place(loop_name)->body;
    for (const auto& e : exports) {
      ir::Ref ref;
      ref.kind = ir::Ref::Kind::StepOutput;
      ref.name = e.step;
      ref.field = e.field;
      std::string key = channel(ref, body);
      std::set<std::string> deps;
      J from = resolve(ref, body, deps)["taskOutputParameter"];
      J spec = {{"parameterType", parameter_type(e.type)}};
      auto put = [&](const std::string& component, J value) {
        J& c = components_[component];
        c["dag"]["outputs"]["parameters"][key] = {{"valueFromParameter", std::move(value)}};
        c["outputDefinitions"]["parameters"][key] = spec;
      };
      put("comp-" + loop_name, {{"outputParameterKey", from["outputParameterKey"]},
                                {"producerSubtask", from["producerTask"]}});
      if (loop.when)
        put("comp-condition-" + loop_name, {{"outputParameterKey", key}, {"producerSubtask", loop_name}});
    }
  }
}

void SpecWriter::add_dependencies(J& task, const std::vector<std::string>& depends,
                                  std::set<std::string> deps) const {
  for (const auto& d : depends) deps.insert(task_of(d));
  if (!deps.empty()) task["dependentTasks"] = J(std::vector<std::string>(deps.begin(), deps.end()));
}

J SpecWriter::component_inputs(const Scope& s) const {
  J params = J::object();
  if (!s.item_input.empty()) params[s.item_input] = {{"parameterType", parameter_type(s.item_type)}};
  for (const auto& imp : s.imports)
    if (!is_file(imp.type)) params[imp.input] = {{"parameterType", parameter_type(imp.type)}};
  return params;
}

// The files a DAG component takes from outside, as its input artifacts.
void add_artifact_inputs(J& component, const std::vector<Scope::Import>& imports) {
  for (const auto& imp : imports)
    if (is_file(imp.type)) component["inputDefinitions"]["artifacts"][imp.input] = artifact_type();
}

// The task that runs `child` in `parent` passes each value the child imported.
void SpecWriter::pass_imports(const Scope& child, Scope& parent, J& task, std::set<std::string>& deps) {
  if (child.imports.empty()) return;
  for (const auto& imp : child.imports) {
    if (is_file(imp.type)) task["inputs"]["artifacts"][imp.input] = as_artifact(resolve(imp.ref, parent, deps));
    else task["inputs"]["parameters"][imp.input] = resolve(imp.ref, parent, deps);
  }
}

J SpecWriter::step_task(const ir::Step& step, Scope& s, std::set<std::string>& deps) {
  J task = J::object();
  J inputs = J::object();
  std::string component;
  if (step.kind == ir::OpKind::Container) {
    component = container_component(step);
    for (const auto& [name, value] : step.args) {
      if (const ir::Ref* r = ir::whole_ref(value); r && is_file(r->type))
        task["inputs"]["artifacts"][name] = as_artifact(resolve(*r, s, deps));
      else
        task_input(inputs, name, value, s, deps);
    }
    if (auto op = ops_.find(step.op); op != ops_.end()) {
      if (const ir::ContainerOp& o = *op->second; o.retries) {
        // KFP v2 retries a failed task whatever failed (no policy); backoff as kfp writes it.
        J retry = {{"maxRetryCount", *o.retries}};
        if (o.retry_backoff_seconds) retry["backoffDuration"] = fmt::format("{}s", *o.retry_backoff_seconds);
        if (o.retry_factor) retry["backoffFactor"] = static_cast<double>(*o.retry_factor);
        if (o.retry_max_duration_seconds) retry["backoffMaxDuration"] = fmt::format("{}s", *o.retry_max_duration_seconds);
        task["retryPolicy"] = std::move(retry);
      }
      for (const auto& [key, value] : op->second->resources)
        if (value.kind == ir::Value::Kind::Interpolation && !ir::whole_ref(value))
          task_input(inputs, resource_input(key), at_call_site(value, step), s, deps);
    }
  } else {
    kubeflow::LauncherCall call;
    component = training_component(step, call);
    for (const auto& [name, value] : call.inputs) task_input(inputs, name, value, s, deps);
  }
  task["componentRef"] = {{"name", component}};
  // `cache false` turns KFP v2's caching off; v2 has no staleness bound (kfp's
  // cachingOptions holds only enableCache and a key), so `cache "7d"` keeps it on.
  bool cache = true;
  if (step.kind == ir::OpKind::Container)
    if (auto op = ops_.find(step.op); op != ops_.end() && op->second->cache) cache = *op->second->cache;
  task["cachingOptions"] = {{"enableCache", cache}};
  task["taskInfo"] = {{"name", step.name}};
  if (!inputs.empty()) task["inputs"]["parameters"] = std::move(inputs);
  return task;
}

J SpecWriter::loop_task(const ir::Loop& loop, Scope& s, std::set<std::string>& deps) {
  loops_[loop.name] = &loop;
  Scope body;
  body.parent = &s;
  body.dag = p_.plan.place(loop.name)->body;
  body.loop_var = loop.var;
  body.item_input = kChannel + loop.name + "-item";
  body.item_type = loop.item_type;
  J tasks = J::object();
  dag(loop.body, body, tasks);

  std::string component = "comp-" + loop.name;
  claim_component(component, loop.range, "the loop over '" + loop.var + "'");
  J inputs = component_inputs(body);
  J task = J::object();
  task["componentRef"] = {{"name", component}};
  task["taskInfo"] = {{"name", loop.name}};
  pass_imports(body, s, task, deps);
  J iterator = {{"itemInput", body.item_input}};
  if (loop.items->is_literal()) {
    iterator["items"] = {{"raw", literal_json(loop.items->literal).dump()}};
  } else {
    std::string items = kChannel + loop.name + "-items";
    J params = task.contains("inputs") ? task["inputs"]["parameters"] : J::object();
    task_input(params, items, *loop.items, s, deps);
    task["inputs"]["parameters"] = std::move(params);
    inputs[items] = {{"parameterType", "LIST"}};
    iterator["items"] = {{"inputParameter", items}};
  }
  task["parameterIterator"] = std::move(iterator);
  if (loop.limit > 0) task["iteratorPolicy"] = {{"parallelismLimit", loop.limit}};
  components_[component] = {{"dag", {{"tasks", std::move(tasks)}}},
                            {"inputDefinitions", {{"parameters", std::move(inputs)}}}};
  add_artifact_inputs(components_[component], body.imports);
  return task;
}

// Writes each node as a task of `s` (a conditional one inside its condition wrapper).
void SpecWriter::dag(const std::vector<ir::Node>& nodes, Scope& s, J& tasks) {
  for (const auto& node : nodes) {
    const auto* step = std::get_if<ir::Step>(&node);
    const auto* loop = std::get_if<ir::Loop>(&node);
    const Box<ir::Condition>& when = step ? step->when : loop->when;
    const std::vector<std::string>& depends = step ? step->depends : loop->depends;
    SourceRange range = step ? step->range : loop->range;
    std::string name = step ? name_of(step->name, step->range, "step") : loop->name;

    std::set<std::string> deps;
    J task;
    std::string task_name = name;
    if (!when) {
      task = step ? step_task(*step, s, deps) : loop_task(*loop, s, deps);
    } else {
      // The condition wrapper: one DAG holding the task, run when the condition holds.
      Scope w;
      w.parent = &s;
      w.dag = s.dag;
      w.wrapper = true;
      std::set<std::string> inner_deps;  // none: the wrapper holds one task
      J inner = step ? step_task(*step, w, inner_deps) : loop_task(*loop, w, inner_deps);
      std::string condition = cel_condition(*when, w);
      task_name = "condition-" + name;
      std::string component = "comp-" + task_name;
      claim_component(component, range, "the condition of '" + (step ? step->name : loop->var) + "'");
      J dag_spec = {{"tasks", {{name, std::move(inner)}}}};
      J outputs = J::object();
      J artifact_outputs = J::object();
      if (step && step->kind == ir::OpKind::Container)
        if (auto op = ops_.find(step->op); op != ops_.end())
          for (const auto& out : op->second->outputs) {
            std::string key = kChannel + name + "-" + out.name;
            if (is_file(out.type)) {
              dag_spec["outputs"]["artifacts"][key] = {
                  {"artifactSelectors", J::array({{{"producerSubtask", name}, {"outputArtifactKey", out.name}}})}};
              artifact_outputs[key] = artifact_type();
              continue;
            }
            dag_spec["outputs"]["parameters"][key] = {
                {"valueFromParameter", {{"producerSubtask", name}, {"outputParameterKey", out.name}}}};
            outputs[key] = {{"parameterType", parameter_type(out.type)}};
          }
      J component_spec = {{"dag", std::move(dag_spec)}};
      J inputs = component_inputs(w);
      if (!inputs.empty()) component_spec["inputDefinitions"] = {{"parameters", std::move(inputs)}};
      if (!outputs.empty()) component_spec["outputDefinitions"]["parameters"] = std::move(outputs);
      if (!artifact_outputs.empty()) component_spec["outputDefinitions"]["artifacts"] = std::move(artifact_outputs);
      add_artifact_inputs(component_spec, w.imports);
      components_[component] = std::move(component_spec);
      task = J::object();
      task["componentRef"] = {{"name", component}};
      task["taskInfo"] = {{"name", task_name}};
      task["triggerPolicy"] = {{"condition", condition}};
      pass_imports(w, s, task, deps);
    }
    claim_task(s, task_name, range);
    add_dependencies(task, depends, std::move(deps));
    tasks[task_name] = std::move(task);
  }
}

// --- components and executors -------------------------------------------------------------------

// A word of an op's container as the plan gives it: text, the op's parameters as
// placeholders, a file parameter as the path the inputs prologue copies it to
// (kInputsWrapper).
J SpecWriter::op_word(const ir::Word& w) {
  if (w.invalid) {
    error(w.range, "a list or map built from run-time values cannot be an argv word");
    return "";
  }
  std::string s;
  for (const auto& piece : w.pieces) {
    switch (piece.kind) {
      case ir::Piece::Kind::Text:
        literal_ok(piece.text, w.range);
        s += piece.text;
        break;
      case ir::Piece::Kind::Param: s += input_placeholder(piece.name); break;
      case ir::Piece::Kind::File: s += piece.text; break;
    }
  }
  return s;
}

std::string SpecWriter::container_component(const ir::Step& step) {
  if (auto it = op_component_.find(step.op); it != op_component_.end()) return it->second;
  auto found = ops_.find(step.op);
  if (found == ops_.end()) {
    error(step.range, fmt::format("op '{}' is not a container op", step.op));
    return "";
  }
  const ir::ContainerOp& op = *found->second;
  std::string base = name_of(op.name, op.range, "op");
  std::string component = "comp-" + base, executor = "exec-" + base;
  claim_component(component, op.range, "op '" + op.name + "'");
  op_component_[step.op] = component;

  J inputs = J::object(), file_inputs = J::object(), file_outputs = J::object();
  for (const auto& param : op.params) {
    J spec = {{"parameterType", parameter_type(param.type)}};
    if (param.default_value) {
      spec["defaultValue"] = literal_json(*param.default_value);
      spec["isOptional"] = true;
    }
    if (!param.doc.empty()) spec["description"] = param.doc;
    if (is_file(param.type)) {
      file_inputs[param.name] = artifact_type();
      continue;
    }
    inputs[param.name] = std::move(spec);
  }
  J outputs = J::object();
  for (const auto& out : op.outputs) {
    J spec = {{"parameterType", parameter_type(out.type)}};
    if (!out.doc.empty()) spec["description"] = out.doc;
    if (is_file(out.type)) {
      file_outputs[out.name] = artifact_type();
      continue;
    }
    outputs[out.name] = std::move(spec);
  }
  J& comp_inputs = inputs;  // resources built from text add inputs below

  // The container: the op's argv with placeholders.
  const ir::Invocation& call = p_.plan.container(op.name);
  J container = J::object();
  if (call.image.literal()) {
    container["image"] = call.image.pieces[0].text;
  } else if (call.image.pieces.size() == 1 && call.image.pieces[0].kind == ir::Piece::Kind::Param) {
    // A whole input parameter: the KFP v2 backend resolves it before it starts the task
    // (kubeflow/pipelines#11404). It resolves nothing else in an image.
    container["image"] = input_placeholder(call.image.pieces[0].name);
  } else {
    error(op.image.range,
          "on the kfp-v2 target an op's image is written in the op or is one whole parameter "
          "(image \"${img}\"): KFP v2 resolves an image that is a whole input parameter, not one "
          "built inside a string");
  }
  std::vector<J> argv;
  if (call.shell) {
    // The script is the op's text; each `${p}` a variable (ir::Invocation), set by a
    // prologue from the positional arguments that follow.
    literal_ok(call.script, call.script_range);
    std::string prologue;
    if (!call.script_values.empty()) {
      prologue = "export";
      for (std::size_t i = 0; i < call.script_values.size(); ++i)
        prologue += fmt::format(" {}=\"${}\"", ir::script_variable(call.script_values[i].name), i + 1);
      prologue += fmt::format("; shift {}\n", call.script_values.size());
    }
    argv = {"sh", "-c", prologue + call.script, call.name};
    for (const auto& value : call.script_values) argv.push_back(op_word(ir::Word{{value}, {}, false}));
    for (const auto& a : call.args) argv.push_back(op_word(a));
  } else {
    for (const auto& w : call.command) argv.push_back(op_word(w));
    for (const auto& w : call.args) argv.push_back(op_word(w));
  }
  // Environment: literal values in the container's `env`; KFP v2 substitutes placeholders
  // only in the command line, so a variable from a value is exported by a small `sh`
  // prologue from an argument (`sh -c 'export A="$1"; shift 1; exec "$@"' pipec-env V CMD…`).
  // Metrics: pipec-metrics runs the command and writes them, as the metadata of the output
  // artifact `metrics` (system.Metrics), into the ExecutorOutput named by {{$}}. A KFP v2
  // task cannot have the init container that brings it on the Argo target: the image
  // must hold it.
  if (!op.metrics.empty()) {
    diags_.warning(op.metrics.front().range.valid() ? op.metrics.front().range : op.range,
                   "on the kfp-v2 target the image must hold pipec-metrics on its PATH (KFP v2 tasks "
                   "have no init container to bring it): COPY --from=" + options_.launcher_image +
                       " /usr/local/bin/pipec-metrics /usr/local/bin/");
    std::vector<J> wrapped = {"pipec-metrics"};
    for (const auto& m : call.metrics) {
      wrapped.push_back("--metric");
      wrapped.push_back(op_word(m));
    }
    if (!op.metrics_from.empty()) {
      literal_ok(op.metrics_from, op.range);
      wrapped.push_back("--from");
      wrapped.push_back(op.metrics_from);
    }
    for (const char* w : {"--metrics-file", "{{$.outputs.artifacts['metrics'].path}}", "--executor-input", "{{$}}", "--"})
      wrapped.push_back(w);
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }
  // `working_dir`: a KFP v2 container has no workingDir; a prologue changes to it (the
  // path is a literal the checker allowed, passed as an argument, never as script text).
  if (!op.working_dir.empty()) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with a working_dir needs a command (the container "
                      "changes to the directory before the command runs)");
    literal_ok(op.working_dir, op.range);
    std::vector<J> wrapped = {"sh", "-c", "mkdir -p -- \"$0\" && cd -- \"$0\" && exec \"$@\"", op.working_dir};
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }
  J env = J::array();
  std::string exports;
  std::vector<J> values;
  for (const auto& [name, value] : call.env) {
    if (value.literal()) {
      literal_ok(value.pieces[0].text, value.range);
      env.push_back({{"name", name}, {"value", value.pieces[0].text}});
      continue;
    }
    values.push_back(op_word(value));
    exports += fmt::format(" {}=\"${}\"", name, values.size());
  }
  if (!env.empty()) container["env"] = std::move(env);
  if (!values.empty()) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with an environment variable from a value needs a "
                      "command (the variable is exported before the command runs)");
    std::vector<J> wrapped = {"sh", "-c", fmt::format("export{}; shift {}; exec \"$@\"", exports, values.size()),
                              "pipec-env"};
    wrapped.insert(wrapped.end(), values.begin(), values.end());
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }

  if (!op.outputs.empty()) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with outputs needs a command (its outputs are "
                      "copied to the files KFP names after it runs)");
    std::vector<J> wrapped = {"sh", "-c", kOutputsWrapper, "pipec-outputs", std::to_string(call.outputs.size())};
    for (const auto& out : call.outputs) {
      wrapped.push_back(out.file ? output_artifact_path(out.name) : output_placeholder(out.name));
      literal_ok(out.path, op.range);
      wrapped.push_back(out.path);
    }
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }
  // File inputs: KFP v2 downloads each to a path of its own; the op reads it at its
  // parameter's path, where a prologue copies it (paths are arguments, not script text).
  if (!file_inputs.empty()) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with file parameters needs a command (the files are "
                      "placed before the command runs)");
    std::vector<J> wrapped = {"sh", "-c", kInputsWrapper, "pipec-inputs", std::to_string(call.inputs.size())};
    for (const auto& in : call.inputs) {
      literal_ok(in.path, op.range);
      wrapped.push_back(input_artifact_path(in.name));
      wrapped.push_back(in.path);
    }
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }
  if (!argv.empty()) {
    if (op.command.empty()) container["args"] = J(argv);
    else container["command"] = J(argv);
  }

  // Resources: requests = limits, as the Argo target writes them.
  J resources = J::object();
  std::string vendor = "nvidia.com/gpu";
  for (const auto& [key, value] : op.resources)
    if (key == "gpu_vendor" && value.is_literal()) {
      std::string v = ir::literal_text(value.literal);
      vendor = rules::gpu_resource_name(v);
    }
  for (const auto& [key, value] : op.resources) {
    // A value known at run time: KFP v2 resolves a whole placeholder of a task input here.
    std::string text;
    if (value.is_literal()) {
      text = ir::literal_text(value.literal);
    } else if (const ir::Ref* r = ir::whole_ref(value); r && key != "gpu_vendor") {
      text = input_placeholder(r->name);
    } else if (value.kind == ir::Value::Kind::Interpolation && key != "gpu_vendor") {
      // Text around values ("${mem}Gi"): each task computes it as an input of its own
      // (a string the driver builds), which the executor names whole.
      std::string input = resource_input(key);
      comp_inputs[input] = {{"parameterType", "STRING"}};
      text = input_placeholder(input);
    } else {
      error(value.range, fmt::format("on the kfp-v2 target resource '{}' must be a literal or come "
                                     "from the op's parameters",
                                     key));
      continue;
    }
    if (key == "cpu") {
      resources["resourceCpuLimit"] = text;
      resources["resourceCpuRequest"] = text;
    } else if (key == "memory") {
      resources["resourceMemoryLimit"] = text;
      resources["resourceMemoryRequest"] = text;
    } else if (key == "gpus" && text != "0") {
      resources["accelerator"] = {{"resourceType", vendor}, {"resourceCount", text}};
    }
  }
  if (!resources.empty()) container["resources"] = std::move(resources);
  executors_[executor] = {{"container", std::move(container)}};
  J comp = {{"executorLabel", executor}};
  if (!comp_inputs.empty()) comp["inputDefinitions"] = {{"parameters", std::move(comp_inputs)}};
  if (!outputs.empty()) comp["outputDefinitions"] = {{"parameters", std::move(outputs)}};
  if (!file_inputs.empty()) comp["inputDefinitions"]["artifacts"] = std::move(file_inputs);
  if (!file_outputs.empty()) comp["outputDefinitions"]["artifacts"] = std::move(file_outputs);
  if (!op.metrics.empty())
    comp["outputDefinitions"]["artifacts"]["metrics"] = {
        {"artifactType", {{"schemaTitle", "system.Metrics"}, {"schemaVersion", "0.0.1"}}}};
  components_[component] = std::move(comp);
  if (op.timeout_seconds)
    platform_[executor]["activeDeadlineSeconds"] = std::to_string(*op.timeout_seconds);
  // Placement and metadata: the Kubernetes platform spec, as kfp-kubernetes writes them.
  if (!op.node_selector.empty()) {
    J labels = J::object();
    for (const auto& [k, v] : op.node_selector) labels[k] = v;
    platform_[executor]["nodeSelector"] = {{"labels", std::move(labels)}};
  }
  // Volumes and secrets, as kfp-kubernetes writes them (names only, never a secret's value).
  for (std::size_t i = 0; i < op.volumes.size(); ++i) {
    const auto& v = op.volumes[i];
    J& p = platform_[executor];
    J name = {{"runtimeValue", {{"constant", v.name}}}};
    if (v.kind == "pvc")
      p["pvcMount"].push_back({{"constant", v.name}, {"mountPath", v.path}, {"pvcNameParameter", name}});
    if (v.kind == "empty")
      p["emptyDirMounts"].push_back({{"volumeName", "vol-" + std::to_string(i)}, {"mountPath", v.path}});
    if (v.kind == "configmap")
      p["configMapAsVolume"].push_back(
          {{"configMapName", v.name}, {"mountPath", v.path}, {"configMapNameParameter", name}});
    if (v.kind == "secret")
      p["secretAsVolume"].push_back({{"secretName", v.name}, {"mountPath", v.path}, {"secretNameParameter", name}});
  }
  for (const auto& s : op.secret_env)
    platform_[executor]["secretAsEnv"].push_back(
        {{"secretName", s.secret},
         {"keyToEnv", J::array({{{"secretKey", s.key}, {"envVar", s.var}}})},
         {"secretNameParameter", {{"runtimeValue", {{"constant", s.secret}}}}}});
  if (!op.image_pull_policy.empty()) platform_[executor]["imagePullPolicy"] = op.image_pull_policy;
  if (op.run_as_user || op.run_as_group || op.run_as_non_root) {
    J security = J::object();
    if (op.run_as_user) security["runAsUser"] = *op.run_as_user;
    if (op.run_as_group) security["runAsGroup"] = *op.run_as_group;
    if (op.run_as_non_root) security["runAsNonRoot"] = *op.run_as_non_root;
    platform_[executor]["securityContext"] = std::move(security);
  }
  if (!op.tolerations.empty()) {
    J tolerations = J::array();
    for (const auto& text : op.tolerations) tolerations.push_back(J::parse(text));
    platform_[executor]["tolerations"] = std::move(tolerations);
  }
  if (!op.labels.empty() || !op.annotations.empty()) {
    J metadata = J::object();
    for (const auto& [k, v] : op.labels) metadata["labels"][k] = v;
    for (const auto& [k, v] : op.annotations) metadata["annotations"][k] = v;
    platform_[executor]["podMetadata"] = std::move(metadata);
  }
  return component;
}

std::string SpecWriter::training_component(const ir::Step& step, kubeflow::LauncherCall& call) {
  kubeflow::JobOptions job;
  job.mpi_v1 = options_.mpi_v1;
  job.default_runtime = options_.training_runtime;
  job.params = &p_.params;
  if (!kubeflow::build_launcher_call(step, job, call, diags_)) {
    ok_ = false;
    return "";
  }
  std::string base = name_of(step.name, step.range, "step");
  std::string component = "comp-" + base, executor = "exec-" + base;
  claim_component(component, step.range, "training step '" + step.name + "'");
  J inputs = J::object();
  for (const auto& [input, value] : call.inputs) inputs[input] = {{"parameterType", parameter_type(value.type)}};
  // The launcher's words with KFP v2's placeholders: each value a whole word (or the text
  // after `NAME=` of a --value word), the job's name from the pod (POD_NAME).
  using Word = kubeflow::LauncherWord;
  J args = J::array();
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    const Word& w = call.args[i];
    switch (w.kind) {
      case Word::Kind::Text:
        if (w.text == "--step-name" && i + 1 < call.args.size() && call.args[i + 1].kind == Word::Kind::PodName) {
          ++i;
          continue;
        }
        literal_ok(w.text, step.range);
        args.push_back(w.text);
        break;
      case Word::Kind::Input: args.push_back(input_placeholder(w.text)); break;
      case Word::Kind::Binding: args.push_back(w.text + "=" + input_placeholder(w.text)); break;
      case Word::Kind::WorkflowName: args.push_back("{{$.pipeline_job_name}}"); break;
      case Word::Kind::PodName: args.push_back("{{pod.name}}"); break;
    }
  }
  J comp = {{"executorLabel", executor}};
  if (!inputs.empty()) comp["inputDefinitions"] = {{"parameters", std::move(inputs)}};
  // Metrics the KFP v2 way: an output artifact `metrics` (system.Metrics) whose metadata
  // the launcher writes into the ExecutorOutput named in the executor input ({{$}}), as
  // kfp's Metrics.log_metric does; the artifact's file gets the metrics document.
  bool has_metrics = std::any_of(call.args.begin(), call.args.end(), [](const kubeflow::LauncherWord& w) {
    return w.kind == kubeflow::LauncherWord::Kind::Text &&
           (w.text == "--metric" || w.text == "--metric-value" || w.text == "--metric-list-value");
  });
  if (has_metrics) {
    comp["outputDefinitions"] = {
        {"artifacts",
         {{"metrics", {{"artifactType", {{"schemaTitle", "system.Metrics"}, {"schemaVersion", "0.0.1"}}}}}}}};
    args.push_back("--metrics-file");
    args.push_back("{{$.outputs.artifacts['metrics'].path}}");
    args.push_back("--executor-input");
    args.push_back("{{$}}");
  }
  components_[component] = std::move(comp);
  executors_[executor] = {{"container",
                           {{"image", options_.launcher_image},
                            {"command", J::array({"pipec-launcher"})},
                            {"args", std::move(args)}}}};
  platform_[executor]["fieldPathAsEnv"] = J::array({{{"name", "POD_UID"}, {"fieldPath", "metadata.uid"}},
                                                    {{"name", "POD_NAME"}, {"fieldPath", "metadata.name"}}});
  return component;
}

bool SpecWriter::run(std::string& out) {
  std::string name = name_of(p_.name, p_.range, "pipeline");
  Scope root;
  root.root = true;
  J tasks = J::object();
  if (p_.exit_handler.empty()) {
    root.dag = ir::Plan::kMain;
    dag(p_.dag, root, tasks);
  } else {
    Scope main;
    main.parent = &root;
    main.dag = ir::Plan::kMain;
    J main_tasks = J::object();
    dag(p_.dag, main, main_tasks);
    claim_component("comp-exit-handler-1", p_.range, "the pipeline's main DAG");
    J comp = {{"dag", {{"tasks", std::move(main_tasks)}}}};
    if (J in = component_inputs(main); !in.empty()) comp["inputDefinitions"] = {{"parameters", std::move(in)}};
    add_artifact_inputs(comp, main.imports);
    components_["comp-exit-handler-1"] = std::move(comp);
    J task = {{"componentRef", {{"name", "comp-exit-handler-1"}}}, {"taskInfo", {{"name", "exit-handler-1"}}}};
    std::set<std::string> deps;
    pass_imports(main, root, task, deps);
    claim_task(root, "exit-handler-1", p_.range);
    tasks["exit-handler-1"] = std::move(task);
    // The `finally` steps: a DAG of their own run after the main one, whatever its end
    // (ALL_UPSTREAM_TASKS_COMPLETED), inside which they keep their own order, as Argo's
    // onExit runs them.
    Scope fin;
    fin.parent = &root;
    fin.dag = ir::Plan::kFinally;
    J fin_tasks = J::object();
    dag(p_.exit_handler, fin, fin_tasks);
    claim_component("comp-finally", p_.range, "the 'finally' block");
    J fin_comp = {{"dag", {{"tasks", std::move(fin_tasks)}}}};
    if (J in = component_inputs(fin); !in.empty()) fin_comp["inputDefinitions"] = {{"parameters", std::move(in)}};
    add_artifact_inputs(fin_comp, fin.imports);
    components_["comp-finally"] = std::move(fin_comp);
    J fin_task = {{"componentRef", {{"name", "comp-finally"}}},
                  {"dependentTasks", J::array({"exit-handler-1"})},
                  {"taskInfo", {{"name", "finally"}}},
                  {"triggerPolicy", {{"strategy", "ALL_UPSTREAM_TASKS_COMPLETED"}}}};
    std::set<std::string> fin_deps;
    pass_imports(fin, root, fin_task, fin_deps);
    claim_task(root, "finally", p_.range);
    tasks["finally"] = std::move(fin_task);
  }
  add_loop_outputs();

  J params = J::object();
  for (const auto& param : p_.params) {
    J spec = {{"parameterType", parameter_type(param.type)}};
    if (param.default_value) {
      spec["defaultValue"] = literal_json(*param.default_value);
      spec["isOptional"] = true;
    }
    if (!param.doc.empty()) spec["description"] = param.doc;
    params[param.name] = std::move(spec);
  }
  if (!ok_) return false;

  // `settings`: what KFP v2 has a place for (kfp's PipelineConfig, kfp-kubernetes' image
  // pull secrets on every executor); the rest is said, not dropped silently.
  const ir::Settings& set = p_.settings;
  for (const auto& secret : set.image_pull_secrets)
    for (const auto& [executor, unused] : executors_.items())
      platform_[executor]["imagePullSecret"].push_back(
          {{"secretName", secret}, {"secretNameParameter", {{"runtimeValue", {{"constant", secret}}}}}});
  J pipeline_config = J::object();
  if (set.ttl_seconds) pipeline_config["resourceTtlOnCompletion"] = *set.ttl_seconds;
  if (set.timeout_seconds) pipeline_config["activeDeadlineSeconds"] = *set.timeout_seconds;
  if (!set.pod_gc.empty())
    diags_.warning(set.ranges.at("pod_gc"), "'pod_gc' has no KFP v2 form (the KFP v2 backend sets the pod GC "
                              "strategy of its runs); it is not applied");
  if (set.parallelism)
    diags_.warning(set.ranges.at("parallelism"), "'parallelism' has no KFP v2 form (KFP v2 limits only loops: "
                              "'for ... limit N'); it is not applied");
  if (!set.service_account.empty())
    diags_.warning(set.ranges.at("service_account"), "'service_account' has no place in a KFP v2 pipeline spec: KFP v2 "
                              "takes the service account per run (the run's service_account)");

  J spec = J::object();
  if (!components_.empty()) spec["components"] = std::move(components_);
  spec["deploymentSpec"] = {{"executors", std::move(executors_)}};
  spec["pipelineInfo"] = {{"name", name}};
  if (!p_.description.empty()) spec["pipelineInfo"]["description"] = p_.description;
  spec["root"] = {{"dag", {{"tasks", std::move(tasks)}}}};
  if (!params.empty()) spec["root"]["inputDefinitions"] = {{"parameters", std::move(params)}};
  spec["schemaVersion"] = "2.1.0";
  spec["sdkVersion"] = options_.sdk_version;

  out.clear();
  // Sorted keys, as kfp writes them: the std::map objects are written as they are (a copy
  // into an ordered_json checked every key against the others: quadratic, issue 25).
  yaml::append_yaml(out, spec);
  if (!platform_.empty() || !pipeline_config.empty()) {
    J kubernetes = J::object();
    if (!platform_.empty()) kubernetes["deploymentSpec"] = {{"executors", std::move(platform_)}};
    if (!pipeline_config.empty()) kubernetes["pipelineConfig"] = std::move(pipeline_config);
    J platforms = {{"platforms", {{"kubernetes", std::move(kubernetes)}}}};
    out += "---\n";
    yaml::append_yaml(out, platforms);
  }
  return true;
}

}  // namespace

bool write_pipeline_spec(const ir::Pipeline& pipeline, const WriteOptions& options, std::string& out,
                         Diagnostics& diags) {
  return SpecWriter(pipeline, options, diags).run(out);
}

}  // namespace pipec::emit::kfpv2
