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
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rules/launcher_cli.hpp"
#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "compiler/emit/kubeflow/launcher_call.hpp"
#include "compiler/emit/shell/shell_script.hpp"
#include "runtime/job_render.hpp"

namespace pipec::emit::kfpv2 {
namespace {

using J = nlohmann::json;  // std::map objects: keys in sorted order, as kfp writes them
using Option = rules::LauncherOption;  // the launcher's words (rules/launcher_cli.def)

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

/// A task of a DAG: its name, and whether it is wrapped in a condition DAG (then its
/// outputs are the wrapper's, named `pipelinechannel--<task>-<output>`).
struct TaskName {
  std::string task;
  bool wrapped = false;
};

/// One DAG component being written: the root, the exit handler's, a loop body or a
/// condition wrapper. Values from outside arrive as inputs of the component.
struct Scope {
  const Scope* parent = nullptr;
  bool root = false;
  std::map<std::string, TaskName, std::less<>> steps;  // source step name -> task here (and loop name -> its task)
  /// Steps inside the loops of this DAG (at any depth): step -> the loop holding it here.
  /// Their outputs come out of the loop as lists (fan-in, kfp's dsl.Collected).
  std::map<std::string, const ir::Loop*, std::less<>> in_loops;
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
    index_steps(p_.dag);
    index_steps(p_.exit_handler);
  }

  bool run(std::string& out);

 private:
  void error(SourceRange range, std::string message) {
    diags_.error(range.valid() ? range : p_.range, std::move(message));
    ok_ = false;
  }
  void index_steps(const std::vector<ir::Node>& nodes);
  std::string name_of(const std::string& source, SourceRange range, const char* what);
  void claim_component(const std::string& name, SourceRange range, const std::string& what);
  void claim_task(Scope& s, const std::string& name, SourceRange range);

  // Values.
  std::string channel(const ir::Ref& r) const;
  ir::Type type_of(const ir::Ref& r) const;
  ir::Type ref_type_in(const ir::Ref& r, const ir::Loop& loop) const;
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
  void prefill(const std::vector<ir::Node>& nodes, Scope& s);
  J step_task(const ir::Step& step, Scope& s, std::set<std::string>& deps);
  J loop_task(const ir::Loop& loop, Scope& s, std::set<std::string>& deps);
  void add_loop_outputs();
  void add_dependencies(J& task, const std::vector<std::string>& depends, const Scope& s,
                        std::set<std::string> deps);
  J component_inputs(const Scope& s) const;
  void pass_imports(const Scope& child, Scope& parent, J& task, std::set<std::string>& deps);

  // Components and executors.
  std::string container_component(const ir::Step& step);
  std::string training_component(const ir::Step& step, kubeflow::LauncherCall& call);
  J op_word(const ir::Value& v, const ir::ContainerOp& op);
  bool literal_ok(std::string_view text, SourceRange range);

  const ir::Pipeline& p_;
  const WriteOptions& options_;
  Diagnostics& diags_;
  bool ok_ = true;

  std::map<std::string, const ir::ContainerOp*> ops_;
  std::map<std::string, const ir::Step*> step_of_;        // source name -> step
  std::map<std::string, const ir::Loop*> loop_of_var_;    // loop variable -> innermost loop (by name)
  std::map<std::string, std::string> component_owner_;
  std::map<std::string, std::string> op_component_;       // op name -> component written
  J components_ = J::object();
  J executors_ = J::object();
  // Fan-in: loop name -> (output -> the step output it carries out as a list).
  std::map<std::string, std::map<std::string, ir::Ref>> exports_;
  std::map<std::string, std::pair<const ir::Loop*, std::unique_ptr<Scope>>> loop_bodies_;
  J platform_ = J::object();
};

void SpecWriter::index_steps(const std::vector<ir::Node>& nodes) {
  for (const auto& node : nodes) {
    if (const auto* s = std::get_if<ir::Step>(&node)) {
      step_of_[s->name] = s;
    } else {
      const auto& l = std::get<ir::Loop>(node);
      loop_of_var_[l.var] = &l;
      index_steps(l.body);
    }
  }
}

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
std::string SpecWriter::channel(const ir::Ref& r) const {
  switch (r.kind) {
    case ir::Ref::Kind::Param: return kChannel + r.name;
    case ir::Ref::Kind::StepOutput: return kChannel + to_dns1123(r.name) + "-" + r.field;
    case ir::Ref::Kind::LoopItem: {
      auto it = loop_of_var_.find(r.name);
      std::string base = kChannel + (it != loop_of_var_.end() ? it->second->name : r.name) + "-item";
      return r.field.empty() ? base : base + "-" + r.field;
    }
    case ir::Ref::Kind::OpParam: break;
  }
  return kChannel + r.name;
}

// A value's type where the ref was written; a step output read from outside its loops is
// already the list over their iterations (fan-in).
ir::Type SpecWriter::type_of(const ir::Ref& r) const { return r.type; }

// How many loops, from `loop` inward, hold `step` (0: not inside).
int loops_around(const std::vector<ir::Node>& nodes, const std::string& step) {
  for (const auto& node : nodes) {
    if (const auto* s = std::get_if<ir::Step>(&node)) {
      if (s->name == step) return 1;
    } else if (int n = loops_around(std::get<ir::Loop>(node).body, step); n > 0) {
      return n + 1;
    }
  }
  return 0;
}

// The type of step output `r` as it leaves `loop`: a list per loop it crosses.
ir::Type SpecWriter::ref_type_in(const ir::Ref& r, const ir::Loop& loop) const {
  ir::Type t = r.type;
  if (auto s = step_of_.find(r.name); s != step_of_.end())
    if (auto op = ops_.find(s->second->op); op != ops_.end())
      for (const auto& out : op->second->outputs)
        if (out.name == r.field) t = out.type;
  for (int n = loops_around(loop.body, r.name); n > 0; --n) t = ir::Type::list_of(std::move(t));
  return t;
}

std::string SpecWriter::import(const ir::Ref& r, Scope& s) {
  std::string key = ref_key(r);
  if (auto it = s.import_index.find(key); it != s.import_index.end()) return s.imports[it->second].input;
  s.import_index.emplace(key, s.imports.size());
  s.imports.push_back({channel(r), r, type_of(r)});
  return s.imports.back().input;
}

// How a value reaches a task of `s`: an input of the component `s` is, a sibling's
// output, or the loop item. `deps` collects the sibling tasks it comes from.
J SpecWriter::resolve(const ir::Ref& r, Scope& s, std::set<std::string>& deps) {
  switch (r.kind) {
    case ir::Ref::Kind::Param:
      if (s.root) return J{{"componentInputParameter", r.name}};
      break;
    case ir::Ref::Kind::StepOutput:
      if (auto it = s.steps.find(r.name); it != s.steps.end()) {
        deps.insert(it->second.task);
        std::string key = it->second.wrapped ? channel(r) : r.field;
        return J{{"taskOutputParameter", {{"producerTask", it->second.task}, {"outputParameterKey", key}}}};
      }
      if (auto in = s.in_loops.find(r.name); in != s.in_loops.end()) {
        // Fan-in: the loop (or its condition wrapper) gives the list under the channel name.
        const TaskName& task = s.steps.at(in->second->name);
        deps.insert(task.task);
        exports_[in->second->name].emplace(channel(r), r);
        return J{{"taskOutputParameter", {{"producerTask", task.task}, {"outputParameterKey", channel(r)}}}};
      }
      break;
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
        std::string ch = channel(*part.ref);
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
  using Op = ir::Condition::Op;
  auto binary = [&] {
    return "(" + cel_condition(c.operands[0], s) + " " + ir::op_symbol(c.op) + " " + cel_condition(c.operands[1], s) + ")";
  };
  switch (c.op) {
    case Op::Leaf: return cel_bool(*c.value, s);
    case Op::And:
    case Op::Or: return binary();
    case Op::Not: return "!" + cel_condition(c.operands[0], s);
    default: break;
  }
  // A comparison, compared as ir::comparison_of says. KFP holds every number as a double;
  // two ints compare as ints (as kfp writes int(...)).
  const ir::Value& a = *c.operands[0].value;
  const ir::Value& b = *c.operands[1].value;
  std::string left, right;
  switch (ir::comparison_of(c)) {
    case ir::Comparison::Int:
    case ir::Comparison::Float: {
      const char* as = ir::comparison_of(c) == ir::Comparison::Int ? "int" : "double";
      left = cel_value(a, s, as);
      right = cel_value(b, s, as);
      break;
    }
    case ir::Comparison::Bool:
      left = cel_bool(a, s);
      right = cel_bool(b, s);
      break;
    case ir::Comparison::Text:
      left = cel_value(a, s, nullptr);
      right = cel_value(b, s, nullptr);
      break;
  }
  return "(" + left + " " + ir::op_symbol(c.op) + " " + right + ")";
}

// --- DAGs ----------------------------------------------------------------------------------------

void add_loop_steps(const std::vector<ir::Node>& nodes, const ir::Loop& loop, Scope& s) {
  for (const auto& node : nodes) {
    if (const auto* st = std::get_if<ir::Step>(&node)) {
      s.in_loops[st->name] = &loop;
    } else {
      add_loop_steps(std::get<ir::Loop>(node).body, loop, s);
    }
  }
}

void SpecWriter::prefill(const std::vector<ir::Node>& nodes, Scope& s) {
  for (const auto& node : nodes) {
    if (const auto* st = std::get_if<ir::Step>(&node)) {
      std::string task = to_dns1123(st->name);
      bool wrapped = static_cast<bool>(st->when);
      s.steps[st->name] = {wrapped ? "condition-" + task : task, wrapped};
    } else {
      const auto& l = std::get<ir::Loop>(node);
      bool wrapped = static_cast<bool>(l.when);
      s.steps[l.name] = {wrapped ? "condition-" + l.name : l.name, wrapped};
      add_loop_steps(l.body, l, s);
    }
  }
}

// Fan-in: each loop whose steps' outputs are read after it gives them as LIST outputs of
// its DAG (and of its condition wrapper), as kfp compiles dsl.Collected; reading one
// from a loop nested inside asks that loop in turn, so this runs until nothing is new.
void SpecWriter::add_loop_outputs() {
  std::map<std::string, std::set<std::string>> done;
  for (bool changed = true; changed;) {
    changed = false;
    auto asked = exports_;
    for (const auto& [loop_name, refs] : asked) {
      auto& [loop, body] = loop_bodies_.at(loop_name);
      for (const auto& entry : refs) {
        const std::string& key = entry.first;  // the lambda below uses it: no structured binding
        const ir::Ref& ref = entry.second;
        if (!done[loop_name].insert(key).second) continue;
        changed = true;
        std::set<std::string> deps;
        J from = resolve(ref, *body, deps)["taskOutputParameter"];
        J spec = {{"parameterType", parameter_type(ref_type_in(ref, *loop))}};
        auto put = [&](const std::string& component, J value) {
          J& c = components_[component];
          c["dag"]["outputs"]["parameters"][key] = {{"valueFromParameter", std::move(value)}};
          c["outputDefinitions"]["parameters"][key] = spec;
        };
        put("comp-" + loop_name, {{"outputParameterKey", from["outputParameterKey"]},
                                  {"producerSubtask", from["producerTask"]}});
        if (loop->when)
          put("comp-condition-" + loop_name, {{"outputParameterKey", key}, {"producerSubtask", loop_name}});
      }
    }
  }
}

void SpecWriter::add_dependencies(J& task, const std::vector<std::string>& depends, const Scope& s,
                                  std::set<std::string> deps) {
  for (const auto& d : depends)
    if (auto it = s.steps.find(d); it != s.steps.end()) deps.insert(it->second.task);
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
  auto& [loop_ptr, body_ptr] = loop_bodies_[loop.name];
  loop_ptr = &loop;
  body_ptr = std::make_unique<Scope>();
  Scope& body = *body_ptr;
  body.parent = &s;
  body.loop_var = loop.var;
  body.item_input = kChannel + loop.name + "-item";
  body.item_type = loop.item_type;
  prefill(loop.body, body);
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
    add_dependencies(task, depends, s, std::move(deps));
    tasks[task_name] = std::move(task);
  }
}

// --- components and executors -------------------------------------------------------------------

// A word of an op's command or args: text, and the op's parameters as placeholders.
// A file parameter is the path the inputs prologue copies it to (kInputsWrapper).
std::string file_param_path(const ir::ContainerOp& op, const std::string& name) {
  for (const auto& p : op.params)
    if (p.name == name && is_file(p.type)) return p.path;
  return "";
}

J SpecWriter::op_word(const ir::Value& v, const ir::ContainerOp& op) {
  auto word = [&](const ir::Ref& r) {
    std::string path = file_param_path(op, r.name);
    return path.empty() ? input_placeholder(r.name) : path;
  };
  if (const ir::Ref* r = ir::whole_ref(v)) return word(*r);
  if (v.kind == ir::Value::Kind::Literal) {
    std::string text = ir::literal_text(v.literal);
    literal_ok(text, v.range);
    return text;
  }
  if (v.kind == ir::Value::Kind::Interpolation) {
    std::string s;
    for (const auto& part : v.parts) {
      if (part.ref) {
        s += word(*part.ref);
      } else if (!part.kfp_v2.empty()) {  // a component's placeholder (never a user's text)
        s += part.kfp_v2;
      } else {
        literal_ok(part.text, v.range);
        s += part.text;
      }
    }
    return s;
  }
  error(v.range, "a list or map built from run-time values cannot be an argv word");
  return "";
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
  J container = J::object();
  if (op.image.is_literal()) {
    container["image"] = ir::literal_text(op.image.literal);
  } else if (const ir::Ref* ref = ir::whole_ref(op.image); ref && file_param_path(op, ref->name).empty()) {
    // A whole input parameter: the KFP v2 backend resolves it before it starts the task
    // (kubeflow/pipelines#11404). It resolves nothing else in an image.
    container["image"] = input_placeholder(ref->name);
  } else {
    error(op.image.range,
          "on the kfp-v2 target an op's image is written in the op or is one whole parameter "
          "(image \"${img}\"): KFP v2 resolves an image that is a whole input parameter, not one "
          "built inside a string");
  }
  std::vector<J> argv;
  if (op.shell) {
    // The script is the op's text; each `${p}` is a variable placed by its quoting context
    // (emit/shell), set by a prologue from the positional arguments that follow.
    SourceRange whole = op.range;
    std::vector<ir::Part> parts = shell::command_parts(op.command, whole);
    std::vector<std::string> vars;
    auto use_var = [&](const ir::Ref& r) {
      if (std::find(vars.begin(), vars.end(), r.name) == vars.end()) vars.push_back(r.name);
      return shell::script_variable(r.name);
    };
    std::string script;
    if (!shell::write_script(parts, use_var, whole, script, diags_)) ok_ = false;
    literal_ok(script, whole);
    std::string prologue;
    if (!vars.empty()) {
      prologue = "export";
      for (std::size_t i = 0; i < vars.size(); ++i) prologue += fmt::format(" PIPEC_{}=\"${}\"", vars[i], i + 1);
      prologue += fmt::format("; shift {}\n", vars.size());
    }
    argv = {"sh", "-c", prologue + script, to_dns1123(op.name)};
    for (const auto& var : vars) {
      std::string path = file_param_path(op, var);
      argv.push_back(path.empty() ? input_placeholder(var) : path);
    }
    for (const auto& a : op.args) argv.push_back(op_word(a, op));
  } else {
    for (const auto& w : op.command) argv.push_back(op_word(w, op));
    for (const auto& w : op.args) argv.push_back(op_word(w, op));
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
    for (const auto& m : op.metrics) {
      wrapped.push_back("--metric");
      wrapped.push_back(op_word(m, op));
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
  for (const auto& [name, value] : op.env) {
    if (value.is_literal()) {
      std::string text = ir::literal_text(value.literal);
      literal_ok(text, value.range);
      env.push_back({{"name", name}, {"value", text}});
      continue;
    }
    values.push_back(op_word(value, op));
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

  // Outputs the container writes where KFP says (a component's URI or executor input) are
  // not copied.
  auto copied = static_cast<std::size_t>(
      std::count_if(op.outputs.begin(), op.outputs.end(), [](const ir::OpOutput& o) { return !o.kfp_writes; }));
  if (copied > 0) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with outputs needs a command (its outputs are "
                      "copied to the files KFP names after it runs)");
    std::vector<J> wrapped = {"sh", "-c", kOutputsWrapper, "pipec-outputs", std::to_string(copied)};
    for (const auto& out : op.outputs) {
      if (out.kfp_writes) continue;
      wrapped.push_back(is_file(out.type) ? output_artifact_path(out.name) : output_placeholder(out.name));
      literal_ok(out.path, op.range);
      wrapped.push_back(out.path);
    }
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }
  // File inputs: KFP v2 downloads each to a path of its own; the op reads it at its
  // parameter's path, where a prologue copies it (paths are arguments, not script text).
  // A KFP component's inputs are read where KFP says: nothing is placed for them.
  auto placed = static_cast<std::size_t>(std::count_if(op.params.begin(), op.params.end(), [](const ir::OpParam& p) {
    return is_file(p.type) && !p.kfp_reads;
  }));
  if (placed > 0) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with file parameters needs a command (the files are "
                      "placed before the command runs)");
    std::vector<J> wrapped = {"sh", "-c", kInputsWrapper, "pipec-inputs", std::to_string(placed)};
    for (const auto& param : op.params)
      if (is_file(param.type) && !param.kfp_reads) {
        literal_ok(param.path, op.range);
        wrapped.push_back(input_artifact_path(param.name));
        wrapped.push_back(param.path);
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
  std::set<std::string> names;
  for (const auto& [input, value] : call.inputs) {
    inputs[input] = {{"parameterType", parameter_type(value.type)}};
    names.insert(input);
  }
  // The launcher's arguments with KFP v2's placeholders: each value a whole word (or the
  // text after `NAME=` of a --value word), the job's name from the pod (POD_NAME).
  J args = J::array();
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    const std::string& a = call.args[i];
    if (a == rules::launcher_flag(Option::StepName) && i + 1 < call.args.size() && call.args[i + 1] == "{{pod.name}}") {
      ++i;
      continue;
    }
    if (a == "{{workflow.name}}") {
      args.push_back("{{$.pipeline_job_name}}");
      continue;
    }
    bool done = false;
    for (const auto& n : names) {
      if (a == "{{inputs.parameters." + n + "}}") {
        args.push_back(input_placeholder(n));
        done = true;
      } else if (a == n + "={{inputs.parameters." + n + "}}") {
        args.push_back(n + "=" + input_placeholder(n));
        done = true;
      }
      if (done) break;
    }
    if (done) continue;
    literal_ok(a, step.range);
    args.push_back(a);
  }
  J comp = {{"executorLabel", executor}};
  if (!inputs.empty()) comp["inputDefinitions"] = {{"parameters", std::move(inputs)}};
  // Metrics the KFP v2 way: an output artifact `metrics` (system.Metrics) whose metadata
  // the launcher writes into the ExecutorOutput named in the executor input ({{$}}), as
  // kfp's Metrics.log_metric does; the artifact's file gets the metrics document.
  bool has_metrics = std::any_of(call.args.begin(), call.args.end(), [](const std::string& a) {
    return a == rules::launcher_flag(Option::Metric) || a == rules::launcher_flag(Option::MetricValue) ||
           a == rules::launcher_flag(Option::MetricListValue);
  });
  if (has_metrics) {
    comp["outputDefinitions"] = {
        {"artifacts",
         {{"metrics", {{"artifactType", {{"schemaTitle", "system.Metrics"}, {"schemaVersion", "0.0.1"}}}}}}}};
    args.push_back(rules::launcher_flag(Option::MetricsFile));
    args.push_back("{{$.outputs.artifacts['metrics'].path}}");
    args.push_back(rules::launcher_flag(Option::ExecutorInput));
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
    prefill(p_.dag, root);
    dag(p_.dag, root, tasks);
  } else {
    Scope main;
    main.parent = &root;
    prefill(p_.dag, main);
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
    prefill(p_.exit_handler, fin);
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
