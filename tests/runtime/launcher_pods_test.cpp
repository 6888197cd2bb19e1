// --runtime pods: distributed TensorFlow without the training operator, the launcher making
// the pods, their Services and TF_CONFIG itself.
#include "runtime/launcher.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kube/client.hpp"
#include "tests/runtime/launcher_fixture.hpp"

namespace pipec::runtime::testing {
using kube::KubeClient;
using kube::KubeConfig;
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const char* kTfJobFull = R"({"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
  "metadata": {"name": "x"}, "spec": {"tfReplicaSpecs": {
    "Chief": {"replicas": 1, "restartPolicy": "Never", "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
    "PS": {"replicas": 2, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
    "Worker": {"replicas": 3, "restartPolicy": "OnFailure", "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
    "Evaluator": {"replicas": 1, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}}}}})";

// Waits until the launcher has created `n` pods; returns their names.
std::vector<std::string> wait_pods(FakeKube& kube, std::size_t n) {
  auto until = std::chrono::steady_clock::now() + 5s;
  while (kube.pod_names().size() < n && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(5ms);
  return kube.pod_names();
}

class RuntimeLauncherPods : public RuntimeLauncher {
 protected:
  // Runs the launcher while `script` drives the fake once `pods` pods exist.
  Result run_pods(const LauncherOptions& o, std::size_t pods,
                  std::function<void(const std::vector<std::string>&)> script,
                  std::atomic<bool>* stop = nullptr) {
    std::function<void()> drive;
    if (script)
      drive = [&] {
        auto names = wait_pods(kube_, pods);
        if (names.size() >= pods) script(names);
      };
    return launch(o, drive, stop);
  }
  LauncherOptions pods_options(const char* manifest = kTfJobFull) {
    auto o = options(manifest);
    o.runtime = "pods";
    return o;
  }
};

// Every pod's TF_CONFIG names every replica of the training cluster by its Service's DNS
// name and port, with its own task type and index (the evaluator is not in the cluster);
// each Service is headless and selects its pod; every pod is owned by the step's pod. The
// ps pods go when the chief succeeds, then everything else: nothing is left.
TEST_F(RuntimeLauncherPods, EveryReplicaGetsItsTfConfigAndNothingIsLeft) {
  auto o = pods_options();
  o.metric_args = {"accuracy"};
  std::map<std::string, json> configs, services;
  std::vector<std::string> ps_left_at_success;
  auto r = run_pods(o, 7, [&](const std::vector<std::string>& pods) {
    for (const auto& name : pods) {
      json pod = *kube_.pod_object(name);
      EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "pod-uid-1") << name;
      EXPECT_EQ(pod["metadata"]["labels"]["pipelines.kubeflow.org/step"], "wf-train-123") << name;
      for (const auto& e : pod["spec"]["containers"][0]["env"])
        if (e["name"] == "TF_CONFIG") configs[name] = json::parse(e["value"].get<std::string>());
      services[name] = *kube_.service(name);
      kube_.start_pod(name);
    }
    const std::string chief = "wf-train-123-chief-0";
    kube_.log(chief, "step 1 accuracy=0.5");
    kube_.log(chief, "step 2 accuracy=0.75");
    for (int i = 0; i < 3; ++i) kube_.end_pod("wf-train-123-worker-" + std::to_string(i), 0);
    kube_.end_pod("wf-train-123-evaluator-0", 0);
    kube_.end_pod(chief, 0);
  });
  ASSERT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(r.out, "step 1 accuracy=0.5\nstep 2 accuracy=0.75\n");
  ASSERT_EQ(configs.size(), 7u);
  json cluster = {{"chief", {"wf-train-123-chief-0.team.svc:2222"}},
                  {"worker", {"wf-train-123-worker-0.team.svc:2222", "wf-train-123-worker-1.team.svc:2222",
                              "wf-train-123-worker-2.team.svc:2222"}},
                  {"ps", {"wf-train-123-ps-0.team.svc:2222", "wf-train-123-ps-1.team.svc:2222"}}};
  for (const auto& [name, config] : configs) {
    EXPECT_EQ(config["cluster"], cluster) << name;
    EXPECT_EQ(config["environment"], "cloud");
    // <job>-<type>-<index>: the task names the pod's own role and index.
    std::string rest = name.substr(std::string("wf-train-123-").size());
    EXPECT_EQ(config["task"]["type"], rest.substr(0, rest.rfind('-'))) << name;
    EXPECT_EQ(config["task"]["index"], std::stoi(rest.substr(rest.rfind('-') + 1))) << name;
    // Each address in the cluster is a Service that selects exactly that pod.
    const json& svc = services[name];
    EXPECT_EQ(svc["spec"]["clusterIP"], "None");
    EXPECT_EQ(svc["spec"]["ports"][0]["port"], 2222);
    EXPECT_EQ(svc["spec"]["selector"]["training.kubeflow.org/job-name"], "wf-train-123");
    EXPECT_EQ(svc["spec"]["selector"]["training.kubeflow.org/replica-type"], config["task"]["type"]);
  }
  EXPECT_FALSE(configs["wf-train-123-evaluator-0"]["cluster"].contains("evaluator"));
  // The ps pods first (they never exit), then the rest.
  auto deletes = kube_.requests();
  auto first_delete = std::find_if(deletes.begin(), deletes.end(),
                                   [](const std::string& q) { return q.rfind("DELETE ", 0) == 0; });
  ASSERT_NE(first_delete, deletes.end());
  EXPECT_NE(first_delete->find("/pods/wf-train-123-ps-0"), std::string::npos) << *first_delete;
  EXPECT_TRUE(kube_.pod_names().empty());
  EXPECT_TRUE(kube_.service_names().empty());
  EXPECT_NE(read(dir_ / "out" / "metrics.json").find(R"("numberValue":0.75)"), std::string::npos);
  EXPECT_NE(r.err.find("deleted the 2 ps pods"), std::string::npos) << r.err;
}

// Without a chief, worker 0 decides (TFJob's rule); with successPolicy AllWorkers, every
// worker must end.
TEST_F(RuntimeLauncherPods, WithoutAChiefWorkerZeroOrAllWorkersDecide) {
  auto o = pods_options(kTfJobWorkers);
  auto r = run_pods(o, 2, [&](const std::vector<std::string>& pods) {
    for (const auto& p : pods) kube_.start_pod(p);
    kube_.end_pod("wf-train-123-worker-0", 0);
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_TRUE(kube_.pod_names().empty());

  json all = json::parse(kTfJobWorkers);
  all["spec"]["successPolicy"] = "AllWorkers";
  std::string manifest = all.dump();
  auto a = pods_options(manifest.c_str());
  a.running_timeout = 1500ms;
  auto r2 = run_pods(a, 2, [&](const std::vector<std::string>& pods) {
    for (const auto& p : pods) kube_.start_pod(p);
    kube_.end_pod("wf-train-123-worker-0", 0);  // worker 1 never ends
  });
  EXPECT_EQ(r2.code, kExitTimeout) << r2.err;
  EXPECT_TRUE(kube_.pod_names().empty());
  EXPECT_TRUE(kube_.service_names().empty());
}

TEST_F(RuntimeLauncherPods, AFailedPodFailsTheJobAndEverythingGoes) {
  auto o = pods_options();
  o.failure_log_lines = 1;
  auto r = run_pods(o, 7, [&](const std::vector<std::string>& pods) {
    for (const auto& p : pods) kube_.start_pod(p);
    kube_.log("wf-train-123-worker-1", "OOM: cannot allocate");
    kube_.end_pod("wf-train-123-worker-1", 137);
  });
  EXPECT_EQ(r.code, kExitFailed) << r.err;
  EXPECT_NE(r.err.find("pod wf-train-123-worker-1 (worker 1) failed: container tensorflow exited with 137"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("OOM: cannot allocate"), std::string::npos) << r.err;
  EXPECT_TRUE(kube_.pod_names().empty()) << ::testing::PrintToString(kube_.pod_names());
  EXPECT_TRUE(kube_.service_names().empty());
}

TEST_F(RuntimeLauncherPods, ASignalStopsAndDeletesEverythingEvenWithKeepJob) {
  std::atomic<bool> stop{false};
  auto o = pods_options();
  o.keep_job = true;
  auto r = run_pods(
      o, 7,
      [&](const std::vector<std::string>& pods) {
        for (const auto& p : pods) kube_.start_pod(p);
        std::this_thread::sleep_for(100ms);
        stop = true;
      },
      &stop);
  EXPECT_EQ(r.code, kExitStopped) << r.err;
  EXPECT_TRUE(kube_.pod_names().empty());
  EXPECT_TRUE(kube_.service_names().empty());
  EXPECT_LT(r.took, 3s);
}

// A pod of another step in the way: nothing of this step stays behind.
TEST_F(RuntimeLauncherPods, AConflictWithAnotherStepRemovesWhatWasCreated) {
  auto o = pods_options();
  KubeConfig config;
  config.server = kube_.url();
  KubeClient client(config);
  json other = {{"apiVersion", "v1"}, {"kind", "Pod"},
                {"metadata", {{"name", "wf-train-123-ps-1"}, {"labels", {{"pipelines.kubeflow.org/step", "other"}}}}},
                {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "i"}}})}}}};
  ASSERT_TRUE(client.request("POST", "/api/v1/namespaces/team/pods", other.dump()).ok());
  auto r = run_pods(o, 0, {});
  EXPECT_EQ(r.code, kExitApiError);
  EXPECT_NE(r.err.find("pods 'wf-train-123-ps-1' already exists"), std::string::npos) << r.err;
  EXPECT_EQ(kube_.pod_names(), std::vector<std::string>{"wf-train-123-ps-1"});
  EXPECT_TRUE(kube_.service_names().empty());
}

}  // namespace
}  // namespace pipec::runtime::testing
