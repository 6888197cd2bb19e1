// compiler/preflight: what a checked pipeline needs of the cluster, read off the IR with the
// place that named each object. tests/preflight asks a cluster stand-in about these; this
// checks the collection alone.
#include "compiler/preflight/needs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/base/source_manager.hpp"
#include "tests/unit/syntax/test_support.hpp"

namespace pipec::preflight {
namespace {

using What = Need::What;

struct Collected {
  std::vector<Need> needs;
  std::string source;
};

Collected collect(const std::string& text, NeedsOptions options = {}) {
  auto out = testing::check_string(text);
  EXPECT_TRUE(out.pipeline) << out.diagnostics;
  if (!out.pipeline) return {};
  return {collect_needs(*out.pipeline, options), text};
}

const Need* find(const Collected& c, What what, const std::string& name) {
  for (const Need& n : c.needs)
    if (n.what == what && n.name == name) return &n;
  return nullptr;
}

// The text of the source that a need's range covers.
std::string named_by(const Collected& c, const Need& n) {
  return c.source.substr(n.range.begin, n.range.end - n.range.begin);
}

const char* const kOp =
    "op fetch() {\n"
    "  image \"python:3.11-slim\"\n"
    "  command [\"python3\", \"-c\", \"print(1)\"]\n"
    "  secret_env {TOKEN: \"api:token\", PASSWORD: \"api:password\"}\n"
    "  volumes {\"/data\": \"pvc:data-claim\", \"/cfg\": \"configmap:settings\"}\n"
    "}\n";

TEST(Needs, EachObjectOfAContainerStepWithThePlaceThatNamedIt) {
  Collected c = collect(std::string(kOp) + "pipeline p {\n  step f = fetch()\n}\n");
  const Need* claim = find(c, What::claim, "data-claim");
  ASSERT_NE(claim, nullptr);
  EXPECT_EQ(claim->pods_at_once, 1);
  EXPECT_EQ(claim->step, "f");
  EXPECT_NE(named_by(c, *claim).find("data-claim"), std::string::npos) << named_by(c, *claim);
  EXPECT_TRUE(claim->skipped.empty());

  // One need per key, each at its own entry, so a missing key is reported where it is named.
  std::vector<std::string> keys;
  for (const Need& n : c.needs)
    if (n.what == What::secret && n.name == "api") {
      ASSERT_EQ(n.keys.size(), 1u);
      keys.push_back(n.keys[0]);
      EXPECT_NE(named_by(c, n).find(n.keys[0]), std::string::npos) << named_by(c, n);
    }
  EXPECT_EQ(keys, (std::vector<std::string>{"token", "password"}));

  EXPECT_NE(find(c, What::config_map, "settings"), nullptr);
  const Need* image = find(c, What::image, "python:3.11-slim");
  ASSERT_NE(image, nullptr);
  EXPECT_NE(named_by(c, *image).find("python:3.11-slim"), std::string::npos);
}

TEST(Needs, TheServiceAccountIsTheOptionsOrTheDefault) {
  const std::string text = std::string(kOp) + "pipeline p {\n  step f = fetch()\n}\n";
  EXPECT_NE(find(collect(text), What::service_account, "pipeline-runner"), nullptr);
  NeedsOptions options;
  options.service_account = "trainer";
  Collected c = collect(text, options);
  EXPECT_NE(find(c, What::service_account, "trainer"), nullptr);
  EXPECT_EQ(find(c, What::service_account, "pipeline-runner"), nullptr);
}

// A training step's data claim from a step's output is known only at run time.
TEST(Needs, AClaimFromAStepOutputIsSkippedWithWhy) {
  Collected c = collect(
      "use arena\n"
      "op pick() -> (claim: string) {\n"
      "  image \"busybox\"\n"
      "  command \"echo c:/data > /tmp/c\"\n"
      "  outputs {claim: \"/tmp/c\"}\n"
      "}\n"
      "pipeline p {\n"
      "  step a = pick()\n"
      "  step t = mpi_job(image: \"horovod/horovod:0.28.1\", command: \"mpirun t\", workers: 2, data: [a.claim])\n"
      "}\n");
  int skipped = 0;
  for (const Need& n : c.needs)
    if (n.what == What::claim) {
      EXPECT_NE(n.skipped.find("run time"), std::string::npos) << n.skipped;
      EXPECT_EQ(n.step, "t");
      ++skipped;
    }
  EXPECT_EQ(skipped, 1);
  // What is literal in the same step is still asked.
  EXPECT_NE(find(c, What::image, "horovod/horovod:0.28.1"), nullptr);
  const Need* served = find(c, What::served, "MPIJob");
  ASSERT_NE(served, nullptr);
  EXPECT_TRUE(served->skipped.empty());
}

// A train_job is a TrainJob in Trainer v2's terms: its API and the runtime it names (any
// ML policy), its initializers' Secrets, and its nodes for claims and GPUs. It needs no
// training operator (it was asked as a PyTorchJob, on one node).
TEST(Needs, ATrainJobNeedsTrainerV2ItsRuntimeItsSecretsAndItsNodes) {
  Collected c = collect(
      "use arena\n"
      "pipeline p {\n"
      "  step t = train_job(trainer_runtime: \"team-torch\", trainer_runtime_kind: \"TrainingRuntime\",\n"
      "                     num_nodes: 4, gpus: 2, model_uri: \"hf://m\", model_secret: \"hf-token\",\n"
      "                     dataset_uri: \"hf://d\", dataset_secret: \"data-token\", data: [\"shared:/data\"],\n"
      "                     queue: \"team-queue\")\n"
      "}\n");
  for (const Need& n : c.needs) {
    if (n.what == What::served || n.what == What::access) {
      EXPECT_EQ(n.name, "TrainJob");
    }
  }
  ASSERT_NE(find(c, What::served, "TrainJob"), nullptr);
  ASSERT_NE(find(c, What::access, "TrainJob"), nullptr);
  const Need* runtime = find(c, What::runtime, "team-torch");
  ASSERT_NE(runtime, nullptr);
  EXPECT_TRUE(runtime->namespaced);
  EXPECT_EQ(runtime->policy, "");
  EXPECT_EQ(named_by(c, *runtime), "\"team-torch\"");
  for (const char* secret : {"hf-token", "data-token"}) {
    const Need* s = find(c, What::secret, secret);
    ASSERT_NE(s, nullptr) << secret;
    EXPECT_EQ(named_by(c, *s), std::string("\"") + secret + "\"");
  }
  const Need* claim = find(c, What::claim, "shared");
  ASSERT_NE(claim, nullptr);
  EXPECT_EQ(claim->pods_at_once, 4);
  EXPECT_NE(find(c, What::local_queue, "team-queue"), nullptr);
  const Need* quota = find(c, What::quota, "nvidia.com/gpu");
  ASSERT_NE(quota, nullptr);
  EXPECT_EQ(quota->amounts.at("requests.nvidia.com/gpu"), 8);
}

TEST(Needs, EachPlaceAndObjectOnce) {
  Collected c = collect(std::string(kOp) + "pipeline p {\n  step f = fetch()\n  step g = fetch()\n}\n");
  int claims = 0;
  for (const Need& n : c.needs) claims += n.what == What::claim;
  // Two steps name the claim through the same op's text: one need, at that text.
  EXPECT_EQ(claims, 1);
}

}  // namespace
}  // namespace pipec::preflight
