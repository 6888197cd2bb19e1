// runtime/job_reasons: why a job waits and how its replicas ended, from pod and event
// lists as the API gives them; each reason printed once, and every output bounded.
#include "runtime/job_reasons.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pipec::runtime {
namespace {

using nlohmann::json;

constexpr char kType[] = "training.kubeflow.org/replica-type";
constexpr char kIndex[] = "training.kubeflow.org/replica-index";
constexpr char kUnschedulable[] = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.";

json pod(const std::string& name, const std::string& role, int index, const std::string& phase,
         json statuses = json::array()) {
  return {{"metadata", {{"name", name}, {"labels", {{kType, role}, {kIndex, std::to_string(index)}}}}},
          {"status", {{"phase", phase}, {"containerStatuses", std::move(statuses)}}}};
}

json waiting(const std::string& container, const std::string& reason, const std::string& message = {}) {
  return {{"name", container}, {"state", {{"waiting", {{"reason", reason}, {"message", message}}}}}};
}

json event(const std::string& kind, const std::string& name, const std::string& reason,
           const std::string& message, const std::string& type = "Warning") {
  return {{"involvedObject", {{"kind", kind}, {"name", name}}}, {"reason", reason}, {"message", message}, {"type", type}};
}

// Four workers, two of them unscheduled, and a launcher whose image cannot be pulled.
json gpu_job_pods() {
  return {{"items",
           {pod("j-launcher", "launcher", 0, "Pending", json::array({waiting("main", "ImagePullBackOff", "Back-off pulling image \"img:9\"")})),
            pod("j-worker-0", "worker", 0, "Pending"), pod("j-worker-1", "worker", 1, "Pending"),
            pod("j-worker-2", "worker", 2, "Running", json::array({{{"name", "main"}, {"state", {{"running", json::object()}}}}})),
            pod("j-worker-3", "worker", 3, "Pending", json::array({waiting("main", "ContainerCreating")}))}}};
}

TEST(JobReasons, PodsWaitingReasonsAndEventsGiveOneLineEachWithCountsPerRole) {
  auto pods = read_pods(gpu_job_pods(), kType, kIndex);
  ASSERT_EQ(pods.size(), 5u);
  EXPECT_EQ(pods[0].waiting.size(), 1u);
  EXPECT_TRUE(pods[4].waiting.empty());  // ContainerCreating is no reason
  json events = {{"items",
                  {event("Pod", "j-worker-0", "FailedScheduling", kUnschedulable),
                   event("Pod", "j-worker-1", "FailedScheduling", kUnschedulable),
                   event("Pod", "j-worker-1", "Scheduled", "assigned", "Normal"),
                   event("MPIJob", "j", "FailedCreatePod", "exceeded quota: gpu")}}};
  auto reasons = wait_reasons(pods, read_events(events, 100));
  ASSERT_EQ(reasons.size(), 3u);
  EXPECT_EQ(reasons[0].text, "1 of 1 launcher Pending: ImagePullBackOff: Back-off pulling image \"img:9\"");
  EXPECT_EQ(reasons[1].text, std::string("2 of 4 workers Pending: FailedScheduling: ") + kUnschedulable);
  EXPECT_EQ(reasons[2].text, "MPIJob j: FailedCreatePod: exceeded quota: gpu");
  EXPECT_EQ(reasons_summary(reasons),
            reasons[0].text + "; " + reasons[1].text + "; " + reasons[2].text);
}

TEST(JobReasons, EachReasonIsPrintedOnceAndTheirNumberIsBounded) {
  auto pods = read_pods(gpu_job_pods(), kType, kIndex);
  json storm = {{"items", json::array()}};
  for (int i = 0; i < 1000; ++i) storm["items"].push_back(event("Pod", "j-worker-0", "FailedScheduling", kUnschedulable));
  auto events = read_events(storm, 1000);
  EXPECT_EQ(events.size(), 1000u);
  ReasonLog log;
  auto first = log.fresh(wait_reasons(pods, events));
  ASSERT_EQ(first.size(), 2u);  // the launcher's image, the storm's one reason
  EXPECT_EQ(first[1], std::string("1 of 4 workers Pending: FailedScheduling: ") + kUnschedulable);
  // The same again, and with another count: nothing new.
  EXPECT_TRUE(log.fresh(wait_reasons(pods, events)).empty());
  events.push_back({"Pod", "j-worker-1", "FailedScheduling", kUnschedulable});
  EXPECT_TRUE(log.fresh(wait_reasons(pods, events)).empty());
  EXPECT_EQ(log.last(), first[1]);

  // Distinct reasons: at most kMaxReasonsShown in all, then one line that says so, once.
  std::vector<EventReport> many;
  for (int i = 0; i < 30; ++i) many.push_back({"MPIJob", "j", "FailedCreatePod", "quota " + std::to_string(i)});
  auto lines = log.fresh(wait_reasons({}, many));
  ASSERT_EQ(lines.size(), kMaxReasonsShown - 2 + 1);
  EXPECT_EQ(lines.back(), "more reasons are not shown (at most 10)");
  EXPECT_TRUE(log.fresh(wait_reasons({}, {{"MPIJob", "j", "Other", "x"}})).empty());

  // An answer is read to at most `max_items` events.
  EXPECT_EQ(read_events(storm, 100).size(), 100u);
  EXPECT_EQ(reasons_summary(wait_reasons({}, many))
                .rfind("MPIJob j: FailedCreatePod: quota 0; MPIJob j: FailedCreatePod: quota 1; ", 0),
            0u);
  EXPECT_NE(reasons_summary(wait_reasons({}, many)).find("; and 27 more"), std::string::npos);
}

TEST(JobReasons, MessagesBecomeOneBoundedLine) {
  EXPECT_EQ(one_line("a\n\tb  \r\nc ", 100), "a b c");
  EXPECT_EQ(one_line("x\xff" "y", 100), "x?y");
  EXPECT_EQ(one_line("bidi \xe2\x80\xae" "txt", 100), "bidi ?txt");
  // Cut at a character, never inside one.
  EXPECT_EQ(one_line("ab\xc3\xa9" "cd", 3), "ab...");
  EXPECT_EQ(one_line("ab\xc3\xa9" "cd", 4), "ab\xc3\xa9...");
  std::string huge(100000, 'm');
  json events = {{"items", {event("Pod", "p", "FailedMount", huge + "\n" + huge)}}};
  auto read = read_events(events, 10);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].message.size(), kMaxReasonMessageBytes + 3);
}

TEST(JobReasons, TerminatedReplicasAreNamedOomKilledFirstAndBounded) {
  json oom = {{"name", "pytorch"}, {"restartCount", 0},
              {"state", {{"terminated", {{"exitCode", 137}, {"reason", "OOMKilled"}}}}}};
  json restarted = {{"name", "pytorch"}, {"restartCount", 2}, {"state", {{"running", json::object()}}},
                    {"lastState", {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}}};
  json fine = {{"name", "pytorch"}, {"state", {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}}}};
  json list = {{"items", {pod("j-master-0", "master", 0, "Running", json::array({restarted})), pod("j-worker-0", "worker", 0, "Succeeded", json::array({fine})),
                          pod("j-worker-1", "worker", 1, "Failed", json::array({oom}))}}};
  auto lines = termination_lines(read_pods(list, kType, kIndex));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "worker 1 (pod j-worker-1): container pytorch terminated: OOMKilled (exit code 137)");
  EXPECT_EQ(lines[1], "master 0 (pod j-master-0): container pytorch terminated: Error (exit code 1), then restarted (2 restarts)");

  json many = {{"items", json::array()}};
  for (int i = 0; i < 8; ++i) many["items"].push_back(pod("j-worker-" + std::to_string(i), "worker", i, "Failed", json::array({oom})));
  lines = termination_lines(read_pods(many, kType, kIndex));
  ASSERT_EQ(lines.size(), kMaxTerminationsShown + 1);
  EXPECT_EQ(lines.back(), "and 3 more containers terminated with an error");
}

TEST(JobReasons, WhatIsNotAListReadsAsNothing) {
  EXPECT_TRUE(read_pods(json("x"), kType, kIndex).empty());
  EXPECT_TRUE(read_events(json::object(), 10).empty());
  json odd = {{"items", {1, json::object(), {{"status", {{"containerStatuses", "no"}}}}}}};
  auto pods = read_pods(odd, kType, kIndex);
  EXPECT_EQ(pods.size(), 2u);
  EXPECT_TRUE(wait_reasons(pods, read_events(odd, 10)).empty());
}

}  // namespace
}  // namespace pipec::runtime
