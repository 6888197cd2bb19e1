#include "compiler/local/replicas.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "rules/tf_config.hpp"

namespace pipec::local {

namespace {

using Json = nlohmann::json;

const Json& replica_map(const Json& job) {
  std::string kind = job.at("kind").get<std::string>();
  const char* key = kind == "MPIJob"       ? "mpiReplicaSpecs"
                    : kind == "TFJob"      ? "tfReplicaSpecs"
                    : kind == "PyTorchJob" ? "pytorchReplicaSpecs"
                                           : nullptr;
  if (!key) throw std::runtime_error("a job of kind '" + kind + "' cannot run locally");
  return job.at("spec").at(key);
}

int count(const Json& replicas, const char* type) {
  return replicas.contains(type) ? replicas[type].value("replicas", 1) : 0;
}

// nprocPerNode as the PyTorchJob operator reads it: an integer, else 1 (e.g. "auto").
int nproc_of(const std::string& text) {
  try {
    std::size_t used = 0;
    int n = std::stoi(text, &used);
    if (used == text.size() && n > 0) return n;
  } catch (...) {
  }
  return 1;
}

}  // namespace

const Json& replica_pod(const Json& job, const std::string& type) {
  return replica_map(job).at(type).at("template").at("spec");
}

const Json& replica_container(const Json& job, const std::string& type) {
  return replica_pod(job, type).at("containers").at(0);
}

ReplicaPlan plan_replicas(const Json& job, const std::function<int()>& port, const std::string& hostfile_path,
                          bool tf_master_form) {
  const Json& replicas = replica_map(job);
  std::string kind = job.at("kind").get<std::string>();
  ReplicaPlan plan;
  auto add = [&](const char* type, const char* role, int index) -> Replica& {
    Replica r;
    r.type = type;
    r.label = fmt::format("{}-{}", role, index);
    r.index = index;
    plan.replicas.push_back(std::move(r));
    return plan.replicas.back();
  };
  if (kind == "TFJob") {
    // TF_CONFIG by the launcher's own rule (rules/tf_config: the roles, their order, the
    // chief called "master" with chief_role "master"), with loopback addresses.
    std::vector<rules::TfReplica> tf = rules::tf_replicas(job, "local", tf_master_form);
    std::vector<std::string> addresses;
    for (std::size_t i = 0; i < tf.size(); ++i) addresses.push_back(fmt::format("127.0.0.1:{}", port()));
    const Json cluster = rules::tf_cluster(tf, addresses);
    bool chief = false;
    for (const auto& r : tf) chief = chief || r.role == "chief" || r.role == "master";
    for (const auto& t : tf) {
      Replica& r = add(t.type.c_str(), t.role.c_str(), t.index);
      r.env.emplace_back("TF_CONFIG", rules::tf_config(cluster, t));
      r.stop_when_others_end = t.role == "ps";
      r.leader = chief ? (t.role == "chief" || t.role == "master") : (t.role == "worker" && t.index == 0);
    }
  } else if (kind == "PyTorchJob") {
    // As the PyTorchJob operator: RANK the master 0 and worker i i+1, WORLD_SIZE the
    // replicas x nprocPerNode; torchrun's PET_* too; LOCAL_RANK 0 (one process a replica).
    int nodes = count(replicas, "Master") + count(replicas, "Worker");
    const Json& spec = job.at("spec");
    std::string nproc = !spec.contains("nprocPerNode") ? "1"
                        : spec["nprocPerNode"].is_string() ? spec["nprocPerNode"].get<std::string>()
                                                           : spec["nprocPerNode"].dump();
    std::string master_port = std::to_string(port());
    int rank = 0;
    for (auto [type, role] : {std::pair{"Master", "master"}, std::pair{"Worker", "worker"}})
      for (int i = 0; i < count(replicas, type); ++i, ++rank) {
        Replica& r = add(type, role, i);
        r.env = {{"MASTER_ADDR", "127.0.0.1"},
                 {"MASTER_PORT", master_port},
                 {"WORLD_SIZE", std::to_string(nodes * nproc_of(nproc))},
                 {"RANK", std::to_string(rank)},
                 {"LOCAL_RANK", "0"},
                 {"PET_MASTER_ADDR", "127.0.0.1"},
                 {"PET_MASTER_PORT", master_port},
                 {"PET_NNODES", std::to_string(nodes)},
                 {"PET_NODE_RANK", std::to_string(rank)},
                 {"PET_NPROC_PER_NODE", nproc},
                 {"PYTHONUNBUFFERED", "0"}};
        r.leader = rank == 0;
      }
  } else {
    // MPIJob: the launcher runs the command; its mpirun finds the workers' slots on
    // localhost in the hostfile (the mpi-operator's OMPI_MCA_orte_default_hostfile).
    int slots = count(replicas, "Worker") * job.at("spec").value("slotsPerWorker", 1);
    plan.hostfile = fmt::format("localhost slots={}\n", slots);
    Replica& r = add("Launcher", "launcher", 0);
    r.env = {{"OMPI_MCA_orte_default_hostfile", hostfile_path},
             {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
             {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
             {"OMPI_MCA_rmaps_base_oversubscribe", "1"},
             {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"}};
    r.leader = true;
  }
  return plan;
}

}  // namespace pipec::local
