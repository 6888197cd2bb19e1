// Why a job waits and how it failed (docs/runtime.md, "Why a job waits"): the pods' waiting
// reasons and the Warning events of the job and its pods, each printed once within a poll
// interval, bounded however many there are; the pending timeout's last line naming them;
// events the Role may not list; an OOMKilled replica named in the failure report.
#include "runtime/launcher.hpp"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/job_reasons.hpp"
#include "tests/runtime/launcher_fixture.hpp"

namespace pipec::runtime::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kUnschedulable[] =
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No "
    "preemption victims found for incoming pod.";
constexpr char kPodList[] = "GET /api/v1/namespaces/team/pods?labelSelector=training.kubeflow.org/job-name=";

std::string last_line(const std::string& text) {
  auto end = text.size() - (!text.empty() && text.back() == '\n');
  auto start = text.rfind('\n', end - 1);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1));
}

class RuntimeLauncherReasons : public RuntimeLauncher {
 protected:
  // The reasons thread's lists of the job's pods (the log thread's name a replica type too).
  int passes(const std::string& job) {
    auto all = kube_.requests();
    return static_cast<int>(std::count(all.begin(), all.end(), kPodList + job));
  }
  // An MPIJob's launcher whose image cannot be pulled and two workers no node can take,
  // each with a storm of 1,000 identical FailedScheduling events. Set up while every pod
  // list fails, so that no pass sees half of it.
  void stuck_gpu_job(const std::string& job) {
    kube_.pods_500s = 1'000'000;
    kube_.add_pod(job + "-launcher", job, "launcher", 0);
    kube_.wait_pod(job + "-launcher", "ImagePullBackOff", "Back-off pulling image \"registry/train:9\"");
    kube_.add_event("Pod", job + "-launcher", "Normal", "BackOff", "nothing wrong here");
    for (int i = 0; i < 2; ++i) {
      auto worker = job + "-worker-" + std::to_string(i);
      kube_.add_pod(worker, job, "worker", i);
      kube_.wait_pod(worker, "ContainerCreating", "");
      kube_.add_event("Pod", worker, "Warning", "FailedScheduling", kUnschedulable, 1000);
    }
    kube_.pods_500s = 0;
  }
};

TEST_F(RuntimeLauncherReasons, AWaitingJobSaysEachReasonOnceWithinAPollInterval) {
  auto o = options(kMpiJob);
  o.pending_timeout = 20s;  // bounds the test
  int events_when_running = -1;
  auto r = run(o, [&](const std::string& job) {
    stuck_gpu_job(job);
    // One whole pass after the reasons appeared (a pass lists the pods, reads the events,
    // prints, then waits a poll interval before the next list): the lines are out.
    int before = passes(job);
    wait_for([&] { return passes(job) >= before + 2; });
    int printed_by = passes(job);
    // Three more passes print nothing more (waited for, not timed: a loaded machine or a
    // sanitizer build makes a pass slower than the 50 ms poll interval).
    wait_for([&] { return passes(job) >= printed_by + 3; });
    EXPECT_GE(passes(job), printed_by + 3);
    kube_.start_pod(job + "-launcher");
    kube_.set_condition(job, "Running");
    std::this_thread::sleep_for(200ms);  // a pass under way ends
    events_when_running = kube_.count("GET /api/v1/namespaces/team/events");
    std::this_thread::sleep_for(200ms);
    kube_.end_pod(job + "-launcher", 0);
    kube_.set_condition(job, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  const std::string image =
      "pipec-launcher: waiting: 1 of 1 launcher Pending: ImagePullBackOff: Back-off pulling image "
      "\"registry/train:9\"\n";
  const std::string gpus =
      std::string("pipec-launcher: waiting: 2 of 2 workers Pending: FailedScheduling: ") + kUnschedulable + "\n";
  EXPECT_EQ(occurrences(r.err, image), 1u) << r.err;
  EXPECT_EQ(occurrences(r.err, gpus), 1u) << r.err;
  EXPECT_EQ(occurrences(r.err, "waiting: "), 2u) << r.err;  // not the Normal event, nothing twice
  EXPECT_LT(r.err.find(image), r.err.find("job wf-train-123 is Running")) << r.err;
  // Events are asked for as the API takes them: the job's, and each waiting pod's, Warning
  // only, a bounded page.
  EXPECT_GE(kube_.count("GET /api/v1/namespaces/team/events?fieldSelector=involvedObject.name=wf-train-123,"
                        "type=Warning&limit=100"),
            1);
  EXPECT_GE(kube_.count("GET /api/v1/namespaces/team/events?fieldSelector=involvedObject.kind=Pod,"
                        "involvedObject.name=wf-train-123-worker-1,type=Warning&limit=100"),
            1);
  // Once the job runs, its reasons are not read again.
  EXPECT_EQ(kube_.count("GET /api/v1/namespaces/team/events"), events_when_running);
}

TEST_F(RuntimeLauncherReasons, ThePendingTimeoutNamesTheReasonOnItsLastLine) {
  auto o = options(kMpiJob);
  o.pending_timeout = 700ms;
  o.log_grace = 300ms;       // the launcher pod never starts: its log never ends
  o.metric_args = {"loss"};  // its warning comes before the last line too
  auto r = run(o, [&](const std::string& job) { stuck_gpu_job(job); });
  EXPECT_EQ(r.code, kExitTimeout) << r.err;
  EXPECT_EQ(last_line(r.err),
            std::string("pipec-launcher: error: job wf-train-123 did not start running within 700ms "
                        "(--pending-timeout): 1 of 1 launcher Pending: ImagePullBackOff: Back-off pulling image "
                        "\"registry/train:9\"; 2 of 2 workers Pending: FailedScheduling: ") +
                kUnschedulable)
      << r.err;
  EXPECT_EQ(kube_.count("DELETE "), 1);
  EXPECT_LT(r.err.find("deleted job wf-train-123"), r.err.find("did not start running")) << r.err;
}

// Runtime "pods": no job object, its own pods' reasons.
TEST_F(RuntimeLauncherReasons, RuntimePodsNamesItsPodsReasonsToo) {
  auto o = options(kTfJobWorkers);
  o.runtime = "pods";
  o.pending_timeout = 600ms;
  std::thread driver([&] {
    wait_for([&] { return kube_.pod_object("wf-train-123-worker-1").has_value(); });
    kube_.wait_pod("wf-train-123-worker-1", "CreateContainerConfigError", "secret \"s3-credentials\" not found");
  });
  auto r = run(o);
  driver.join();
  EXPECT_EQ(r.code, kExitTimeout) << r.err;
  const std::string reason =
      "1 of 2 workers Pending: CreateContainerConfigError: secret \"s3-credentials\" not found";
  EXPECT_EQ(occurrences(r.err, "pipec-launcher: waiting: " + reason + "\n"), 1u) << r.err;
  EXPECT_EQ(last_line(r.err), "pipec-launcher: error: job wf-train-123 did not start running within 600ms "
                              "(--pending-timeout): " + reason)
      << r.err;
  EXPECT_EQ(kube_.count("GET /api/v1/namespaces/team/events?fieldSelector=involvedObject.name=wf-train-123,"), 0);
}

TEST_F(RuntimeLauncherReasons, AStormOfDistinctReasonsIsBoundedInNumberAndLength) {
  auto o = options(kMpiJob);
  o.pending_timeout = 600ms;
  auto r = run(o, [&](const std::string& job) {
    // Many distinct messages, each far too long for a line, then 1,000 of one more: the
    // first page (100 events) holds 31 distinct reasons.
    std::string tail(5000, 'x');
    for (int i = 0; i < 30; ++i)
      kube_.add_event("MPIJob", job, "Warning", "FailedCreatePod", "quota " + std::to_string(i) + " " + tail);
    kube_.add_event("MPIJob", job, "Warning", "FailedCreatePod", "quota exceeded " + tail, 1000);
  });
  EXPECT_EQ(r.code, kExitTimeout) << r.err;
  EXPECT_EQ(occurrences(r.err, "pipec-launcher: waiting: "), kMaxReasonsShown + 1) << r.err;
  EXPECT_EQ(occurrences(r.err, "waiting: more reasons are not shown (at most 10)\n"), 1u) << r.err;
  std::size_t longest = 0;
  for (std::size_t at = 0, nl; (nl = r.err.find('\n', at)) != std::string::npos; at = nl + 1)
    longest = std::max(longest, nl - at);
  EXPECT_LT(longest, 4 * (kMaxReasonMessageBytes + 100)) << r.err;  // the last line names three
}

// A Role without events: said once, why, and the job runs to its end as before.
TEST_F(RuntimeLauncherReasons, ForbiddenEventsAreSaidOnceAndAreNotFatal) {
  kube_.events_403 = 1'000'000;
  auto o = options(kMpiJob);
  o.log_grace = 300ms;  // the launcher pod never starts: its log never ends
  auto r = run(o, [&](const std::string& job) {
    stuck_gpu_job(job);
    int before = passes(job);
    wait_for([&] { return passes(job) >= before + 3; });
    kube_.set_condition(job, "Running");
    kube_.set_condition(job, "Succeeded");
  });
  EXPECT_EQ(r.code, kExitSucceeded) << r.err;
  const std::string warning =
      "pipec-launcher: warning: the events of job wf-train-123 cannot be read, so why it waits may not be "
      "said: cannot list events in namespace 'team': events is forbidden: User "
      "\"system:serviceaccount:team:pipeline-runner\" cannot list resource \"events\" in API group \"\" in the "
      "namespace \"team\" (403); the Role in runtime/deploy/rbac.yaml grants it\n";
  EXPECT_EQ(occurrences(r.err, warning), 1u) << r.err;
  EXPECT_EQ(kube_.count("GET /api/v1/namespaces/team/events"), 1);  // not asked again
  // The pods still say what they can.
  EXPECT_EQ(occurrences(r.err, "waiting: 1 of 1 launcher Pending: ImagePullBackOff"), 1u) << r.err;
  EXPECT_EQ(occurrences(r.err, "FailedScheduling"), 0u) << r.err;
}

TEST_F(RuntimeLauncherReasons, AnOomKilledReplicaIsNamedInTheFailureReport) {
  auto r = run(options(kMpiJob), [&](const std::string& job) {
    kube_.add_pod(job + "-launcher", job, "launcher", 0);
    kube_.add_pod(job + "-worker-0", job, "worker", 0);
    kube_.add_pod(job + "-worker-1", job, "worker", 1);
    kube_.set_condition(job, "Running");
    kube_.log(job + "-launcher", "mpirun: a process was killed");
    kube_.end_pod(job + "-worker-1", 137, "OOMKilled");
    kube_.end_pod(job + "-launcher", 1);
    kube_.set_condition(job, "Failed", "MPIJobFailed", "launcher failed");
  });
  EXPECT_EQ(r.code, kExitFailed) << r.err;
  EXPECT_NE(r.err.find("pipec-launcher: error: job wf-train-123 failed: MPIJobFailed: launcher failed\n"
                       "pipec-launcher: last lines of pod wf-train-123-launcher (main):\n"
                       "  | mpirun: a process was killed\n"
                       "pipec-launcher: replica worker 1 (pod wf-train-123-worker-1): container main terminated: "
                       "OOMKilled (exit code 137)\n"
                       "pipec-launcher: replica launcher 0 (pod wf-train-123-launcher): container main terminated: "
                       "Error (exit code 1)\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace pipec::runtime::testing
