#pragma once
// The local processes of a training job (docs/local.md "Training steps"): which replicas
// run, and the environment the operator would give each, on loopback addresses.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipec::local {

struct Replica {
  std::string type;   // the replica type in the job: "Master", "Worker", "PS", "Launcher", ...
  std::string label;  // "master-0", "worker-1", "ps-0", "launcher-0"
  int index = 0;
  /// The operator's variables, set after (and over) the container's own `env`.
  std::vector<std::pair<std::string, std::string>> env;
  bool stop_when_others_end = false;  // a TF parameter server
  bool leader = false;                // its log is scraped for metrics (as the launcher's)
};

struct ReplicaPlan {
  std::vector<Replica> replicas;
  std::string hostfile;  // MPIJob: the hostfile's text, to be written at `hostfile_path`
};

/// The processes of a rendered MPIJob, TFJob or PyTorchJob: PyTorch one per replica with
/// MASTER_ADDR/MASTER_PORT/WORLD_SIZE (replicas x nprocPerNode)/RANK/LOCAL_RANK and PET_*;
/// TF one per replica with the TF_CONFIG of rules::tf_config, the launcher's rule (chief,
/// ps and worker addresses; no evaluator, as the operator; the chief called "master" with
/// `tf_master_form`, a tf_job's chief_role "master"), the ps stopped when the others end;
/// MPI the launcher alone, with a hostfile of `localhost slots=workers x slotsPerWorker`
/// for its mpirun, read at `hostfile_path` in its sandbox. `port` gives a free loopback
/// port. Throws std::runtime_error for another kind.
[[nodiscard]] ReplicaPlan plan_replicas(const nlohmann::json& job, const std::function<int()>& port,
                                        const std::string& hostfile_path, bool tf_master_form = false);

/// The replica's main container in the job.
[[nodiscard]] const nlohmann::json& replica_container(const nlohmann::json& job, const std::string& type);

/// The replica's pod spec in the job (its `volumes`).
[[nodiscard]] const nlohmann::json& replica_pod(const nlohmann::json& job, const std::string& type);

}  // namespace pipec::local
