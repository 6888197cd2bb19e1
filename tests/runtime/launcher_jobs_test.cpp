// The launcher with the training operators' jobs (MPIJob, TFJob, PyTorchJob): the leader
// pod's log on stdout, the metrics (also named by values, and as KFP v2 artifact metadata),
// a failed job's log tail, adopting the job of a restarted step, --keep-job, a stop, and
// values checked before any request.
#include "runtime/launcher.hpp"

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/runtime/launcher_fixture.hpp"

namespace pipec::runtime::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

const char* kMpiJobV1 = R"({"apiVersion": "kubeflow.org/v1", "kind": "MPIJob",
  "metadata": {"name": "x"}, "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
    "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "i"}]}}},
    "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "main", "image": "i"}]}}}}}})";

const char* kPyTorchWorkers = R"({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
  "metadata": {"name": "x"}, "spec": {"pytorchReplicaSpecs": {
    "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "pytorch", "image": "i"}]}}}}}})";

TEST_F(RuntimeLauncher, MpiJobSucceedsWithLauncherLogAndMetrics) {
  auto o = options(kMpiJob);
  o.metric_args = {"images/sec", "loss:RAW:min", "accuracy:PERCENTAGE"};
  json created;
  auto r = run(o, [&](const std::string& job) {
    created = *kube_.job(job);
    wait_for([&] { return kube_.count("GET /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs?") >= 1; });
    kube_.add_pod(job + "-worker-0", job, "worker", 0);
    kube_.log(job + "-worker-0", "worker noise loss=-99");
    kube_.add_pod(job + "-launcher", job, "launcher", 0);
    kube_.set_condition(job, "Created");
    kube_.set_condition(job, "Running");
    kube_.log(job + "-launcher", "step 1 images/sec=100.5 loss: 2.5 accuracy=0.25");
    kube_.log(job + "-launcher", "step 2 images/sec=120 loss: 1e-1 accuracy=+5E-1");
    kube_.log(job + "-launcher", "step 3 images/sec=0 loss: 0.3");
    kube_.end_pod(job + "-launcher", 0);
    kube_.set_condition(job, "Succeeded", "MPIJobSucceeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(r.out,
            "step 1 images/sec=100.5 loss: 2.5 accuracy=0.25\n"
            "step 2 images/sec=120 loss: 1e-1 accuracy=+5E-1\n"
            "step 3 images/sec=0 loss: 0.3\n");
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"),
            R"({"metrics":[{"format":"RAW","name":"images-sec","numberValue":0.0},)"
            R"({"format":"RAW","name":"loss","numberValue":0.1},)"
            R"({"format":"PERCENTAGE","name":"accuracy","numberValue":0.5}]})"
            "\n");
  // Named from the step, labelled, owned by the step's pod; deleted at the end.
  EXPECT_EQ(created["metadata"]["name"], "wf-train-123");
  EXPECT_EQ(created["metadata"]["namespace"], "team");
  EXPECT_EQ(created["metadata"]["labels"],
            json({{"app", "train"},
                  {"pipelines.kubeflow.org/workflow", "wf"},
                  {"pipelines.kubeflow.org/step", "wf-train-123"}}));
  EXPECT_EQ(created["metadata"]["ownerReferences"],
            json::parse(R"([{"apiVersion":"v1","kind":"Pod","name":"wf-train-123","uid":"pod-uid-1",
                            "blockOwnerDeletion":false,"controller":false}])"));
  EXPECT_EQ(kube_.count("DELETE /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs/wf-train-123"), 1);
  EXPECT_FALSE(kube_.job("wf-train-123"));
  EXPECT_NE(r.err.find("job wf-train-123 is Running"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("job wf-train-123 succeeded"), std::string::npos) << r.err;
  EXPECT_LT(r.took, 5s);
}

// KFP v2: with the task's executor input ({{$}}), the metrics also go into the
// ExecutorOutput file it names, as the `metrics` artifact's metadata (what kfp's
// Metrics.log_metric produces), the artifact's own fields kept.
TEST_F(RuntimeLauncher, KfpV2ExecutorOutputCarriesTheMetricsAsArtifactMetadata) {
  auto o = options(kMpiJob);
  o.metric_args = {"loss:RAW:min", "Final Cost"};
  json input = {{"inputs", json::object()},
                {"outputs",
                 {{"artifacts",
                   {{"metrics",
                     {{"artifacts",
                       json::array({{{"name", "metrics"},
                                     {"type", {{"schemaTitle", "system.Metrics"}}},
                                     {"uri", "minio://mlpipeline/v2/artifacts/p/r/train/metrics"}}})}}}}},
                  {"outputFile", (dir_ / "kfp" / "output_metadata.json").string()}}}};
  o.executor_input = input.dump();
  // The series goes to the path of the output artifact `metric_series` (--series-file).
  o.series_file = (dir_ / "kfp" / "metric_series").string();
  auto r = run(o, [&](const std::string& job) {
    wait_for([&] { return kube_.count("GET /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs?") >= 1; });
    kube_.add_pod(job + "-launcher", job, "launcher", 0);
    kube_.set_condition(job, "Running");
    kube_.log(job + "-launcher", "loss=0.9 Final Cost: 0.5333");
    kube_.log(job + "-launcher", "loss=0.4");
    kube_.end_pod(job + "-launcher", 0);
    kube_.set_condition(job, "Succeeded", "MPIJobSucceeded");
  });
  ASSERT_EQ(r.code, kExitSucceeded) << r.err;
  json output = json::parse(read(dir_ / "kfp" / "output_metadata.json"));
  EXPECT_EQ(output, json::parse(R"({"artifacts":{"metrics":{"artifacts":[{"name":"metrics",
      "type":{"schemaTitle":"system.Metrics"},"uri":"minio://mlpipeline/v2/artifacts/p/r/train/metrics",
      "metadata":{"loss":0.4,"Final-Cost":0.5333}}]}}})"));
  EXPECT_NE(read(dir_ / "out" / "metrics.json").find(R"("name":"Final-Cost")"), std::string::npos);
  json series = json::parse(read(dir_ / "kfp" / "metric_series"));
  EXPECT_EQ(series["metrics"][0]["name"], "loss");
  EXPECT_EQ(series["metrics"][0]["count"], 2);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out" / "metric-series.json"));
}

// stdout is the pod's log byte for byte: CRLF lines and a progress bar's '\r' redraws are
// copied as printed, and the metrics are read from every redraw.
TEST_F(RuntimeLauncher, CarriageReturnsReachStdoutAsPrinted) {
  auto o = options(kMpiJob);
  o.metric_args = {"loss:min", "acc"};
  const std::vector<std::string> lines = {
      "epoch 1\r",
      "\r 50%|#####     | 1/2 [00:01<00:01, loss=0.75, acc=0.5]\r100%|##########| 2/2 [00:02<00:00, loss=0.5, acc=0.625]",
      "\r",
      "done acc=0.875\r"};
  auto r = run(o, [&](const std::string& job) {
    kube_.add_pod(job + "-launcher", job, "launcher", 0);
    kube_.set_condition(job, "Running");
    for (const auto& l : lines) kube_.log(job + "-launcher", l);
    kube_.end_pod(job + "-launcher", 0);
    kube_.set_condition(job, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  std::string expected;
  for (const auto& l : lines) expected += l + "\n";
  EXPECT_EQ(r.out, expected);
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"),
            R"({"metrics":[{"format":"RAW","name":"loss","numberValue":0.5},)"
            R"({"format":"RAW","name":"acc","numberValue":0.875}]})"
            "\n");
}

struct LeaderCase {
  const char* manifest;
  const char* plural;
  std::vector<std::pair<std::string, int>> pods;  // replica type, index; the first speaks
};

TEST_F(RuntimeLauncher, EachKindFollowsTheLeaderPod) {
  const std::vector<LeaderCase> cases = {
      {kTfJobWithChief, "tfjobs", {{"chief", 0}, {"worker", 0}}},
      {kTfJobWorkers, "tfjobs", {{"worker", 0}, {"worker", 1}}},
      {kPyTorchJob, "pytorchjobs", {{"master", 0}, {"worker", 0}}},
      {kPyTorchWorkers, "pytorchjobs", {{"worker", 0}, {"worker", 1}}},
      {kMpiJobV1, "mpijobs", {{"launcher", 0}, {"worker", 0}}},
  };
  int n = 0;
  for (const auto& c : cases) {
    auto o = options(c.manifest);
    o.step_name = "wf-step-" + std::to_string(++n);
    o.metric_args = {"acc"};
    auto r = run(o, [&](const std::string& job) {
      for (auto it = c.pods.rbegin(); it != c.pods.rend(); ++it) {
        auto pod = job + "-" + it->first + "-" + std::to_string(it->second);
        kube_.add_pod(pod, job, it->first, it->second, "tensorflow");
        kube_.log(pod, "from " + it->first + "-" + std::to_string(it->second) + " acc=" +
                           std::to_string(it->second + 1));
        kube_.end_pod(pod, 0);
      }
      kube_.set_condition(job, "Running");
      kube_.set_condition(job, "Succeeded");
    });
    auto leader = c.pods.front();
    EXPECT_EQ(r.code, kExitSucceeded) << c.plural << r.err;
    EXPECT_EQ(r.out, "from " + leader.first + "-" + std::to_string(leader.second) + " acc=" +
                         std::to_string(leader.second + 1) + "\n")
        << c.plural;
    EXPECT_EQ(kube_.count(std::string("DELETE /apis/kubeflow.org/v1/namespaces/team/") + c.plural +
                          "/wf-step-" + std::to_string(n)),
              1);
  }
}

TEST_F(RuntimeLauncher, FailedJobReportsReasonAndLogTail) {
  auto o = options(kMpiJob);
  o.metric_args = {"accuracy"};
  o.failure_log_lines = 2;
  auto r = run(o, [&](const std::string& job) {
    auto pod = job + "-launcher";
    kube_.add_pod(pod, job, "launcher", 0);
    kube_.set_condition(job, "Running");
    kube_.log(pod, "epoch 1 accuracy=0.5");
    kube_.log(pod, "Traceback (most recent call last):");
    kube_.log(pod, "ValueError: boom");
    kube_.end_pod(pod, 1);
    kube_.set_condition(job, "Failed", "MPIJobFailed", "launcher pod failed");
  });
  EXPECT_EQ(r.code, kExitFailed);
  EXPECT_NE(r.err.find("pipec-launcher: error: job wf-train-123 failed: MPIJobFailed: launcher pod failed\n"
                       "pipec-launcher: last lines of pod wf-train-123-launcher (main):\n"
                       "  | Traceback (most recent call last):\n"
                       "  | ValueError: boom\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"),
            R"({"metrics":[{"format":"RAW","name":"accuracy","numberValue":0.5}]})" "\n");
  EXPECT_EQ(kube_.count("DELETE "), 1);
}

TEST_F(RuntimeLauncher, AdoptsTheJobOfARestartedStep) {
  auto job = json::parse(kMpiJob);
  job["metadata"] = {{"name", "wf-train-123"},
                     {"labels", {{"pipelines.kubeflow.org/step", "wf-train-123"}}}};
  kube_.put_job("mpijobs", job);
  auto r = run(options(kMpiJob), [&](const std::string& name) {
    kube_.set_condition(name, "Running");
    kube_.set_condition(name, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_NE(r.err.find("adopted the existing MPIJob team/wf-train-123 (the step was restarted)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(kube_.creates(), 1);
  EXPECT_EQ(kube_.count("GET /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs/wf-train-123"), 2);
}

TEST_F(RuntimeLauncher, RefusesToAdoptAnotherStepsJob) {
  auto job = json::parse(kMpiJob);
  job["metadata"] = {{"name", "wf-train-123"}, {"labels", {{"pipelines.kubeflow.org/step", "other"}}}};
  kube_.put_job("mpijobs", job);
  auto r = run(options(kMpiJob));
  EXPECT_EQ(r.code, kExitApiError);
  EXPECT_NE(r.err.find("error: mpijobs.kubeflow.org 'wf-train-123' already exists in namespace "
                       "'team' and belongs to another step"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(kube_.count("DELETE "), 0);
}

TEST_F(RuntimeLauncher, AJobDeletedBySomeoneElseFails) {
  auto r = run(options(kMpiJob), [&](const std::string& job) {
    kube_.set_condition(job, "Running");
    kube_.remove_job(job);
  });
  EXPECT_EQ(r.code, kExitFailed);
  EXPECT_NE(r.err.find("error: job wf-train-123 was deleted by someone else"), std::string::npos) << r.err;
  EXPECT_EQ(kube_.count("DELETE "), 0);
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"), "{\"metrics\":[]}\n");
}

TEST_F(RuntimeLauncher, SuccessWithoutMetricsFileOrCleanupIsNotSuccess) {
  auto succeed = [&](const std::string& job) {
    kube_.set_condition(job, "Running");
    kube_.set_condition(job, "Succeeded");
  };
  // The metrics file cannot be written: exit 1, and the job is still deleted.
  auto o = options(kMpiJob);
  o.metrics_file = "/proc/self/pipec/metrics.json";
  auto r = run(o, succeed);
  EXPECT_EQ(r.code, kExitFailed) << r.err;
  EXPECT_NE(r.err.find("error: cannot write '/proc/self/pipec/metrics.json'"), std::string::npos) << r.err;
  EXPECT_EQ(kube_.count("DELETE "), 1);
  // The job cannot be deleted: exit 4, naming the verb and resource.
  kube_.delete_status = 403;
  o = options(kMpiJob);
  o.step_name = "wf-train-456";
  r = run(o, succeed);
  EXPECT_EQ(r.code, kExitApiError) << r.err;
  EXPECT_NE(r.err.find("error: forbidden: cannot delete mpijobs.kubeflow.org in namespace 'team'"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(kube_.job("wf-train-456"));
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"), "{\"metrics\":[]}\n");
}

TEST_F(RuntimeLauncher, KeepJobLeavesASucceededJob) {
  auto o = options(kMpiJob);
  o.keep_job = true;
  auto r = run(o, [&](const std::string& job) {
    kube_.set_condition(job, "Running");
    kube_.set_condition(job, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(kube_.count("DELETE "), 0);
  EXPECT_TRUE(kube_.job("wf-train-123"));
}

TEST_F(RuntimeLauncher, StopSignalDeletesTheJob) {
  std::atomic<bool> stop{false};
  auto o = options(kMpiJob);
  o.keep_job = true;  // a stop deletes the job anyway
  auto r = run(
      o,
      [&](const std::string& job) {
        kube_.set_condition(job, "Running");
        std::this_thread::sleep_for(100ms);
        stop = true;
      },
      &stop);
  EXPECT_EQ(r.code, kExitStopped);
  EXPECT_EQ(kube_.count("DELETE "), 1);
  EXPECT_LT(r.took, 2s);
}

TEST_F(RuntimeLauncher, BadValueStopsBeforeAnyRequest) {
  auto o = options(kMpiJob);
  o.bind_args = {"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"};
  o.value_args = {"workers=-2"};
  auto r = run(o);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_EQ(r.err, "pipec-launcher: error: value 'workers' must be an integer >= 1, got \"-2\"\n");
  EXPECT_TRUE(kube_.requests().empty());
  EXPECT_FALSE(fs::exists(dir_ / "out" / "metrics.json"));
}

TEST_F(RuntimeLauncher, ANamespaceNeverBecomesPartOfAPath) {
  auto o = options(kMpiJob);
  o.namespace_name = "team/mpijobs/x";
  auto r = run(o);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_EQ(r.err, "pipec-launcher: error: namespace 'team/mpijobs/x' is not a valid namespace "
                   "name (lower-case letters, digits and '-', at most 63)\n");
  EXPECT_TRUE(kube_.requests().empty());
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"), "{\"metrics\":[]}\n");
}

TEST_F(RuntimeLauncher, MetricChosenByAValue) {
  auto o = options(kMpiJob);
  o.metric_value_args = {"metric"};
  o.value_args = {"metric=top-1 acc:PERCENTAGE:max"};
  auto bad = o;
  bad.value_args = {"metric=42"};
  auto r = run(bad);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_NE(r.err.find("error: value 'metric': metric '42' cannot be reported"), std::string::npos) << r.err;
  bad.value_args = {"metric=top-1  acc"};  // two spaces: no name the scraper finds
  r = run(bad);
  EXPECT_EQ(r.code, kExitBadArguments);
  o.value_args = {"metric=top-1/acc:PERCENTAGE:max"};
  r = run(o, [&](const std::string& job) {
    kube_.add_pod(job + "-launcher", job, "launcher", 0);
    kube_.log(job + "-launcher", "top-1/acc=0.7");
    kube_.log(job + "-launcher", "top-1/acc=0.9");
    kube_.log(job + "-launcher", "top-1/acc=0.8");
    kube_.end_pod(job + "-launcher", 0);
    kube_.set_condition(job, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"),
            R"({"metrics":[{"format":"PERCENTAGE","name":"top-1-acc","numberValue":0.9}]})" "\n");
}

TEST_F(RuntimeLauncher, MetricsChosenByAListValue) {
  auto o = options(kMpiJob);
  o.metric_list_value_args = {"metrics"};
  auto bad = o;
  for (const char* text : {"metrics=not json", "metrics=[\"ok\", 42]", "metrics=[\"42\"]"}) {
    bad.value_args = {text};
    auto r = run(bad);
    EXPECT_EQ(r.code, kExitBadArguments) << text;
    EXPECT_NE(r.err.find("error: value 'metrics'"), std::string::npos) << r.err;
  }
  o.value_args = {R"(metrics=["acc:PERCENTAGE:max", "loss"])"};
  auto r = run(o, [&](const std::string& job) {
    kube_.add_pod(job + "-launcher", job, "launcher", 0);
    kube_.log(job + "-launcher", "acc=0.7 loss=0.4");
    kube_.log(job + "-launcher", "acc=0.9 loss=0.2");
    kube_.end_pod(job + "-launcher", 0);
    kube_.set_condition(job, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(read(dir_ / "out" / "metrics.json"),
            R"({"metrics":[{"format":"PERCENTAGE","name":"acc","numberValue":0.9},{"format":"RAW","name":"loss","numberValue":0.2}]})" "\n");
}

TEST_F(RuntimeLauncher, TensorboardMetadataPointsIntoTheDataVolume) {
  auto o = options(kMpiJob);
  o.bind_args = {"/spec/mpiReplicaSpecs=data:data"};
  o.value_args = {R"(data=["ds:/data", "runs:/runs"])"};
  o.tensorboard = "/runs/exp1/logs";
  auto r = run(o, [&](const std::string& job) { kube_.set_condition(job, "Succeeded"); });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(json::parse(read(dir_ / "out" / "ui.json")),
            json::parse(R"({"version": 1, "outputs": [{"type": "tensorboard",
              "source": "volume://data-1/exp1/logs",
              "pod_template_spec": {"spec": {
                "containers": [{"volumeMounts": [{"name": "data-1", "mountPath": "/runs"}]}],
                "volumes": [{"name": "data-1", "persistentVolumeClaim": {"claimName": "runs"}}]}}}]})"));
  o.tensorboard = "/runsx/logs";
  r = run(o);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_EQ(r.err, "pipec-launcher: error: --tensorboard '/runsx/logs' is not inside a data volume of the job\n");
}

}  // namespace
}  // namespace pipec::runtime::testing
