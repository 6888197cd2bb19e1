#include "runtime/job_render.hpp"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pipec::runtime {

using rules::kMaxReplicas;
using rules::parse_data_entry;
namespace {

using nlohmann::json;

const char* kMpiJob = R"({
  "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
  "metadata": {"name": "x"},
  "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
    "Launcher": {"replicas": 1, "template": {"spec": {
      "containers": [{"name": "main", "image": "img", "args": ["python", "train.py", "--batch", "64"],
                      "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                      "volumeMounts": [{"name": "data-0", "mountPath": "/training"},
                                       {"name": "shm", "mountPath": "/dev/shm"}]}],
      "volumes": [{"name": "data-0", "persistentVolumeClaim": {"claimName": "user-susan"}},
                  {"name": "shm", "emptyDir": {"medium": "Memory"}}]}}},
    "Worker": {"replicas": 2, "template": {"spec": {
      "containers": [{"name": "main", "image": "img",
                      "resources": {"limits": {"cpu": "2", "memory": "10Gi"}},
                      "volumeMounts": [{"name": "data-0", "mountPath": "/training"}]}],
      "volumes": [{"name": "data-0", "persistentVolumeClaim": {"claimName": "user-susan"}}]}}}}}})";

RenderResult render(std::vector<std::string> binds, std::vector<std::string> values) {
  return render_job_from_args(kMpiJob, binds, values);
}

TEST(RuntimeJobRender, AppliesTypedValues) {
  auto r = render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int",
                   "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0/resources/limits/memory=mem:quantity",
                   "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/args/3=batch:string",
                   "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/env/0/value=dbg:env"},
                  {"workers=4", "mem=512Mi", "batch=$(rm -rf /); \"x\"", "dbg=WARN=1", "unused=1"});
  ASSERT_TRUE(r.ok) << r.error;
  auto job = json::parse(r.job);
  EXPECT_EQ(job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"], 4);
  EXPECT_EQ(job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
               ["resources"]["limits"]["memory"], "512Mi");
  EXPECT_EQ(job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"][3],
            "$(rm -rf /); \"x\"");
  EXPECT_EQ(job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"][0]
               ["value"], "WARN=1");
}

// An `env` map given at run time (kind env-map) reaches the main containers, and its
// GIT_SYNC_BRANCH / GIT_SYNC_REV the git-sync init container whose clone reads them; the
// init container's other variables stay, and other names do not go there.
TEST(RuntimeJobRender, GitSyncSettingsOfAnEnvMapReachTheInitContainer) {
  const char* job = R"({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "x"},
    "spec": {"pytorchReplicaSpecs": {
      "Master": {"replicas": 1, "template": {"spec": {
        "initContainers": [{"name": "git-sync", "image": "alpine/git", "command": ["sh", "-c", "git clone"],
                            "env": [{"name": "GIT_SYNC_REPO", "value": "https://example.com/r.git"},
                                    {"name": "GIT_SYNC_REV", "value": "old"}]}],
        "containers": [{"name": "pytorch", "image": "img"}]}}},
      "Worker": {"replicas": 2, "template": {"spec": {
        "initContainers": [{"name": "git-sync", "image": "alpine/git", "command": ["sh", "-c", "git clone"],
                            "env": [{"name": "GIT_SYNC_REPO", "value": "https://example.com/r.git"}]}],
        "containers": [{"name": "pytorch", "image": "img"}]}}}}}})";
  std::vector<std::string> binds = {"/spec/pytorchReplicaSpecs=env:env-map"};
  std::vector<std::string> values = {R"(env={"GIT_SYNC_BRANCH":"dev","GIT_SYNC_REV":"abc123","NCCL_DEBUG":"INFO"})"};
  auto r = render_job_from_args(job, binds, values);
  ASSERT_TRUE(r.ok) << r.error;
  auto rendered = json::parse(r.job);
  for (const char* role : {"Master", "Worker"}) {
    const json& spec = rendered["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"];
    std::map<std::string, std::string> init;
    for (const auto& e : spec["initContainers"][0]["env"]) init[e["name"]] = e["value"];
    EXPECT_EQ(init, (std::map<std::string, std::string>{{"GIT_SYNC_REPO", "https://example.com/r.git"},
                                                        {"GIT_SYNC_BRANCH", "dev"},
                                                        {"GIT_SYNC_REV", "abc123"}}))
        << role;
    EXPECT_EQ(spec["initContainers"][0]["env"].size(), 3u) << role;
    std::map<std::string, std::string> main;
    for (const auto& e : spec["containers"][0]["env"]) main[e["name"]] = e["value"];
    EXPECT_EQ(main, (std::map<std::string, std::string>{
                        {"GIT_SYNC_BRANCH", "dev"}, {"GIT_SYNC_REV", "abc123"}, {"NCCL_DEBUG", "INFO"}}))
        << role;
  }
  EXPECT_TRUE(is_git_sync_setting("GIT_SYNC_BRANCH"));
  EXPECT_FALSE(is_git_sync_setting("GIT_SYNC_REPO"));  // the op's `sync` sets it
}

// A node selector from a run-time value meets the rule the compiler applies to literals
// (and container ops' node_selector): Kubernetes label keys and values.
TEST(RuntimeJobRender, NodeSelectorValuesAreNodeLabels) {
  auto ok = render({"/spec/mpiReplicaSpecs=sel:node-selector"},
                   {R"(sel={"cloud.google.com/gke-nodepool":"gpu-pool","zone":""})"});
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(json::parse(ok.job)["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"]
                ["cloud.google.com/gke-nodepool"],
            "gpu-pool");
  auto bad = render({"/spec/mpiReplicaSpecs=sel:node-selector"}, {R"(sel={"bad key":"v"})"});
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("value 'sel': \"bad key\": \"v\" is not a node label"), std::string::npos) << bad.error;
  bad = render({"/spec/mpiReplicaSpecs=sel:node-selector"}, {R"(sel={"pool":"not a value"})"});
  EXPECT_FALSE(bad.ok);
}
TEST(RuntimeJobRender, RejectsBadIntegersNamingTheValue) {
  auto r = render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"}, {"workers=two"});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "value 'workers' must be an integer >= 1, got \"two\"");
  r = render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"}, {"workers=-3"});
  EXPECT_EQ(r.error, "value 'workers' must be an integer >= 1, got \"-3\"");
  r = render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"}, {"workers=0"});
  EXPECT_EQ(r.error, "value 'workers' must be an integer >= 1, got \"0\"");
  r = render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"}, {"workers=99999999999"});
  EXPECT_FALSE(r.ok);
  r = render({"/spec/slotsPerWorker=slots:int"}, {"slots=3 "});
  EXPECT_EQ(r.error, "value 'slots' must be an integer >= 1, got \"3 \"");
}

TEST(RuntimeJobRender, ChecksQuantitiesAndBools) {
  const std::string mem =
      "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0/resources/limits/memory=mem:quantity";
  for (const char* ok : {"10Gi", "500m", "2", "1.5", "1e3", "0.5Ki", "+2"})
    EXPECT_TRUE(render({mem}, {std::string("mem=") + ok}).ok) << ok;
  for (const char* bad : {"10GB", "-1Gi", "", "1..5", "e3", "1e", "Gi", "1 Gi"}) {
    auto r = render({mem}, {std::string("mem=") + bad});
    EXPECT_FALSE(r.ok) << bad;
    EXPECT_NE(r.error.find("value 'mem' must be a Kubernetes quantity"), std::string::npos);
  }
  auto r = render({"/spec/mpiReplicaSpecs/Worker/replicas=flag:bool"}, {"flag=yes"});
  EXPECT_EQ(r.error, "value 'flag' must be true or false, got \"yes\"");
}

TEST(RuntimeJobRender, ReplacesDataVolumesInEveryReplica) {
  auto r = render({"/spec/mpiReplicaSpecs=data:data"},
                  {R"(data=["ds-1:/data/a", "ckpt.store:/ckpt"])"});
  ASSERT_TRUE(r.ok) << r.error;
  auto job = json::parse(r.job);
  for (const char* replica : {"Launcher", "Worker"}) {
    const auto& spec = job["spec"]["mpiReplicaSpecs"][replica]["template"]["spec"];
    json claims = json::array(), mounts = json::array();
    for (const auto& v : spec["volumes"])
      if (v.contains("persistentVolumeClaim"))
        claims.push_back(v["name"].get<std::string>() + "=" +
                         v["persistentVolumeClaim"]["claimName"].get<std::string>());
    for (const auto& m : spec["containers"][0]["volumeMounts"])
      mounts.push_back(m["name"].get<std::string>() + "=" + m["mountPath"].get<std::string>());
    EXPECT_EQ(claims, json({"data-0=ds-1", "data-1=ckpt.store"})) << replica;
    if (std::string(replica) == "Launcher")
      EXPECT_EQ(mounts, json({"shm=/dev/shm", "data-0=/data/a", "data-1=/ckpt"}));
    else
      EXPECT_EQ(mounts, json({"data-0=/data/a", "data-1=/ckpt"}));
  }
  // One string is one entry; the shm volume survives.
  r = render({"/spec/mpiReplicaSpecs=data:data"}, {"data=other:/x"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(json::parse(r.job)["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["volumes"]
                .size(), 2u);
  // An empty list removes the data volumes.
  r = render({"/spec/mpiReplicaSpecs=data:data"}, {"data=[]"});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(json::parse(r.job)["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
                   .contains("volumes"));
}

TEST(RuntimeJobRender, RejectsMalformedDataEntries) {
  const std::vector<std::string> bind = {"/spec/mpiReplicaSpecs=data:data"};
  EXPECT_EQ(render(bind, {"data=nocolon"}).error,
            "value 'data' entry 1 must be pvc-name:/mount/path (a lower-case claim name and an "
            "absolute path without ':' or '..'), got \"nocolon\"");
  EXPECT_NE(render(bind, {R"(data=["a:/x", "Bad_Name:/y"])"}).error.find("entry 2"),
            std::string::npos);
  EXPECT_FALSE(render(bind, {"data=a:relative"}).ok);
  EXPECT_FALSE(render(bind, {"data=a:/x/../etc"}).ok);
  EXPECT_FALSE(render(bind, {"data=a:/x:ro"}).ok);
  EXPECT_EQ(render(bind, {R"(data=["a:/x", "b:/x"])"}).error,
            "value 'data' entry 2 mounts '/x' a second time");
  // "/x/" is "/x": the compiler's rule for literal entries, the same function.
  EXPECT_EQ(render(bind, {R"(data=["a:/x", "b:/x/"])"}).error,
            "value 'data' entry 2 mounts '/x' a second time");
  EXPECT_EQ(render(bind, {R"(data=[1])"}).error,
            "value 'data' must be a JSON list of strings, got \"[1]\"");
}

TEST(RuntimeJobRender, OneDataEntryRuleForLiteralsAndValues) {
  auto e = parse_data_entry("ckpt.store:/ckpt/run/");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->claim, "ckpt.store");
  EXPECT_EQ(e->path, "/ckpt/run");
  EXPECT_EQ(parse_data_entry("c:/")->path, "/");
  for (const char* bad : {"nocolon", ":/x", "Bad:/x", "-a:/x", "a:", "a:x", "a:/x/../y",
                          "a:/x:ro", "a:/x\ny"})
    EXPECT_FALSE(parse_data_entry(bad).has_value()) << bad;
  EXPECT_FALSE(parse_data_entry("a:/x\x01").has_value());
}

TEST(RuntimeJobRender, ReportsArgumentAndManifestErrors) {
  EXPECT_EQ(render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"}, {}).error,
            "no --value for 'workers' (bound at '/spec/mpiReplicaSpecs/Worker/replicas')");
  EXPECT_EQ(render({"/spec/nothing=x:int"}, {"x=1"}).error,
            "binding for 'x': '/spec/nothing' is not in the manifest");
  EXPECT_EQ(render({"/spec/slotsPerWorker=x:float"}, {"x=1"}).error,
            "--bind \"/spec/slotsPerWorker=x:float\": unknown kind 'float' (expected string, int, "
            "quantity, bool, env, data, count, tolerations, env-map, node-selector, gpu-resource, "
            "clean-pod-policy, success-policy, queue, priority-class or label)");
  EXPECT_EQ(render({}, {"novalue"}).error, "--value expects NAME=TEXT, got \"novalue\"");
  EXPECT_EQ(render({}, {"a=1", "a=2"}).error, "--value 'a' given twice");
  EXPECT_EQ(render_job_from_args("{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}", {}, {}).error,
            "the manifest is a v1 Pod, not an MPIJob, TFJob, PyTorchJob or TrainJob");
  EXPECT_EQ(render_job_from_args("{", {}, {}).error, "the manifest is not valid JSON");
}

TEST(RuntimeJobRender, ValueTextKeepsEqualsSigns) {
  std::string name, text, error;
  ASSERT_TRUE(parse_value("opt=a=b", name, text, error));
  EXPECT_EQ(name, "opt");
  EXPECT_EQ(text, "a=b");
  auto b = parse_binding("/spec/a~1b=x:string", error);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->pointer, "/spec/a~1b");
  EXPECT_EQ(b->name, "x");
}

// Issue 25 (F-B1, F-B3): what a value or a pointer may hold that ended in "internal error".
TEST(RuntimeJobRender, ValuesThatAreNotUtf8AreValueErrors) {
  EXPECT_EQ(render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"}, {"workers=\xFF"}).error,
            "value 'workers': byte 0xFF at byte 1 of it is not UTF-8");
  EXPECT_EQ(render({"/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/args/3=batch:string"},
                   {"batch=ok\xC3("}).error,
            "value 'batch': byte 0xC3 at byte 3 of it is not UTF-8");
  EXPECT_EQ(render({"/spec/mpiReplicaSpecs/Worker/replicas=w\xFF:int"}, {}).error,
            "--bind \"/spec/mpiReplicaSpecs/Worker/replicas=w\uFFFD:int\": byte 0xFF at byte 40 of it "
            "is not UTF-8");
  // Given as a map (as `pipec run --local` does), the same check.
  std::string error;
  auto bind = parse_binding("/spec/mpiReplicaSpecs/Worker/replicas=workers:int", error);
  ASSERT_TRUE(bind) << error;
  std::vector<Binding> binds{*bind};
  EXPECT_EQ(render_job(kMpiJob, binds, {{"workers", "4\xFF"}}).error,
            "value 'workers': byte 0xFF at byte 2 of it is not UTF-8");
}

TEST(RuntimeJobRender, PointersAtAnObjectOrWithAnEmptyTokenAreBindErrors) {
  EXPECT_EQ(render({"/spec=gpus:quantity"}, {"gpus=500m"}).error,
            "binding for 'gpus': '/spec' is an object in the manifest, not a single value");
  EXPECT_EQ(render({"/spec/mpiReplicaSpecs/Worker/template/spec/containers=img:string"}, {"img=x"}).error,
            "binding for 'img': '/spec/mpiReplicaSpecs/Worker/template/spec/containers' is a list in "
            "the manifest, not a single value");
  EXPECT_EQ(render({"/spec/slotsPerWorker=w:count"}, {"w=2"}).error,
            "binding for 'w': '/spec/slotsPerWorker' is a single value in the manifest, not an object");
  EXPECT_EQ(render({"/spec/mpiReplicaSpecs/Worker/template/spec/containers//image=img:string"}, {"img=x"})
                .error,
            "--bind \"/spec/mpiReplicaSpecs/Worker/template/spec/containers//image=img:string\": the pointer "
            "'/spec/mpiReplicaSpecs/Worker/template/spec/containers//image' has an empty token");
  EXPECT_EQ(render({"/spec/mpiReplicaSpecs/Worker/template/spec/containers/x/image=img:string"}, {"img=x"})
                .error,
            "binding for 'img': '/spec/mpiReplicaSpecs/Worker/template/spec/containers/x/image' is not in "
            "the manifest");
}

// Replica counts have one maximum (kMaxReplicas), for bound values of kind int and count
// and for the manifest's own counts; the compiler checks literals with the same rule.
TEST(RuntimeJobRender, ReplicaCountsHaveAMaximum) {
  auto at_max = render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"},
                       {"workers=" + std::to_string(kMaxReplicas)});
  ASSERT_TRUE(at_max.ok) << at_max.error;
  auto over = render({"/spec/mpiReplicaSpecs/Worker/replicas=workers:int"},
                     {"workers=" + std::to_string(kMaxReplicas + 1)});
  ASSERT_FALSE(over.ok);
  EXPECT_EQ(over.error, "value 'workers' must be at most 10000 (replicas of one role), got \"10001\"");
  auto count = render({"/spec/mpiReplicaSpecs/Worker=workers:count"}, {"workers=2000000"});
  ASSERT_FALSE(count.ok);
  EXPECT_EQ(count.error, "value 'workers' must be at most 10000 (replicas of Worker), got \"2000000\"");
  std::string manifest = kMpiJob;
  const std::string two = "\"replicas\": 2";
  manifest.replace(manifest.find(two), two.size(), "\"replicas\": 20000");
  auto literal = render_job_from_args(manifest, {}, {});
  ASSERT_FALSE(literal.ok);
  EXPECT_EQ(literal.error, "the manifest's Worker has 20000 replicas; one role has at most 10000");
}

}  // namespace
}  // namespace pipec::runtime
