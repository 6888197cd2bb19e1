// Re-creating a failed job (docs/runtime.md "Retries"): a job whose replica was OOMKilled
// is created again with memory x factor per attempt, never above the maximum, each attempt
// listed; a failure --retry-on does not name is not retried; bad retry options exit 2.
#include "runtime/launcher.hpp"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/runtime/launcher_fixture.hpp"

namespace pipec::runtime::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr char kPyTorchWithMemory[] = R"({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
  "metadata": {"name": "x"}, "spec": {"pytorchReplicaSpecs": {
    "Master": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "i",
      "resources": {"limits": {"memory": "1Gi", "cpu": "2"}, "requests": {"memory": "1Gi"}}}]}}},
    "Worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "i",
      "resources": {"limits": {"memory": "1Gi"}}}]}}}}}})";

// Each attempt: once the launcher has created the job for it, the job as created is kept,
// its worker ends with `exit_code` (`reason`) and the job fails.
std::vector<json> fail_each_attempt(FakeKube& kube, int attempts, int exit_code, const std::string& reason) {
  std::vector<json> created;
  for (int n = 0; n < attempts; ++n) {
    for (int i = 0; i < 500 && kube.creates() <= n; ++i) std::this_thread::sleep_for(10ms);
    auto name = kube.wait_for_job(5s);
    if (name.empty() || kube.creates() <= n) break;
    created.push_back(*kube.job(name));
    const std::string pod = name + "-worker-0-try" + std::to_string(n);
    kube.add_pod(pod, name, "worker", 0, "pytorch");
    kube.end_pod(pod, exit_code, reason);
    kube.set_condition(name, "Failed", "PyTorchJobFailed", "job has failed because 1 Worker replica(s) failed");
  }
  return created;
}

TEST_F(RuntimeLauncher, AnOomKilledReplicaRecreatesTheJobWithGrowingMemoryUpToTheMaximum) {
  auto o = options(kPyTorchWithMemory);
  o.retry_limit = "3";
  o.retry_on = "oom";
  o.memory_factor = "1.5";
  o.memory_max = "2Gi";
  o.log_grace = 100ms;  // no leader pod: its log never ends
  std::vector<json> created;
  auto r = launch(o, [&] { created = fail_each_attempt(kube_, 4, 137, "OOMKilled"); }, nullptr);
  EXPECT_EQ(r.code, kExitFailed) << r.err;
  EXPECT_EQ(kube_.creates(), 4) << r.err;
  ASSERT_EQ(created.size(), 4u) << r.err;
  const std::vector<std::string> memory = {"1Gi", "1536Mi", "2Gi", "2Gi"};  // 2304Mi held at 2Gi
  for (std::size_t i = 0; i < created.size(); ++i) {
    const json& roles = created[i]["spec"]["pytorchReplicaSpecs"];
    const json& master = roles["Master"]["template"]["spec"]["containers"][0]["resources"];
    EXPECT_EQ(master["limits"]["memory"], memory[i]) << i;
    EXPECT_EQ(master["requests"]["memory"], memory[i]) << i;
    EXPECT_EQ(master["limits"]["cpu"], "2") << i;
    EXPECT_EQ(roles["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"], memory[i]) << i;
  }
  const std::string oom = "failed: replica worker 0: OOMKilled (exit code 137)";
  for (int n = 1; n <= 3; ++n)
    EXPECT_NE(r.err.find("pipec-launcher: retry " + std::to_string(n) + " of 3: job wf-train-123 " + oom +
                         "; creating it again with memory " + memory[n] + "\n"),
              std::string::npos)
        << n << "\n" << r.err;
  EXPECT_NE(r.err.find("pipec-launcher: attempts:\n"
                       "pipec-launcher:   1: " + oom + " (memory 1Gi)\n"
                       "pipec-launcher:   2: " + oom + " (memory 1536Mi)\n"
                       "pipec-launcher:   3: " + oom + " (memory 2Gi)\n"
                       "pipec-launcher:   4: " + oom + " (memory 2Gi)\n"),
            std::string::npos)
      << r.err;
  const std::string last = "pipec-launcher:   4: " + oom + " (memory 2Gi)\n";  // the last line
  EXPECT_EQ(r.err.substr(r.err.size() - std::min(r.err.size(), last.size())), last) << r.err;
}

TEST_F(RuntimeLauncher, AFailureRetryOnDoesNotNameIsNotRetried) {
  auto o = options(kPyTorchWithMemory);
  o.retry_limit = "3";
  o.retry_on = "oom,exit:75";
  o.memory_factor = "2";
  o.log_grace = 100ms;
  auto r = launch(o, [&] { (void)fail_each_attempt(kube_, 1, 1, ""); }, nullptr);
  EXPECT_EQ(r.code, kExitFailed) << r.err;
  EXPECT_EQ(kube_.creates(), 1);
  EXPECT_EQ(r.err.find("retry "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("attempts:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("replica worker 0 (pod wf-train-123-worker-0-try0): container pytorch terminated: Error "
                       "(exit code 1)"),
            std::string::npos)
      << r.err;
}

TEST_F(RuntimeLauncher, RetryOptionsAreCheckedBeforeAnyRequest) {
  struct Case {
    std::string LauncherOptions::*field;
    const char* value;
    const char* says;
  };
  const Case cases[] = {
      {&LauncherOptions::retry_limit, "x", "--retry-limit 'x': expected a whole number from 0 to 20"},
      {&LauncherOptions::retry_limit, "21", "--retry-limit '21': expected a whole number from 0 to 20"},
      {&LauncherOptions::retry_on, "oom,nope", "--retry-on 'oom,nope': "},
      {&LauncherOptions::memory_factor, "1", "--memory-factor '1': expected a number above 1 and at most 10"},
      {&LauncherOptions::memory_max, "16Gi", "--memory-max '16Gi': expected a memory quantity (e.g. 16Gi), with "
                                              "--memory-factor"}};
  for (const auto& c : cases) {
    auto o = options(kPyTorchWithMemory);
    o.*c.field = c.value;
    auto r = launch(o, {}, nullptr);
    EXPECT_EQ(r.code, kExitBadArguments) << c.value;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  EXPECT_TRUE(kube_.requests().empty());
}

}  // namespace
}  // namespace pipec::runtime::testing
