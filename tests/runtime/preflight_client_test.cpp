// Preflight's requests against the API stand-in: each seeded defect found once, a 403 an
// unknown, and nothing sent but GETs, discovery, access reviews and dryRun=All creates.
#include "kube/preflight.hpp"

#include <gtest/gtest.h>

#include "tests/runtime/fake_kube.hpp"

namespace pipec::runtime {
using kube::KubeClient;
using kube::KubeConfig;
using kube::PreflightLimits;
using kube::PreflightQuestion;
using kube::ask_preflight;
namespace {

using nlohmann::json;
using pf_verdict = rules::preflight::Verdict;
using Q = PreflightQuestion;

// A cluster with what the questions below need, each of them present and well.
void clean_cluster(testing::FakeKube& kube) {
  kube.put_object(
      "/api/v1/namespaces/team/persistentvolumeclaims/data",
      {{"spec", {{"accessModes", {"ReadWriteMany"}}}}, {"status", {{"phase", "Bound"}}}});
  kube.put_object(
      "/api/v1/namespaces/team/secrets/s3",
      {{"data", {{"AWS_ACCESS_KEY_ID", "aWQ="}, {"AWS_SECRET_ACCESS_KEY", "c2VjcmV0"}}}});
  kube.put_object("/api/v1/namespaces/team/configmaps/settings", {{"data", {{"lr", "0.1"}}}});
  kube.put_object("/api/v1/namespaces/team/secrets/regcred",
                  {{"data", {{".dockerconfigjson", "e30="}}}});
  kube.put_object("/api/v1/namespaces/team/serviceaccounts/runner",
                  {{"metadata", {{"name", "runner"}}}});
  kube.put_object("/apis/scheduling.k8s.io/v1/priorityclasses/high", {{"value", 1000}});
  kube.put_object("/api/v1/namespaces/team/resourcequotas/gpus",
                  {{"metadata", {{"name", "gpus"}}},
                   {"status",
                    {{"hard", {{"requests.nvidia.com/gpu", "8"}}},
                     {"used", {{"requests.nvidia.com/gpu", "2"}}}}}});
  kube.serve_api("kubeflow.org/v2beta1", {"mpijobs"});
  kube.serve_api("trainer.kubeflow.org/v1alpha1", {"trainjobs", "clustertrainingruntimes"});
  kube.install_trainer({{"torch-distributed", "torch"}});
  kube.add_role("system:serviceaccount:team:runner", "trainer.kubeflow.org", {"trainjobs"},
                {"create", "get"});
  kube.add_role("system:serviceaccount:team:runner", "kubeflow.org", {"mpijobs"}, {"*"});
}

std::vector<Q> questions() {
  std::vector<Q> q(12);
  q[0] = {Q::What::claim, "data", {}, 4};
  q[1] = {Q::What::secret, "s3", {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}};
  q[2] = {Q::What::config_map, "settings", {"lr"}};
  q[3] = {Q::What::pull_secret, "regcred"};
  q[4] = {Q::What::service_account, "runner"};
  q[5] = {Q::What::priority_class, "high"};
  q[6] = {Q::What::runtime, "torch-distributed", {}, 1, "torch"};
  q[7] = {Q::What::served, "MPIJob"};
  q[8] = {Q::What::access, "TrainJob", {}, 1, {}, "runner"};
  q[9] = {Q::What::quota, "", {}, 1, {}, {}, "create", {{"requests.nvidia.com/gpu", 4}}};
  q[10] = {Q::What::dry_run, "TrainJob"};
  q[10].manifest = json{{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
                        {"kind", "TrainJob"},
                        {"metadata", {{"name", "train"}}},
                        {"spec", {{"runtimeRef", {{"name", "torch-distributed"}}}}}}
                       .dump();
  q[11] = {Q::What::served, "TrainJob"};
  return q;
}

KubeClient client_of(const testing::FakeKube& kube) {
  KubeConfig config;
  config.server = kube.url();
  return KubeClient(config);
}

// Only reads reach the server: GETs, the review POSTs and dryRun=All POSTs.
void expect_reads_only(testing::FakeKube& kube) {
  for (const auto& request : kube.requests()) {
    const bool read =
        request.rfind("GET ", 0) == 0 ||
        (request.rfind("POST ", 0) == 0 && (request.find("accessreviews") != std::string::npos ||
                                            request.find("?dryRun=All") != std::string::npos));
    EXPECT_TRUE(read) << request;
  }
}

TEST(RuntimePreflight, ACleanClusterHasNoFinding) {
  testing::FakeKube kube;
  clean_cluster(kube);
  auto client = client_of(kube);
  const auto found = ask_preflight(client, "team", questions());
  ASSERT_EQ(found.size(), 12U);
  for (std::size_t i = 0; i < found.size(); ++i)
    for (const auto& f : found[i]) EXPECT_EQ(f.verdict, pf_verdict::ok) << i << ": " << f.message;
  expect_reads_only(kube);
  EXPECT_FALSE(kube.job("train"));  // the dry run created nothing
}

TEST(RuntimePreflight, EachSeededDefectIsFoundOnceAtItsQuestion) {
  testing::FakeKube kube;
  clean_cluster(kube);
  kube.put_object(
      "/api/v1/namespaces/team/persistentvolumeclaims/data",
      {{"spec", {{"accessModes", {"ReadWriteOnce"}}}}, {"status", {{"phase", "Bound"}}}});
  kube.put_object("/api/v1/nodes/node-a", {{"metadata", {{"name", "node-a"}}}});
  kube.put_object("/api/v1/nodes/node-b", {{"metadata", {{"name", "node-b"}}}});
  kube.put_object("/api/v1/namespaces/team/secrets/s3",
                  {{"data", {{"AWS_ACCESS_KEY_ID", "aWQ="}}}});
  kube.put_object("/api/v1/namespaces/team/resourcequotas/gpus",
                  {{"metadata", {{"name", "gpus"}}},
                   {"status",
                    {{"hard", {{"requests.nvidia.com/gpu", "8"}}},
                     {"used", {{"requests.nvidia.com/gpu", "6"}}}}}});
  auto q = questions();
  q[2].name = "absent";
  q[3].name = "no-regcred";
  q[4].name = "nobody";
  q[5].name = "urgent";
  q[6].name = "deepspeed";
  q[7].name = "TFJob";
  q[8].name = "MPIJob";
  q[8].subject = "intruder";
  q[10].manifest = json{{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
                        {"kind", "TrainJob"},
                        {"metadata", {{"name", "train"}}},
                        {"spec", {{"runtimeRef", {{"name", "deepspeed"}}}}}}
                       .dump();
  auto client = client_of(kube);
  const auto found = ask_preflight(client, "team", q);
  const char* expected[] = {
      "pvc.access_mode",       "secret.key",           "configmap.exists", "pullsecret.exists",
      "serviceaccount.exists", "priorityclass.exists", "runtime.exists",   "api.served",
      "access.create",         "quota.headroom",       "dryrun.admitted"};
  for (std::size_t i = 0; i < 11; ++i) {
    int problems = 0;
    for (const auto& f : found[i])
      if (f.verdict != pf_verdict::ok) {
        ++problems;
        EXPECT_EQ(f.check, expected[i]) << f.message;
      }
    EXPECT_EQ(problems, 1) << "question " << i;
  }
  for (const auto& f : found[11]) EXPECT_EQ(f.verdict, pf_verdict::ok) << f.message;
  EXPECT_NE(found[10][0].message.find("admission webhook"), std::string::npos);
  expect_reads_only(kube);
  EXPECT_FALSE(kube.job("train"));
}

TEST(RuntimePreflight, AForbiddenReadIsUnknownNeverOk) {
  testing::FakeKube kube;
  clean_cluster(kube);
  kube.reads_403 = 1000;
  auto q = questions();
  q.resize(10);
  q.erase(q.begin() + 7);  // discovery answers everyone
  auto client = client_of(kube);
  PreflightLimits one_at_a_time;
  one_at_a_time.concurrency = 1;
  const auto found = ask_preflight(client, "team", q, one_at_a_time);
  for (const auto& findings : found) {
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].verdict, pf_verdict::unknown) << findings[0].check;
    EXPECT_EQ(findings[0].http_status, 403) << findings[0].check;
    EXPECT_TRUE(rules::preflight::fails(findings, true));
    EXPECT_FALSE(rules::preflight::fails(findings, false));
  }
}

TEST(RuntimePreflight, ANameThatIsNoKubernetesNameIsNeverSent) {
  testing::FakeKube kube;
  auto client = client_of(kube);
  const auto found = ask_preflight(client, "team", {{Q::What::secret, "../../nodes"}});
  ASSERT_EQ(found[0].size(), 1U);
  EXPECT_EQ(found[0][0].verdict, pf_verdict::error);
  EXPECT_TRUE(kube.requests().empty());
}

}  // namespace
}  // namespace pipec::runtime
