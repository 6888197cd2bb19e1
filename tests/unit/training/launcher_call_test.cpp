#include "compiler/training/launcher_call.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "rules/launcher_cli.hpp"
#include "rules/metrics.hpp"
#include "rules/names.hpp"
#include "runtime/metrics.hpp"
#include "tests/unit/training/job_support.hpp"

namespace pipec::training {
namespace {

using testing::build_train;
using testing::parts_of;

std::string pipeline_with(const std::string& params, const std::string& step) {
  return "use arena\npipeline p {\n" + params + "  step train = " + step + "\n}\n";
}

// The whole call as one JSON document, compared with golden/<name>.json
// (PIPEC_UPDATE_GOLDEN=1 rewrites the files).
void expect_golden(const std::string& name, const ir::LauncherCall& call) {
  nlohmann::ordered_json doc;
  doc["args"] = testing::args_of(call);
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const auto& [input, value] : call.inputs) inputs.push_back(input);
  doc["inputs"] = inputs;
  doc["writes_metrics"] = call.writes_metrics;
  doc["writes_ui_metadata"] = call.writes_ui_metadata;
  std::string text = doc.dump(2) + "\n";
  std::string path = std::string(PIPEC_KUBEFLOW_GOLDEN_DIR) + "/" + name + ".json";
  if (std::getenv("PIPEC_UPDATE_GOLDEN")) {
    std::ofstream(path) << text;
    return;
  }
  EXPECT_EQ(testing::read_text(path), text) << "golden " << path;
}

const char* const kMpiRun = R"(use arena
pipeline mpi_run {
  param image: string = "uber/horovod:0.13.11-tf1.10.0-torch0.4.0-py3.5"
  param batch_size: int = 64
  param sync_source: string = "https://github.com/tensorflow/benchmarks.git"
  param git_sync_branch: string = "cnn_tf_v1.9_compatible"
  param data: string = "user-susan:/training"
  param gpus: int = 1
  param workers: int = 1
  param metric: string = "images/sec"
  step all_reduce = mpi_job(
    image: image,
    env: {NCCL_DEBUG: "INFO", GIT_SYNC_BRANCH: git_sync_branch},
    data: [data],
    workers: workers,
    sync_source: sync_source,
    gpus: gpus,
    cpu_limit: "2",
    memory_limit: "10Gi",
    metrics: [metric],
    command: "mpirun python code/benchmarks/x.py --batch_size ${batch_size}",
  )
}
)";

TEST(KubeflowGolden, MpiJobV2) {
  auto out = build_train(kMpiRun);
  ASSERT_TRUE(out.built) << out.diagnostics;
  expect_golden("mpi_job_v2", out.call);
}

TEST(KubeflowGolden, MpiJobV1) {
  JobOptions options;
  options.mpi_v1 = true;
  auto out = build_train(kMpiRun, options);
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto p = parts_of(out.call);
  EXPECT_EQ(p.manifest["apiVersion"], "kubeflow.org/v1");
  EXPECT_FALSE(p.manifest["spec"].contains("launcherCreationPolicy"));
  expect_golden("mpi_job_v1", out.call);
}

TEST(KubeflowGolden, TfJob) {
  auto out = build_train(pipeline_with("  param workers: int = 2\n", R"(tf_job(
    image: "tf:gpu", ps_image: "tf:cpu", chief: 1, workers: workers, ps: 2, evaluator: 1,
    gpus: 1, ps_cpu_limit: "1", data: ["nas:/training"], tensorboard: "/training/logs",
    metrics: ["accuracy:PERCENTAGE"], success_policy: "AllWorkers", retries: 3,
    command: "python main.py"))"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  expect_golden("tf_job", out.call);
}

TEST(KubeflowGolden, PyTorchJob) {
  auto out = build_train(pipeline_with("  param epochs: int = 3\n", R"(pytorch_job(
    image: "pytorch:2", workers: 2, nproc_per_node: 4, gpus: 4, gpu_resource: "amd.com/gpu",
    memory_limit: "32Gi", timeout: "4h", node_selector: {pool: "gpu"},
    tolerations: ["nvidia.com/gpu:NoSchedule", "*"],
    command: "torchrun main.py --epochs ${epochs}"))"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  expect_golden("pytorch_job", out.call);
}

TEST(KubeflowGolden, TrainJob) {
  auto out = build_train(pipeline_with("  param nodes: int = 2\n  param rt: string = \"team-torch\"\n", R"(train_job(
    trainer_runtime: rt, trainer_runtime_kind: "TrainingRuntime", num_nodes: nodes, num_proc_per_node: 4,
    image: "pytorch:2", command: ["torchrun", "main.py"], args: ["--nodes", "${nodes}"], gpus: 4,
    gpu_resource: "amd.com/gpu", memory_limit: "32Gi", model_uri: "hf://org/model", model_secret: "hf",
    dataset_env: {SPLIT: "train"}, data: ["ckpt:/ckpt"], node_selector: {pool: "gpu"}, shm_size: "8Gi",
    labels: {team: "nlp"}, queue: "team-a", metrics: ["loss:min"], timeout: "4h"))"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  expect_golden("train_job", out.call);
}

// A job the launcher creates again after an OOM kill, with growing memory (docs/runtime.md
// "Retries"): the step's literal retry arguments become the launcher's options.
TEST(KubeflowGolden, PyTorchJobRetried) {
  auto out = build_train(pipeline_with("", R"(pytorch_job(
    image: "pytorch:2", workers: 2, memory_limit: "8Gi", retries: 1, retry_limit: 3,
    retry_on: ["oom", "exit:75"], memory_factor: 1.5, memory_max: "16Gi",
    command: "torchrun main.py"))"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  expect_golden("pytorch_job_retried", out.call);
}

TEST(Kubeflow, RetryOptionsOnlyWithALimit) {
  // Every failure retried (no --retry-on), the memory as written (no --memory-factor).
  auto out = build_train(pipeline_with("", "tf_job(image: \"i\", command: \"c\", retry_limit: 2)"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto args = testing::args_of(out.call);
  auto at = std::find(args.begin(), args.end(), "--retry-limit");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), "2");
  for (const char* absent : {"--retry-on", "--memory-factor", "--memory-max"})
    EXPECT_EQ(std::find(args.begin(), args.end(), absent), args.end()) << absent;
  // retry_limit 0 (the default) writes none of them.
  out = build_train(pipeline_with("", "mpi_job(image: \"i\", command: \"c\", retry_limit: 0)"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  args = testing::args_of(out.call);
  EXPECT_EQ(std::find(args.begin(), args.end(), "--retry-limit"), args.end());
}

TEST(Kubeflow, ManifestShapeAndRoles) {
  auto out = build_train(kMpiRun);
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto p = parts_of(out.call);
  const auto& spec = p.manifest["spec"];
  EXPECT_EQ(p.manifest["apiVersion"], "kubeflow.org/v2beta1");
  EXPECT_EQ(spec["launcherCreationPolicy"], "WaitForWorkersReady");
  EXPECT_EQ(spec["runPolicy"]["cleanPodPolicy"], "Running");
  const auto& launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"];
  EXPECT_EQ(launcher["containers"][0]["command"][0], "sh");
  EXPECT_EQ(launcher["containers"][0]["command"][1], "-c");
  // The value is not in the script: a quoted variable is.
  std::string script = launcher["containers"][0]["command"][2];
  EXPECT_NE(script.find("--batch_size \"${PIPEC_batch_size}\""), std::string::npos) << script;
  EXPECT_EQ(script.find("64"), std::string::npos);
  const auto& worker = spec["mpiReplicaSpecs"]["Worker"]["template"]["spec"];
  EXPECT_EQ(worker["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_FALSE(launcher["containers"][0].contains("resources"));
  // git-sync clones into code/benchmarks (no .git) under the working directory.
  EXPECT_EQ(worker["initContainers"][0]["name"], "git-sync");
  bool repo = false, branch = false;
  for (const auto& e : worker["initContainers"][0]["env"]) {
    if (e["name"] == "GIT_SYNC_REPO") repo = e["value"] == "https://github.com/tensorflow/benchmarks.git";
    if (e["name"] == "GIT_SYNC_BRANCH") branch = e["value"] == "cnn_tf_v1.9_compatible";
  }
  EXPECT_TRUE(repo);
  EXPECT_TRUE(branch);
  std::string clone = worker["initContainers"][0]["command"][2];
  EXPECT_NE(clone.find("basename \"${GIT_SYNC_REPO%/}\" .git"), std::string::npos) << clone;
  EXPECT_EQ(worker["containers"][0]["workingDir"], "/workspace");
  EXPECT_TRUE(out.call.writes_metrics);
  EXPECT_FALSE(out.call.writes_ui_metadata);
}

TEST(Kubeflow, RuntimeValuesAreWholeWordsAfterValue) {
  auto out = build_train(kMpiRun);
  ASSERT_TRUE(out.built) << out.diagnostics;
  const auto args = testing::args_of(out.call);
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto pos = args[i].find("{{");
    if (pos == std::string::npos) continue;
    if (args[i] == "{{workflow.name}}" || args[i] == "{{pod.name}}") continue;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(args[i - 1], "--value") << args[i];
    auto eq = args[i].find('=');
    std::string name = args[i].substr(0, eq);
    EXPECT_EQ(args[i], name + "={{inputs.parameters." + name + "}}");
  }
  // Every input has exactly one --value; the same parameter used twice is one input.
  auto p = parts_of(out.call);
  EXPECT_EQ(p.values.size(), out.call.inputs.size());
  std::set<std::string> names;
  for (const auto& [name, value] : out.call.inputs) EXPECT_TRUE(names.insert(name).second);
}

// The compiler calls the launcher's own metric rules (runtime/metrics.hpp): a name with
// spaces between words compiles to a --metric the launcher accepts; one it refuses is a
// located error.
TEST(Kubeflow, MetricNamesAreCheckedByTheLaunchersRule) {
  auto out = build_train(pipeline_with("", "mpi_job(image: \"i\", command: \"c\", "
                                           "metrics: [\"Final Cost:min\", \"top-1 acc\"])"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto p = parts_of(out.call);
  ASSERT_EQ(p.metrics.size(), 2u);
  for (const auto& spec : p.metrics) {
    std::string error;
    EXPECT_TRUE(rules::parse_metric_spec(spec, error)) << spec << ": " << error;
  }
  auto bad = build_train(pipeline_with("", "mpi_job(image: \"i\", command: \"c\", metrics: [\"a  b\"])"));
  EXPECT_FALSE(bad.built);
  EXPECT_NE(bad.diagnostics.find("metric 'a  b' cannot be reported"), std::string::npos) << bad.diagnostics;
}

TEST(Kubeflow, ParamDefaultsFillTheManifest) {
  auto out = build_train(pipeline_with("  param w: int = 7\n  param mem: string = \"3Gi\"\n",
                                       "pytorch_job(image: \"i\", workers: w, memory_limit: mem, "
                                       "command: \"x\")"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto p = parts_of(out.call);
  const auto& worker = p.manifest["spec"]["pytorchReplicaSpecs"]["Worker"];
  EXPECT_EQ(worker["replicas"], 7);
  EXPECT_EQ(worker["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"], "3Gi");
  EXPECT_NE(std::find(p.binds.begin(), p.binds.end(),
                      "/spec/pytorchReplicaSpecs/Worker/replicas=workers:int"),
            p.binds.end());
}

TEST(Kubeflow, LiteralDataEntriesMeetTheLaunchersRule) {
  // A claim is a DNS-1123 subdomain for both (the compiler used to ask for a label and
  // refuse "ckpt.store", which the launcher takes from a value); "/ckpt/" mounts "/ckpt".
  auto out = build_train(pipeline_with(
      "", "mpi_job(image: \"i\", command: \"c\", data: [\"ckpt.store:/ckpt/\"])"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto p = parts_of(out.call);
  const auto& spec = p.manifest["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"];
  EXPECT_EQ(spec["volumes"][0]["persistentVolumeClaim"]["claimName"], "ckpt.store");
  EXPECT_EQ(spec["containers"][0]["volumeMounts"][0]["mountPath"], "/ckpt");
}

// --- located errors ------------------------------------------------------------------

struct BadCase {
  const char* name;
  const char* step;
  const char* message;  // expected in the rendered diagnostics, with the location
};

class KubeflowErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(KubeflowErrors, AreLocated) {
  const BadCase& c = GetParam();
  auto out = build_train(pipeline_with(
      "  param n: int = 1\n  param s: string = \"x\"\n  param d: string = \"b:/b\"\n", c.step));
  EXPECT_FALSE(out.built);
  EXPECT_NE(out.diagnostics.find(c.message), std::string::npos) << out.diagnostics;
  EXPECT_NE(out.diagnostics.find("^"), std::string::npos) << out.diagnostics;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, KubeflowErrors,
    ::testing::Values(
        BadCase{"DataWithoutColon",
                "mpi_job(image: \"i\", command: \"c\", data: [\"nas\"])",
                "input:6:56: error: data entry 'nas' of mpi_job must be 'pvc-name:/mount/path'"},
        BadCase{"DataRelativePath", "mpi_job(image: \"i\", command: \"c\", data: [\"nas:rel\"])",
                "data entry 'nas:rel' of mpi_job must be"},
        BadCase{"DataTwice",
                "tf_job(image: \"i\", command: \"c\", data: [\"a:/d\", \"b:/d/\"])",
                "mounts '/d' a second time"},
        BadCase{"MetricNoLetter", "mpi_job(image: \"i\", command: \"c\", metrics: [\"1/2\"])",
                "metric '1/2' cannot be reported"},
        BadCase{"MetricCollision",
                "mpi_job(image: \"i\", command: \"c\", metrics: [\"a/b\", \"a b\"])",
                "metrics 'a/b' and 'a b' would both be reported as 'a-b'"},
        BadCase{"MetricColonInName",
                "mpi_job(image: \"i\", command: \"c\", metrics: [\"val:acc\"])",
                "metric 'val:acc' cannot be reported: a name needs a letter and none of tab, "
                "= : , ; ( [ { \" ' |, which end a name in the log"},
        BadCase{"MetricParenInName",
                "mpi_job(image: \"i\", command: \"c\", metrics: [\"acc(top1):PERCENTAGE\"])",
                "metric 'acc(top1):PERCENTAGE' cannot be reported"},
        BadCase{"MetricSameReported",
                "mpi_job(image: \"i\", command: \"c\", metrics: [\"img/sec\", \"img.sec\"])",
                "metrics 'img/sec' and 'img.sec' would both be reported as 'img-sec'"},
        BadCase{"CleanPodPolicy",
                "tf_job(image: \"i\", command: \"c\", clean_pod_policy: \"Sometimes\")",
                "argument 'clean_pod_policy' of tf_job must be 'None', 'Running' or 'All'"},
        BadCase{"NegativeWorkers", "mpi_job(image: \"i\", command: \"c\", workers: -2)",
                "argument 'workers' of mpi_job must be at least 1, got -2"},
        BadCase{"ZeroPyTorchWorkers", "pytorch_job(image: \"i\", command: \"c\", workers: 0)",
                "argument 'workers' of pytorch_job must be at least 1, got 0"},
        BadCase{"TwoChiefs", "tf_job(image: \"i\", command: \"c\", chief: 2)",
                "argument 'chief' of tf_job must be 0 or 1"},
        BadCase{"BadQuantity", "mpi_job(image: \"i\", command: \"c\", memory_limit: \"10 GB\")",
                "must be a Kubernetes quantity"},
        BadCase{"BadTimeout", "mpi_job(image: \"i\", command: \"c\", timeout: \"1 hour\")",
                "argument 'timeout' of mpi_job must be a duration"},
        BadCase{"TensorboardOutsideData",
                "tf_job(image: \"i\", command: \"c\", data: [\"a:/data\"], tensorboard: "
                "\"/logs\")",
                "tensorboard path '/logs' of tf_job must lie inside one of the data volumes"},
        BadCase{"BadEnvName", "mpi_job(image: \"i\", command: \"c\", env: {\"A-B\": \"1\"})",
                "environment variable name 'A-B' in mpi_job"},
        BadCase{"BadToleration",
                "mpi_job(image: \"i\", command: \"c\", tolerations: [\"k:Sometimes\"])",
                "a toleration is a literal \"key\", \"key=value\", either with \":NoSchedule\", \":PreferNoSchedule\" or \":NoExecute\", or \"*\", got 'k:Sometimes'"},
        BadCase{"NoTfReplicas", "tf_job(image: \"i\", command: \"c\", workers: 0)",
                "tf_job needs a chief or at least one worker"},
        BadCase{"TrainerRuntimeKind",
                "pytorch_job(image: \"i\", command: \"c\", trainer_runtime_kind: \"Namespaced\")",
                "argument 'trainer_runtime_kind' of pytorch_job must be 'ClusterTrainingRuntime' or "
                "'TrainingRuntime', got 'Namespaced'"},
        // A training step's retries that know why: the container op's rules and messages.
        BadCase{"RetryOnUnknown",
                "pytorch_job(image: \"i\", command: \"c\", retry_limit: 2, retry_on: [\"oom\", \"disk\"])",
                "input:6:80: error: a retry reason is \"oom\", \"evicted\", \"exit:N\" or \"message:TEXT\""},
        BadCase{"RetryOnTwice",
                "pytorch_job(image: \"i\", command: \"c\", retry_limit: 2, retry_on: [\"oom\", \"oom\"])",
                "'oom' is listed twice in 'on'"},
        BadCase{"RetryLimitFromParameter", "mpi_job(image: \"i\", command: \"c\", retry_limit: n)",
                "argument 'retry_limit' of mpi_job must be a literal int from 0 to 20"},
        BadCase{"RetryLimitAboveTwenty", "tf_job(image: \"i\", command: \"c\", retry_limit: 21)",
                "argument 'retry_limit' of tf_job must be a literal int from 0 to 20"},
        BadCase{"MemoryFactorTooLarge",
                "pytorch_job(image: \"i\", command: \"c\", retry_limit: 2, memory_factor: 12)",
                "'memory_factor' must be a literal number above 1 and at most 10"},
        BadCase{"MemoryMaxNotAQuantity",
                "pytorch_job(image: \"i\", command: \"c\", retry_limit: 2, memory_factor: 2, memory_max: s)",
                "'memory_max' must be a literal memory quantity such as \"16Gi\""},
        BadCase{"MemoryMaxWithoutFactor",
                "pytorch_job(image: \"i\", command: \"c\", retry_limit: 2, memory_max: \"16Gi\")",
                "'memory_max' bounds a growing memory; say how it grows with 'memory_factor'"},
        BadCase{"RetryOnWithoutLimit", "mpi_job(image: \"i\", command: \"c\", retry_on: [\"oom\"])",
                "'retry_on' and 'memory_factor' need a 'retry_limit'"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// Unknown arguments and wrong types are sema's: the step never reaches the lowering.
TEST(Kubeflow, MisuseCaughtBySema) {
  auto out = build_train(pipeline_with("", "mpi_job(image: \"i\", command: \"c\", wrkers: 2)"));
  EXPECT_FALSE(out.step.has_value());
  EXPECT_NE(out.diagnostics.find("wrkers"), std::string::npos) << out.diagnostics;
  out = build_train(pipeline_with("", "tf_job(image: \"i\", command: \"c\", workers: \"two\")"));
  EXPECT_FALSE(out.step.has_value());
  EXPECT_NE(out.diagnostics.find("error: "), std::string::npos) << out.diagnostics;
}

TEST(Kubeflow, MoreThanFiftyMetrics) {
  std::string list;
  for (int i = 0; i < 51; ++i) list += (i ? ", \"m" : "\"m") + std::to_string(i) + "\"";
  auto out = build_train(
      pipeline_with("", "mpi_job(image: \"i\", command: \"c\", metrics: [" + list + "])"));
  EXPECT_FALSE(out.built);
  EXPECT_NE(out.diagnostics.find("a step reports at most 50 metrics (what KFP shows), got 51"),
            std::string::npos)
      << out.diagnostics;
}

// The manifest's job is named by the launcher's rule (rules::job_name_for_step): a step
// name over 50 characters is cut and ends in the hash, as the launcher names the job.
TEST(Kubeflow, JobNameIsTheLaunchersRule) {
  std::string step(60, 'a');
  step += "_b";
  auto out = build_train("use arena\npipeline p {\n  step " + step + " = mpi_job(image: \"i\", command: \"c\")\n}\n");
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto p = parts_of(out.call);
  EXPECT_EQ(p.manifest["metadata"]["name"], rules::job_name_for_step(step));
  EXPECT_EQ(p.manifest["metadata"]["name"].get<std::string>().size(), rules::kMaxJobName);
}

// A metric chosen by a parameter whose default cannot be reported: the warning gives the
// one rule's text (rules::kMetricNameRule), as the launcher's error would.
TEST(Kubeflow, UnreportableDefaultWarnsWithTheOneRule) {
  auto out = build_train(pipeline_with("  param metric: string = \"val:acc\"\n",
                                       "mpi_job(image: \"i\", command: \"c\", metrics: [metric])"));
  ASSERT_TRUE(out.built) << out.diagnostics;
  EXPECT_NE(out.diagnostics.find(std::string("warning: the default 'val:acc' of 'metric' cannot be reported as a metric: ") +
                                 rules::kMetricNameRule + "; a run that keeps it fails"),
            std::string::npos)
      << out.diagnostics;
}

// Every word the builder writes before a value is an option of the launcher's table.
TEST(Kubeflow, EveryFlagIsTheLaunchersTable) {
  auto out = build_train(kMpiRun);
  ASSERT_TRUE(out.built) << out.diagnostics;
  std::string error;
  const auto args = testing::args_of(out.call);
  auto split = rules::split_launcher_args(args, error);
  ASSERT_TRUE(split) << error;
  std::size_t words = 0;
  for (const auto& a : *split)
    words += rules::launcher_option(a.id).shape == rules::OptionShape::Flag ? 1 : 2;
  EXPECT_EQ(words, args.size());
}

}  // namespace
}  // namespace pipec::training
