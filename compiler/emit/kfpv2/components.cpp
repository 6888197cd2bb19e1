// Components and executors: a container op's (one, shared by its steps), a training
// step's (pipec-launcher), and their Kubernetes platform spec.
#include "compiler/emit/kfpv2/spec_writer.hpp"

#include <algorithm>
#include "compiler/shell/shell_script.hpp"
#include "rules/kubernetes.hpp"
#include "rules/launcher_cli.hpp"
#include "rules/metrics_cli.hpp"
#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "rules/visuals.hpp"

namespace pipec::emit::kfpv2::detail {

namespace {

using Option = rules::LauncherOption;  // the launcher's words (rules/launcher_cli.def)

/// The metric series of a step with metrics (docs/runtime.md "Metric series"): an output
/// artifact the UI lists, the file KFP uploads from the path it names.
J series_artifact() {
  return {{"artifactType", {{"schemaTitle", "system.Artifact"}, {"schemaVersion", "0.0.1"}}}};
}
std::string series_path() {
  return fmt::format("{{{{$.outputs.artifacts['{}'].path}}}}", rules::metrics_cli::kV2SeriesArtifact);
}

/// The script that places a container's file inputs where the op reads them, then runs
/// the command: `sh -c WRAPPER pipec-inputs N FROM1 TO1 ... FROMn TOn COMMAND...`.
constexpr const char* kInputsWrapper =
    "n=$1; shift; i=0\n"
    "while [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); "
    "mkdir -p -- \"$(dirname -- \"$2\")\" && cp -- \"$1\" \"$2\" || exit 1; shift 2; done\n"
    "exec \"$@\"\n";

/// The script that copies a container's declared output files to the paths KFP names:
/// `sh -c WRAPPER pipec-outputs N TO1 FROM1 KIND1 ... TOn FROMn KINDn COMMAND...`. A `file`
/// is copied byte for byte; a `value` without one trailing newline, as the Argo target and
/// a local run read it (`echo hello > /tmp/out` gives `hello` everywhere), since the KFP v2
/// backend keeps a STRING output's text as it is. The paths are arguments, never script
/// text (each absolute, so read through redirections); the command's exit code is kept.
constexpr const char* kOutputsWrapper =
    "n=$1; shift; i=0\n"
    "while [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); "
    "eval \"pipec_to_$i=\\$1 pipec_from_$i=\\$2 pipec_kind_$i=\\$3\"; shift 3; done\n"
    "\"$@\"; rc=$?; i=0\n"
    "while [ \"$rc\" -eq 0 ] && [ \"$i\" -lt \"$n\" ]; do i=$((i + 1)); "
    "eval \"to=\\$pipec_to_$i from=\\$pipec_from_$i kind=\\$pipec_kind_$i\"\n"
    "  if [ \"$kind\" = value ] && [ -s \"$from\" ] && [ -z \"$(tail -c 1 < \"$from\")\" ]; then\n"
    "    size=$(wc -c < \"$from\") && head -c \"$((size - 1))\" < \"$from\" > \"$to\" || rc=1\n"
    "  else cp -- \"$from\" \"$to\" || rc=1; fi\n"
    "done\n"
    "exit \"$rc\"\n";

}  // namespace

// --- components and executors -------------------------------------------------------------------

// A word of an op's container as the plan gives it: text, the op's parameters as
// placeholders, a file parameter as the path the inputs prologue copies it to
// (kInputsWrapper).
J SpecWriter::op_word(const ir::Word& w) {
  // sema lets run-time values into lists and maps only where an op takes them apart
  // (training ops' env and data): a container's word is never one.
  if (w.invalid) throw std::logic_error("a container word from a list or map of run-time values");
  std::string s;
  for (const auto& piece : w.pieces) {
    switch (piece.kind) {
      case ir::Piece::Kind::Text:
        if (!piece.kfp_v2.empty()) {  // a component's placeholder (never a user's text)
          s += piece.kfp_v2;
          break;
        }
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
  if (found == ops_.end()) throw std::logic_error("a container step of no container op");
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
      file_outputs[out.name] = artifact_type(out.type);
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
  std::vector<J> argv = container_argv(op, call);
  // KFP v2's retryPolicy retries whatever failed, with the same pod each time.
  const auto& retry = p_.plan.pod(op.name).retry;
  if (retry && !retry->on.empty())
    error(op.retry_reasons_range, "on the kfp-v2 target 'retries' cannot say what to retry on (KFP v2's "
                                  "retryPolicy retries every failure); leave out 'on' or build for Argo");
  else if (retry && !retry->memory.empty())
    error(op.retry_reasons_range, "on the kfp-v2 target 'retries' cannot grow the memory per attempt (KFP v2's "
                                  "retryPolicy runs the same pod again); leave out 'memory_factor' or build "
                                  "for Argo");
  wrap_argv(op, call, container, argv);
  if (!argv.empty()) {
    if (op.command.empty()) container["args"] = J(argv);
    else container["command"] = J(argv);
  }

  J resources = container_resources(op, comp_inputs);
  if (!resources.empty()) container["resources"] = std::move(resources);
  if (std::any_of(op.volumes.begin(), op.volumes.end(), [](const auto& v) { return v.kind == ir::ContainerOp::Volume::Kind::Workspace; }))
    comp_inputs[kWorkspaceInput] = {{"parameterType", "STRING"}};
  executors_[executor] = {{"container", std::move(container)}};
  J comp = {{"executorLabel", executor}};
  if (!comp_inputs.empty()) comp["inputDefinitions"] = {{"parameters", std::move(comp_inputs)}};
  if (!outputs.empty()) comp["outputDefinitions"] = {{"parameters", std::move(outputs)}};
  if (!file_inputs.empty()) comp["inputDefinitions"]["artifacts"] = std::move(file_inputs);
  if (!file_outputs.empty()) comp["outputDefinitions"]["artifacts"] = std::move(file_outputs);
  if (!op.metrics.empty()) {
    comp["outputDefinitions"]["artifacts"]["metrics"] = {
        {"artifactType", {{"schemaTitle", "system.Metrics"}, {"schemaVersion", "0.0.1"}}}};
    comp["outputDefinitions"]["artifacts"][rules::metrics_cli::kV2SeriesArtifact] = series_artifact();
  }
  components_[component] = std::move(comp);
  pod_platform(op, executor);
  return component;
}

// The container's argv: the op's command (exec or shell form) with placeholders, run by
// pipec-metrics when the op has metrics or classification outputs.
std::vector<J> SpecWriter::container_argv(const ir::ContainerOp& op, const ir::Invocation& call) {
  std::vector<J> argv;
  if (call.shell) {
    // The script is the op's text; each `${p}` a variable (ir::Invocation), set by a
    // prologue from the positional arguments that follow.
    literal_ok(call.script, call.script_range);
    std::string prologue;
    if (!call.script_values.empty()) {
      prologue = "export";
      for (std::size_t i = 0; i < call.script_values.size(); ++i)
        prologue += fmt::format(" {}=\"${}\"", shell::script_variable(call.script_values[i].name), i + 1);
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
  // A confusion matrix's or an ROC curve's file becomes its system.ClassificationMetrics
  // artifact's metadata the same way (KFP v2's UI draws that, not the file).
  std::vector<J> classification;
  for (const auto& out : op.outputs)
    if (rules::visuals::v2_needs_metadata(out.type.visual)) {
      literal_ok(out.path, op.range);
      classification.push_back(J(rules::metrics_cli::visual_word(rules::visuals::type_name(out.type.visual), out.name, out.path)));
    }
  if (!op.metrics.empty() || !classification.empty()) {
    diags_.warning(!op.metrics.empty() && op.metrics.front().range.valid() ? op.metrics.front().range : op.range,
                   "on the kfp-v2 target the image must hold pipec-metrics on its PATH (KFP v2 tasks "
                   "have no init container to bring it): COPY --from=" + options_.launcher_image +
                       " /usr/local/bin/pipec-metrics /usr/local/bin/");
    // Each field by name: the call's fields are many, and all optional.
    rules::metrics_cli::Call<J> wrap{J("pipec-metrics")};
    wrap.executor_input = J("{{$}}");
    wrap.visuals = std::move(classification);
    if (!op.metrics.empty()) {
      wrap.metrics_file = J("{{$.outputs.artifacts['metrics'].path}}");
      wrap.series_file = J(series_path());
    }
    for (const auto& m : call.metrics) wrap.specs.push_back(op_word(m));
    if (!op.metrics_from.empty()) {
      literal_ok(op.metrics_from, op.range);
      wrap.from = J(op.metrics_from);
    }
    argv = rules::metrics_cli::wrap_command(std::move(wrap), std::move(argv));
  }
  return argv;
}

// The prologues around the argv a KFP v2 container needs (each an `sh -c` script whose
// values are arguments, never script text): changing to `working_dir`, exporting
// variables from values, copying declared outputs to where KFP reads them, placing file
// inputs; literal environment variables go into `container`.
void SpecWriter::wrap_argv(const ir::ContainerOp& op, const ir::Invocation& call, J& container,
                           std::vector<J>& argv) {
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

  // Outputs the container writes where KFP says (a component's URI or executor input) are
  // not copied.
  auto copied = static_cast<std::size_t>(std::count_if(
      call.outputs.begin(), call.outputs.end(), [](const ir::Invocation::File& o) { return !o.kfp; }));
  if (copied > 0) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with outputs needs a command (its outputs are "
                      "copied to the files KFP names after it runs)");
    std::vector<J> wrapped = {"sh", "-c", kOutputsWrapper, "pipec-outputs", std::to_string(copied)};
    for (const auto& out : call.outputs) {
      if (out.kfp) continue;
      wrapped.push_back(out.file ? output_artifact_path(out.name) : output_placeholder(out.name));
      literal_ok(out.path, op.range);
      wrapped.push_back(out.path);
      wrapped.push_back(out.file ? "file" : "value");
    }
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }
  // File inputs: KFP v2 downloads each to a path of its own; the op reads it at its
  // parameter's path, where a prologue copies it (paths are arguments, not script text).
  // A KFP component's inputs are read where KFP says: nothing is placed for them.
  auto placed = static_cast<std::size_t>(std::count_if(
      call.inputs.begin(), call.inputs.end(), [](const ir::Invocation::File& in) { return !in.kfp; }));
  if (placed > 0) {
    if (op.command.empty())
      error(op.range, "on the kfp-v2 target an op with file parameters needs a command (the files are "
                      "placed before the command runs)");
    std::vector<J> wrapped = {"sh", "-c", kInputsWrapper, "pipec-inputs", std::to_string(placed)};
    for (const auto& in : call.inputs) {
      if (in.kfp) continue;
      literal_ok(in.path, op.range);
      wrapped.push_back(input_artifact_path(in.name));
      wrapped.push_back(in.path);
    }
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    argv = std::move(wrapped);
  }
}

// The container's resources, as the plan names them (ir::Pod::resources): requests =
// limits, as the Argo target writes them; a value built from text gets an input of its own
// in `comp_inputs`.
J SpecWriter::container_resources(const ir::ContainerOp& op, J& comp_inputs) {
  using Kind = ir::Pod::Resource::Kind;
  J resources = J::object();
  for (const auto& r : p_.plan.pod(op.name).resources) {
    const auto& [key, value] = op.resources[r.value];
    // A value known at run time: KFP v2 resolves a whole placeholder of a task input here.
    std::string text;
    if (value.is_literal()) {
      text = ir::literal_text(value.literal);
    } else if (const ir::Ref* ref = ir::whole_ref(value); ref && r.kind != Kind::GpuVendor) {
      text = input_placeholder(ref->name);
    } else if (value.kind == ir::Value::Kind::Interpolation && r.kind != Kind::GpuVendor) {
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
    switch (r.kind) {
      case Kind::Cpu:
        resources["resourceCpuLimit"] = text;
        resources["resourceCpuRequest"] = text;
        break;
      case Kind::Memory:
        resources["resourceMemoryLimit"] = text;
        resources["resourceMemoryRequest"] = text;
        break;
      case Kind::Gpus: resources["accelerator"] = {{"resourceType", r.name}, {"resourceCount", text}}; break;
      case Kind::GpuVendor: break;  // refused above: KFP v2 names no resource at run time
    }
  }
  return resources;
}

// An executor's Kubernetes platform spec: what kfp-kubernetes writes for the op's pod
// fields, and a located error for those it has no field for.
void SpecWriter::pod_platform(const ir::ContainerOp& op, const std::string& executor) {
  if (op.timeout_seconds)
    platform_[executor]["activeDeadlineSeconds"] = std::to_string(*op.timeout_seconds);
  // Placement and metadata: the Kubernetes platform spec, as kfp-kubernetes writes them.
  const ir::Pod& pod = p_.plan.pod(op.name);
  if (!pod.node_selector.empty()) {
    J labels = J::object();
    for (const auto& [k, v] : pod.node_selector) labels[k] = v;
    platform_[executor]["nodeSelector"] = {{"labels", std::move(labels)}};
  }
  // Volumes and secrets, as kfp-kubernetes writes them (names only, never a secret's value).
  for (std::size_t i = 0; i < op.volumes.size(); ++i) {
    const auto& v = op.volumes[i];
    using Kind = ir::ContainerOp::Volume::Kind;
    // ConfigMaps and Secrets are mounted read-only by Kubernetes itself; the platform spec
    // has no read-only mount of a claim or a scratch volume.
    if (v.read_only && v.kind != Kind::ConfigMap && v.kind != Kind::Secret)
      error(op.range, fmt::format("on the kfp-v2 target op '{}' cannot mount '{}' read-only (\":ro\"): KFP v2's "
                                  "Kubernetes platform spec (kfp-kubernetes) has no read-only mount; use the kfp-v1 target",
                                  op.name, v.path));
    // The run's workspace: KFP's driver mounts it at /kfp-workspace, and only there, in a
    // pod whose task has the input kWorkspaceInput (step_task).
    if (v.kind == Kind::Workspace) {
      if (v.path != ir::kWorkspaceMountPath)
        error(op.range, fmt::format("on the kfp-v2 target op '{}' cannot mount the run's workspace at '{}': KFP v2 "
                                    "mounts it at {} and nowhere else; mount it there (or use the kfp-v1 target)",
                                    op.name, v.path, ir::kWorkspaceMountPath));
      continue;  // no platform entry: the task's input asks for it
    }
    J& p = platform_[executor];
    J name = {{"runtimeValue", {{"constant", v.name}}}};
    switch (v.kind) {
      case Kind::Workspace: break;  // above
      case Kind::Pvc:
        p["pvcMount"].push_back({{"constant", v.name}, {"mountPath", v.path}, {"pvcNameParameter", name}});
        if (!v.sub_path.empty()) p["pvcMount"].back()["subPath"] = v.sub_path;
        break;
      case Kind::Empty:
        p["emptyDirMounts"].push_back({{"volumeName", "vol-" + std::to_string(i)}, {"mountPath", v.path}});
        if (v.memory) p["emptyDirMounts"].back()["medium"] = "Memory";
        if (!v.size.empty()) p["emptyDirMounts"].back()["sizeLimit"] = v.size;
        break;
      case Kind::Ephemeral:
        p["genericEphemeralVolume"].push_back({{"volumeName", "vol-" + std::to_string(i)},
                                               {"mountPath", v.path},
                                               {"accessModes", J::array({"ReadWriteOnce"})},
                                               {"size", v.size},
                                               {"defaultStorageClass", true}});
        break;
      case Kind::ConfigMap:
        p["configMapAsVolume"].push_back(
            {{"configMapName", v.name}, {"mountPath", v.path}, {"configMapNameParameter", name}});
        break;
      case Kind::Secret:
        p["secretAsVolume"].push_back({{"secretName", v.name}, {"mountPath", v.path}, {"secretNameParameter", name}});
        break;
    }
  }
  for (const auto& s : op.secret_env)
    platform_[executor]["secretAsEnv"].push_back(
        {{"secretName", s.secret},
         {"keyToEnv", J::array({{{"secretKey", s.key}, {"envVar", s.var}}})},
         {"secretNameParameter", {{"runtimeValue", {{"constant", s.secret}}}}}});
  if (!op.image_pull_policy.empty()) platform_[executor]["imagePullPolicy"] = op.image_pull_policy;
  if (!pod.security.empty()) {
    J security = J::object();
    if (pod.security.user) security["runAsUser"] = *pod.security.user;
    if (pod.security.group) security["runAsGroup"] = *pod.security.group;
    if (pod.security.non_root) security["runAsNonRoot"] = *pod.security.non_root;
    platform_[executor]["securityContext"] = std::move(security);
  }
  if (!pod.tolerations.empty()) {
    J tolerations = J::array();
    for (const auto& tol : pod.tolerations) tolerations.push_back(rules::toleration_object<J>(tol));
    platform_[executor]["tolerations"] = std::move(tolerations);
  }
  // Scheduling (docs/language.md, "Scheduling"): kfp-kubernetes 2.17 has the pod's
  // labels and shared memory, no field for its priority class or scheduler.
  auto no_field = [&](const std::string& text, const char* field, const char* what) {
    if (!text.empty())
      error(op.range, fmt::format("on the kfp-v2 target op '{}' cannot set '{}': KFP v2's Kubernetes platform "
                                  "spec (kfp-kubernetes) has no field for a pod's {}; use the kfp-v1 target",
                                  op.name, field, what));
  };
  no_field(op.priority_class, "priority_class", "priority class");
  no_field(op.scheduler, "scheduler", "scheduler");
  if (!op.shm_size.empty())
    platform_[executor]["enabledSharedMemory"] = {{"volumeName", std::string(rules::kShmVolume)}, {"size", op.shm_size}};
  if (!pod.labels.empty() || !pod.annotations.empty()) {
    J metadata = J::object();
    for (const auto& [k, v] : pod.labels) metadata["labels"][k] = v;
    for (const auto& [k, v] : pod.annotations) metadata["annotations"][k] = v;
    platform_[executor]["podMetadata"] = std::move(metadata);
  }
}

std::string SpecWriter::training_component(const ir::Step& step, const ir::LauncherCall& call) {
  std::string base = name_of(step.name, step.range, "step");
  std::string component = "comp-" + prefix_ + base, executor = "exec-" + prefix_ + base;
  claim_component(component, step.range, "training step '" + step.name + "'");
  J inputs = J::object();
  for (const auto& [input, value] : call.inputs) inputs[input] = {{"parameterType", parameter_type(value.type)}};
  // The launcher's words (the lowering's call, ir::Plan::launchers) with KFP v2's
  // placeholders: each value a whole word (or the text after `NAME=` of a --value word),
  // the job's name from the pod (POD_NAME, so no --step-name).
  using Word = ir::LauncherWord;
  J args = J::array();
  for (const auto& [option, w] : call.args) {
    if (option == Option::StepName) continue;
    args.push_back(rules::launcher_flag(option));
    switch (w.kind) {
      case Word::Kind::Text:
        literal_ok(w.text, step.range);
        args.push_back(w.text);
        break;
      case Word::Kind::Input: args.push_back(input_placeholder(w.text)); break;
      case Word::Kind::Binding: args.push_back(rules::value_arg(w.text, input_placeholder(w.text))); break;
      case Word::Kind::WorkflowName: args.push_back("{{$.pipeline_job_name}}"); break;
      case Word::Kind::PodName: args.push_back("{{pod.name}}"); break;
      case Word::Kind::Workspace:
        inputs[kRunNameInput] = {{"parameterType", "STRING"}};
        args.push_back(rules::value_arg(ir::kWorkspaceValue,
                                        ir::workspace_entry(input_placeholder(kRunNameInput), w.text)));
        break;
    }
  }
  J comp = {{"executorLabel", executor}};
  if (!inputs.empty()) comp["inputDefinitions"] = {{"parameters", std::move(inputs)}};
  // Metrics the KFP v2 way: an output artifact `metrics` (system.Metrics) whose metadata
  // the launcher writes into the ExecutorOutput named in the executor input ({{$}}), as
  // kfp's Metrics.log_metric does; the artifact's file gets the metrics document.
  bool has_metrics = std::any_of(call.args.begin(), call.args.end(), [](const ir::LauncherArg& a) {
    return a.option == Option::Metric || a.option == Option::MetricValue || a.option == Option::MetricListValue;
  });
  if (has_metrics) {
    comp["outputDefinitions"] = {
        {"artifacts",
         {{"metrics", {{"artifactType", {{"schemaTitle", "system.Metrics"}, {"schemaVersion", "0.0.1"}}}}},
          {rules::metrics_cli::kV2SeriesArtifact, series_artifact()}}}};
    args.push_back(rules::launcher_flag(Option::MetricsFile));
    args.push_back("{{$.outputs.artifacts['metrics'].path}}");
    args.push_back(rules::launcher_flag(Option::SeriesFile));
    args.push_back(series_path());
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

}  // namespace pipec::emit::kfpv2::detail
