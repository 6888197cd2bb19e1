// The launcher's pre-check (docs/runtime.md, "Before the job is created"): every seeded
// defect of its step reported at once, before any create (exit 4); a read it may not make
// printed as unknown without stopping it; the questions one job raises, merged.
#include "runtime/launcher.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/preflight_job.hpp"
#include "tests/runtime/launcher_fixture.hpp"

namespace pipec::runtime::testing {
namespace {

using nlohmann::json;

// An MPIJob whose launcher names a missing claim, a Secret volume's missing key, a Secret
// env's missing key, a missing ConfigMap and a missing image pull Secret, and whose two
// workers mount one ReadWriteOnce claim (on a cluster of two schedulable nodes).
constexpr char kDefective[] = R"({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
  "metadata": {"name": "placeholder"},
  "spec": {"mpiReplicaSpecs": {
    "Launcher": {"replicas": 1, "template": {"spec": {
      "imagePullSecrets": [{"name": "regcred"}],
      "containers": [{"name": "main", "image": "img",
        "env": [{"name": "AWS_SECRET", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "AWS_SECRET"}}},
                {"name": "LR", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "lr"}}}]}],
      "volumes": [{"name": "data-0", "persistentVolumeClaim": {"claimName": "data"}},
                  {"name": "creds", "secret": {"secretName": "creds", "items": [{"key": "token", "path": "t"}]}}]}}},
    "Worker": {"replicas": 2, "template": {"spec": {
      "containers": [{"name": "main", "image": "img"}],
      "volumes": [{"name": "data-1", "persistentVolumeClaim": {"claimName": "shared"}}]}}}}}})";

TEST_F(RuntimeLauncher, PrecheckReportsEveryDefectOfItsStepAtOnceBeforeAnyCreate) {
  kube_.put_object("/api/v1/namespaces/team/secrets/s3", {{"data", {{"AWS_ACCESS_KEY_ID", "aWQ="}}}});
  kube_.put_object("/api/v1/namespaces/team/secrets/creds", {{"data", {{"password", "cA=="}}}});
  kube_.put_object("/api/v1/namespaces/team/persistentvolumeclaims/shared",
                   {{"spec", {{"accessModes", {"ReadWriteOnce"}}}}, {"status", {{"phase", "Bound"}}}});
  kube_.put_object("/api/v1/nodes/node-a", {{"metadata", {{"name", "node-a"}}}});
  kube_.put_object("/api/v1/nodes/node-b", {{"metadata", {{"name", "node-b"}}}});
  kube_.serve_api("kubeflow.org/v1", {"tfjobs", "pytorchjobs"});  // no MPI Operator v2
  // The launcher's own identity may follow MPIJobs but not create them, and list pods.
  kube_.add_role("", "kubeflow.org", {"mpijobs"}, {"get", "list", "watch", "delete"});
  kube_.add_role("", "", {"pods"}, {"list"});
  auto r = run(options(kDefective));
  EXPECT_EQ(r.code, kExitApiError) << r.err;
  const std::vector<std::string> errors = {
      "error [pvc.exists]: PersistentVolumeClaim team/data does not exist (HTTP 404)",
      "error [secret.key]: Secret team/creds has no key 'token'",
      "error [secret.key]: Secret team/s3 has no key 'AWS_SECRET'",
      "error [configmap.exists]: ConfigMap team/settings does not exist (HTTP 404)",
      "error [pullsecret.exists]: Secret team/regcred does not exist (HTTP 404)",
      "error [api.served]: kubeflow.org/v2beta1 is not served: MPIJob cannot be created",
      "error [access.create]: this user may not create mpijobs in namespace team",
      "error [dryrun.admitted]: the API server refuses MPIJob in namespace team (HTTP 404)",
      "error [pvc.access_mode]: PersistentVolumeClaim team/shared is ReadWriteOnce but 2 pods mount it at "
      "once and the cluster has 2 schedulable nodes"};
  for (const auto& e : errors) EXPECT_EQ(occurrences(r.err, "pipec-launcher: pre-check: " + e), 1u) << e << "\n" << r.err;
  EXPECT_EQ(occurrences(r.err, "pipec-launcher: pre-check: "), errors.size()) << r.err;
  EXPECT_EQ(r.err.substr(r.err.rfind("pipec-launcher: ")),
            "pipec-launcher: error: the pre-check found 9 problems with what job wf-train-123 needs; "
            "nothing was created\n");
  // Nothing was created, and only reads were sent.
  EXPECT_EQ(kube_.creates(), 0);
  for (const auto& request : kube_.requests())
    EXPECT_TRUE(request.rfind("GET ", 0) == 0 || request.find("accessreviews") != std::string::npos ||
                request.find("?dryRun=All") != std::string::npos)
        << request;
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"), "{\"metrics\":[]}\n");
}

// A 403 on the reads (the Role lacks them) is unknown: printed once each, and the job runs.
TEST_F(RuntimeLauncher, PrecheckReadsItMayNotMakeAreUnknownAndDoNotStopIt) {
  kube_.reads_403 = 1000;
  auto r = run(options(kMpiJob), [&](const std::string& job) {
    kube_.set_condition(job, "Running");
    kube_.set_condition(job, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(occurrences(r.err, "pipec-launcher: pre-check: unknown [pvc.exists]: cannot tell whether "
                               "PersistentVolumeClaim team/user-susan exists: HTTP 403 reading it"),
            1u)
      << r.err;
  EXPECT_EQ(occurrences(r.err, "pipec-launcher: pre-check: unknown [access."), 6u) << r.err;
  EXPECT_EQ(occurrences(r.err, "pipec-launcher: pre-check: error"), 0u) << r.err;
  EXPECT_EQ(kube_.creates(), 1);
}

// A restarted step's job exists: the dry run's 409 is no finding, and the job is adopted.
TEST_F(RuntimeLauncher, PrecheckLetsARestartedStepAdoptItsJob) {
  auto job = json::parse(kMpiJob);
  job["metadata"] = {{"name", "wf-train-123"}, {"labels", {{"pipelines.kubeflow.org/step", "wf-train-123"}}}};
  kube_.put_job("mpijobs", job);
  auto r = run(options(kMpiJob), [&](const std::string& name) {
    kube_.set_condition(name, "Running");
    kube_.set_condition(name, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(kube_.count("POST /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs?dryRun=All"), 1);
  EXPECT_EQ(r.err.find("pre-check"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("adopted the existing MPIJob"), std::string::npos) << r.err;
}

// A TrainJob asks for its runtime (of the kind it names) and its policy; runtime "pods"
// asks for pods and services, and neither discovery nor a dry run.
TEST(RuntimePrecheckQuestions, OneQuestionPerObjectKeysAndPodsAddedUp) {
  const json rendered = json::parse(kDefective);
  json train_job = {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
                    {"kind", "TrainJob"},
                    {"spec", {{"runtimeRef", {{"name", "team-mpi"}, {"kind", "TrainingRuntime"}}}}}};
  auto questions = job_questions({&rendered, &train_job, false});
  using Q = kube::PreflightQuestion;
  std::vector<std::string> seen;
  for (const auto& q : questions) {
    std::string line = std::to_string(static_cast<int>(q.what)) + " " + q.name + " " + q.verb + " " +
                       q.resource + " " + std::to_string(q.pods_at_once);
    for (const auto& k : q.keys) line += " " + k;
    seen.push_back(line);
  }
  auto id = [](Q::What w) { return std::to_string(static_cast<int>(w)) + " "; };
  const std::vector<std::string> expected = {
      id(Q::What::claim) + "data create  1",
      id(Q::What::secret) + "creds create  1 token",
      id(Q::What::secret) + "s3 create  1 AWS_SECRET",
      id(Q::What::config_map) + "settings create  1 lr",
      id(Q::What::pull_secret) + "regcred create  1",
      id(Q::What::claim) + "shared create  2",
      id(Q::What::served) + "TrainJob create  1",
      id(Q::What::runtime) + "team-mpi create  1",
      id(Q::What::access) + "TrainJob create  1",
      id(Q::What::access) + "TrainJob get  1",
      id(Q::What::access) + "TrainJob list  1",
      id(Q::What::access) + "TrainJob watch  1",
      id(Q::What::access) + "TrainJob delete  1",
      id(Q::What::access) + " list pods 1",
      id(Q::What::dry_run) + "TrainJob create  1"};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(questions[7].policy, "mpi");
  EXPECT_EQ(questions[7].runtime_kind, rules::preflight::Kind::training_runtime);
  EXPECT_EQ(json::parse(questions.back().manifest), train_job);

  auto pods = job_questions({&rendered, &rendered, true});
  ASSERT_EQ(pods.size(), 9u);
  EXPECT_EQ(pods[6].resource, "pods");
  EXPECT_EQ(pods[7].resource, "services");
  EXPECT_EQ(pods[8].verb, "list");
}

// The pods' resources ask the LimitRanges once for every container with requests or
// limits, and the nodes once per distinct template that needs GPUs or a nodeSelector.
TEST(RuntimePrecheckQuestions, PodsAskTheLimitRangesAndTheNodes) {
  const json job = json::parse(R"({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "spec": {"pytorchReplicaSpecs": {
      "Master": {"replicas": 1, "template": {"spec": {"nodeSelector": {"pool": "a100"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "containers": [{"name": "pytorch", "image": "i",
                        "resources": {"limits": {"cpu": "8", "nvidia.com/gpu": "2", "hugepages-2Mi": "1Gi"}}}]}}},
      "Worker": {"replicas": 3, "template": {"spec": {"nodeSelector": {"pool": "a100"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "containers": [{"name": "pytorch", "image": "i",
                        "resources": {"limits": {"cpu": "8", "nvidia.com/gpu": "2", "hugepages-2Mi": "1Gi"}}}]}}}}}})");
  using Q = kube::PreflightQuestion;
  const auto questions = pod_questions(job);
  ASSERT_EQ(questions.size(), 2u);
  EXPECT_EQ(questions[0].what, Q::What::limit_range);
  ASSERT_EQ(questions[0].containers.size(), 2u);
  EXPECT_EQ(questions[0].containers[0].name, "Master/pytorch");
  EXPECT_EQ(questions[0].containers[1].limits.at("cpu"), "8");
  EXPECT_EQ(questions[1].what, Q::What::nodes);
  EXPECT_EQ(questions[1].gpu_resource, "nvidia.com/gpu");
  EXPECT_EQ(questions[1].gpus, 2);
  EXPECT_EQ(questions[1].node_selector, (std::map<std::string, std::string>{{"pool", "a100"}}));
  EXPECT_EQ(json::parse(questions[1].tolerations), job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["tolerations"]);
  // A job without resources or a nodeSelector asks neither.
  EXPECT_TRUE(pod_questions(json::parse(kDefective)).empty());
}

}  // namespace
}  // namespace pipec::runtime::testing
