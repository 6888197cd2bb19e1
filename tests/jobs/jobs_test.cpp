// Renders the job each training example would create, for the defaults and for parameter
// values at the edges, with the launcher's own code, and validates it against the CRD
// schemas and operator rules (/work/shared/tools/validate-workflow/validate).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "runtime/tf_pods.hpp"
#include "runtime/trainer_v2.hpp"
#include "tests/unit/training/job_support.hpp"

namespace pipec {
namespace {

using testing::build_train;
using testing::TrainOutcome;
using Overrides = std::map<std::string, ir::Literal>;

std::string text_of(const ir::Literal& l) {
  if (l.is_string()) return l.get<std::string>();
  return l.dump();
}

/// The run-time text Argo would pass for an input: parameters from `values`, else defaults.
std::string input_text(const ir::Value& v, const ir::Pipeline& p, const Overrides& values) {
  auto param = [&](const ir::Ref& r) -> ir::Literal {
    if (auto it = values.find(r.name); it != values.end()) return it->second;
    for (const auto& q : p.params)
      if (q.name == r.name && q.default_value) return *q.default_value;
    ADD_FAILURE() << "no value for " << r.name;
    return "";
  };
  switch (v.kind) {
    case ir::Value::Kind::Literal: return text_of(v.literal);
    case ir::Value::Kind::Ref: return text_of(param(*v.ref));
    case ir::Value::Kind::Interpolation: {
      std::string s;
      for (const auto& part : v.parts) s += part.ref ? text_of(param(*part.ref)) : part.text;
      return s;
    }
    case ir::Value::Kind::List: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : v.items) list.push_back(input_text(item, p, values));
      return list.dump();
    }
    case ir::Value::Kind::Map: break;
  }
  ADD_FAILURE() << "unexpected input value";
  return "";
}

runtime::RenderResult render_with(const TrainOutcome& out, const Overrides& values) {
  std::map<std::string, std::string> texts;
  for (const auto& [name, value] : out.call.inputs)
    texts[name] = input_text(value, *out.pipeline, values);
  return testing::render(out.call, texts);
}

TrainOutcome build_example(const std::string& file, bool mpi_v1 = false) {
  std::string path = std::string(PIPEC_SOURCE_DIR) + "/dsl-examples/" + file;
  training::JobOptions options;
  options.mpi_v1 = mpi_v1;
  auto out = build_train(testing::read_text(path), options, path);
  EXPECT_TRUE(out.built) << out.diagnostics;
  EXPECT_EQ(out.diagnostics, "");
  return out;
}

struct Case {
  std::string name;
  Overrides values;
};

/// Renders every case and validates all of them in one run of the validator.
void render_and_validate(const TrainOutcome& out, const std::vector<Case>& cases,
                         std::vector<nlohmann::json>* rendered = nullptr) {
  ASSERT_TRUE(out.built) << out.diagnostics;
  std::vector<std::pair<std::string, std::string>> docs;
  // The manifest as written in the workflow must be valid by itself, too.
  docs.emplace_back("manifest", testing::parts_of(out.call).manifest_text);
  for (const auto& c : cases) {
    auto r = render_with(out, c.values);
    ASSERT_TRUE(r.ok) << c.name << ": " << r.error;
    docs.emplace_back(c.name, r.job);
    if (rendered) rendered->push_back(nlohmann::json::parse(r.job));
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output;
}

int replicas(const nlohmann::json& job, const std::string& specs, const std::string& role) {
  return job["spec"][specs][role]["replicas"].get<int>();
}

TEST(Jobs, MpiRunSeed) {
  for (bool v1 : {false, true}) {
    auto out = build_example("mpi_run.pipe", v1);
    std::vector<nlohmann::json> jobs;
    render_and_validate(out,
                        {{"defaults", {}},
                         {"one-worker-no-gpu", {{"workers", 1}, {"gpus", 0}}},
                         {"many-workers", {{"workers", 64}, {"gpus", 8}, {"memory_limit", "500Mi"}}},
                         {"other-claim", {{"data", "team-data:/mnt/data"}}}},
                        &jobs);
    ASSERT_EQ(jobs.size(), 4u);
    EXPECT_EQ(replicas(jobs[2], "mpiReplicaSpecs", "Worker"), 64);
    auto worker = jobs[2]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
    EXPECT_EQ(worker["resources"]["limits"]["nvidia.com/gpu"], "8");
    EXPECT_EQ(worker["resources"]["limits"]["memory"], "500Mi");
    auto volumes = jobs[3]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["volumes"];
    EXPECT_NE(volumes.dump().find("team-data"), std::string::npos) << volumes.dump();
  }
}

TEST(Jobs, MpiRunValuesNeverReachTheScript) {
  auto out = build_example("mpi_run.pipe");
  auto r = render_with(out, {{"optimizer", "x\"; rm -rf / #"}});
  ASSERT_TRUE(r.ok) << r.error;
  auto job = nlohmann::json::parse(r.job);
  auto launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0];
  std::string script = launcher["command"][2];
  EXPECT_EQ(script.find("rm -rf"), std::string::npos) << script;
  EXPECT_NE(launcher["env"].dump().find("rm -rf"), std::string::npos);
}

TEST(Jobs, MpiRunBadRuntimeValuesNameTheValue) {
  auto out = build_example("mpi_run.pipe");
  auto r = render_with(out, {{"data", "no-colon"}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("'data'"), std::string::npos) << r.error;
  r = render_with(out, {{"workers", 0}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("'workers'"), std::string::npos) << r.error;
  r = render_with(out, {{"memory_limit", "-1Gi"}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("memory_limit"), std::string::npos) << r.error;
}

TEST(Jobs, MnistTfSeed) {
  auto out = build_example("mnist_tf.pipe");
  std::vector<nlohmann::json> jobs;
  render_and_validate(out,
                      {{"defaults", {}},
                       {"one-worker-cpu", {{"workers", 1}, {"gpus", 0}}},
                       {"many-workers", {{"workers", 16}, {"gpus", 8}}}},
                      &jobs);
  ASSERT_EQ(jobs.size(), 3u);
  const auto& specs = jobs[0]["spec"]["tfReplicaSpecs"];
  EXPECT_EQ(specs["Chief"]["replicas"], 1);
  EXPECT_EQ(specs["Worker"]["replicas"], 2);
  EXPECT_EQ(specs["PS"]["replicas"], 2);
  EXPECT_EQ(jobs[0]["spec"]["runPolicy"]["cleanPodPolicy"], "Running");
  for (const auto& role : {"Chief", "Worker", "PS"}) {
    const auto& c = specs[role]["template"]["spec"]["containers"][0];
    EXPECT_EQ(c["name"], "tensorflow");
    EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/training");
  }
  EXPECT_FALSE(specs["PS"]["template"]["spec"]["containers"][0].contains("resources"));
  EXPECT_EQ(specs["PS"]["template"]["spec"]["containers"][0]["image"],
            "registry.aliyuncs.com/tensorflow-samples/tf-mnist-distributed:cpu");
  EXPECT_TRUE(out.call.writes_ui_metadata);
  EXPECT_EQ(testing::parts_of(out.call).flags["--tensorboard"], "/training/tensorflow/logs");
}

TEST(Jobs, HelmTfTrainingSeed) {
  auto out = build_example("helm_tf_training.pipe");
  std::vector<nlohmann::json> jobs;
  render_and_validate(out,
                      {{"defaults", {}},
                       {"cpu-only", {{"gpu_count", 0}, {"worker_count", 1}}},
                       {"big", {{"worker_count", 32}, {"ps_count", 8}, {"gpu_count", 8}, {"epochs", 5000},
                                {"learning_rate", 0.5}, {"data", "other-claim:/data"}}}},
                      &jobs);
  ASSERT_EQ(jobs.size(), 3u);
  const auto& worker = jobs[2]["spec"]["tfReplicaSpecs"]["Worker"];
  EXPECT_EQ(worker["replicas"], 32);
  EXPECT_EQ(jobs[2]["spec"]["tfReplicaSpecs"]["PS"]["replicas"], 8);
  EXPECT_EQ(jobs[1]["spec"]["tfReplicaSpecs"]["PS"]["replicas"], 1);
  std::string env = worker["template"]["spec"]["containers"][0]["env"].dump();
  EXPECT_NE(env.find("\"EPOCHS\",\"value\":\"5000\""), std::string::npos) << env;
  EXPECT_NE(env.find("\"LEARNING_RATE\",\"value\":\"0.5\""), std::string::npos) << env;
  EXPECT_NE(worker["template"]["spec"]["volumes"].dump().find("other-claim"), std::string::npos);
}

TEST(Jobs, PyTorchDdp) {
  auto out = build_example("pytorch_ddp.pipe");
  std::vector<nlohmann::json> jobs;
  render_and_validate(out,
                      {{"defaults", {}},
                       {"one-worker-no-gpu", {{"workers", 1}, {"gpus", 0}}},
                       {"many", {{"workers", 64}, {"gpus", 8}, {"memory", "512Gi"}}}},
                      &jobs);
  ASSERT_EQ(jobs.size(), 3u);
  const auto& specs = jobs[0]["spec"]["pytorchReplicaSpecs"];
  EXPECT_EQ(specs["Master"]["replicas"], 1);
  EXPECT_EQ(specs["Worker"]["replicas"], 3);
  EXPECT_EQ(specs["Worker"]["template"]["spec"]["containers"][0]["name"], "pytorch");
  EXPECT_EQ(specs["Worker"]["template"]["spec"]["volumes"].size(), 3u);  // 2 data + code
  EXPECT_EQ(jobs[0]["spec"]["runPolicy"]["backoffLimit"], 2);
}

// runtime "trainer-v2": the launcher renders the PyTorchJob, then makes the TrainJob of it
// (runtime/trainer_v2.hpp); every TrainJob at the edges passes the Trainer v2 CRD schema.
TEST(Jobs, PyTorchOnTrainerV2) {
  auto out = build_example("pytorch_trainer_v2.pipe");
  ASSERT_TRUE(out.built) << out.diagnostics;
  const std::vector<Case> cases = {
      {"defaults", {}},
      {"one-node-no-gpu", {{"workers", 1}, {"gpus", 0}}},
      {"many", {{"workers", 63}, {"gpus", 8}, {"training_runtime", "torch-distributed-gpu"}}},
      {"namespaced", {{"training_runtime", "team-torch"}}}};
  std::vector<std::pair<std::string, std::string>> docs;
  std::vector<nlohmann::json> jobs;
  for (const auto& c : cases) {
    auto r = render_with(out, c.values);
    ASSERT_TRUE(r.ok) << c.name << ": " << r.error;
    std::string runtime_name = "torch-distributed";
    if (auto it = c.values.find("training_runtime"); it != c.values.end())
      runtime_name = it->second.get<std::string>();
    // A namespaced TrainingRuntime (--trainer-runtime-kind) is the runtimeRef's kind.
    auto t = runtime::pytorchjob_to_trainjob(r.job, runtime_name, c.name == "namespaced" ? "TrainingRuntime" : "");
    ASSERT_TRUE(t.ok) << t.error;
    docs.emplace_back(c.name, t.job);
    jobs.push_back(nlohmann::json::parse(t.job));
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output;
  // The launcher passes the runtime on.
  auto args = testing::args_of(out.call);
  auto flag = std::find(args.begin(), args.end(), "--runtime");
  ASSERT_NE(flag, args.end());
  EXPECT_EQ(*(flag + 1), "trainer-v2");
  const auto& t = jobs[0]["spec"];
  EXPECT_EQ(t["runtimeRef"]["name"], "torch-distributed");
  EXPECT_EQ(t["trainer"]["numNodes"], 4);
  EXPECT_EQ(t["trainer"]["numProcPerNode"], 2);
  EXPECT_EQ(t["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(jobs[1]["spec"]["trainer"]["numNodes"], 2);
  EXPECT_EQ(jobs[2]["spec"]["trainer"]["numNodes"], 64);
  EXPECT_EQ(jobs[2]["spec"]["runtimeRef"]["name"], "torch-distributed-gpu");
  EXPECT_EQ(jobs[2]["spec"]["runtimeRef"]["kind"], "ClusterTrainingRuntime");
  EXPECT_EQ(jobs[3]["spec"]["runtimeRef"]["kind"], "TrainingRuntime");
  const auto& pod = t["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
                     ["template"]["spec"]["template"]["spec"];
  EXPECT_EQ(pod["volumes"].size(), 2u);
  EXPECT_EQ(pod["containers"][0]["name"], "node");
  EXPECT_EQ(pod["containers"][0]["volumeMounts"].size(), 2u);
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.product"], "NVIDIA-A100-SXM4-80GB");
  EXPECT_EQ(pod["tolerations"][0]["key"], "nvidia.com/gpu");
}

// mpi_job on runtime "trainer-v2": the TrainJob made of the rendered MPIJob passes the
// Trainer v2 CRD schema at the edges: 1 and 64 workers, 0 and 8 GPUs, 1 and 8 slots.
TEST(Jobs, MpiOnTrainerV2) {
  auto out = build_example("mpi_trainer_v2.pipe");
  ASSERT_TRUE(out.built) << out.diagnostics;
  const std::vector<Case> cases = {
      {"defaults", {}},
      {"one-node-no-gpu", {{"workers", 1}, {"gpus", 0}}},
      {"many", {{"workers", 64}, {"gpus", 8}, {"slots", 8}, {"training_runtime", "deepspeed-distributed"},
                {"data", "other-claim:/data"}}}};
  std::vector<std::pair<std::string, std::string>> docs;
  std::vector<nlohmann::json> jobs;
  for (const auto& c : cases) {
    auto r = render_with(out, c.values);
    ASSERT_TRUE(r.ok) << c.name << ": " << r.error;
    std::string runtime_name = "horovod-mpi";
    if (auto it = c.values.find("training_runtime"); it != c.values.end())
      runtime_name = it->second.get<std::string>();
    auto t = runtime::to_trainjob(r.job, runtime_name);
    ASSERT_TRUE(t.ok) << t.error;
    docs.emplace_back(c.name, t.job);
    jobs.push_back(nlohmann::json::parse(t.job));
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output;
  auto args = testing::args_of(out.call);
  auto flag = std::find(args.begin(), args.end(), "--runtime");
  ASSERT_NE(flag, args.end());
  EXPECT_EQ(*(flag + 1), "trainer-v2");
  const auto& t = jobs[0]["spec"];
  EXPECT_EQ(t["runtimeRef"]["name"], "horovod-mpi");
  EXPECT_EQ(t["trainer"]["image"], "horovod/horovod:0.28.1");
  EXPECT_EQ(t["trainer"]["numNodes"], 2);
  EXPECT_EQ(t["trainer"]["numProcPerNode"], 1);
  EXPECT_EQ(t["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(jobs[1]["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"], "0");
  EXPECT_EQ(jobs[2]["spec"]["trainer"]["numNodes"], 64);
  EXPECT_EQ(jobs[2]["spec"]["trainer"]["numProcPerNode"], 8);
  EXPECT_EQ(jobs[2]["spec"]["runtimeRef"]["name"], "deepspeed-distributed");
  const auto& patched = t["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"];
  ASSERT_EQ(patched.size(), 2u);
  for (const auto& job : patched) {
    const auto& pod = job["template"]["spec"]["template"]["spec"];
    EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"], "user-susan") << job["name"];
    EXPECT_EQ(pod["containers"][0]["name"], "node");
    EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.present"], "true");
    EXPECT_EQ(pod["tolerations"][0]["key"], "nvidia.com/gpu");
  }
  // The command is the launcher's script; the value is in the environment, not in it.
  EXPECT_NE(t["trainer"]["command"][2].get<std::string>().find("mpirun python"), std::string::npos);
  EXPECT_NE(t["trainer"]["env"].dump().find("PIPEC_batch_size"), std::string::npos);
}

// runtime "pods": the Pods and headless Services the launcher makes of the rendered TFJob
// (runtime/tf_pods.hpp) pass Kubernetes' core v1 schema, at the edges: 0 and several ps, 1
// and many workers, evaluator on and off, 0 and 8 GPUs.
TEST(Jobs, TfOnPlainPods) {
  const std::string program = R"(use arena
pipeline p {
  param workers: int = 2
  param ps: int = 1
  param evaluator: int = 1
  param chief: int = 1
  param gpus: int = 1
  step train = tf_job(runtime: "pods", image: "tensorflow/tensorflow:2.15.0", command: "python t.py",
                      workers: workers, ps: ps, evaluator: evaluator, chief: chief, gpus: gpus,
                      data: ["ckpt:/ckpt"], sync_source: "https://github.com/tensorflow/models",
                      tolerations: ["nvidia.com/gpu:NoSchedule"], node_selector: {pool: "gpu"},
                      metrics: ["accuracy"])
})";
  auto out = testing::build_train(program, {}, "pods.pipe");
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto args = testing::args_of(out.call);
  auto flag = std::find(args.begin(), args.end(), "--runtime");
  ASSERT_NE(flag, args.end());
  EXPECT_EQ(*(flag + 1), "pods");
  const std::vector<Case> cases = {
      {"all-roles", {}},
      {"no-ps-one-worker-no-gpu", {{"ps", 0}, {"workers", 1}, {"gpus", 0}, {"evaluator", 0}}},
      {"many", {{"ps", 4}, {"workers", 16}, {"gpus", 8}, {"evaluator", 0}, {"chief", 0}}}};
  std::vector<std::pair<std::string, std::string>> docs;
  std::map<std::string, std::size_t> pod_count;
  nlohmann::json owner = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "wf-train-1"},
                          {"uid", "0b7e5a1c-0000-4000-8000-000000000001"}, {"controller", false},
                          {"blockOwnerDeletion", false}};
  for (const auto& c : cases) {
    auto r = render_with(out, c.values);
    ASSERT_TRUE(r.ok) << c.name << ": " << r.error;
    auto pods = runtime::tfjob_to_pods(nlohmann::json::parse(r.job), "wf-train-1", "team",
                                       {{"pipelines.kubeflow.org/step", "wf-train-1"}}, owner);
    ASSERT_TRUE(pods.ok) << pods.error;
    pod_count[c.name] = pods.size();
    for (std::size_t i = 0; i < pods.size(); ++i) {
      docs.emplace_back(c.name + "-pod-" + std::to_string(i), pods.pod(i).dump());
      docs.emplace_back(c.name + "-svc-" + std::to_string(i), pods.service(i).dump());
    }
  }
  EXPECT_EQ(pod_count["all-roles"], 5u);                  // chief, 2 workers, 1 ps, 1 evaluator
  EXPECT_EQ(pod_count["no-ps-one-worker-no-gpu"], 2u);    // chief, 1 worker
  EXPECT_EQ(pod_count["many"], 20u);                      // 16 workers, 4 ps
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output.substr(0, 2000);
}

TEST(Jobs, UaiTrainSeed) {
  auto out = build_example("uai_train_tf.pipe");
  std::vector<nlohmann::json> jobs;
  render_and_validate(out,
                      {{"defaults", {}},
                       {"smallest", {{"workers", 1}, {"ps", 1}, {"gpus_per_worker", 0}}},
                       {"largest", {{"workers", 32}, {"ps", 8}, {"gpus_per_worker", 8},
                                    {"data", "other-claim:/data"}, {"output_dir", "/data/out dir/it's"}}}},
                      &jobs);
  ASSERT_EQ(jobs.size(), 3u);
  const auto& specs = jobs[2]["spec"]["tfReplicaSpecs"];
  EXPECT_EQ(specs["Worker"]["replicas"], 32);
  EXPECT_EQ(specs["PS"]["replicas"], 8);
  // ps on CPU with their own limits, workers with GPUs
  const auto& ps = specs["PS"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(ps["resources"]["limits"]["cpu"], "4");
  EXPECT_FALSE(ps["resources"]["limits"].contains("nvidia.com/gpu"));
  const auto& worker = specs["Worker"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(worker["resources"]["limits"]["nvidia.com/gpu"], "8");
  // 0 GPUs at run time: the bound limit is 0 (a valid extended-resource limit)
  EXPECT_EQ(jobs[1]["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
                ["resources"]["limits"]["nvidia.com/gpu"],
            "0");
  // the output directory reaches the script as a variable, whatever it holds
  EXPECT_NE(worker["env"].dump().find("/data/out dir/it's"), std::string::npos);
  EXPECT_EQ(worker["command"][2].get<std::string>().find("it's"), std::string::npos);
  EXPECT_EQ(jobs[0]["spec"]["runPolicy"]["cleanPodPolicy"], "Running");
}

TEST(Jobs, PsWorkerSeed) {
  auto out = build_example("ps_worker_tf.pipe");
  std::vector<nlohmann::json> jobs;
  render_and_validate(out,
                      {{"defaults", {}},
                       {"smallest", {{"workers", 1}, {"ps", 1}, {"learning_rate", 0}}},
                       {"largest", {{"workers", 16}, {"ps", 4}, {"learning_rate", 1}}}},
                      &jobs);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[2]["spec"]["tfReplicaSpecs"]["Worker"]["replicas"], 16);
  EXPECT_EQ(jobs[2]["spec"]["tfReplicaSpecs"]["PS"]["replicas"], 4);
  EXPECT_EQ(jobs[1]["spec"]["tfReplicaSpecs"]["PS"]["replicas"], 1);
}

// Several data volumes from a list parameter, replaced at run time.
TEST(Jobs, DataVolumesFromAListParameter) {
  auto out = build_train(R"(use arena
pipeline p {
  param data: list<string> = ["a:/a"]
  param workers: int = 2
  step train = tf_job(image: "tf", command: "python t.py", data: data, workers: workers, ps: 1,
                      tensorboard: "/a/logs")
}
)");
  std::vector<nlohmann::json> jobs;
  render_and_validate(
      out,
      {{"one", {}},
       {"three", {{"data", nlohmann::ordered_json::array({"a:/a", "b:/b/c", "c-c:/data"})}}}},
      &jobs);
  ASSERT_EQ(jobs.size(), 2u);
  auto spec = jobs[1]["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"];
  EXPECT_EQ(spec["volumes"].size(), 3u);
  EXPECT_EQ(spec["containers"][0]["volumeMounts"].size(), 3u);
}

// Seed 003's shape, every argument from a parameter: role counts (0 removes the role),
// several data entries each a value, TensorBoard, timeouts, maps and lists.
const char* kEverythingFromParams = R"(use arena
pipeline p {
  param ps: int = 2
  param evaluator: int = 0
  param chief: int = 1
  param workers: int = 2
  param dataset: string = "training-data:/data"
  param logs: string = "training-logs:/logs"
  param tb: string = "/logs/tb"
  param timeout: string = "4h"
  param pending: string = "30m"
  param env: map<string> = {MODE: "full"}
  param sel: map<string> = {pool: "gpu"}
  param tols: list<string> = ["nvidia.com/gpu:NoSchedule"]
  param metrics: list<string> = ["Test-Accuracy", "loss:min"]
  param policy: string = "Running"
  param success: string = ""
  param gpu_res: string = "nvidia.com/gpu"
  step train = tf_job(image: "tf:2", command: "python train.py", ps: ps, evaluator: evaluator,
                      chief: chief, workers: workers, data: [dataset, logs, "scratch:/scratch"],
                      tensorboard: tb, timeout: timeout, pending_timeout: pending, env: env,
                      node_selector: sel, tolerations: tols, metrics: metrics,
                      clean_pod_policy: policy, success_policy: success, gpu_resource: gpu_res,
                      gpus: 1)
}
)";

TEST(Jobs, EveryArgumentFromARunTimeValue) {
  auto out = build_train(kEverythingFromParams);
  ASSERT_TRUE(out.built) << out.diagnostics;
  EXPECT_EQ(out.diagnostics, "");
  using J = nlohmann::ordered_json;
  std::vector<nlohmann::json> jobs;
  render_and_validate(out,
                      {{"defaults", {}},
                       {"no-ps-no-evaluator", {{"ps", 0}, {"evaluator", 0}}},
                       {"one-each", {{"ps", 1}, {"evaluator", 1}, {"chief", 0}, {"workers", 1}}},
                       {"many", {{"ps", 8}, {"evaluator", 3}, {"workers", 64}}},
                       {"chief-only", {{"workers", 0}, {"chief", 1}, {"ps", 0}}},
                       {"shaped", {{"env", J{{"A", "1"}, {"B", "x y"}}},
                                   {"sel", J::object()},
                                   {"tols", J::array({"*", "k=v:NoExecute"})},
                                   {"policy", "All"},
                                   {"success", "AllWorkers"},
                                   {"gpu_res", "amd.com/gpu"},
                                   {"logs", "other-claim:/other"}}}},
                      &jobs);
  ASSERT_EQ(jobs.size(), 6u);
  auto roles = [](const nlohmann::json& job) {
    std::vector<std::string> r;
    for (const auto& [k, v] : job["spec"]["tfReplicaSpecs"].items()) r.push_back(k + "=" + v["replicas"].dump());
    return r;
  };
  EXPECT_EQ(roles(jobs[0]), (std::vector<std::string>{"Chief=1", "PS=2", "Worker=2"}));
  EXPECT_EQ(roles(jobs[1]), (std::vector<std::string>{"Chief=1", "Worker=2"}));
  EXPECT_EQ(roles(jobs[2]), (std::vector<std::string>{"Evaluator=1", "PS=1", "Worker=1"}));
  EXPECT_EQ(roles(jobs[3]), (std::vector<std::string>{"Chief=1", "Evaluator=3", "PS=8", "Worker=64"}));
  EXPECT_EQ(roles(jobs[4]), (std::vector<std::string>{"Chief=1"}));
  auto chief = jobs[0]["spec"]["tfReplicaSpecs"]["Chief"]["template"]["spec"];
  EXPECT_EQ(chief["volumes"].size(), 3u);
  EXPECT_EQ(chief["containers"][0]["volumeMounts"][2]["mountPath"], "/scratch");
  EXPECT_EQ(chief["nodeSelector"]["pool"], "gpu");
  EXPECT_EQ(chief["tolerations"][0]["effect"], "NoSchedule");
  auto shaped = jobs[5]["spec"];
  auto worker = shaped["tfReplicaSpecs"]["Worker"]["template"]["spec"];
  EXPECT_EQ(shaped["runPolicy"]["cleanPodPolicy"], "All");
  EXPECT_EQ(shaped["successPolicy"], "AllWorkers");
  EXPECT_EQ(worker["containers"][0]["resources"]["limits"]["amd.com/gpu"], "1");
  EXPECT_FALSE(worker["containers"][0]["resources"]["limits"].contains("nvidia.com/gpu"));
  EXPECT_EQ(worker["tolerations"].size(), 2u);
  EXPECT_EQ(worker["containers"][0]["volumeMounts"][1]["mountPath"], "/other");
  std::string env = worker["containers"][0]["env"].dump();
  EXPECT_NE(env.find(R"({"name":"B","value":"x y"})"), std::string::npos) << env;

  // The launcher's options from values are whole argv words.
  auto parts = testing::parts_of(out.call);
  std::string args;
  for (const auto& a : testing::args_of(out.call)) args += a + "\n";
  for (const char* want : {"--tensorboard\n{{inputs.parameters.tensorboard}}\n",
                           "--running-timeout\n{{inputs.parameters.timeout}}\n",
                           "--pending-timeout\n{{inputs.parameters.pending_timeout}}\n",
                           "--metric-list-value\nmetrics\n"})
    EXPECT_NE(args.find(want), std::string::npos) << want << " in\n" << args;
  EXPECT_TRUE(out.call.writes_ui_metadata);
  EXPECT_TRUE(out.call.writes_metrics);
}

TEST(Jobs, OneDataEntryFromAValue) {
  auto out = build_train(R"(use arena
pipeline p {
  param dataset: string = "training-data:/data"
  step train = mpi_job(image: "h", command: "mpirun x", data: [dataset], workers: 2)
}
)");
  std::vector<nlohmann::json> jobs;
  render_and_validate(out, {{"default", {}}, {"other", {{"dataset", "c:/mnt"}}}}, &jobs);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["volumes"][0]
                ["persistentVolumeClaim"]["claimName"], "c");
}

TEST(Jobs, BadShapeValuesNameTheValue) {
  auto out = build_train(kEverythingFromParams);
  ASSERT_TRUE(out.built) << out.diagnostics;
  using J = nlohmann::ordered_json;
  struct Bad {
    Overrides values;
    std::string message;
  };
  for (const Bad& b : std::vector<Bad>{
           {{{"ps", -1}}, "value 'ps' must be an integer >= 0 (replicas of PS), got \"-1\""},
           {{{"chief", 2}}, "value 'chief' must be 0 or 1 (replicas of Chief), got \"2\""},
           {{{"chief", 0}, {"workers", 0}}, "neither a chief nor a worker"},
           {{{"policy", "Sometimes"}}, "value 'clean_pod_policy' must be None, Running or All, got \"Sometimes\""},
           {{{"success", "Any"}}, "value 'success_policy' must be"},
           {{{"tols", J::array({"k:Sometimes"})}}, "value 'tolerations': toleration \"k:Sometimes\""},
           {{{"env", J{{"PIPEC_x", "1"}}}}, "value 'env': \"PIPEC_x\""},
           {{{"gpu_res", "not a name"}}, "value 'gpu_resource' must be a resource name"},
           {{{"logs", "training-data:/data"}}, "mounts '/data' a second time"}}) {
    auto r = render_with(out, b.values);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find(b.message), std::string::npos) << r.error;
  }
}

// A step built by hand whose values come from another step's outputs and a loop item: no
// default is known, the manifest holds placeholders and is valid; the bound values replace
// them.
TEST(Jobs, StepOutputsAndLoopItemsGetValidPlaceholders) {
  auto ref = [](ir::Ref::Kind kind, const char* name, const char* field, ir::TypeKind type) {
    ir::Value v;
    v.kind = ir::Value::Kind::Ref;
    v.type = ir::Type::scalar(type);
    v.ref = ir::Ref{.kind = kind, .name = name, .field = field, .type = v.type};
    return v;
  };
  auto lit = [](ir::Literal l) {
    ir::Value v;
    v.literal = std::move(l);
    return v;
  };
  ir::Step step;
  step.name = "Train_Model";
  step.op = "mpi_job";
  step.kind = ir::OpKind::MpiJob;
  step.args.emplace_back("image", ref(ir::Ref::Kind::StepOutput, "build", "image",
                                      ir::TypeKind::String));
  ir::Value command;
  command.kind = ir::Value::Kind::Interpolation;
  command.parts.push_back(ir::Part{"mpirun train --lr ", std::nullopt});
  command.parts.push_back(ir::Part{{}, ref(ir::Ref::Kind::LoopItem, "cfg", "lr",
                                           ir::TypeKind::Float).ref});
  step.args.emplace_back("command", command);
  step.args.emplace_back("workers", ref(ir::Ref::Kind::StepOutput, "plan", "workers",
                                        ir::TypeKind::Int));
  ir::Value data;
  data.kind = ir::Value::Kind::List;
  data.items.push_back(ref(ir::Ref::Kind::LoopItem, "cfg", "volume", ir::TypeKind::String));
  step.args.emplace_back("data", data);
  step.args.emplace_back("gpus", ref(ir::Ref::Kind::LoopItem, "cfg", "gpus", ir::TypeKind::Int));
  step.args.emplace_back("metrics", lit(nlohmann::ordered_json::array({"loss:min"})));

  ir::LauncherCall call;
  Diagnostics diags;
  ASSERT_TRUE(training::build_launcher_call(step, {}, call, diags));
  auto p = testing::parts_of(call);
  EXPECT_EQ(p.manifest["metadata"]["name"], "train-model");
  EXPECT_EQ(p.manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"], 1);
  ASSERT_EQ(call.inputs.size(), 5u);  // image, cmd_cfg_lr, workers, gpus, data
  std::map<std::string, std::string> values = {{"image", "horovod:1"}, {"workers", "12"},
                                               {"gpus", "2"}, {"data", "vol:/data"},
                                               {"cmd_cfg_lr", "0.1"}};
  auto r = testing::render(call, values);
  ASSERT_TRUE(r.ok) << r.error;
  auto v = testing::validate_jobs({{"placeholders", p.manifest_text}, {"rendered", r.job}});
  EXPECT_EQ(v.code, 0) << v.output;
  auto job = nlohmann::json::parse(r.job);
  EXPECT_EQ(job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"], 12);
  auto launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(launcher["command"][2], "mpirun train --lr \"${PIPEC_cfg_lr}\"");
  EXPECT_EQ(launcher["env"][0]["name"], "PIPEC_cfg_lr");
  EXPECT_EQ(launcher["env"][0]["value"], "0.1");
}

// What the Argo writer will pass for an input, as a DAG task argument.
std::string argo_text(const ir::Value& v) {
  switch (v.kind) {
    case ir::Value::Kind::Literal: return text_of(v.literal);
    case ir::Value::Kind::Ref: return "{{workflow.parameters." + v.ref->name + "}}";
    case ir::Value::Kind::Interpolation: {
      std::string s;
      for (const auto& part : v.parts)
        s += part.ref ? "{{workflow.parameters." + part.ref->name + "}}" : part.text;
      return s;
    }
    case ir::Value::Kind::List: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : v.items) list.push_back(argo_text(item));
      return list.dump();
    }
    case ir::Value::Kind::Map: break;
  }
  return "";
}

// Until the Argo writer exists: a hand-made workflow holding the launcher call (the
// template input parameters, the DAG task passing the pipeline parameters) checked with
// inject-check (no finding, no splice) and validate.
TEST(Jobs, LauncherArgsPassInjectCheck) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pipec-inject-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string files;
  for (const char* example :
       {"mpi_run.pipe", "mnist_tf.pipe", "helm_tf_training.pipe", "pytorch_ddp.pipe", "shared_cluster.pipe"}) {
    auto out = build_example(example);
    ASSERT_TRUE(out.built);
    nlohmann::ordered_json wf;
    wf["apiVersion"] = "argoproj.io/v1alpha1";
    wf["kind"] = "Workflow";
    wf["metadata"]["generateName"] = "example-";
    wf["spec"]["entrypoint"] = "main";
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (const auto& p : out.pipeline->params)
      params.push_back({{"name", p.name}, {"value", text_of(*p.default_value)}});
    wf["spec"]["arguments"]["parameters"] = params;
    nlohmann::ordered_json task_args = nlohmann::ordered_json::array();
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (const auto& [name, value] : out.call.inputs) {
      task_args.push_back({{"name", name}, {"value", argo_text(value)}});
      inputs.push_back({{"name", name}});
    }
    nlohmann::ordered_json main_t = {
        {"name", "main"},
        {"dag",
         {{"tasks",
           nlohmann::ordered_json::array(
               {{{"name", "train"}, {"template", "train"},
                 {"arguments", {{"parameters", task_args}}}}})}}}};
    nlohmann::ordered_json train_t = {
        {"name", "train"},
        {"inputs", {{"parameters", inputs}}},
        {"container",
         {{"image", "ghcr.io/pipec/pipec-launcher:0.1.0"},
          {"command", nlohmann::ordered_json::array({"pipec-launcher"})},
          {"args", testing::args_of(out.call)}}}};
    wf["spec"]["templates"] = nlohmann::ordered_json::array({main_t, train_t});
    fs::path f = dir / (std::string(example) + ".yaml");
    std::ofstream(f) << wf.dump(2) << "\n";
    files += " '" + f.string() + "'";
  }
  std::string log = (dir / "log.txt").string();
  int rc = std::system((std::string(PIPEC_SHARED_DIR "/tools/inject-check/inject-check") + files + " > '" + log +
                        "' 2>&1").c_str());
  std::string inject = testing::read_text(log);
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << inject;
  EXPECT_EQ(inject.find("spliced"), std::string::npos) << inject;
  std::size_t summaries = 0;
  for (std::size_t at = inject.find("inject: "); at != std::string::npos;
       at = inject.find("inject: ", at + 1)) {
    ++summaries;
    EXPECT_EQ(inject.compare(at, 41, "inject: 0 findings, 0 splices to review, "), 0) << inject;
  }
  EXPECT_EQ(summaries, 5u) << inject;
  rc = std::system((std::string(PIPEC_SHARED_DIR "/tools/validate-workflow/validate") + files + " > '" + log +
                    "' 2>&1").c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << testing::read_text(log);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipec
