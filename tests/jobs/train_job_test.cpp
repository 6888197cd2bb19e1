// train_job (docs/training-ops.md, "train_job"): a Kubeflow Trainer v2 TrainJob on any
// runtime by name, in the TrainJob's own terms. Every runtime Trainer v2.3.0 ships
// (manifests/base/runtimes of kubeflow/trainer v2.3.0) renders a TrainJob, by the
// launcher's own code, that the v2.3.0 CRD accepts (the shared validator).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/trainer_v2.hpp"
#include "tests/unit/training/job_support.hpp"

namespace pipec {
namespace {

using nlohmann::json;

struct Runtime {
  std::string name;  // as Trainer v2.3.0 names the ClusterTrainingRuntime
  std::string args;  // what a step on it says besides the runtime
};

// Trainer v2.3.0's runtimes (manifests/base/runtimes/kustomization.yaml and torchtune/),
// each with the arguments a user of it gives.
const std::vector<Runtime> kShipped = {
    {"torch-distributed", R"(num_nodes: 2, num_proc_per_node: 4, image: "pytorch/pytorch:2.5.1",
       command: ["torchrun", "train.py"], args: ["--epochs", "3"], gpus: 4, memory_limit: "32Gi")"},
    {"deepspeed-distributed", R"(num_nodes: 2, num_proc_per_node: 8,
       image: "ghcr.io/kubeflow/trainer/deepspeed-runtime", command: ["mpirun", "python", "/workspace/ds.py"])"},
    {"mlx-distributed", R"(num_nodes: 2, image: "ghcr.io/kubeflow/trainer/mlx-runtime",
       command: ["mpirun", "python", "/workspace/mlx_train.py"])"},
    {"jax-distributed", R"(num_nodes: 2, image: "ghcr.io/kubeflow/trainer/jax-runtime", command: ["python", "jax.py"],
       gpus: 1)"},
    {"xgboost-distributed", R"(num_nodes: 3, command: ["python", "xgb.py"], cpu_limit: "4")"},
    {"torchtune-llama3.2-1b", R"(num_nodes: 1, gpus: 1, dataset_uri: "hf://tatsu-lab/alpaca",
       model_uri: "hf://meta-llama/Llama-3.2-1B-Instruct", model_secret: "hf-token",
       model_env: {HF_HUB_ENABLE_HF_TRANSFER: "1"}, dataset_env: {SPLIT: "train[:1000]"})"},
    {"torchtune-llama3.2-3b", R"(num_nodes: 2, gpus: 2, dataset_uri: "hf://tatsu-lab/alpaca",
       model_uri: "hf://meta-llama/Llama-3.2-3B-Instruct", model_secret: "hf-token")"},
    {"torchtune-qwen2.5-1.5b", R"(num_nodes: 1, gpus: 1, model_uri: "hf://Qwen/Qwen2.5-1.5B-Instruct",
       dataset_uri: "hf://tatsu-lab/alpaca", dataset_secret: "hf-token")"},
};

std::string step_on(const Runtime& r, const std::string& more = "") {
  return "use arena\npipeline p {\n  step train = train_job(trainer_runtime: \"" + r.name + "\", " + r.args + more +
         ")\n}\n";
}

// Each shipped runtime: the TrainJob names it (a ClusterTrainingRuntime), carries the
// step's terms, and passes the v2.3.0 CRD, with and without the scheduling fields.
TEST(TrainJob, EveryShippedRuntimeRendersATrainJobTheCrdAccepts) {
  const std::string scheduling = R"(, queue: "team-a", labels: {"cost-center": "cv-42"},
       annotations: {"example.com/owner": "a@example.com"}, shm_size: "16Gi", data: ["ckpt:/ckpt"],
       node_selector: {"cloud.google.com/gke-accelerator": "nvidia-l4"}, tolerations: ["nvidia.com/gpu:NoSchedule"],
       metrics: ["loss"], timeout: "4h")";
  std::vector<std::pair<std::string, std::string>> docs;
  for (const Runtime& r : kShipped) {
    for (const std::string& more : {std::string(), scheduling}) {
      auto out = testing::build_train(step_on(r, more), {}, r.name + ".pipe");
      ASSERT_TRUE(out.built) << r.name << "\n" << out.diagnostics;
      EXPECT_EQ(out.step->kind, ir::OpKind::TrainJob);
      auto rendered = testing::render(out.call, testing::input_texts(out, {}));
      ASSERT_TRUE(rendered.ok) << r.name << ": " << rendered.error;
      json job = json::parse(rendered.job);
      EXPECT_EQ(job["kind"], "TrainJob");
      EXPECT_EQ(job["spec"]["runtimeRef"]["name"], r.name);
      EXPECT_EQ(job["spec"]["runtimeRef"]["kind"], "ClusterTrainingRuntime");
      EXPECT_GE(job["spec"]["trainer"]["numNodes"].get<int>(), 1);
      if (r.name.rfind("torchtune-", 0) == 0) {
        EXPECT_TRUE(job["spec"]["initializer"]["model"]["storageUri"].is_string()) << job.dump();
        EXPECT_TRUE(job["spec"]["initializer"]["dataset"]["storageUri"].is_string()) << job.dump();
      }
      if (!more.empty()) {
        EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a");
        EXPECT_EQ(job["spec"]["suspend"], true);
        const json& patch = job["spec"]["runtimePatches"][0];
        EXPECT_EQ(patch["manager"], "pipec.dev/launcher");
        const json& jobs = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"];
        ASSERT_EQ(jobs.size(), 1u);
        EXPECT_EQ(jobs[0]["name"], "node");  // every shipped runtime has it
        const json& pod = jobs[0]["template"]["spec"]["template"];
        EXPECT_EQ(pod["metadata"]["labels"]["cost-center"], "cv-42");
        EXPECT_FALSE(pod["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
        EXPECT_EQ(pod["spec"]["nodeSelector"]["cloud.google.com/gke-accelerator"], "nvidia-l4");
        EXPECT_EQ(pod["spec"]["containers"][0]["name"], "node");
        std::string mounts = pod["spec"]["containers"][0]["volumeMounts"].dump();
        EXPECT_NE(mounts.find("/dev/shm"), std::string::npos) << mounts;
        EXPECT_NE(mounts.find("/ckpt"), std::string::npos) << mounts;
      }
      docs.emplace_back(r.name + (more.empty() ? "" : "-scheduled"), rendered.job);
    }
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output;
}

// A namespaced TrainingRuntime: runtimeRef.kind says so; from a value, the runtime's name
// and kind are launcher options (checked there, runtime/trainer_v2.hpp).
TEST(TrainJob, ANamespacedRuntimeSetsTheRuntimeRefKind) {
  auto out = testing::build_train(R"(use arena
pipeline p {
  step train = train_job(trainer_runtime: "team-torch", trainer_runtime_kind: "TrainingRuntime",
                         command: ["python", "t.py"])
})",
                                  {}, "ns.pipe");
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto r = testing::render(out.call, {});
  ASSERT_TRUE(r.ok) << r.error;
  json job = json::parse(r.job);
  EXPECT_EQ(job["spec"]["runtimeRef"]["kind"], "TrainingRuntime");
  EXPECT_EQ(job["spec"]["runtimeRef"]["name"], "team-torch");
  auto v = testing::validate_jobs({{"namespaced", r.job}});
  EXPECT_EQ(v.code, 0) << v.output;

  auto bound = testing::build_train(R"(use arena
pipeline p {
  param rt: string = "team-torch"
  param kind: string = "TrainingRuntime"
  step train = train_job(trainer_runtime: rt, trainer_runtime_kind: kind)
})",
                                    {}, "bound.pipe");
  ASSERT_TRUE(bound.built) << bound.diagnostics;
  std::string words;
  for (const auto& [option, w] : bound.call.args)
    words += rules::launcher_flag(option) + " " + (w.kind == ir::LauncherWord::Kind::Input ? "<" + w.text + ">" : w.text) + " ";
  EXPECT_NE(words.find("--trainer-runtime <trainer_runtime>"), std::string::npos) << words;
  EXPECT_NE(words.find("--trainer-runtime-kind <trainer_runtime_kind>"), std::string::npos) << words;
}

// Values from parameters reach the TrainJob through the launcher's bindings, as data:
// hostile texts stay one string or are refused by the field's rule.
TEST(TrainJob, RunTimeValuesAreDataNeverStructure) {
  auto out = testing::build_train(R"(use arena
pipeline p {
  param nodes: int = 2
  param image: string = "img:1"
  param lr: string = "0.1"
  param uri: string = "hf://tatsu-lab/alpaca"
  param queue: string = "team-a"
  param team: string = "vision"
  param env: map<string> = {A: "1"}
  param memory: string = "8Gi"
  step train = train_job(trainer_runtime: "torch-distributed", num_nodes: nodes, image: image,
                         command: ["python", "t.py", lr], env: {LR: lr}, dataset_uri: uri, dataset_env: env,
                         queue: queue, labels: {team: team}, memory_limit: memory)
})",
                                  {}, "v.pipe");
  ASSERT_TRUE(out.built) << out.diagnostics;
  const std::string hostile = "a\"}, \"x\": {\"y\n{{workflow.name}}";
  auto r = testing::render(out.call, testing::input_texts(out, {{"nodes", "3"}, {"image", hostile}, {"lr", hostile}, {"queue", ""}}));
  ASSERT_TRUE(r.ok) << r.error;
  json job = json::parse(r.job);
  EXPECT_EQ(job["spec"]["trainer"]["numNodes"], 3);
  EXPECT_EQ(job["spec"]["trainer"]["image"], hostile);
  EXPECT_EQ(job["spec"]["trainer"]["command"], json::array({"python", "t.py", hostile}));
  EXPECT_EQ(job["spec"]["trainer"]["env"][0]["value"], hostile);
  EXPECT_EQ(job["spec"]["initializer"]["dataset"]["env"], json::parse(R"([{"name":"A","value":"1"}])"));
  EXPECT_FALSE(job["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
  EXPECT_FALSE(job["spec"].contains("suspend"));
  auto v = testing::validate_jobs({{"bound", r.job}});
  EXPECT_EQ(v.code, 0) << v.output;
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> refused = {
      {{{"nodes", "0"}}, "value 'num_nodes' must be an integer >= 1"},
      {{{"nodes", "10001"}}, "value 'num_nodes' must be at most 10000"},
      {{{"uri", hostile}}, "storageUri"},
      {{{"queue", hostile}}, "value 'queue'"},
      {{{"team", hostile}}, "label value"},
      {{{"memory", hostile}}, "value 'memory_limit' must be a Kubernetes quantity"},
      {{{"env", R"({"PET_NNODES": "9"})"}}, "set by Trainer"},
  };
  for (const auto& [values, message] : refused) {
    r = testing::render(out.call, testing::input_texts(out, values));
    EXPECT_FALSE(r.ok) << message;
    EXPECT_NE(r.error.find(message), std::string::npos) << r.error;
  }
}

// dsl-examples/trainer_runtimes.pipe: both steps (a torchtune runtime with its
// initializers, a namespaced TrainingRuntime) render, with the parameters' defaults,
// TrainJobs the v2.3.0 CRD accepts, in the Kueue queue (the label and spec.suspend), the
// tune step's labels on the TrainJob and its nodes' pods, the train step's /dev/shm in them.
TEST(TrainJob, TheExampleRendersTrainJobsTheCrdAccepts) {
  std::string path = std::string(PIPEC_SOURCE_DIR) + "/dsl-examples/trainer_runtimes.pipe";
  SourceManager sources;
  FileId file = sources.add(path, testing::read_text(path));
  Diagnostics diags;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  ASSERT_TRUE(program);
  auto pipeline = lower::lower(std::move(*program), diags);
  ASSERT_TRUE(pipeline);
  std::vector<std::pair<std::string, std::string>> docs;
  for (const auto& node : pipeline->dag) {
    const auto* step = std::get_if<ir::Step>(&node);
    ASSERT_TRUE(step && step->kind == ir::OpKind::TrainJob);
    training::JobOptions options;
    options.params = &pipeline->params;
    ir::LauncherCall call;
    ASSERT_TRUE(training::build_launcher_call(*step, options, call, diags));
    std::map<std::string, std::string> values;
    for (const auto& [input, value] : call.inputs)
      for (const auto& p : pipeline->params)
        if (const ir::Ref* r = ir::whole_ref(value); r && r->name == p.name && p.default_value)
          values[input] = ir::literal_text(*p.default_value);
    auto r = testing::render(call, values);
    ASSERT_TRUE(r.ok) << step->name << ": " << r.error;
    docs.emplace_back("example-" + step->name, r.job);
  }
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(json::parse(docs[0].second)["spec"]["initializer"]["model"]["storageUri"],
            "hf://meta-llama/Llama-3.2-1B-Instruct");
  EXPECT_EQ(json::parse(docs[1].second)["spec"]["runtimeRef"]["kind"], "TrainingRuntime");
  for (const auto& [name, text] : docs) {
    json job = json::parse(text);
    EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a") << name;
    EXPECT_EQ(job["spec"]["suspend"], true) << name;
    const json& jobs = job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"];
    ASSERT_FALSE(jobs.empty()) << name << ": " << text;
    for (const auto& rj : jobs) {
      const json& pod = rj["template"]["spec"]["template"];
      if (name == "example-tune") {
        EXPECT_EQ(job["metadata"]["labels"]["cost-center"], "nlp-7");
        EXPECT_EQ(pod["metadata"]["labels"]["cost-center"], "nlp-7") << pod.dump();
      } else {
        EXPECT_NE(pod["spec"]["containers"][0]["volumeMounts"].dump().find("\"mountPath\":\"/dev/shm\""),
                  std::string::npos)
            << pod.dump();
        EXPECT_NE(pod["spec"]["volumes"].dump().find("\"medium\":\"Memory\",\"sizeLimit\":\"16Gi\""),
                  std::string::npos)
            << pod.dump();
      }
    }
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
}

// Literals of train_job's own arguments are checked by sema, at their place.
TEST(TrainJob, BadLiteralsAreLocatedErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(trainer_runtime: "Torch Distributed")", "3:39: error: argument 'trainer_runtime' of train_job must be the name"},
      {R"(trainer_runtime: "t", trainer_runtime_kind: "Cluster")", "3:66: error: argument 'trainer_runtime_kind'"},
      {R"(trainer_runtime: "t", num_nodes: 0)", "3:55: error: argument 'num_nodes' of train_job must be 1 to 10000"},
      {R"(trainer_runtime: "t", num_proc_per_node: -1)", "3:63: error: argument 'num_proc_per_node' of train_job must be 0 to"},
      {R"(trainer_runtime: "t", model_uri: "meta-llama/Llama")", "3:55: error: argument 'model_uri' of train_job must be a storage URI"},
      {R"(trainer_runtime: "t", dataset_secret: "HF Token")", "3:60: error: argument 'dataset_secret'"},
      {R"(trainer_runtime: "t", memory_limit: "lots")", "3:58: error: argument 'memory_limit'"},
      {R"(trainer_runtime: "t", env: {PET_NNODES: "2"})", "3:49: error: environment variable 'PET_NNODES' in 'env' of train_job is set by Trainer"},
      {R"(trainer_runtime: "t", queue: "Team A")", "3:51: error: argument 'queue' of train_job must be a queue name"},
  };
  for (const auto& [arg, message] : cases) {
    std::string text = "use arena\npipeline p {\n  step t = train_job(" + arg + ")\n}\n";
    auto out = testing::build_train(text, {}, "bad.pipe");
    EXPECT_FALSE(out.built) << arg;
    EXPECT_NE(out.diagnostics.find("bad.pipe:" + message), std::string::npos) << out.diagnostics;
  }
}

}  // namespace
}  // namespace pipec
