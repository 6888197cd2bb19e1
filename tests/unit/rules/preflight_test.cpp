#include "rules/preflight.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pipec::rules::preflight {
namespace {

using nlohmann::json;

TEST(PreflightPaths, NamesBecomePathsOnlyWhenTheyAreKubernetesNames) {
  EXPECT_EQ(*object_path(Kind::persistent_volume_claim, "team-a", "data"),
            "/api/v1/namespaces/team-a/persistentvolumeclaims/data");
  EXPECT_EQ(*object_path(Kind::cluster_training_runtime, "ignored", "torch-distributed"),
            "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-distributed");
  EXPECT_EQ(*object_path(Kind::priority_class, "", "high"),
            "/apis/scheduling.k8s.io/v1/priorityclasses/high");
  EXPECT_FALSE(object_path(Kind::secret, "team-a", "../../nodes"));
  EXPECT_FALSE(object_path(Kind::secret, "team-a", "a?b"));
  EXPECT_FALSE(object_path(Kind::secret, "Team A", "ok"));
  EXPECT_EQ(object_label(Kind::secret, "team-a", "s3"), "Secret team-a/s3");
  EXPECT_EQ(object_label(Kind::priority_class, "team-a", "high"), "PriorityClass high");
}

TEST(PreflightPaths, DiscoveryAndReviewsAreReadsOnly) {
  const auto* mpi = served_kind("MPIJob");
  ASSERT_NE(mpi, nullptr);
  EXPECT_EQ(discovery_path(*mpi), "/apis/kubeflow.org/v2beta1");
  EXPECT_EQ(served_kind("Deployment"), nullptr);
  const auto local =
      access_review("team-a", "trainer", "create", "trainer.kubeflow.org", "trainjobs");
  ASSERT_TRUE(local);
  EXPECT_EQ(local->path,
            "/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews");
  const auto body = json::parse(local->body);
  EXPECT_EQ(body["kind"], "LocalSubjectAccessReview");
  EXPECT_EQ(body["spec"]["user"], "system:serviceaccount:team-a:trainer");
  EXPECT_EQ(body["spec"]["resourceAttributes"]["resource"], "trainjobs");
  EXPECT_EQ(body["spec"]["resourceAttributes"]["verb"], "create");
  const auto self = access_review("team-a", "", "create", "kubeflow.org", "mpijobs");
  ASSERT_TRUE(self);
  EXPECT_EQ(json::parse(self->body)["kind"], "SelfSubjectAccessReview");
  EXPECT_FALSE(access_review("team-a", "a b", "create", "", "pods"));
  EXPECT_EQ(dry_run_path("/apis/kubeflow.org/v2beta1/namespaces/a/mpijobs"),
            "/apis/kubeflow.org/v2beta1/namespaces/a/mpijobs?dryRun=All");
}

TEST(PreflightImages, ReferencesSplitForTheRegistry) {
  auto hub = parse_image("python:3.12");
  ASSERT_TRUE(hub);
  EXPECT_EQ(hub->registry, "registry-1.docker.io");
  EXPECT_EQ(hub->manifest_path(), "/v2/library/python/manifests/3.12");
  auto own = parse_image("localhost:5000/team/train@sha256:abc");
  ASSERT_TRUE(own);
  EXPECT_EQ(own->registry, "localhost:5000");
  EXPECT_EQ(own->manifest_path(), "/v2/team/train/manifests/sha256:abc");
  EXPECT_EQ(parse_image("ghcr.io/o/r")->reference, "latest");
  EXPECT_FALSE(parse_image("bad image"));
  EXPECT_FALSE(parse_image("a:b:c"));
}

TEST(PreflightClaims, AbsentPendingAndSharedClaimsAreFound) {
  EXPECT_EQ(judge_claim("a", "data", {404, nullptr}, 1, false)[0].check, "pvc.exists");
  EXPECT_EQ(judge_claim("a", "data", {404, nullptr}, 1, false)[0].verdict, Verdict::error);
  const json pending = {{"spec", {{"accessModes", {"ReadWriteOnce"}}}},
                        {"status", {{"phase", "Pending"}}}};
  auto found = judge_claim("a", "data", {200, &pending}, 1, false);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[1].check, "pvc.bound");
  EXPECT_EQ(found[1].verdict, Verdict::error);
  EXPECT_EQ(judge_claim("a", "data", {200, &pending}, 1, true).size(), 1U);  // WaitForFirstConsumer
  const json rwo = {{"spec", {{"accessModes", {"ReadWriteOnce"}}}},
                    {"status", {{"phase", "Bound"}}}};
  found = judge_claim("a", "data", {200, &rwo}, 4, false);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[1].check, "pvc.access_mode");
  EXPECT_EQ(found[1].verdict, Verdict::warning);
  EXPECT_NE(found[1].message.find("4 pods"), std::string::npos);
  const json rwx = {{"spec", {{"accessModes", {"ReadWriteMany"}}}},
                    {"status", {{"phase", "Bound"}}}};
  EXPECT_EQ(judge_claim("a", "data", {200, &rwx}, 4, false).size(), 1U);
}

// A ReadWriteOnce claim on several pods: an error where they may land on two nodes or
// more, fine on one, a warning saying why when the nodes cannot be read. ReadWriteOncePod
// on several pods is always an error.
TEST(PreflightClaims, ReadWriteOnceOnManyPodsDependsOnTheNodes) {
  const json rwo = {{"spec", {{"accessModes", {"ReadWriteOnce"}}}}, {"status", {{"phase", "Bound"}}}};
  const json node = {{"metadata", {{"name", "n"}}}};
  const json cordoned = {{"spec", {{"unschedulable", true}}}};
  const json tainted = {{"spec", {{"taints", json::array({{{"key", "k"}, {"effect", "NoSchedule"}}})}}}};
  const json two = {{"items", json::array({node, node, cordoned, tainted})}};
  const json one = {{"items", json::array({node, cordoned, tainted})}};
  EXPECT_TRUE(claim_needs_nodes({200, &rwo}, 4));
  EXPECT_FALSE(claim_needs_nodes({200, &rwo}, 1));
  EXPECT_EQ(schedulable_nodes(&two), 2);
  const Answer two_nodes{200, &two}, one_node{200, &one}, forbidden{403, nullptr};
  auto found = judge_claim("a", "data", {200, &rwo}, 4, false, &two_nodes);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[1].check, "pvc.access_mode");
  EXPECT_EQ(found[1].verdict, Verdict::error);
  EXPECT_NE(found[1].message.find("2 schedulable nodes"), std::string::npos) << found[1].message;
  found = judge_claim("a", "data", {200, &rwo}, 4, false, &one_node);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[1].verdict, Verdict::ok);
  EXPECT_NE(found[1].message.find("one schedulable node"), std::string::npos) << found[1].message;
  found = judge_claim("a", "data", {200, &rwo}, 4, false, &forbidden);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[1].verdict, Verdict::warning);
  EXPECT_EQ(found[1].http_status, 403);
  EXPECT_NE(found[1].message.find("HTTP 403"), std::string::npos) << found[1].message;
  const json rwop = {{"spec", {{"accessModes", {"ReadWriteOncePod"}}}}, {"status", {{"phase", "Bound"}}}};
  EXPECT_FALSE(claim_needs_nodes({200, &rwop}, 2));
  found = judge_claim("a", "data", {200, &rwop}, 2, false, &one_node);
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[1].verdict, Verdict::error);
  EXPECT_EQ(judge_claim("a", "data", {200, &rwop}, 1, false).size(), 1U);
}

TEST(PreflightLimitRange, RequestsAndLimitsOutsideAContainerRangeAreErrors) {
  const json ranges = {
      {"items",
       json::array({{{"metadata", {{"name", "bounds"}}},
                     {"spec",
                      {{"limits", json::array({{{"type", "Pod"}, {"max", {{"cpu", "1"}}}},
                                               {{"type", "Container"},
                                                {"max", {{"cpu", "8"}, {"memory", "64Gi"}}},
                                                {"min", {{"memory", "1Gi"}}}}})}}}}})}};
  const ContainerResources big{"Worker/mpi", {}, {{"cpu", "16"}, {"memory", "8Gi"}}};
  const ContainerResources small{"Launcher/mpi", {{"memory", "512Mi"}}, {{"memory", "2Gi"}}};
  const ContainerResources fits{"Worker/main", {{"cpu", "500m"}}, {{"cpu", "8"}, {"memory", "1Gi"}}};
  auto found = judge_limit_range("a", {200, &ranges}, {big, small, fits});
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(found[0].check, "limitrange.bounds");
  EXPECT_EQ(found[0].verdict, Verdict::error);
  EXPECT_EQ(found[0].object, "LimitRange a/bounds");
  EXPECT_EQ(found[0].message, "container Worker/mpi's cpu limit 16 is above LimitRange a/bounds's max 8");
  EXPECT_EQ(found[1].message,
            "container Launcher/mpi's memory request 512Mi is below LimitRange a/bounds's min 1Gi");
  const auto unread = judge_limit_range("a", {403, nullptr}, {big});
  ASSERT_EQ(unread.size(), 1U);
  EXPECT_EQ(unread[0].verdict, Verdict::unknown);
}

TEST(PreflightForbidden, A401Or403IsUnknownNeverOk) {
  for (long status : {401L, 403L}) {
    const auto f = judge_claim("a", "data", {status, nullptr}, 1, false);
    ASSERT_EQ(f.size(), 1U);
    EXPECT_EQ(f[0].verdict, Verdict::unknown);
    EXPECT_EQ(f[0].http_status, status);
    EXPECT_EQ(judge_image("python", status).verdict, Verdict::unknown);
    EXPECT_EQ(judge_access("sa", "create", "trainjobs", "a", {status, nullptr}).verdict,
              Verdict::unknown);
  }
  EXPECT_EQ(judge_exists(Kind::secret, "a", "s", {0, nullptr}, "secret.exists").verdict,
            Verdict::unknown);
  EXPECT_FALSE(fails({judge_image("python", 403)}, false));
  EXPECT_TRUE(fails({judge_image("python", 403)}, true));
  EXPECT_EQ(strict_verdict(Verdict::unknown, true), Verdict::error);
  EXPECT_EQ(strict_verdict(Verdict::warning, true), Verdict::warning);
}

TEST(PreflightKeys, MissingKeysAreNamedAndValuesNeverRead) {
  const json secret = {{"data", {{"token", "c2VjcmV0LXZhbHVl"}}}};
  auto f = judge_keys(Kind::secret, "a", "s3", {200, &secret}, {"token", "password"});
  ASSERT_EQ(f.size(), 2U);
  EXPECT_EQ(f[1].check, "secret.key");
  EXPECT_NE(f[1].message.find("'password'"), std::string::npos);
  for (const auto& finding : f) EXPECT_EQ(finding.message.find("c2VjcmV0"), std::string::npos);
  EXPECT_EQ(judge_keys(Kind::config_map, "a", "cfg", {404, nullptr}, {"x"})[0].check,
            "configmap.exists");
  const json binary = {{"binaryData", {{"blob", "AA=="}}}};
  EXPECT_EQ(judge_keys(Kind::config_map, "a", "cfg", {200, &binary}, {"blob"}).size(), 1U);
}

TEST(PreflightServed, DiscoveryListsTheKind) {
  const auto& mpi = *served_kind("MPIJob");
  EXPECT_EQ(judge_served(mpi, {404, nullptr}).verdict, Verdict::error);
  const json list = {
      {"resources", json::array({{{"name", "mpijobs"}}, {{"name", "mpijobs/status"}}})}};
  EXPECT_EQ(judge_served(mpi, {200, &list}).verdict, Verdict::ok);
  const json other = {{"resources", json::array({{{"name", "tfjobs"}}})}};
  EXPECT_EQ(judge_served(mpi, {200, &other}).verdict, Verdict::error);
  EXPECT_EQ(judge_served(mpi, {403, nullptr}).verdict, Verdict::unknown);
}

TEST(PreflightAccess, AReviewSaysWhoMayNot) {
  const json no = {{"status", {{"allowed", false}, {"reason", "no RBAC policy matched"}}}};
  const auto f = judge_access("system:serviceaccount:a:sa", "create", "trainjobs", "a", {201, &no});
  EXPECT_EQ(f.verdict, Verdict::error);
  EXPECT_EQ(f.check, "access.create");
  EXPECT_NE(f.message.find("no RBAC policy matched"), std::string::npos);
  const json yes = {{"status", {{"allowed", true}}}};
  EXPECT_EQ(judge_access("sa", "create", "trainjobs", "a", {201, &yes}).verdict, Verdict::ok);
  EXPECT_EQ(judge_access("sa", "create", "trainjobs", "a", {201, nullptr}).verdict, Verdict::error);
}

TEST(PreflightRuntimes, ThePolicyMustFitTheOp) {
  const json torch = {{"spec", {{"mlPolicy", {{"numNodes", 1}, {"torch", json::object()}}}}}};
  EXPECT_EQ(
      judge_runtime(Kind::cluster_training_runtime, "", "torch", {200, &torch}, "torch").size(),
      1U);
  const auto f = judge_runtime(Kind::cluster_training_runtime, "", "torch", {200, &torch}, "mpi");
  ASSERT_EQ(f.size(), 2U);
  EXPECT_EQ(f[1].check, "runtime.policy");
  // A train_job's own TrainJob asks for no policy: any runtime that exists will do.
  const auto any = judge_runtime(Kind::cluster_training_runtime, "", "torch", {200, &torch}, "");
  ASSERT_EQ(any.size(), 1U);
  EXPECT_EQ(any[0].verdict, Verdict::ok);
  EXPECT_EQ(
      judge_runtime(Kind::cluster_training_runtime, "", "x", {404, nullptr}, "torch")[0].verdict,
      Verdict::error);
}

TEST(PreflightQuota, HeadroomBelowTheStepsNeedIsAnError) {
  const json quotas = {
      {"items",
       json::array({{{"metadata", {{"name", "gpus"}}},
                     {"status",
                      {{"hard", {{"requests.nvidia.com/gpu", "8"}, {"cpu", "16"}}},
                       {"used", {{"requests.nvidia.com/gpu", "6"}, {"cpu", "2500m"}}}}}}})}};
  auto f = judge_quota("a", {200, &quotas}, {{"requests.nvidia.com/gpu", 4}, {"requests.cpu", 8}});
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].object, "ResourceQuota a/gpus");
  EXPECT_NE(f[0].message.find("leaves 2 requests.nvidia.com/gpu"), std::string::npos);
  EXPECT_TRUE(
      judge_quota("a", {200, &quotas}, {{"requests.nvidia.com/gpu", 2}, {"requests.cpu", 13.5}})
          .empty());
  f = judge_quota("a", {200, &quotas}, {{"requests.cpu", 14}});
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(judge_quota("a", {403, nullptr}, {{"requests.cpu", 1}})[0].verdict, Verdict::unknown);
}

TEST(PreflightNodes, SomeNodeMustHoldAReplica) {
  const json nodes = {
      {"items",
       json::array(
           {{{"metadata", {{"labels", {{"pool", "gpu"}}}}},
             {"spec", {{"taints", json::array({{{"key", "gpu"}, {"effect", "NoSchedule"}}})}}},
             {"status", {{"allocatable", {{"nvidia.com/gpu", "4"}}}}}}})}};
  const json tolerate = json::array({{{"key", "gpu"}, {"operator", "Exists"}}});
  EXPECT_EQ(judge_nodes({200, &nodes}, "nvidia.com/gpu", 4, {{"pool", "gpu"}}, tolerate).verdict,
            Verdict::ok);
  EXPECT_EQ(judge_nodes({200, &nodes}, "nvidia.com/gpu", 8, {}, tolerate).verdict, Verdict::error);
  EXPECT_EQ(judge_nodes({200, &nodes}, "nvidia.com/gpu", 1, {{"pool", "cpu"}}, tolerate).verdict,
            Verdict::error);
  EXPECT_EQ(judge_nodes({200, &nodes}, "nvidia.com/gpu", 1, {}, json::array()).verdict,
            Verdict::error);
  EXPECT_EQ(judge_nodes({403, nullptr}, "nvidia.com/gpu", 1, {}, json::array()).verdict,
            Verdict::unknown);
}

TEST(PreflightDryRun, AdmissionRefusalsAreErrorsRbacIsUnknown) {
  const json webhook = {{"message",
                         "admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the "
                         "request: runtime not found\nsecond line"}};
  auto f = judge_dry_run("TrainJob a/train", {403, &webhook});
  EXPECT_EQ(f.verdict, Verdict::error);
  EXPECT_EQ(f.message.find('\n'), std::string::npos);
  const json rbac = {
      {"message", "trainjobs.trainer.kubeflow.org is forbidden: User cannot create"}};
  EXPECT_EQ(judge_dry_run("TrainJob a/train", {403, &rbac}).verdict, Verdict::unknown);
  const json invalid = {{"message", std::string(1000, 'x')}};
  f = judge_dry_run("MPIJob a/m", {422, &invalid});
  EXPECT_EQ(f.verdict, Verdict::error);
  EXPECT_LT(f.message.size(), kMaxMessage + 80);
  EXPECT_EQ(judge_dry_run("MPIJob a/m", {201, nullptr}).verdict, Verdict::ok);
  // The name is taken (a restarted step's job): storage answers after admission passed.
  const json exists = {{"reason", "AlreadyExists"}, {"message", "mpijobs \"m\" already exists"}};
  EXPECT_EQ(judge_dry_run("MPIJob a/m", {409, &exists}).verdict, Verdict::ok);
}

TEST(PreflightImages, AManifest404IsAnError) {
  EXPECT_EQ(judge_image("python:3.12", 200).verdict, Verdict::ok);
  const auto f = judge_image("python:no-such", 404);
  EXPECT_EQ(f.verdict, Verdict::error);
  EXPECT_EQ(f.check, "image.manifest");
  EXPECT_EQ(f.http_status, 404);
}

}  // namespace
}  // namespace pipec::rules::preflight
