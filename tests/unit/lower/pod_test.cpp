// What a container op's pod is given (ir::Pod), decided once by the lowering: the Argo and
// KFP v2 writers print it and a local run applies it, none of them deciding it again.
#include "compiler/ir/pod.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "compiler/lower/lower.hpp"
#include "tests/unit/syntax/test_support.hpp"

namespace pipec::ir {
namespace {

using testing::check_string;
using ResourceKind = Pod::Resource::Kind;
using Pairs = std::vector<std::pair<std::string, std::string>>;

Pipeline lower_ok(const std::string& ops, const std::string& steps) {
  auto out = check_string(ops + "pipeline p {\n" + steps + "}\n");
  EXPECT_TRUE(out.pipeline) << out.diagnostics;
  return out.pipeline ? *out.pipeline : Pipeline{};
}

// Each resource's kind and Kubernetes name, in source order.
std::vector<std::pair<ResourceKind, std::string>> resources(const Pod& pod) {
  std::vector<std::pair<ResourceKind, std::string>> out;
  for (const auto& r : pod.resources) out.emplace_back(r.kind, r.name);
  return out;
}

const char* const kGpuOps =
    "op amd(g: int = 1) {\n  image \"busybox\"\n  command [\"true\"]\n"
    "  resources {cpu: \"1\", gpus: 2, gpu_vendor: \"amd\", memory: \"2Gi\"}\n}\n"
    "op plain(g: int = 1) {\n  image \"busybox\"\n  command [\"true\"]\n  resources {gpus: g}\n}\n"
    "op named(g: int = 1) {\n  image \"busybox\"\n  command [\"true\"]\n"
    "  resources {gpu_vendor: \"intel.com/gpu\", gpus: g}\n}\n"
    "op none(g: int = 1) {\n  image \"busybox\"\n  command [\"true\"]\n  resources {gpus: 0, cpu: \"1\"}\n}\n"
    "op later(v: string = \"amd\") {\n  image \"busybox\"\n  command [\"true\"]\n"
    "  resources {gpus: 0, gpu_vendor: v}\n}\n";

// The GPU resource is named from the vendor once: "amd" means amd.com/gpu, a name with '/'
// is the resource itself, none means nvidia.com/gpu. A literal vendor is no resource of
// its own; `gpus 0` asks for none.
TEST(Pod, GpuResourceIsNamedFromTheVendor) {
  auto p = lower_ok(kGpuOps, "  step a = amd()\n  step b = plain()\n  step c = named()\n  step d = none()\n"
                             "  step e = later()\n");
  EXPECT_EQ(resources(p.plan.pod("amd")), (std::vector<std::pair<ResourceKind, std::string>>{
                                              {ResourceKind::Cpu, "cpu"}, {ResourceKind::Gpus, "amd.com/gpu"}, {ResourceKind::Memory, "memory"}}));
  EXPECT_EQ(resources(p.plan.pod("plain")), (std::vector<std::pair<ResourceKind, std::string>>{{ResourceKind::Gpus, "nvidia.com/gpu"}}));
  EXPECT_EQ(resources(p.plan.pod("named")), (std::vector<std::pair<ResourceKind, std::string>>{{ResourceKind::Gpus, "intel.com/gpu"}}));
  EXPECT_EQ(resources(p.plan.pod("none")), (std::vector<std::pair<ResourceKind, std::string>>{{ResourceKind::Cpu, "cpu"}}));
  EXPECT_FALSE(p.plan.pod("amd").gpu_name_at_run_time());
  // Each entry points at its value in the op.
  const Pod& amd = p.plan.pod("amd");
  ASSERT_EQ(amd.resources.size(), 3u);
  for (const auto& op : p.ops) {
    if (op.name == "amd") {
      EXPECT_EQ(op.resources[amd.resources[2].value].first, "memory");
    }
  }

  // A vendor from a value: the name is the target's to compute at run time, and the count
  // (even 0) stays, since only then is the resource known.
  const Pod& later = p.plan.pod("later");
  EXPECT_TRUE(later.gpu_name_at_run_time());
  EXPECT_EQ(resources(later), (std::vector<std::pair<ResourceKind, std::string>>{{ResourceKind::Gpus, ""}, {ResourceKind::GpuVendor, ""}}));
}

// Tolerations are data (rules::Toleration), read once from their specs; placement,
// security and metadata are the plan's, Kueue's queue label first among the labels.
TEST(Pod, PlacementSecurityAndMetadata) {
  auto p = lower_ok(
      "op o() {\n  image \"busybox\"\n  command [\"true\"]\n"
      "  tolerations [\"dedicated=ml:NoSchedule\", \"gpu\", \"*\"]\n"
      "  node_selector {pool: \"gpu\"}\n"
      "  queue \"team\"\n  labels {b: \"1\", a: \"2\"}\n  annotations {\"example.com/x\": \"y\"}\n"
      "  run_as_user 1000\n  run_as_non_root true\n}\n"
      "op bare() {\n  image \"busybox\"\n  command [\"true\"]\n}\n",
      "  step s = o()\n  step t = bare()\n");
  const Pod& pod = p.plan.pod("o");
  ASSERT_EQ(pod.tolerations.size(), 3u);
  EXPECT_EQ(pod.tolerations[0], (rules::Toleration{"dedicated", "Equal", "ml", "NoSchedule"}));
  EXPECT_EQ(pod.tolerations[1], (rules::Toleration{"gpu", "Exists", "", ""}));
  EXPECT_EQ(pod.tolerations[2], (rules::Toleration{"", "Exists", "", ""}));
  EXPECT_EQ(pod.node_selector, (Pairs{{"pool", "gpu"}}));
  EXPECT_EQ(pod.labels, (Pairs{{"kueue.x-k8s.io/queue-name", "team"}, {"b", "1"}, {"a", "2"}}));
  EXPECT_EQ(pod.annotations, (Pairs{{"example.com/x", "y"}}));
  EXPECT_EQ(pod.security.user, 1000);
  EXPECT_FALSE(pod.security.group);
  EXPECT_EQ(pod.security.non_root, true);
  EXPECT_FALSE(pod.security.empty());

  const Pod& bare = p.plan.pod("bare");
  EXPECT_TRUE(bare.security.empty());
  EXPECT_TRUE(bare.labels.empty());
  EXPECT_TRUE(bare.tolerations.empty());
  EXPECT_FALSE(bare.retry);
  EXPECT_TRUE(bare.cache.reuse);
}

// Retries and caching: the policy Always unless given, each attempt's memory; `cache
// false` and a staleness of 0 both mean never reused, "7d" a bound.
TEST(Pod, RetryAndCache) {
  auto p = lower_ok(
      "op r() {\n  image \"busybox\"\n  command [\"true\"]\n  resources {memory: \"1Gi\"}\n"
      "  retries {limit: 2, backoff: \"30s\", on: [\"oom\"], memory_factor: 2, memory_max: \"3Gi\"}\n"
      "  cache \"7d\"\n}\n"
      "op n() {\n  image \"busybox\"\n  command [\"true\"]\n  retries 1\n  cache false\n}\n"
      "op z() {\n  image \"busybox\"\n  command [\"true\"]\n  cache \"0s\"\n}\n",
      "  step a = r()\n  step b = n()\n  step c = z()\n");
  const Pod& r = p.plan.pod("r");
  ASSERT_TRUE(r.retry);
  EXPECT_EQ(r.retry->limit, 2);
  EXPECT_EQ(r.retry->policy, "Always");
  EXPECT_EQ(r.retry->backoff_seconds, 30);
  ASSERT_EQ(r.retry->on.size(), 1u);
  EXPECT_EQ(r.retry->on[0].kind, rules::RetryOn::Kind::Oom);
  EXPECT_EQ(r.retry->memory, (std::vector<std::string>{"1Gi", "2Gi", "3Gi"}));
  EXPECT_TRUE(r.cache.reuse);
  EXPECT_EQ(r.cache.staleness_seconds, 7 * 24 * 3600);

  const Pod& n = p.plan.pod("n");
  ASSERT_TRUE(n.retry);
  EXPECT_EQ(n.retry->limit, 1);
  EXPECT_TRUE(n.retry->memory.empty());
  EXPECT_FALSE(n.cache.reuse);
  EXPECT_FALSE(n.cache.staleness_seconds);
  EXPECT_FALSE(p.plan.pod("z").cache.reuse);
}

}  // namespace
}  // namespace pipec::ir
