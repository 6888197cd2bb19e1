#include "runtime/trainer_v2.hpp"

#include <nlohmann/json.hpp>

#include "input/json.hpp"
#include "rules/kubernetes.hpp"
#include "rules/names.hpp"

namespace pipec::runtime {

namespace {

using nlohmann::json;

constexpr std::string_view kPatchManager = kTrainerPatchManager;
constexpr std::string_view kNodeJob = kTrainerNodeJob;
// The MPI runtimes' launcher job (deepspeed-distributed, mlx-distributed): it runs the
// trainer's command; its container is named `node` too.
constexpr std::string_view kLauncherJob = "launcher";

using input::member;

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

long replicas(const json& spec) {
  const json& r = member(spec, "replicas");
  return r.is_number_integer() ? r.get<long>() : 1;
}

}  // namespace

bool is_training_runtime(std::string_view kind, std::string_view runtime) {
  if (kind == "TrainJob") return runtime.empty() || runtime == "trainer-v2";
  if (runtime.empty() || runtime == "operator") return true;
  if (runtime == "pods") return kind == "TFJob";
  return runtime == "trainer-v2" && (kind == "PyTorchJob" || kind == "MPIJob");
}

bool is_trainer_runtime_kind(std::string_view kind) {
  return kind.empty() || kind == "ClusterTrainingRuntime" || kind == "TrainingRuntime";
}

bool is_storage_uri(std::string_view text) {
  if (text.empty()) return true;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0 || sep + 3 >= text.size() || !alpha(text[0])) return false;
  for (char c : text.substr(0, sep))
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '.' && c != '-') return false;
  // The CRD's `.+` matches any character but a line break.
  return text.substr(sep + 3).find_first_of("\r\n") == std::string_view::npos;
}

bool is_trainer_reserved_env(std::string_view name) {
  for (std::string_view reserved :
       {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT",
        "OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args", "OMPI_MCA_orte_keep_fqdn_hostnames",
        "OMPI_MCA_orte_set_default_slots"})
    if (name == reserved) return true;
  return false;
}

std::string trainjob_problem(std::string_view text) {
  json job = input::parse_json(text);
  const json& spec = member(job, "spec");
  const json& ref = member(spec, "runtimeRef");
  std::string name = input::member_text(ref, "name");
  if (!rules::is_dns1123_subdomain(name))
    return "the TrainJob's runtime name must be a Kubernetes name, got " + member(ref, "name").dump();
  if (!is_trainer_runtime_kind(input::member_text(ref, "kind")))
    return "the TrainJob's runtime kind must be ClusterTrainingRuntime or TrainingRuntime, got " +
           member(ref, "kind").dump();
  const json& trainer = member(spec, "trainer");
  const json& nodes = member(trainer, "numNodes");
  if (nodes.is_number_integer() && (nodes.get<long long>() < 1 || !rules::within_max_replicas(nodes.get<long long>())))
    return "the TrainJob's numNodes must be 1 to " + std::to_string(rules::kMaxReplicas) + ", got " + nodes.dump();
  const json& procs = member(trainer, "numProcPerNode");
  if (procs.is_number_integer() && procs.get<long long>() < 1)
    return "the TrainJob's numProcPerNode must be at least 1, got " + procs.dump();
  for (const char* what : {"dataset", "model"}) {
    const json& init = member(member(spec, "initializer"), what);
    if (!init.is_object()) continue;
    const json& uri = member(init, "storageUri");
    if (uri.is_string() && !is_storage_uri(uri.get<std::string>()))
      return std::string("the ") + what + "'s storageUri must be scheme://... (e.g. hf://org/name), got " +
             json(uri.get<std::string>()).dump(-1, ' ', false, json::error_handler_t::replace);
    const json& secret = member(member(init, "secretRef"), "name");
    if (secret.is_string() && !rules::is_dns1123_subdomain(secret.get<std::string>()))
      return std::string("the ") + what + "'s secret must be a Kubernetes name, got " +
             json(secret.get<std::string>()).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return {};
}

std::string default_trainer_runtime(std::string_view kind) {
  if (kind == "PyTorchJob") return "torch-distributed";
  if (kind == "MPIJob") return "deepspeed-distributed";
  return std::string();
}

namespace {

// The git clone of a rendered pod's git-sync init container (its script, reading only
// GIT_SYNC_* variables, added to `env`), and the working directory: what a runtime patch
// cannot add (a patch's init containers take no image or command) runs before the
// command's script. Nothing here is a value: values stay in the environment.
std::string command_prefix(const json& pod, const json& container, json& env, bool& git) {
  std::string prefix;
  for (const auto& init : member(pod, "initContainers").is_array() ? member(pod, "initContainers") : json::array()) {
    if (member(init, "name") != "git-sync") continue;
    const json& command = member(init, "command");
    if (!command.is_array() || command.size() != 3 || !command[2].is_string()) continue;
    git = true;
    for (const auto& e : member(init, "env").is_array() ? member(init, "env") : json::array()) env.push_back(e);
    prefix += "( " + command[2].get<std::string>() + " ) || exit 1\n";
  }
  if (const json& dir = member(container, "workingDir"); dir.is_string() && !dir.get<std::string>().empty())
    prefix += "cd " + shell_quote(dir.get<std::string>()) + " || exit 1\n";
  return prefix;
}

// The container's command after `prefix`: a shell command's script follows it; an exec
// command runs after it, its words as arguments.
json prefixed_command(const json& command, const std::string& prefix) {
  if (command.is_array() && command.size() == 3 && command[0] == "sh" && command[1] == "-c" &&
      command[2].is_string())
    return json::array({"sh", "-c", prefix + command[2].get<std::string>()});
  json wrapped = json::array({"sh", "-c", prefix + "exec \"$@\"", "pipec-trainer"});
  if (command.is_array())
    for (const auto& word : command) wrapped.push_back(word);
  return wrapped;
}

// Volumes, mounts, node selector and tolerations of a rendered pod, as one runtimePatches
// entry (manager pipec.dev/launcher) on the runtime's replicated jobs `jobs` (container
// `node` in each); null when there is nothing to patch.
json runtime_patch(const json& pod_template, const json& container, bool git, const std::vector<std::string>& jobs) {
  const json& pod = member(pod_template, "spec");
  json pod_patch = json::object();
  json volume_mounts = member(container, "volumeMounts").is_array() ? member(container, "volumeMounts") : json::array();
  if (git) volume_mounts.push_back({{"name", "code-sync"}, {"mountPath", "/code"}});
  if (const json& v = member(pod, "volumes"); v.is_array() && !v.empty()) pod_patch["volumes"] = v;
  if (const json& s = member(pod, "nodeSelector"); s.is_object() && !s.empty()) pod_patch["nodeSelector"] = s;
  if (const json& t = member(pod, "tolerations"); t.is_array() && !t.empty()) pod_patch["tolerations"] = t;
  if (!volume_mounts.empty())
    pod_patch["containers"] = json::array({{{"name", kNodeJob}, {"volumeMounts", volume_mounts}}});
  // The pods' labels and annotations (the job's own are the TrainJob's metadata).
  json meta = json::object();
  for (const char* key : {"labels", "annotations"})
    if (const json& m = member(member(pod_template, "metadata"), key); m.is_object() && !m.empty()) meta[key] = m;
  if (pod_patch.empty() && meta.empty()) return nullptr;
  json pod_template_patch = {{"spec", pod_patch}};
  if (!meta.empty()) pod_template_patch["metadata"] = meta;
  json replicated = json::array();
  for (const auto& job : jobs)
    replicated.push_back({{"name", job}, {"template", {{"spec", {{"template", pod_template_patch}}}}}});
  return json::array({{{"manager", kPatchManager},
                       {"trainingRuntimeSpec",
                        {{"template", {{"spec", {{"replicatedJobs", std::move(replicated)}}}}}}}}});
}

json train_job(const json& source, std::string_view kind, std::string_view runtime_name,
               std::string_view runtime_kind, json trainer, json patches) {
  json spec = {{"runtimeRef",
                {{"apiGroup", "trainer.kubeflow.org"},
                 {"kind", runtime_kind.empty() ? std::string("ClusterTrainingRuntime") : std::string(runtime_kind)},
                 {"name", runtime_name.empty() ? default_trainer_runtime(kind) : std::string(runtime_name)}}},
               {"trainer", std::move(trainer)}};
  if (!patches.is_null()) spec["runtimePatches"] = std::move(patches);
  // A job in a Kueue queue waits suspended until Kueue admits it.
  if (member(member(member(source, "spec"), "runPolicy"), "suspend") == true) spec["suspend"] = true;
  return {{"apiVersion", "trainer.kubeflow.org/v1alpha1"}, {"kind", "TrainJob"},
          {"metadata", member(source, "metadata").is_object() ? member(source, "metadata") : json::object()},
          {"spec", std::move(spec)}};
}

}  // namespace

namespace {
// The rendered job `text` when it is a `kind` a TrainJob can say; null, with the result's
// error, when it is not: another kind, or pods with a priority class, a scheduler or a
// gang, which a TrainJob (Trainer v2.3) does not patch (the runtime's pod template and
// podGroupPolicy say them).
json source_job(std::string_view text, std::string_view kind, const char* refusal, TrainJobResult& result) {
  json source = input::parse_json(text);
  if (!source.is_object() || input::member_text(source, "kind") != kind) {
    result.error = refusal;
    return nullptr;
  }
  if (member(member(source, "spec"), "runPolicy").contains("schedulingPolicy")) {
    result.error = "runtime 'trainer-v2': a TrainJob has no gang scheduling field (a scheduler, min_available or "
                   "gang_queue); set the runtime's podGroupPolicy";
    return nullptr;
  }
  for (const auto& [role, replica] : member(member(source, "spec"), kind == "MPIJob" ? "mpiReplicaSpecs" : "pytorchReplicaSpecs").items())
    for (const char* field : {"priorityClassName", "schedulerName"})
      if (member(member(member(replica, "template"), "spec"), field).is_string()) {
        result.error = std::string("runtime 'trainer-v2': a TrainJob cannot set the pods' ") + field +
                       " (Trainer v2.3 patches no such field); set it in the ClusterTrainingRuntime";
        return nullptr;
      }
  return source;
}
}  // namespace

TrainJobResult to_trainjob(std::string_view text, std::string_view runtime_name, std::string_view runtime_kind) {
  json source = input::parse_json(text);
  if (source.is_object() && member(source, "kind") == "MPIJob")
    return mpijob_to_trainjob(text, runtime_name, runtime_kind);
  return pytorchjob_to_trainjob(text, runtime_name, runtime_kind);
}

TrainJobResult mpijob_to_trainjob(std::string_view text, std::string_view runtime_name,
                                  std::string_view runtime_kind) {
  TrainJobResult result;
  json source = source_job(text, "MPIJob", "mpijob_to_trainjob converts an MPIJob", result);
  if (source.is_null()) return result;
  const json& replica_specs = member(member(source, "spec"), "mpiReplicaSpecs");
  const json& launcher_pod = member(member(member(replica_specs, "Launcher"), "template"), "spec");
  const json& worker = member(replica_specs, "Worker");
  const json& worker_pod = member(member(worker, "template"), "spec");
  const json& launchers = member(launcher_pod, "containers");
  const json& workers = member(worker_pod, "containers");
  if (!launchers.is_array() || launchers.empty() || !workers.is_array() || workers.empty()) {
    result.error = "the MPIJob has no launcher or worker container";
    return result;
  }
  const json& c = launchers[0];
  // The launcher's command runs mpirun over the runtime's `node` pods (Trainer writes the
  // hostfile and points OpenMPI at it); one node per MPIJob worker, its slots as the
  // processes per node, the workers' resources per node.
  json trainer = json::object();
  trainer["image"] = member(c, "image");
  trainer["numNodes"] = replicas(worker);
  if (const json& slots = member(member(source, "spec"), "slotsPerWorker"); slots.is_number_integer())
    trainer["numProcPerNode"] = slots;
  json env = member(c, "env").is_array() ? member(c, "env") : json::array();
  bool git = false;
  std::string prefix = command_prefix(launcher_pod, c, env, git);
  if (member(c, "command").is_array() || !prefix.empty()) trainer["command"] = prefixed_command(member(c, "command"), prefix);
  if (const json& args = member(c, "args"); args.is_array()) trainer["args"] = args;
  if (!env.empty()) trainer["env"] = std::move(env);
  if (const json& resources = member(workers[0], "resources"); resources.is_object() && !resources.empty())
    trainer["resourcesPerNode"] = resources;
  json patches = runtime_patch(member(member(replica_specs, "Launcher"), "template"), c, git,
                               {std::string(kLauncherJob), std::string(kNodeJob)});
  result.ok = true;
  result.job = train_job(source, "MPIJob", runtime_name, runtime_kind, std::move(trainer), std::move(patches)).dump();
  return result;
}

TrainJobResult pytorchjob_to_trainjob(std::string_view text, std::string_view runtime_name,
                                      std::string_view runtime_kind) {
  TrainJobResult result;
  json source = source_job(text, "PyTorchJob", "runtime 'trainer-v2' runs a pytorch_job (a PyTorchJob)", result);
  if (source.is_null()) return result;
  const json& replica_specs = member(member(source, "spec"), "pytorchReplicaSpecs");
  const json& master = member(replica_specs, "Master");
  const json& worker = member(replica_specs, "Worker");
  const json& leader = master.is_object() ? master : worker;
  const json& pod = member(member(leader, "template"), "spec");
  const json& containers = member(pod, "containers");
  if (!containers.is_array() || containers.empty()) {
    result.error = "the PyTorchJob has no container";
    return result;
  }
  const json& c = containers[0];
  long nodes = (master.is_object() ? replicas(master) : 0) + (worker.is_object() ? replicas(worker) : 0);

  json trainer = json::object();
  trainer["image"] = member(c, "image");
  trainer["numNodes"] = nodes;
  const json& nproc = member(member(source, "spec"), "nprocPerNode");
  if (nproc.is_number_integer()) trainer["numProcPerNode"] = nproc;
  if (nproc.is_string()) {
    try {
      trainer["numProcPerNode"] = std::stol(nproc.get<std::string>());
    } catch (const std::exception&) {
      // "auto": Trainer's default.
    }
  }
  json env = member(c, "env").is_array() ? member(c, "env") : json::array();
  bool git = false;
  std::string prefix = command_prefix(pod, c, env, git);
  // WORLD_SIZE counts processes as the PyTorchJob operator does: nodes x processes per
  // node (a count that is not a number, such as "auto", counts 1).
  prefix +=
      "pipec_n=${PET_NNODES:-1}; case $pipec_n in ''|*[!0-9]*) pipec_n=1 ;; esac\n"
      "pipec_p=${PET_NPROC_PER_NODE:-1}; case $pipec_p in ''|*[!0-9]*) pipec_p=1 ;; esac\n"
      "export MASTER_ADDR=\"${MASTER_ADDR:-${PET_MASTER_ADDR:-}}\" "
      "MASTER_PORT=\"${MASTER_PORT:-${PET_MASTER_PORT:-}}\" "
      "WORLD_SIZE=\"${WORLD_SIZE:-$((pipec_n * pipec_p))}\" RANK=\"${RANK:-${PET_NODE_RANK:-}}\"\n"
      "unset pipec_n pipec_p\n";
  if (const json& command = member(c, "command"); command.is_array()) trainer["command"] = prefixed_command(command, prefix);
  if (const json& args = member(c, "args"); args.is_array()) trainer["args"] = args;
  if (!env.empty()) trainer["env"] = std::move(env);
  if (const json& resources = member(c, "resources"); resources.is_object() && !resources.empty())
    trainer["resourcesPerNode"] = resources;
  json job = train_job(source, "PyTorchJob", runtime_name, runtime_kind, std::move(trainer),
                       runtime_patch(member(leader, "template"), c, git, {std::string(kNodeJob)}));
  result.ok = true;
  result.job = job.dump();
  return result;
}

}  // namespace pipec::runtime
