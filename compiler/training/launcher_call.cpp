// Lowering of the training ops (mpi_job, tf_job, pytorch_job) into a pipec-launcher call:
// a job manifest for the default values, bindings for every value known only at run
// time, and the launcher's other arguments (docs/runtime.md, docs/training-ops.md), built
// with the launcher's one table of options and binding kinds (rules/launcher_cli.def).
#include "compiler/training/launcher_call.hpp"
#include "compiler/training/launcher_builder.hpp"
#include "rules/kubernetes.hpp"
#include "rules/names.hpp"
#include "runtime/trainer_v2.hpp"

#include <algorithm>
#include <cassert>

namespace pipec::training {
namespace detail {

namespace {

// A key as one token of a JSON pointer: '~' is written "~0", '/' "~1".
std::string pointer_token(const std::string& key) {
  std::string k;
  for (char ch : key) k += ch == '/' ? std::string("~1") : ch == '~' ? std::string("~0") : std::string(1, ch);
  return k;
}

}  // namespace

// The labels and annotations of the job (`job`) or of a pod template at `base`: the
// user's, and the Kueue queue's label; each entry from a value bound where it stands.
Json Builder::metadata(const std::string& base, bool job) {
  Json labels = labels_, annotations = annotations_;
  for (const auto& [key, input] : label_inputs_)
    bind(base + "/labels/" + pointer_token(key), input, Kind::Label);
  for (const auto& [key, input] : annotation_inputs_)
    bind(base + "/annotations/" + pointer_token(key), input, Kind::String);
  if (auto it = scalars_.find("queue"); it != scalars_.end()) {
    std::string queue = ir::literal_text(it->second.value);
    if (!queue.empty()) labels[std::string(rules::kKueueQueueLabel)] = queue;
  }
  Json m = job ? Json{{"name", rules::job_name_for_step(step_.name)}} : Json::object();
  if (!labels.empty()) m["labels"] = labels;
  if (!annotations.empty()) m["annotations"] = annotations;
  return m;
}

// A pod's priority class, scheduler and /dev/shm (docs/training-ops.md, "Scheduling").
void Builder::scheduling(Json& spec, const std::string& base) {
  auto field = [&](const char* arg_name, const char* key) {
    auto it = scalars_.find(arg_name);
    if (it == scalars_.end()) return;
    std::string text = ir::literal_text(it->second.value);
    // A bound priority class: the `priority-class` binding sets every pod's at once.
    if (!it->second.input.empty() && std::string_view(arg_name) == "scheduler")
      bind(base + "/" + key, it->second.input, Kind::String);
    else if (text.empty())
      return;
    spec[key] = text;
  };
  field("priority_class", "priorityClassName");
  field("scheduler", "schedulerName");
  auto shm = scalars_.find("shm_size");
  if (shm == scalars_.end() || (shm->second.input.empty() && ir::literal_text(shm->second.value).empty())) return;
  Json& volumes = spec["volumes"];
  if (!volumes.is_array()) volumes = Json::array();
  std::string size = ir::literal_text(shm->second.value);
  if (!shm->second.input.empty())
    bind(base + "/volumes/" + std::to_string(volumes.size()) + "/emptyDir/sizeLimit", shm->second.input,
         Kind::Quantity);
  volumes.push_back(Json{{"name", std::string(rules::kShmVolume)},
                         {"emptyDir", Json{{"medium", "Memory"}, {"sizeLimit", size.empty() ? "64Mi" : size}}}});
  Json& main = spec["containers"][0];
  if (!main["volumeMounts"].is_array()) main["volumeMounts"] = Json::array();
  main["volumeMounts"].push_back(Json{{"name", std::string(rules::kShmVolume)}, {"mountPath", "/dev/shm"}});
}

// What Kueue needs of a job in a queue (suspended until admitted), and the gang: the
// operators' runPolicy.schedulingPolicy when a scheduler, a minimum or a gang queue is given.
void Builder::gang(Json& run_policy) {
  auto given = [&](const char* name) -> const Scalar* {
    auto it = scalars_.find(name);
    if (it == scalars_.end()) return nullptr;
    std::string text = ir::literal_text(it->second.value);
    return it->second.input.empty() && (text.empty() || text == "0") ? nullptr : &it->second;
  };
  if (const Scalar* queue = given("queue"); queue && queue->input.empty()) run_policy["suspend"] = true;
  const Scalar* scheduler = given("scheduler");
  const Scalar* min = given("min_available");
  const Scalar* queue = given("gang_queue");
  if (!scheduler && !min && !queue) return;
  Json policy = Json::object();
  if (min) {
    policy["minAvailable"] = min->value.is_number_integer() ? min->value.get<long>() : 0;
    if (!min->input.empty()) bind("/spec/runPolicy/schedulingPolicy/minAvailable", min->input, Kind::Int);
  }
  if (queue) {
    policy["queue"] = ir::literal_text(queue->value);
    if (!queue->input.empty()) bind("/spec/runPolicy/schedulingPolicy/queue", queue->input, Kind::String);
  }
  if (const Scalar* priority = given("priority_class")) policy["priorityClass"] = ir::literal_text(priority->value);
  run_policy["schedulingPolicy"] = policy;
}

std::string Builder::replica_spec_key() const {
  switch (step_.kind) {
    case ir::OpKind::MpiJob: return "mpiReplicaSpecs";
    case ir::OpKind::TfJob: return "tfReplicaSpecs";
    case ir::OpKind::PyTorchJob: return "pytorchReplicaSpecs";
    case ir::OpKind::TrainJob:
    case ir::OpKind::Container:
    case ir::OpKind::Pipeline: break;
  }
  assert(false && "not a training op");
  return "";
}

// Argo reads `{{` in any string of a template as the start of a tag. In JSON text a run of
// `{` can only stand inside a string (an object's first member is a quoted key), where
// `\u007b` means the same character: the launcher reads back exactly the user's text.
std::string json_without_argo_tags(const std::string& json) {
  if (json.find("{{") == std::string::npos) return json;
  std::string out;
  for (std::size_t i = 0; i < json.size();) {
    std::size_t run = 0;
    while (i + run < json.size() && json[i + run] == '{') ++run;
    if (run >= 2) {
      for (std::size_t k = 0; k < run; ++k) out += "\\u007b";
      i += run;
    } else if (run == 1) {
      out += '{';
      ++i;
    } else {
      out += json[i++];
    }
  }
  return out;
}

Json Builder::container(const Role& role, const std::string& base) {
  Json c = Json::object();
  c["name"] = step_.kind == ir::OpKind::MpiJob      ? "mpi"
              : step_.kind == ir::OpKind::TfJob     ? "tensorflow"
                                                    : "pytorch";
  // Image: the role's own if given, else `image`.
  const Scalar* image = &scalars_["image"];
  if (auto it = scalars_.find(role.image_arg);
      it != scalars_.end() &&
      !(it->second.input.empty() && ir::literal_text(it->second.value).empty()))
    image = &it->second;
  c["image"] = ir::literal_text(image->value);
  if (!image->input.empty()) bind(base + "/image", image->input, Kind::String);

  if (role.runs_script) {
    c["command"] = Json::array({"sh", "-c", script_});
  } else if (step_.kind == ir::OpKind::MpiJob && !options_.mpi_v1) {
    // MPI workers host the ranks: mpi-operator v2's launcher reaches them over ssh. (The
    // training-operator's v1 controller gives a worker without command `sleep 365d` and
    // reaches it with kubectl exec.)
    c["command"] = Json::array({"/usr/sbin/sshd", "-De"});
  }
  if (sync_) c["workingDir"] = "/workspace";

  Json env = Json::array();
  auto push_env = [&](const std::string& name, const Scalar& s) {
    Json e = Json::object();
    e["name"] = name;
    e["value"] = ir::literal_text(s.value);
    if (!s.input.empty())
      bind(base + "/env/" + std::to_string(env.size()) + "/value", s.input, Kind::Env);
    env.push_back(e);
  };
  for (const auto& e : env_) push_env(e.name, e.value);
  if (role.runs_script)
    for (const auto& e : script_env_) push_env(e.name, e.value);
  if (!env.empty()) c["env"] = env;

  Json limits = Json::object();
  const std::string limit_at = base + "/resources/limits/";
  if (role.cpu_arg) limit(limits, role.cpu_arg, "cpu", limit_at, Kind::Quantity);
  if (role.memory_arg) limit(limits, role.memory_arg, "memory", limit_at, Kind::Quantity);
  if (role.gpus) gpu_limit(limits, limit_at);
  if (!limits.empty()) c["resources"] = Json{{"limits", limits}};

  Json mounts = Json::array();
  for (std::size_t i = 0; i < data_.size(); ++i)
    mounts.push_back(Json{{"name", "data-" + std::to_string(i)}, {"mountPath", data_[i].path}});
  if (sync_) mounts.push_back(Json{{"name", "code-sync"}, {"mountPath", "/workspace/code"}});
  if (!mounts.empty()) c["volumeMounts"] = mounts;
  return c;
}

Json Builder::replica(const Role& role, const std::string& base) {
  Json r = Json::object();
  long replicas = 1;
  if (role.count_arg) {
    const Scalar& s = scalars_[role.count_arg];
    replicas = s.value.is_number_integer() ? s.value.get<long>() : 1;
    if (replicas < 1) replicas = 1;  // a bound count: the placeholder must be valid
    // A TFJob's roles are optional: the launcher removes one whose count is 0 (and checks
    // that a chief or a worker is left). Other jobs' workers are at least 1.
    if (!s.input.empty())
      bind(step_.kind == ir::OpKind::TfJob ? base : base + "/replicas", s.input,
           step_.kind == ir::OpKind::TfJob ? Kind::Count : Kind::Int);
  }
  r["replicas"] = replicas;
  bool retried = false;
  if (auto it = scalars_.find("retries"); it != scalars_.end())
    retried = !it->second.input.empty() ||
              (it->second.value.is_number_integer() && it->second.value.get<long>() > 0);
  r["restartPolicy"] = retried ? "OnFailure" : "Never";

  Json spec = Json::object();
  if (sync_) {
    Json init = Json::object();
    init["name"] = "git-sync";
    init["image"] = options_.git_sync_image;
    // The repository arrives as a variable; the clone goes to code/<repo-name> (without
    // `.git`), on the branch GIT_SYNC_BRANCH and at the revision GIT_SYNC_REV if set.
    init["command"] = Json::array(
        {"sh", "-c",
         "set -eu\n"
         "dest=\"/code/$(basename \"${GIT_SYNC_REPO%/}\" .git)\"\n"
         "git clone ${GIT_SYNC_BRANCH:+--branch \"$GIT_SYNC_BRANCH\"} -- \"$GIT_SYNC_REPO\" "
         "\"$dest\"\n"
         "if [ -n \"${GIT_SYNC_REV:-}\" ]; then git -C \"$dest\" checkout \"$GIT_SYNC_REV\"; "
         "fi\n"});
    Json env = Json::array();
    env.push_back(Json{{"name", "GIT_SYNC_REPO"}, {"value", ir::literal_text(sync_->value)}});
    if (!sync_->input.empty())
      bind(base + "/template/spec/initContainers/0/env/0/value", sync_->input, Kind::Env);
    for (const auto& e : env_) {
      if (!runtime::is_git_sync_setting(e.name)) continue;
      if (!e.value.input.empty())
        bind(base + "/template/spec/initContainers/0/env/" + std::to_string(env.size()) +
                 "/value",
             e.value.input, Kind::Env);
      env.push_back(Json{{"name", e.name}, {"value", ir::literal_text(e.value.value)}});
    }
    init["env"] = env;
    init["volumeMounts"] = Json::array({Json{{"name", "code-sync"}, {"mountPath", "/code"}}});
    spec["initContainers"] = Json::array({init});
  }
  spec["containers"] = Json::array({container(role, base + "/template/spec/containers/0")});
  if (!node_selector_.empty()) {
    spec["nodeSelector"] = node_selector_;
    for (const auto& [key, input] : node_selector_inputs_) {
      std::string k;
      for (char ch : key) k += ch == '/' ? std::string("~1") : ch == '~' ? std::string("~0") : std::string(1, ch);
      bind(base + "/template/spec/nodeSelector/" + k, input, Kind::String);
    }
  }
  if (!tolerations_.empty()) spec["tolerations"] = tolerations_;
  Json volumes = Json::array();
  for (std::size_t i = 0; i < data_.size(); ++i)
    volumes.push_back(Json{{"name", "data-" + std::to_string(i)},
                           {"persistentVolumeClaim", Json{{"claimName", data_[i].claim}}}});
  if (sync_) volumes.push_back(Json{{"name", "code-sync"}, {"emptyDir", Json::object()}});
  if (!volumes.empty()) spec["volumes"] = volumes;
  scheduling(spec, base + "/template/spec");
  Json meta = metadata(base + "/template/metadata", false);
  r["template"] = meta.empty() ? Json{{"spec", spec}} : Json{{"metadata", meta}, {"spec", spec}};
  return r;
}

// The launcher's arguments (docs/runtime.md) for the operator's job `job`.
void Builder::add_call_args(const Json& job) {
  auto& a = call_.args;
  add_arg(a, Option::Manifest, json_without_argo_tags(job.dump()));
  for (const auto& b : binds_) add_arg(a, Option::Bind, b);
  for (const auto& [input, value] : call_.inputs) add_arg(a, Option::Value, {ir::LauncherWord::Kind::Binding, input});
  for (const auto& [name, text] : literal_values_) add_arg(a, Option::Value, rules::value_arg(name, text));
  if (!workspace_path_.empty()) add_arg(a, Option::Value, {ir::LauncherWord::Kind::Workspace, workspace_path_});
  a.insert(a.end(), metric_args_.begin(), metric_args_.end());
  if (!tensorboard_.empty()) add_arg(a, Option::Tensorboard, tensorboard_);
  // Launcher options from run-time values: one whole argv word each, checked by the
  // launcher ("" means none).
  for (auto [arg_name, option] : {std::pair{"tensorboard", Option::Tensorboard},
                                  std::pair{"pending_timeout", Option::PendingTimeout},
                                  std::pair{"timeout", Option::RunningTimeout},
                                  std::pair{"runtime", Option::Runtime},
                                  std::pair{"trainer_runtime", Option::TrainerRuntime},
                                  std::pair{"trainer_runtime_kind", Option::TrainerRuntimeKind},
                                  std::pair{"chief_role", Option::TfChiefRole}})
    if (auto it = scalars_.find(arg_name); it != scalars_.end()) {
      if (!it->second.input.empty()) {
        add_arg(a, option, {ir::LauncherWord::Kind::Input, it->second.input});
      } else if (std::string_view(arg_name) != "tensorboard" && !ir::literal_text(it->second.value).empty() &&
                 !(std::string_view(arg_name) == "chief_role" && ir::literal_text(it->second.value) == "chief")) {
        add_arg(a, option, ir::literal_text(it->second.value));
      }
    }
  // The build's runtime for a step that names none: the first of the list that fits.
  if (auto it = scalars_.find("runtime");
      it == scalars_.end() || (it->second.input.empty() && ir::literal_text(it->second.value).empty())) {
    std::string_view list = options_.default_runtime;
    while (!list.empty()) {
      std::string_view one = list.substr(0, list.find(','));
      list.remove_prefix(std::min(list.size(), one.size() + 1));
      if (one.empty() || one == "operator" || !runtime::is_training_runtime(job_kind(), one)) continue;
      add_arg(a, Option::Runtime, std::string(one));
      break;
    }
  }
  add_retry_options();
  add_arg(a, Option::WorkflowName, {ir::LauncherWord::Kind::WorkflowName, ""});
  add_arg(a, Option::StepName, {ir::LauncherWord::Kind::PodName, ""});
}

bool Builder::run() {
  if (step_.kind == ir::OpKind::TrainJob) return run_trainjob();
  if (!read_arguments()) return false;
  read_data();
  read_workspace();
  read_env();
  read_command();
  read_sync();
  read_node_placement();
  read_metadata();
  read_metrics();
  if (const ir::Value* v = arg("tensorboard"); v && !v->is_literal()) {
    // Known at run time: the launcher checks that it lies inside a data volume ("" = none).
    call_.writes_ui_metadata = true;
  } else if (v && v->is_literal()) {
    std::string path = ir::literal_text(v->literal);
    if (!path.empty()) {  // inside a data volume: sema (a literal one), the launcher (else)
      tensorboard_ = path;
      call_.writes_ui_metadata = true;
    }
  }
  if (!ok_) return false;

  // The job.
  const std::string rs = replica_spec_key();
  Json job = Json::object();
  bool mpi_v2 = step_.kind == ir::OpKind::MpiJob && !options_.mpi_v1;
  job["apiVersion"] = mpi_v2 ? "kubeflow.org/v2beta1" : "kubeflow.org/v1";
  job["kind"] = job_kind();
  // The launcher replaces the name with one made from the pod name; this one is valid.
  job["metadata"] = metadata("/metadata", true);

  Json spec = Json::object();
  std::string base = "/spec/" + rs + "/";
  Json replicas = Json::object();
  auto count_of = [&](const char* a) -> long {
    auto it = scalars_.find(a);
    if (it == scalars_.end()) return 0;
    if (!it->second.input.empty()) return 1;
    return it->second.value.is_number_integer() ? it->second.value.get<long>() : 0;
  };
  switch (step_.kind) {
    case ir::OpKind::MpiJob: {
      const auto slots = scalars_.find("slots_per_worker");
      if (slots != scalars_.end()) {
        spec["slotsPerWorker"] = slots->second.value.is_number_integer()
                                     ? slots->second.value.get<long>()
                                     : 1;
        if (!slots->second.input.empty())
          bind("/spec/slotsPerWorker", slots->second.input, Kind::Int);
      }
      if (mpi_v2) spec["launcherCreationPolicy"] = "WaitForWorkersReady";
      Role launcher{"Launcher", "image", true, false, "launcher_cpu", "launcher_memory", nullptr};
      Role worker{"Worker", "image", false, true, "cpu_limit", "memory_limit", "workers"};
      replicas["Launcher"] = replica(launcher, base + "Launcher");
      replicas["Worker"] = replica(worker, base + "Worker");
      break;
    }
    case ir::OpKind::TfJob: {
      if (count_of("chief") > 0)
        replicas["Chief"] = replica({"Chief", "image", true, true, "cpu_limit", "memory_limit",
                                     "chief"},
                                    base + "Chief");
      if (count_of("ps") > 0)
        replicas["PS"] = replica({"PS", "ps_image", true, false, "ps_cpu_limit",
                                  "ps_memory_limit", "ps"},
                                 base + "PS");
      if (count_of("workers") > 0)
        replicas["Worker"] = replica({"Worker", "image", true, true, "cpu_limit",
                                      "memory_limit", "workers"},
                                     base + "Worker");
      if (count_of("evaluator") > 0)
        replicas["Evaluator"] = replica({"Evaluator", "image", true, true, "cpu_limit",
                                         "memory_limit", "evaluator"},
                                        base + "Evaluator");
      if (replicas.empty()) return false;  // sema: a chief or a worker
      if (auto it = scalars_.find("success_policy");
          it != scalars_.end() && !ir::literal_text(it->second.value).empty() &&
          rules::is_success_policy(ir::literal_text(it->second.value)))
        spec["successPolicy"] = ir::literal_text(it->second.value);
      break;
    }
    case ir::OpKind::PyTorchJob: {
      if (auto it = scalars_.find("nproc_per_node"); it != scalars_.end()) {
        spec["nprocPerNode"] = ir::literal_text(it->second.value);
        if (!it->second.input.empty()) bind("/spec/nprocPerNode", it->second.input, Kind::String);
      }
      replicas["Master"] = replica({"Master", "image", true, true, "cpu_limit", "memory_limit",
                                    nullptr},
                                   base + "Master");
      replicas["Worker"] = replica({"Worker", "image", true, true, "cpu_limit", "memory_limit",
                                    "workers"},
                                   base + "Worker");
      break;
    }
    case ir::OpKind::TrainJob:
    case ir::OpKind::Container:
    case ir::OpKind::Pipeline: return false;
  }
  spec[rs] = replicas;
  if (!data_input.empty()) bind("/spec/" + rs, data_input, Kind::Data);
  // Maps and lists known only at run time, applied to every replica by the launcher.
  if (!env_map_input_.empty()) bind("/spec/" + rs, env_map_input_, Kind::EnvMap);
  if (!node_selector_input_.empty()) bind("/spec/" + rs, node_selector_input_, Kind::NodeSelector);
  if (!tolerations_input_.empty()) bind("/spec/" + rs, tolerations_input_, Kind::Tolerations);
  if (auto it = scalars_.find("queue"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec/" + rs, it->second.input, Kind::Queue);
  if (auto it = scalars_.find("priority_class"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec/" + rs, it->second.input, Kind::PriorityClass);
  if (!gpu_resource_input_.empty()) bind("/spec/" + rs, gpu_resource_input_, Kind::GpuResource);

  Json run_policy = Json::object();
  std::string policy = "Running";  // pods of a finished job (ps, MPI workers) are stopped
  if (auto it = scalars_.find("clean_pod_policy");
      it != scalars_.end() && !ir::literal_text(it->second.value).empty())
    policy = ir::literal_text(it->second.value);
  run_policy["cleanPodPolicy"] = policy;
  if (auto it = scalars_.find("clean_pod_policy"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec/runPolicy/cleanPodPolicy", it->second.input, Kind::CleanPodPolicy);
  if (auto it = scalars_.find("success_policy"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec", it->second.input, Kind::SuccessPolicy);
  if (auto it = scalars_.find("retries"); it != scalars_.end()) {
    run_policy["backoffLimit"] =
        it->second.value.is_number_integer() ? it->second.value.get<long>() : 0;
    if (!it->second.input.empty()) bind("/spec/runPolicy/backoffLimit", it->second.input, Kind::Int);
  }
  gang(run_policy);
  spec["runPolicy"] = run_policy;
  job["spec"] = spec;

  add_call_args(job);
  return true;
}

}  // namespace detail

bool build_launcher_call(const ir::Step& step, const JobOptions& options, ir::LauncherCall& call,
                         Diagnostics& diags) {
  assert(step.kind != ir::OpKind::Container);
  call = ir::LauncherCall{};
  detail::Builder builder(step, options, call, diags);
  return builder.run();
}

}  // namespace pipec::training
