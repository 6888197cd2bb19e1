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
//    `finally` run after it with `ALL_UPSTREAM_TASKS_COMPLETED`;
//  - a pipeline called as a step is a DAG component `comp-<pipeline>`, shared by its
//    calls, with its parameters as inputs and its outputs from its tasks';
//  - the outputs the pipeline built declares are the root's `outputDefinitions` and
//    `dag.outputs`, as kfp writes a pipeline function's return value.
// Values reach a container only as whole placeholders the KFP launcher replaces, never as
// script text: a shell-form command reads them from variables its prologue sets from its
// positional arguments, as the Argo target reads environment variables.
// Deterministic: every map is written in sorted key order, nothing depends on time.
#include "compiler/emit/kfpv2/pipeline_spec_writer.hpp"

#include "compiler/emit/kfpv2/spec_writer.hpp"
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "rules/names.hpp"

namespace pipec::emit::kfpv2::detail {

// sema has checked that the name gives a Kubernetes name (1 to 63 characters).
std::string SpecWriter::name_of(const std::string& source, SourceRange, const char*) {
  return to_dns1123(source);
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

bool SpecWriter::run(std::string& out) {
  std::string name = name_of(p_.name, p_.range, "pipeline");
  for (const auto& callee : p_.callees) add_callee(callee);
  Scope root;
  root.root = true;
  J tasks = J::object();
  // The root: its tasks, inputs and the outputs the pipeline declares (kfp's
  // `outputDefinitions` and `dag.outputs` of a pipeline function that returns outputs).
  J root_spec = J::object();
  if (p_.exit_handler.empty()) {
    root.dag = ir::Plan::kMain;
    dag(p_.dag, root, tasks);
    add_pipeline_outputs(p_, root, root_spec);
  } else {
    Scope main;
    main.parent = &root;
    main.dag = ir::Plan::kMain;
    J main_tasks = J::object();
    dag(p_.dag, main, main_tasks);
    claim_component("comp-exit-handler-1", p_.range, "the pipeline's main DAG");
    J comp = {{"dag", {{"tasks", std::move(main_tasks)}}}};
    // The outputs come out of the main DAG's component, under their own names.
    add_pipeline_outputs(p_, main, comp);
    for (const auto& o : p_.outputs) add_dag_output(root_spec, o.name, o.type, "exit-handler-1", o.name);
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
    J fin_comp = J::object();
    if (J in = component_inputs(fin); !in.empty()) fin_comp["inputDefinitions"] = {{"parameters", std::move(in)}};
    add_artifact_inputs(fin_comp, fin.imports);
    J fin_task = {{"componentRef", {{"name", "comp-finally"}}},
                  {"dependentTasks", J::array({"exit-handler-1"})},
                  {"taskInfo", {{"name", "finally"}}},
                  {"triggerPolicy", {{"strategy", "ALL_UPSTREAM_TASKS_COMPLETED"}}}};
    std::set<std::string> fin_deps;
    pass_imports(fin, root, fin_task, fin_deps);
    add_run_status(fin, fin_tasks, fin_comp, fin_task);
    fin_comp["dag"] = {{"tasks", std::move(fin_tasks)}};
    components_["comp-finally"] = std::move(fin_comp);
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
  if (set.workspace) {
    // kfp's WorkspaceConfig (size, kubernetes.pvcSpecPatch), as kfp 2.17 compiles
    // PipelineConfig(workspace=...); KFP's backend makes the claim only with `kubernetes`
    // and needs its access modes.
    J patch = {{"accessModes", J::array({set.workspace->access_mode})}};
    if (!set.workspace->storage_class.empty()) patch["storageClassName"] = set.workspace->storage_class;
    pipeline_config["workspace"] = {{"size", set.workspace->size}, {"kubernetes", {{"pvcSpecPatch", std::move(patch)}}}};
  }
  if (!set.pod_gc.empty())
    diags_.warning(set.ranges.at("pod_gc"), "'pod_gc' has no KFP v2 form (the KFP v2 backend sets the pod GC "
                              "strategy of its runs); it is not applied");
  if (set.parallelism)
    diags_.warning(set.ranges.at("parallelism"), "'parallelism' has no KFP v2 form (KFP v2 limits only loops: "
                              "'for ... limit N'); it is not applied");
  if (!set.fail_fast) {
    // An error, not a warning: the run
    // would stop where the program says it goes on.
    diags_.error(set.ranges.at("fail_fast"), "'fail_fast false' has no KFP v2 form (a KFP v2 pipeline spec has no "
                                             "field for it: the backend decides when a run stops); build for Argo "
                                             "or run it with 'pipec run --local'");
    return false;
  }
  if (!set.service_account.empty())
    diags_.warning(set.ranges.at("service_account"), "'service_account' has no place in a KFP v2 pipeline spec: KFP v2 "
                              "takes the service account per run (the run's service_account)");

  J spec = J::object();
  if (!components_.empty()) spec["components"] = std::move(components_);
  spec["deploymentSpec"] = {{"executors", std::move(executors_)}};
  spec["pipelineInfo"] = {{"name", name}};
  if (!p_.description.empty()) spec["pipelineInfo"]["description"] = p_.description;
  root_spec["dag"]["tasks"] = std::move(tasks);
  if (!params.empty()) root_spec["inputDefinitions"] = {{"parameters", std::move(params)}};
  spec["root"] = std::move(root_spec);
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

}  // namespace pipec::emit::kfpv2::detail

namespace pipec::emit::kfpv2 {

bool write_pipeline_spec(const ir::Pipeline& pipeline, const WriteOptions& options, std::string& out,
                         Diagnostics& diags) {
  return detail::SpecWriter(pipeline, options, diags).run(out);
}

}  // namespace pipec::emit::kfpv2
