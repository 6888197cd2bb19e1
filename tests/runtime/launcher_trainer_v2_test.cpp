// --runtime trainer-v2: the job run as a Kubeflow Trainer v2 TrainJob, against conditions
// the test sets and against Trainer v2.3.0 and JobSet v0.12.0 as released
// (FakeKube::install_trainer).
#include "runtime/launcher.hpp"

#include <cstddef>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/runtime/launcher_fixture.hpp"

namespace pipec::runtime::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// --runtime trainer-v2: the PyTorchJob becomes a TrainJob (trainer.kubeflow.org), whose
// node 0 pod (JobSet's labels) speaks; Complete is success; the TrainJob is deleted.
TEST_F(RuntimeLauncher, TrainerV2RunsAPyTorchJobAsATrainJob) {
  auto o = options(kPyTorchJob);
  o.runtime = "trainer-v2";
  o.metric_args = {"acc"};
  json created;
  auto r = run(o, [&](const std::string& job) {
    created = *kube_.job(job);
    kube_.add_jobset_pod(job + "-node-0-1-abcde", job, "node", 1);
    kube_.log(job + "-node-0-1-abcde", "node 1 acc=0.1");
    kube_.add_jobset_pod(job + "-node-0-0-fghij", job, "node", 0);
    kube_.log(job + "-node-0-0-fghij", "node 0 acc=0.9");
    kube_.end_pod(job + "-node-0-0-fghij", 0);
    kube_.end_pod(job + "-node-0-1-abcde", 0);
    kube_.set_condition(job, "Complete", "AllJobsCompleted", "jobset completed successfully");
  });
  ASSERT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(r.out, "node 0 acc=0.9\n");
  EXPECT_EQ(created["apiVersion"], "trainer.kubeflow.org/v1alpha1");
  EXPECT_EQ(created["kind"], "TrainJob");
  EXPECT_EQ(created["spec"]["runtimeRef"]["name"], "torch-distributed");
  EXPECT_EQ(created["spec"]["trainer"]["numNodes"], 4);
  EXPECT_EQ(created["metadata"]["labels"]["pipelines.kubeflow.org/step"], "wf-train-123");
  EXPECT_EQ(created["metadata"]["ownerReferences"][0]["uid"], "pod-uid-1");
  EXPECT_EQ(kube_.creates(), 1);
  EXPECT_EQ(kube_.count("POST /apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs?dryRun=All"), 1);
  EXPECT_EQ(kube_.count("DELETE /apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/wf-train-123"), 1);
  EXPECT_NE(read(dir_ / "out" / "metrics.json").find(R"("numberValue":0.9)"), std::string::npos);
}

// status.trainerStatus (Trainer v2.3.0) changes three times: three progress lines, and the
// step's metrics hold the last report's metrics (named by the metric rules) after the
// scraped ones, the scraped value winning on a shared name.
TEST_F(RuntimeLauncher, TrainJobProgressIsPrintedAsItChangesAndItsMetricsMerged) {
  auto o = options(kPyTorchJob);
  o.runtime = "trainer-v2";
  o.metric_args = {"acc"};
  auto r = run(o, [&](const std::string& job) {
    kube_.add_jobset_pod(job + "-node-0-0-fghij", job, "node", 0);
    kube_.log(job + "-node-0-0-fghij", "acc=0.9");
    // Each report an event of the launcher's watch, not folded into its first GET.
    const std::string watch = "GET /apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs?";
    wait_for([&] { return kube_.count(watch) > 0; });
    kube_.set_trainer_status(job, {{"progressPercentage", 10}, {"estimatedRemainingSeconds", 3725},
                                   {"metrics", {{{"name", "loss"}, {"value", "2.5"}}}}});
    kube_.set_trainer_status(job, {{"progressPercentage", 60}, {"estimatedRemainingSeconds", 150},
                                   {"metrics", {{{"name", "loss"}, {"value", "1.25"}}}}});
    // Unchanged: no line.
    kube_.set_trainer_status(job, {{"progressPercentage", 60}, {"estimatedRemainingSeconds", 150},
                                   {"metrics", {{{"name", "loss"}, {"value", "1.25"}}}}});
    kube_.set_trainer_status(job, {{"progressPercentage", 100}, {"estimatedRemainingSeconds", 0},
                                   {"metrics", {{{"name", "train loss"}, {"value", "0.5"}},
                                                {{"name", "acc"}, {"value", "0.1"}},
                                                {{"name", "epoch"}, {"value", "not a number"}}}}});
    kube_.end_pod(job + "-node-0-0-fghij", 0);
    kube_.set_condition(job, "Complete", "AllJobsCompleted", "jobset completed successfully");
  });
  ASSERT_EQ(r.code, kExitSucceeded) << r.err;
  std::size_t lines = 0;
  for (std::size_t at = r.err.find("pipec-launcher: progress: "); at != std::string::npos;
       at = r.err.find("pipec-launcher: progress: ", at + 1))
    ++lines;
  EXPECT_EQ(lines, 3u) << r.err;
  EXPECT_NE(r.err.find("pipec-launcher: progress: 10%, about 1h02m left, loss=2.5\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pipec-launcher: progress: 60%, about 2m30s left, loss=1.25\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pipec-launcher: progress: 100%, about 0s left, train-loss=0.5 acc=0.1\n"), std::string::npos)
      << r.err;
  auto metrics = json::parse(read(dir_ / "out" / "metrics.json"))["metrics"];
  EXPECT_EQ(metrics, json::parse(R"([{"name":"acc","numberValue":0.9,"format":"RAW"},
                                     {"name":"train-loss","numberValue":0.5,"format":"RAW"}])"))
      << metrics.dump();
  // The reports join the series: loss's two values, train-loss's one; acc is scraped.
  auto series = json::parse(read(dir_ / "out" / "metric-series.json"))["metrics"];
  EXPECT_EQ(series, json::parse(R"([
      {"name":"acc","count":1,"stride":1,"points":[{"order":0,"value":0.9}]},
      {"name":"loss","count":2,"stride":1,"source":"trainerStatus",
       "points":[{"order":0,"value":2.5},{"order":1,"value":1.25}]},
      {"name":"train-loss","count":1,"stride":1,"source":"trainerStatus","points":[{"order":0,"value":0.5}]}])"))
      << series.dump();
}

// --trainer-runtime-kind TrainingRuntime: the TrainJob names a runtime of its own
// namespace (runtimeRef.kind), for an MPIJob as for a PyTorchJob.
TEST_F(RuntimeLauncher, ANamespacedTrainingRuntimeIsTheRuntimeRefsKind) {
  for (const char* manifest : {kPyTorchJob, kMpiJob}) {
    auto o = options(manifest);
    o.runtime = "trainer-v2";
    o.trainer_runtime = "team-torch";
    o.trainer_runtime_kind = "TrainingRuntime";
    o.dry_run = true;
    auto r = run(o);
    ASSERT_EQ(r.code, kExitSucceeded) << r.err;
    auto job = json::parse(r.out);
    EXPECT_EQ(job["spec"]["runtimeRef"],
              json({{"apiGroup", "trainer.kubeflow.org"}, {"kind", "TrainingRuntime"}, {"name", "team-torch"}}));
  }
  auto o = options(kPyTorchJob);
  o.runtime = "trainer-v2";
  o.trainer_runtime_kind = "trainingruntime";
  auto r = run(o);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_NE(r.err.find("--trainer-runtime-kind 'trainingruntime': expected 'ClusterTrainingRuntime' or "
                       "'TrainingRuntime'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(kube_.count("POST"), 0);
}

TEST_F(RuntimeLauncher, AFailedTrainJobSaysWhyFromItsNodePod) {
  auto o = options(kPyTorchJob);
  o.runtime = "trainer-v2";
  o.trainer_runtime = "my-torch";
  o.failure_log_lines = 1;
  json created;
  auto r = run(o, [&](const std::string& job) {
    created = *kube_.job(job);
    kube_.add_jobset_pod(job + "-node-0-0-x", job, "node", 0);
    kube_.log(job + "-node-0-0-x", "Traceback: CUDA out of memory");
    kube_.end_pod(job + "-node-0-0-x", 1);
    kube_.set_condition(job, "Failed", "FailedJobs", "jobset failed due to one or more job failures");
  });
  EXPECT_EQ(r.code, kExitFailed) << r.err;
  EXPECT_EQ(created["spec"]["runtimeRef"]["name"], "my-torch");
  EXPECT_EQ(created["spec"]["runtimeRef"]["kind"], "ClusterTrainingRuntime");
  EXPECT_NE(r.err.find("FailedJobs: jobset failed due to one or more job failures"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Traceback: CUDA out of memory"), std::string::npos) << r.err;
}

// --runtime trainer-v2 for an MPIJob: a TrainJob on an MPI runtime, whose launcher pod
// (JobSet's replicated job `launcher`) speaks, not the sshd nodes.
TEST_F(RuntimeLauncher, TrainerV2RunsAnMpiJobAsATrainJobFollowingItsLauncher) {
  auto o = options(kMpiJob);
  o.runtime = "trainer-v2";
  o.metric_args = {"acc"};
  json created;
  auto r = run(o, [&](const std::string& job) {
    created = *kube_.job(job);
    kube_.add_jobset_pod(job + "-node-0-0-abcde", job, "node", 0);
    kube_.log(job + "-node-0-0-abcde", "sshd listening acc=0.1");
    kube_.add_jobset_pod(job + "-launcher-0-0-fghij", job, "launcher", 0);
    kube_.log(job + "-launcher-0-0-fghij", "rank 0 acc=0.8");
    kube_.end_pod(job + "-launcher-0-0-fghij", 0);
    kube_.set_condition(job, "Complete", "AllJobsCompleted", "jobset completed successfully");
  });
  ASSERT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(r.out, "rank 0 acc=0.8\n");
  EXPECT_EQ(created["kind"], "TrainJob");
  EXPECT_EQ(created["spec"]["runtimeRef"]["name"], "deepspeed-distributed");
  EXPECT_EQ(created["spec"]["trainer"]["numNodes"], 2);
  EXPECT_EQ(created["spec"]["trainer"]["args"], json::array({"python", "train.py"}));
  const auto& jobs = created["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"];
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["name"], "launcher");
  EXPECT_EQ(jobs[1]["name"], "node");
  EXPECT_EQ(jobs[1]["template"]["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
            "user-susan");
  EXPECT_EQ(kube_.count("DELETE /apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/wf-train-123"), 1);
  EXPECT_NE(read(dir_ / "out" / "metrics.json").find(R"("numberValue":0.8)"), std::string::npos);
}

// --- Trainer v2 as released (FakeKube::install_trainer: Trainer v2.3.0, JobSet v0.12.0) -
// A TrainJob has no Running condition: the launcher sees its nodes run in the JobSet's
// status that Trainer copies to the TrainJob (jobsStatus), or in the pods.

struct TrainerCase {
  const char* manifest;
  const char* what;
  std::size_t node_pods;  // pods of replicated job `node` (an MPI runtime runs its launcher as a node)
};

const TrainerCase kTrainerCases[] = {{kPyTorchJob, "pytorch_job", 4}, {kMpiJob, "mpi_job", 1}};

// The running timeout starts when the nodes run, not when the TrainJob is made, and when it
// fires the TrainJob is deleted (and with it the JobSet and its pods).
TEST_F(RuntimeLauncher, TrainJobRunningTimeoutStartsWhenItsNodesRunAndDeletesIt) {
  kube_.install_trainer();
  int n = 0;
  for (const auto& c : kTrainerCases) {
    auto o = options(c.manifest);
    o.step_name = "wf-rt-" + std::to_string(++n);
    o.runtime = "trainer-v2";
    o.pending_timeout = 20s;  // bounds the test if the nodes are never seen running
    o.running_timeout = 1s;
    auto r = run(o, [&](const std::string& job) {
      auto pods = kube_.jobset_pods(job, c.node_pods);
      ASSERT_EQ(pods.size(), c.node_pods) << c.what;
      std::this_thread::sleep_for(1500ms);  // pending: longer than the running timeout
      for (const auto& pod : pods) kube_.start_pod(pod);
      kube_.log(pods.front(), "node runs forever");
    });
    EXPECT_EQ(r.code, kExitTimeout) << c.what << r.err;
    EXPECT_NE(r.err.find("job " + o.step_name + " is Running"), std::string::npos) << c.what << r.err;
    EXPECT_NE(r.err.find("error: job " + o.step_name + " ran longer than 1s (--running-timeout)"),
              std::string::npos)
        << c.what << r.err;
    EXPECT_EQ(kube_.count("DELETE /apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/" + o.step_name), 1)
        << c.what;
    EXPECT_FALSE(kube_.job(o.step_name)) << c.what;
    EXPECT_FALSE(kube_.jobset(o.step_name)) << c.what;
    // 1.5 s pending, then 1 s running.
    EXPECT_GE(r.took, 2400ms) << c.what;
    EXPECT_LT(r.took, 10s) << c.what << r.err;
  }
}

// Once the nodes run, the pending timeout never stops the TrainJob; it runs to its end.
TEST_F(RuntimeLauncher, TrainJobIsNotStoppedByThePendingTimeoutOnceItsNodesRun) {
  kube_.install_trainer();
  int n = 0;
  for (const auto& c : kTrainerCases) {
    auto o = options(c.manifest);
    o.step_name = "wf-pt-" + std::to_string(++n);
    o.runtime = "trainer-v2";
    o.pending_timeout = 700ms;
    o.metric_args = {"acc"};
    bool mpi = c.manifest == kMpiJob;
    auto r = run(o, [&](const std::string& job) {
      auto pods = kube_.jobset_pods(job, c.node_pods);
      for (const auto& pod : pods) kube_.start_pod(pod);
      std::this_thread::sleep_for(1500ms);  // well past the pending timeout
      std::string leader = pods.front();
      if (mpi) {  // the launcher's Job starts once the nodes are ready
        auto all = kube_.jobset_pods(job, c.node_pods + 1);
        ASSERT_EQ(all.size(), c.node_pods + 1);
        leader = all.back();
        EXPECT_NE(leader.find(job + "-launcher-0-0-"), std::string::npos) << leader;
        kube_.start_pod(leader);
      }
      kube_.log(leader, "done acc=0.75");
      if (mpi) kube_.end_pod(leader, 0);
      else
        for (const auto& pod : pods) kube_.end_pod(pod, 0);
    });
    EXPECT_EQ(r.code, kExitSucceeded) << c.what << r.err;
    EXPECT_EQ(r.out, "done acc=0.75\n") << c.what;
    EXPECT_EQ(r.err.find("--pending-timeout"), std::string::npos) << c.what << r.err;
    EXPECT_NE(r.err.find("job " + o.step_name + " is Succeeded"), std::string::npos) << c.what << r.err;
  }
}

// An MPI runtime's nodes run sshd behind a readiness probe: the JobSet counts the node Job
// ready only once it passes, yet the pods already run, and that is not pending.
TEST_F(RuntimeLauncher, TrainJobWhosePodsRunButAreNotReadyIsNotPending) {
  kube_.install_trainer();
  auto o = options(kMpiJob);
  o.runtime = "trainer-v2";
  o.pending_timeout = 500ms;
  auto r = run(o, [&](const std::string& job) {
    auto pods = kube_.jobset_pods(job, 1);
    kube_.start_pod_unready(pods.front());
    std::this_thread::sleep_for(1200ms);
    kube_.start_pod(pods.front());  // the probe passes: the launcher's Job starts
    auto all = kube_.jobset_pods(job, 2);
    ASSERT_EQ(all.size(), 2u);
    kube_.start_pod(all.back());
    kube_.log(all.back(), "mpirun done");
    kube_.end_pod(all.back(), 0);
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_NE(r.err.find("job wf-train-123 is Running (its pods run)"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "mpirun done\n");
}

// A node that fails (PyTorch), or the MPI runtime's launcher Job, fails the JobSet and so
// the TrainJob: exit 1, with JobSet's reason and the failed pod's last lines.
TEST_F(RuntimeLauncher, TrainJobFailsWhenANodeOrTheMpiLauncherFails) {
  kube_.install_trainer();
  int n = 0;
  for (const auto& c : kTrainerCases) {
    auto o = options(c.manifest);
    o.step_name = "wf-fail-" + std::to_string(++n);
    o.runtime = "trainer-v2";
    o.pending_timeout = 20s;
    bool mpi = c.manifest == kMpiJob;
    auto r = run(o, [&](const std::string& job) {
      auto pods = kube_.jobset_pods(job, c.node_pods);
      for (const auto& pod : pods) kube_.start_pod(pod);
      std::string failing = pods.back();
      if (mpi) {
        failing = kube_.jobset_pods(job, c.node_pods + 1).back();
        kube_.start_pod(failing);
      }
      kube_.log(failing, "Traceback: NCCL error");
      kube_.end_pod(failing, 1);
    });
    std::string failed_job = o.step_name + (mpi ? "-launcher-0" : "-node-0");
    EXPECT_EQ(r.code, kExitFailed) << c.what << r.err;
    EXPECT_NE(r.err.find("error: job " + o.step_name + " failed: FailedJobs: jobset failed due to one or more "
                         "job failures (first failed job: " + failed_job + ")"),
              std::string::npos)
        << c.what << r.err;
    EXPECT_NE(r.err.find("  | Traceback: NCCL error"), std::string::npos) << c.what << r.err;
    EXPECT_EQ(kube_.count("DELETE /apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/" + o.step_name), 1);
  }
}

// Trainer's admission webhook refuses a TrainJob whose ClusterTrainingRuntime does not
// exist (403): the pre-check finds it twice over before any create (the runtime is absent;
// the dry run is refused, with the webhook's reason), and says no word about RBAC.
TEST_F(RuntimeLauncher, AnAdmissionWebhookRefusalIsNotCalledAnRbacProblem) {
  kube_.install_trainer();
  auto o = options(kMpiJob);
  o.runtime = "trainer-v2";
  o.trainer_runtime = "horovod-mpi";
  auto r = run(o);
  EXPECT_EQ(r.code, kExitApiError);
  // The server's message is cut to one line of at most 300 bytes (rules/preflight.hpp).
  EXPECT_EQ(r.err.substr(0, r.err.find("0xc000f3a2d0")),
            "pipec-launcher: pre-check: error [runtime.exists]: ClusterTrainingRuntime horovod-mpi does not "
            "exist (HTTP 404); fix: create it, or name one that exists\n"
            "pipec-launcher: pre-check: error [dryrun.admitted]: the API server refuses TrainJob in namespace "
            "team (HTTP 403): admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request: "
            "spec.RuntimeRef: Invalid value: v1alpha1.RuntimeRef{Name:\"horovod-mpi\", APIGroup:(*string)(");
  EXPECT_NE(r.err.find("; fix: fix what the message names before the run creates it\n"
                       "pipec-launcher: error: the pre-check found 2 problems with what job wf-train-123 "
                       "needs; nothing was created\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("rbac.yaml"), std::string::npos);
  EXPECT_FALSE(kube_.job("wf-train-123"));
  EXPECT_EQ(kube_.creates(), 0);
}

// An RBAC denial of the TrainJob (the Role lacks trainer.kubeflow.org) keeps the note.
TEST_F(RuntimeLauncher, AnRbacDenialOfATrainJobNamesTheRole) {
  kube_.create_status = 403;
  auto o = options(kPyTorchJob);
  o.runtime = "trainer-v2";
  auto r = run(o);
  EXPECT_EQ(r.code, kExitApiError);
  EXPECT_NE(r.err.find("pipec-launcher: error: forbidden: cannot create trainjobs.trainer.kubeflow.org in "
                       "namespace 'team': trainjobs.trainer.kubeflow.org is forbidden: User "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pipec-launcher: note: the step's service account needs the Role in "
                       "runtime/deploy/rbac.yaml (kubectl apply -n team -f runtime/deploy/rbac.yaml)\n"),
            std::string::npos)
      << r.err;
}

TEST_F(RuntimeLauncher, ARuntimeThatDoesNotFitStopsBeforeAnyRequest) {
  auto o = options(kTfJobWorkers);
  o.runtime = "trainer-v2";
  auto r = run(o);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_NE(r.err.find("--runtime 'trainer-v2'"), std::string::npos) << r.err;
  auto p = options(kPyTorchJob);
  p.runtime = "Trainer";
  EXPECT_EQ(run(p).code, kExitBadArguments);
  p.runtime = "trainer-v2";
  p.trainer_runtime = "Not A Name";
  EXPECT_EQ(run(p).code, kExitBadArguments);
  EXPECT_EQ(kube_.count("POST"), 0);
}

// train_job's own TrainJob (a manifest of kind TrainJob): created as written, with no
// --runtime, its runtimeRef named by a run-time --trainer-runtime; on a runtime with a
// `launcher` job (an MPI runtime) the launcher's pod speaks, though node 0's is newer.
TEST_F(RuntimeLauncher, ATrainJobOfTrainJobRunsAsWrittenOnItsRuntime) {
  const char* manifest = R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob",
    "metadata":{"name":"train"},"spec":{"runtimeRef":{"apiGroup":"trainer.kubeflow.org",
    "kind":"ClusterTrainingRuntime","name":"torch-distributed"},
    "trainer":{"numNodes":2,"command":["mpirun","python","t.py"]}}})";
  auto o = options(manifest);
  o.trainer_runtime = "deepspeed-distributed";
  o.metric_args = {"acc"};
  json created;
  auto r = run(o, [&](const std::string& job) {
    created = *kube_.job(job);
    kube_.add_jobset_pod(job + "-launcher-0-0-abcde", job, "launcher", 0);
    kube_.log(job + "-launcher-0-0-abcde", "launcher acc=0.9");
    kube_.add_jobset_pod(job + "-node-0-0-fghij", job, "node", 0);
    kube_.log(job + "-node-0-0-fghij", "node acc=0.1");
    kube_.end_pod(job + "-node-0-0-fghij", 0);
    kube_.end_pod(job + "-launcher-0-0-abcde", 0);
    kube_.set_condition(job, "Complete", "AllJobsCompleted", "jobset completed successfully");
  });
  ASSERT_EQ(r.code, kExitSucceeded) << r.err;
  EXPECT_EQ(r.out, "launcher acc=0.9\n");
  EXPECT_EQ(created["spec"]["runtimeRef"]["name"], "deepspeed-distributed");
  EXPECT_EQ(created["spec"]["trainer"], json::parse(R"({"numNodes":2,"command":["mpirun","python","t.py"]})"));
  EXPECT_EQ(created["metadata"]["labels"]["pipelines.kubeflow.org/step"], "wf-train-123");
  EXPECT_NE(read(dir_ / "out" / "metrics.json").find(R"("numberValue":0.9)"), std::string::npos);

  // A run-time runtime name that is not a Kubernetes name, or the operator: exit 2, nothing made.
  for (auto [runtime, name] : {std::pair{"", "Deep Speed"}, std::pair{"operator", ""}}) {
    auto bad = options(manifest);
    bad.runtime = runtime;
    bad.trainer_runtime = name;
    auto b = run(bad);
    EXPECT_EQ(b.code, kExitBadArguments) << b.err;
  }
  EXPECT_EQ(kube_.creates(), 1);  // the pre-check's dry run is no create
}

}  // namespace
}  // namespace pipec::runtime::testing
