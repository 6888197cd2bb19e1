#include "compiler/local/replicas.hpp"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace pipec::local {
namespace {

using Json = nlohmann::json;

Json job(const std::string& kind, const char* map, std::map<std::string, int> counts, Json spec = Json::object()) {
  for (const auto& [type, n] : counts)
    spec[map][type] = {{"replicas", n}, {"template", {{"spec", {{"containers", {{{"name", "main"}}}}}}}}};
  return {{"kind", kind}, {"spec", spec}};
}

std::map<std::string, std::string> env_of(const Replica& r) {
  return {r.env.begin(), r.env.end()};
}

TEST(LocalReplicas, TfConfigAsTheOperatorWritesItOnLoopback) {
  int next = 40000;
  auto port = [&] { return next++; };
  ReplicaPlan plan = plan_replicas(
      job("TFJob", "tfReplicaSpecs", {{"Chief", 1}, {"PS", 2}, {"Worker", 2}, {"Evaluator", 1}}), port, "");
  ASSERT_EQ(plan.replicas.size(), 6u);
  std::vector<std::string> labels;
  for (const auto& r : plan.replicas) labels.push_back(r.label);
  // In rules::tf_replicas' order (the launcher's rule): chief, workers, ps, evaluator.
  EXPECT_EQ(labels, (std::vector<std::string>{"chief-0", "worker-0", "worker-1", "ps-0", "ps-1", "evaluator-0"}));
  Json worker1 = Json::parse(env_of(plan.replicas[2]).at("TF_CONFIG"));
  EXPECT_EQ(worker1["cluster"], Json::parse(R"({"chief":["127.0.0.1:40000"],"ps":["127.0.0.1:40003","127.0.0.1:40004"],
                                                 "worker":["127.0.0.1:40001","127.0.0.1:40002"]})"));
  EXPECT_EQ(worker1["task"], Json::parse(R"({"type":"worker","index":1})"));
  EXPECT_EQ(worker1["environment"], "cloud");
  EXPECT_EQ(Json::parse(env_of(plan.replicas[5]).at("TF_CONFIG"))["task"]["type"], "evaluator");
  for (const auto& r : plan.replicas) {
    EXPECT_EQ(r.stop_when_others_end, r.type == "PS") << r.label;
    EXPECT_EQ(r.leader, r.label == "chief-0") << r.label;
  }
  // Without a chief, worker 0 speaks for the job.
  plan = plan_replicas(job("TFJob", "tfReplicaSpecs", {{"PS", 1}, {"Worker", 2}}), port, "");
  EXPECT_TRUE(plan.replicas[0].leader);
  EXPECT_EQ(plan.replicas[0].label, "worker-0");
  // chief_role "master": the chief is "master" in TF_CONFIG and speaks for the job.
  plan = plan_replicas(job("TFJob", "tfReplicaSpecs", {{"Chief", 1}, {"Worker", 1}}), port, "", true);
  EXPECT_EQ(plan.replicas[0].label, "master-0");
  EXPECT_TRUE(plan.replicas[0].leader);
  Json master = Json::parse(env_of(plan.replicas[0]).at("TF_CONFIG"));
  EXPECT_EQ(master["task"], Json::parse(R"({"type":"master","index":0})"));
  EXPECT_TRUE(master["cluster"].contains("master"));
  EXPECT_FALSE(master["cluster"].contains("chief"));
}

TEST(LocalReplicas, PyTorchRanksAndWorldSizeAsTheOperator) {
  auto port = [] { return 29500; };
  ReplicaPlan plan = plan_replicas(job("PyTorchJob", "pytorchReplicaSpecs", {{"Master", 1}, {"Worker", 2}},
                                       {{"nprocPerNode", "2"}}),
                                   port, "");
  ASSERT_EQ(plan.replicas.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) {
    auto env = env_of(plan.replicas[rank]);
    EXPECT_EQ(env["RANK"], std::to_string(rank));
    EXPECT_EQ(env["PET_NODE_RANK"], std::to_string(rank));
    EXPECT_EQ(env["WORLD_SIZE"], "6");  // 3 replicas x nprocPerNode 2: processes
    EXPECT_EQ(env["PET_NNODES"], "3");
    EXPECT_EQ(env["PET_NPROC_PER_NODE"], "2");
    EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
    EXPECT_EQ(env["MASTER_PORT"], "29500");
    EXPECT_EQ(env["LOCAL_RANK"], "0");
    EXPECT_EQ(plan.replicas[rank].leader, rank == 0);
  }
  EXPECT_EQ(plan.replicas[2].label, "worker-1");
  // "auto" counts 1 process a replica, as the operator's getNprocPerNodeInt.
  plan = plan_replicas(job("PyTorchJob", "pytorchReplicaSpecs", {{"Master", 1}, {"Worker", 1}},
                           {{"nprocPerNode", "auto"}}),
                       port, "");
  EXPECT_EQ(env_of(plan.replicas[1])["WORLD_SIZE"], "2");
}

TEST(LocalReplicas, MpiLauncherWithAHostfileOfTheWorkersSlots) {
  ReplicaPlan plan = plan_replicas(job("MPIJob", "mpiReplicaSpecs", {{"Launcher", 1}, {"Worker", 3}},
                                       {{"slotsPerWorker", 2}}),
                                   [] { return 1; }, "/run/hostfile");
  ASSERT_EQ(plan.replicas.size(), 1u);
  EXPECT_EQ(plan.replicas[0].label, "launcher-0");
  EXPECT_TRUE(plan.replicas[0].leader);
  EXPECT_EQ(plan.hostfile, "localhost slots=6\n");
  EXPECT_EQ(env_of(plan.replicas[0])["OMPI_MCA_orte_default_hostfile"], "/run/hostfile");
  EXPECT_THROW((void)plan_replicas(Json{{"kind", "TrainJob"}, {"spec", Json::object()}}, [] { return 1; }, ""),
               std::runtime_error);
}

}  // namespace
}  // namespace pipec::local
