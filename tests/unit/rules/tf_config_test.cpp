#include "rules/tf_config.hpp"

#include "rules/names.hpp"

#include <gtest/gtest.h>

namespace pipec::rules {
namespace {

using nlohmann::json;

json tfjob(json specs) { return {{"kind", "TFJob"}, {"spec", {{"tfReplicaSpecs", specs}}}}; }

TEST(TfConfig, ChiefOrMasterFormAndEveryRole) {
  json job = tfjob({{"Chief", {{"replicas", 1}}}, {"Worker", {{"replicas", 2}}}, {"PS", json::object()},
                    {"Evaluator", {{"replicas", 1}}}});
  auto replicas = tf_replicas(job, "j");
  ASSERT_EQ(replicas.size(), 5u);
  EXPECT_EQ(replicas[0].role, "chief");
  EXPECT_EQ(replicas[0].name, "j-chief-0");
  EXPECT_EQ(replicas[2].name, "j-worker-1");
  EXPECT_EQ(replicas[3].role, "ps");
  auto master = tf_replicas(job, "j", true);
  EXPECT_EQ(master[0].role, "master");
  EXPECT_EQ(master[0].name, "j-chief-0");  // the pod keeps its name
  std::vector<std::string> addresses = {"a:1", "b:2", "c:3", "d:4", "e:5"};
  json cluster = tf_cluster(master, addresses);
  EXPECT_EQ(cluster, json::parse(R"({"master":["a:1"],"worker":["b:2","c:3"],"ps":["d:4"]})"));
  EXPECT_EQ(tf_config(cluster, master[2]),
            R"({"cluster":{"master":["a:1"],"ps":["d:4"],"worker":["b:2","c:3"]},"environment":"cloud","task":{"index":1,"type":"worker"}})");
}

TEST(TfConfig, AMasterReplicaTypeIsMaster) {
  auto replicas = tf_replicas(tfjob({{"Master", {{"replicas", 1}}}, {"Worker", {{"replicas", 1}}}}), "j");
  ASSERT_EQ(replicas.size(), 2u);
  EXPECT_EQ(replicas[0].type, "Master");
  EXPECT_EQ(replicas[0].role, "master");
  EXPECT_TRUE(tf_replicas(json::array(), "j").empty());
}

TEST(JobName, OneRuleWithAHashWhenCut) {
  EXPECT_EQ(job_name_for_step("My_Step.1"), "my-step-1");
  EXPECT_EQ(job_name_for_step("123"), "job");
  std::string long_name(60, 'a');
  std::string cut = job_name_for_step(long_name);
  EXPECT_EQ(cut.size(), kMaxJobName);
  EXPECT_EQ(cut.substr(0, 41), std::string(41, 'a'));
  EXPECT_EQ(cut[41], '-');
  EXPECT_NE(cut, job_name_for_step(long_name + "b"));
  EXPECT_EQ(job_name_for_step(long_name, kMaxPodsJobName).size(), kMaxPodsJobName);
  EXPECT_EQ(job_name_for_step(std::string(50, 'b')), std::string(50, 'b'));  // fits: not cut
}

}  // namespace
}  // namespace pipec::rules
