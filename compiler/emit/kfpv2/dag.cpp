// DAG components: loop bodies, condition wrappers and the tasks of every DAG, with the
// fan-in outputs of loops.
#include "compiler/emit/kfpv2/spec_writer.hpp"

#include <variant>
#include "rules/names.hpp"
#include "compiler/ir/print.hpp"

namespace pipec::emit::kfpv2::detail {

// --- DAGs ----------------------------------------------------------------------------------------

// Fan-in: each loop whose steps' outputs are read after it gives them as LIST outputs of
// its DAG (and of its condition wrapper), as kfp compiles dsl.Collected, as the plan
// lists them (an inner loop's list goes out of each loop around it).
void SpecWriter::add_loop_outputs() {
  for (const auto& [loop_name, exports] : cur_->plan.exports) {
    const ir::Plan::Place& place = *cur_->plan.place(loop_name);
    Scope body;
    body.dag = place.body;
    for (const auto& e : exports) {
      ir::Ref ref = ir::step_output(e.step, e.field);
      std::string key = channel(ref, body);
      std::set<std::string> deps;
      J from = resolve(ref, body, deps)["taskOutputParameter"];
      add_dag_output(components_["comp-" + loop_name], key, e.type, from["producerTask"], from["outputParameterKey"]);
      if (place.conditional)
        add_dag_output(components_["comp-" + prefix_ + "condition-" + loop_name], key, e.type, loop_name, key);
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

namespace {

/// The component that builds a string a pipeline call passes: `text` (a constant holding
/// placeholders, with the values as further inputs, as a container's string built from
/// values) is resolved in its command, as KFP v2 resolves placeholders only in a container's
/// command, never in the input of a DAG task (backend/src/v2/driver/resolve.go), and
/// written whole as its output `text`. Its image is the launcher's (it needs `sh`).
constexpr const char* kTextComponent = "comp-pipec-text";
constexpr const char* kTextExecutor = "exec-pipec-text";

}  // namespace

// A component of pipec's own, not an op's: one STRING input `in`, one STRING output `out`,
// run as `sh -c SCRIPT NAME IN OUT` in the launcher's image (the script reads $1, writes $2).
void SpecWriter::add_sh_component(const char* component, const char* executor, const char* script,
                                  const char* name, const char* in, const char* out) {
  components_[component] = {
      {"executorLabel", executor},
      {"inputDefinitions", {{"parameters", {{in, {{"parameterType", "STRING"}}}}}}},
      {"outputDefinitions", {{"parameters", {{out, {{"parameterType", "STRING"}}}}}}}};
  executors_[executor] = {
      {"container",
       {{"image", options_.launcher_image},
        {"command", J::array({"sh", "-c", script, name, input_placeholder(in), output_placeholder(out)})}}}};
}

// An argument of a pipeline call that is a string built from values: a task of the calling
// DAG builds it (kTextComponent) and the call takes its output, so the called pipeline's
// steps get the text itself and not its placeholders (the DAG task of a call resolves none).
J SpecWriter::call_text(const ir::Step& step, const std::string& param, const ir::Value& v, Scope& s,
                        J& siblings, std::set<std::string>& deps) {
  if (!components_.contains(kTextComponent)) {
    claim_component(kTextComponent, step.range, "the strings built for pipeline calls");
    add_sh_component(kTextComponent, kTextExecutor, "printf '%s' \"$1\" > \"$2\"", "pipec-text", "text", "text");
  }
  std::string name = to_dns1123(step.name) + "-text-" + to_dns1123(param);
  claim_task(s, name, v.range);
  J inputs = J::object();
  std::set<std::string> own_deps;
  task_input(inputs, "text", v, s, own_deps);
  J task = {{"componentRef", {{"name", kTextComponent}}},
            {"cachingOptions", {{"enableCache", true}}},
            {"taskInfo", {{"name", name}}},
            {"inputs", {{"parameters", std::move(inputs)}}}};
  add_dependencies(task, {}, std::move(own_deps));
  siblings[name] = std::move(task);
  deps.insert(name);
  return {{"taskOutputParameter", {{"producerTask", name}, {"outputParameterKey", "text"}}}};
}

J SpecWriter::step_task(const ir::Step& step, Scope& s, std::set<std::string>& deps, J& siblings) {
  J task = J::object();
  J inputs = J::object();
  std::string component;
  if (step.kind == ir::OpKind::Pipeline || step.kind == ir::OpKind::Container) {
    // The called pipeline's DAG component (add_callee) or the step's container component; a
    // file argument is an input artifact, any other an input parameter.
    component = step.kind == ir::OpKind::Pipeline ? "comp-" + to_dns1123(step.op) : container_component(step);
    for (const auto& [name, value] : step.args) {
      const ir::Ref* r = ir::whole_ref(value);
      if (r && is_file(r->type))
        task["inputs"]["artifacts"][name] = as_artifact(resolve(*r, s, deps));
      else if (step.kind == ir::OpKind::Pipeline && value.kind == ir::Value::Kind::Interpolation &&
               (!r || type_of(*r).kind != value.type.kind))
        inputs[name] = call_text(step, name, value, s, siblings, deps);
      else
        task_input(inputs, name, value, s, deps);
    }
  }
  if (step.kind == ir::OpKind::Container) {
    if (auto op = ops_.find(step.op); op != ops_.end()) {
      const ir::Pod& pod = p_.plan.pod(op->second->name);
      if (const auto& r = pod.retry) {
        // KFP v2 retries a failed task whatever failed (no policy); backoff as kfp writes it.
        J retry = {{"maxRetryCount", r->limit}};
        if (r->backoff_seconds) retry["backoffDuration"] = fmt::format("{}s", *r->backoff_seconds);
        if (r->factor) retry["backoffFactor"] = static_cast<double>(*r->factor);
        if (r->max_duration_seconds) retry["backoffMaxDuration"] = fmt::format("{}s", *r->max_duration_seconds);
        task["retryPolicy"] = std::move(retry);
      }
      for (const auto& r : pod.resources)
        if (const auto& [key, value] = op->second->resources[r.value];
            value.kind == ir::Value::Kind::Interpolation && !ir::whole_ref(value))
          task_input(inputs, resource_input(key), at_call_site(value, step), s, deps);
      for (const auto& v : op->second->volumes)
        if (v.kind == ir::ContainerOp::Volume::Kind::Workspace)
          inputs[kWorkspaceInput] = {{"runtimeValue", {{"constant", "{{$.workspace_path}}"}}}};
    }
  } else if (step.kind != ir::OpKind::Pipeline) {  // a training step
    if (const ir::LauncherCall* call = cur_->plan.launcher(step.name)) {
      component = training_component(step, *call);
      for (const auto& [name, value] : call->inputs) task_input(inputs, name, value, s, deps);
      for (const auto& a : call->args)
        if (a.value.kind == ir::LauncherWord::Kind::Workspace)
          inputs[kRunNameInput] = {{"runtimeValue", {{"constant", "{{$.pipeline_job_resource_name}}"}}}};
    } else {
      ok_ = false;  // a training step whose call the lowering could not build
    }
  }
  task["componentRef"] = {{"name", component}};
  // `cache false` turns KFP v2's caching off; v2 has no staleness bound (kfp's
  // cachingOptions holds only enableCache and a key), so `cache "7d"` keeps it on.
  bool cache = true;
  if (step.kind == ir::OpKind::Container)
    if (auto op = ops_.find(step.op); op != ops_.end()) cache = p_.plan.pod(op->second->name).cache.reuse;
  task["cachingOptions"] = {{"enableCache", cache}};
  task["taskInfo"] = {{"name", step.name}};
  if (!inputs.empty()) task["inputs"]["parameters"] = std::move(inputs);
  return task;
}

J SpecWriter::loop_task(const ir::Loop& loop, Scope& s, std::set<std::string>& deps) {
  Scope body;
  body.parent = &s;
  body.dag = cur_->plan.place(loop.name)->body;
  body.loop_var = loop.var;
  // kfp's names (kfp-v2.md, "Names"): over a value, the items input is that value's
  // channel (`pipelinechannel--shards`, `pipelinechannel--TASK-OUTPUT`) and the item
  // `<items>-loop-item`, as kfp.local finds the items; over a literal list, `<loop>-item`.
  std::string items = loop.items->ref ? channel(*loop.items->ref, s) : kChannel + loop.name + "-items";
  body.item_input = loop.items->ref ? items + "-loop-item" : kChannel + loop.name + "-item";
  loop_item_[cur_->name + "/" + loop.name] = body.item_input;
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
    J params = task.contains("inputs") ? task["inputs"]["parameters"] : J::object();
    task_input(params, items, *loop.items, s, deps);
    task["inputs"]["parameters"] = std::move(params);
    inputs[items] = {{"parameterType", "LIST"}};
    iterator["items"] = {{"inputParameter", items}};
  }
  task["parameterIterator"] = std::move(iterator);
  if (loop.limit > 0) task["iteratorPolicy"] = {{"parallelismLimit", loop.limit}};
  if (loop.tolerates())
    error(loop.tolerance_range, "a loop's 'max_failures' and 'min_success' have no KFP v2 form (its "
                                "iteratorPolicy holds only a parallelism limit, and a failed iteration "
                                "fails the run); build it for Argo (--target kfp-v1) or run it with "
                                "'pipec run --local'");
  components_[component] = {{"dag", {{"tasks", std::move(tasks)}}},
                            {"inputDefinitions", {{"parameters", std::move(inputs)}}}};
  add_artifact_inputs(components_[component], body.imports);
  return task;
}

std::vector<std::pair<std::string, ir::Type>> SpecWriter::step_outputs(const ir::Step& step) const {
  std::vector<std::pair<std::string, ir::Type>> out;
  if (step.kind == ir::OpKind::Container) {
    if (auto op = ops_.find(step.op); op != ops_.end())
      for (const auto& o : op->second->outputs) out.emplace_back(o.name, o.type);
  } else if (step.kind == ir::OpKind::Pipeline) {
    if (const ir::Pipeline* callee = p_.callee(step.op))
      for (const auto& o : callee->outputs) out.emplace_back(o.name, o.type);
  }
  return out;
}

// Output `name` of a DAG component: output `key` of its task `producer`, an artifact when
// `type` is a file (`artifactSelectors`), else a parameter (`valueFromParameter`).
void add_dag_output(J& component, const std::string& name, const ir::Type& type, const J& producer,
                    const J& key) {
  if (is_file(type)) {
    component["dag"]["outputs"]["artifacts"][name] = {
        {"artifactSelectors", J::array({{{"producerSubtask", producer}, {"outputArtifactKey", key}}})}};
    component["outputDefinitions"]["artifacts"][name] = artifact_type(type);
  } else {
    component["dag"]["outputs"]["parameters"][name] = {
        {"valueFromParameter", {{"producerSubtask", producer}, {"outputParameterKey", key}}}};
    component["outputDefinitions"]["parameters"][name] = {{"parameterType", parameter_type(type)}};
  }
}

// The outputs a pipeline declares (`-> (...)`, `output NAME = STEP.OUTPUT`) as outputs of
// the DAG component whose tasks `top` holds: its steps' (or, through loops, their lists), as
// its plan routes them. A called pipeline's component (its callers read them) and the root
// of the pipeline built (the run's outputs), as kfp compiles a pipeline function's return.
void SpecWriter::add_pipeline_outputs(const ir::Pipeline& p, Scope& top, J& component) {
  for (const auto& out : p.outputs) {
    std::set<std::string> deps;
    J source = resolve(out.ref, top, deps);
    if (!source.contains("taskOutputParameter")) continue;  // sema gives a step's output
    const J& from = source["taskOutputParameter"];
    add_dag_output(component, out.name, out.type, from["producerTask"], from["outputParameterKey"]);
  }
}

// A pipeline called as a step: one DAG component `comp-<pipeline>`, shared by every call,
// as kfp compiles a pipeline used inside a pipeline. Its inputs are its parameters; its
// outputs are its steps' (or, through loops, their lists), as its plan routes them.
void SpecWriter::add_callee(const ir::Pipeline& callee) {
  cur_ = &callee;
  std::string component = "comp-" + name_of(callee.name, callee.range, "pipeline");
  prefix_ = to_dns1123(callee.name) + "-";
  claim_component(component, callee.range, "pipeline '" + callee.name + "'");
  Scope top;
  top.root = true;  // its parameters are its component's inputs, by name
  top.dag = ir::Plan::kMain;
  J tasks = J::object();
  dag(callee.dag, top, tasks);
  J spec = {{"dag", {{"tasks", std::move(tasks)}}}};
  for (const auto& param : callee.params) {
    if (is_file(param.type)) {  // a file the call passes: an artifact input
      spec["inputDefinitions"]["artifacts"][param.name] = artifact_type();
      continue;
    }
    J in = {{"parameterType", parameter_type(param.type)}};
    if (param.default_value) {
      in["defaultValue"] = literal_json(*param.default_value);
      in["isOptional"] = true;
    }
    spec["inputDefinitions"]["parameters"][param.name] = std::move(in);
  }
  add_pipeline_outputs(callee, top, spec);
  components_[component] = std::move(spec);
  add_loop_outputs();
  cur_ = &p_;
  prefix_.clear();
}

// A step's failure policy (ir::Step::upon, allow_failure) in KFP v2's terms: `after a.done`
// for every step it runs after is the task's trigger strategy ALL_UPSTREAM_TASKS_COMPLETED
// (kfp's ignore_upstream_failure()); the rest has no v2 form, an error at the policy.
bool SpecWriter::failure_policy(const ir::Step& step, J& task) {
  if (step.allow_failure) {
    error(step.policy_range, "'allow_failure' has no KFP v2 form (a failed task fails a KFP v2 run; "
                             "kfp can only let the tasks after it run: 'after STEP.done'); build for "
                             "Argo or run it with 'pipec run --local'");
    return false;
  }
  if (step.upon.empty()) return true;
  bool all_done = step.upon.size() == step.depends.size() && !step.when;
  for (const auto& [dep, upon] : step.upon) all_done = all_done && upon == ir::Upon::Done;
  if (!all_done) {
    error(step.policy_range, "this 'after' has no KFP v2 form: a KFP v2 task runs after its upstream "
                             "tasks succeeded, or with 'after STEP.done' after each of them ended "
                             "(ignore_upstream_failure, unconditioned), but not only after a failure; "
                             "build for Argo or run it with 'pipec run --local'");
    return false;
  }
  task["triggerPolicy"]["strategy"] = "ALL_UPSTREAM_TASKS_COMPLETED";
  return true;
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
      task = step ? step_task(*step, s, deps, tasks) : loop_task(*loop, s, deps);
    } else {
      // The condition wrapper: one DAG holding the task, run when the condition holds.
      Scope w;
      w.parent = &s;
      w.dag = s.dag;
      w.wrapper = true;
      std::set<std::string> inner_deps;  // the tasks that build its call's strings, if any
      J inner_tasks = J::object();
      J inner = step ? step_task(*step, w, inner_deps, inner_tasks) : loop_task(*loop, w, inner_deps);
      add_dependencies(inner, {}, std::move(inner_deps));
      std::string condition = cel_condition(*when, w);
      task_name = "condition-" + name;
      std::string component = "comp-" + prefix_ + task_name;
      claim_component(component, range, "the condition of '" + (step ? step->name : loop->var) + "'");
      inner_tasks[name] = std::move(inner);
      J component_spec = {{"dag", {{"tasks", std::move(inner_tasks)}}}};
      if (step)
        for (const auto& [out, type] : step_outputs(*step))
          add_dag_output(component_spec, kChannel + name + "-" + out, type, name, out);
      J inputs = component_inputs(w);
      if (!inputs.empty()) component_spec["inputDefinitions"] = {{"parameters", std::move(inputs)}};
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
    if (step && !failure_policy(*step, task)) continue;
    tasks[task_name] = std::move(task);
  }
}

}  // namespace pipec::emit::kfpv2::detail
