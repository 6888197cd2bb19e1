// The scheduling fields of the training ops (docs/training-ops.md, "Scheduling"): a Kueue
// queue, a priority class, gang scheduling, labels, annotations and /dev/shm, rendered by
// the launcher's own code for every kind and runtime, and validated against the
// training-operator v1.9, mpi-operator v0.8 and Trainer v2.3 CRDs and core v1.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "runtime/tf_pods.hpp"
#include "runtime/trainer_v2.hpp"
#include "tests/unit/training/job_support.hpp"

namespace pipec {
namespace {

using nlohmann::json;

std::string program(const std::string& op, const std::string& extra) {
  return R"(use arena
pipeline p {
  param queue: string = "team-a"
  param priority: string = "high"
  param team: string = "vision"
  step train = )" +
         op + R"((image: "img:1", command: "python t.py", workers: 2, queue: queue,
                    priority_class: priority, labels: {"cost-center": "cv-42", team: team},
                    annotations: {"example.com/owner": "a@example.com"}, shm_size: "8Gi")" +
         extra + R"()
})";
}

const char* specs_of(const json& job) {
  std::string kind = job["kind"];
  return kind == "MPIJob" ? "mpiReplicaSpecs" : kind == "TFJob" ? "tfReplicaSpecs" : "pytorchReplicaSpecs";
}

// The queue label and the priority class on the job and every replica's pod template, and
// /dev/shm in every main container.
void expect_scheduled(const json& job, const std::string& queue, const std::string& priority) {
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], queue) << job.dump();
  EXPECT_EQ(job["metadata"]["labels"]["cost-center"], "cv-42");
  EXPECT_EQ(job["metadata"]["annotations"]["example.com/owner"], "a@example.com");
  EXPECT_EQ(job["spec"]["runPolicy"]["suspend"], true);
  for (const auto& [role, replica] : job["spec"][specs_of(job)].items()) {
    const json& pod = replica["template"];
    EXPECT_EQ(pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], queue) << role;
    EXPECT_EQ(pod["metadata"]["labels"]["cost-center"], "cv-42") << role;
    EXPECT_EQ(pod["metadata"]["annotations"]["example.com/owner"], "a@example.com") << role;
    EXPECT_EQ(pod["spec"]["priorityClassName"], priority) << role;
    EXPECT_NE(pod["spec"]["containers"][0]["volumeMounts"].dump().find("\"mountPath\":\"/dev/shm\""),
              std::string::npos)
        << role;
    EXPECT_NE(pod["spec"]["volumes"].dump().find("\"medium\":\"Memory\",\"sizeLimit\":\"8Gi\""), std::string::npos)
        << role;
  }
}

struct Kind {
  std::string name, op, extra;
  bool mpi_v1 = false;
};

// Every operator kind: the defaults and run-time values for the queue and the priority
// class reach the job through the launcher's bindings; every rendered job passes its CRD.
TEST(Scheduling, EveryOperatorKindCarriesTheFieldsToEveryPod) {
  const std::vector<Kind> kinds = {
      {"pytorch", "pytorch_job", R"(, scheduler: "volcano", gang_queue: "gpu", min_available: 3)"},
      {"mpi-v2", "mpi_job", R"(, scheduler: "volcano", min_available: 3)"},
      {"mpi-v1", "mpi_job", R"(, scheduler: "volcano", min_available: 3)", true},
      {"tf", "tf_job", R"(, ps: 1, chief: 1, scheduler: "volcano")"},
  };
  std::vector<std::pair<std::string, std::string>> docs;
  for (const auto& k : kinds) {
    training::JobOptions options;
    options.mpi_v1 = k.mpi_v1;
    auto out = testing::build_train(program(k.op, k.extra), options, k.name + ".pipe");
    ASSERT_TRUE(out.built) << out.diagnostics;
    docs.emplace_back(k.name + "-manifest", testing::parts_of(out.call).manifest_text);
    for (const auto& [queue, priority] : {std::pair<std::string, std::string>{"team-a", "high"}, {"team-b", "low"}}) {
      auto r = testing::render(out.call, testing::input_texts(out, {{"queue", queue}, {"priority", priority}}));
      ASSERT_TRUE(r.ok) << k.name << ": " << r.error;
      json job = json::parse(r.job);
      expect_scheduled(job, queue, priority);
      EXPECT_EQ(job["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"], priority) << k.name;
      for (const auto& [role, replica] : job["spec"][specs_of(job)].items())
        EXPECT_EQ(replica["template"]["spec"]["schedulerName"], "volcano") << k.name << " " << role;
      docs.emplace_back(k.name + "-" + queue, r.job);
    }
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output;
}

// dsl-examples/shared_cluster.pipe, as written: each of its three jobs (the PyTorchJob, the
// MPIJob in both of its versions, the TFJob), with the parameters' defaults and with other
// values, carries the queue label, the labels and the annotation on the job and on every
// replica's pod template, the priority class and the scheduler in every pod template, and
// /dev/shm of its size in every main container; every job passes its CRD.
TEST(Scheduling, TheSharedClusterExampleRendersEveryJobTheCrdsAccept) {
  struct Job {
    std::string step;
    bool mpi_v1;
    std::string shm;
    int replica_types;
  };
  const std::vector<Job> jobs = {
      {"ddp", false, "8Gi", 2}, {"allreduce", false, "4Gi", 2}, {"allreduce", true, "4Gi", 2}, {"tf", false, "2Gi", 2}};
  const std::string path = std::string(PIPEC_SOURCE_DIR) + "/dsl-examples/shared_cluster.pipe";
  const std::string text = testing::read_text(path);
  std::vector<std::pair<std::string, std::string>> docs;
  for (const auto& j : jobs) {
    training::JobOptions options;
    options.mpi_v1 = j.mpi_v1;
    auto out = testing::build_train(text, options, path, j.step);
    ASSERT_TRUE(out.built) << j.step << ": " << out.diagnostics;
    ASSERT_EQ(out.step->name, j.step);
    const std::string name = j.step + (j.mpi_v1 ? "-v1" : "");
    docs.emplace_back(name + "-manifest", testing::parts_of(out.call).manifest_text);
    const std::map<std::string, std::string> other = {
        {"queue", "team-b"}, {"priority", "batch-low"}, {"workers", "5"}, {"team", "nlp"}};
    for (const auto* values : {&other, static_cast<const std::map<std::string, std::string>*>(nullptr)}) {
      auto r = testing::render(out.call, testing::input_texts(out, values ? *values : std::map<std::string, std::string>{}));
      ASSERT_TRUE(r.ok) << name << ": " << r.error;
      json job = json::parse(r.job);
      // ddp takes both from the parameters, tf the queue; allreduce's are literals.
      const std::string queue = values && j.step != "allreduce" ? "team-b" : "team-vision";
      const std::string priority = values && j.step == "ddp" ? "batch-low" : "research-high";
      const std::string team = values ? "nlp" : "vision";
      const json& meta = job["metadata"];
      EXPECT_EQ(meta["labels"]["kueue.x-k8s.io/queue-name"], queue) << name;
      EXPECT_EQ(meta["labels"]["cost-center"], "cv-42") << name;
      EXPECT_EQ(meta["annotations"]["example.com/owner"], "vision-team@example.com") << name;
      if (j.step == "ddp") {
        EXPECT_EQ(meta["labels"]["team"], team);
      }
      EXPECT_EQ(job["spec"]["runPolicy"]["suspend"], true) << name;
      EXPECT_EQ(job["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"], priority) << name;
      const json& roles = job["spec"][specs_of(job)];
      EXPECT_EQ(static_cast<int>(roles.size()), j.replica_types) << name << " " << roles.dump();
      for (const auto& [role, replica] : roles.items()) {
        const json& pod = replica["template"];
        const std::string where = name + " " + role;
        EXPECT_EQ(pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], queue) << where;
        EXPECT_EQ(pod["metadata"]["labels"]["cost-center"], "cv-42") << where;
        if (j.step == "ddp") {
          EXPECT_EQ(pod["metadata"]["labels"]["team"], team) << where;
        }
        EXPECT_EQ(pod["metadata"]["annotations"]["example.com/owner"], "vision-team@example.com") << where;
        EXPECT_EQ(pod["spec"]["priorityClassName"], priority) << where;
        EXPECT_EQ(pod["spec"]["schedulerName"], "volcano") << where;
        EXPECT_NE(pod["spec"]["containers"][0]["volumeMounts"].dump().find("\"mountPath\":\"/dev/shm\""),
                  std::string::npos)
            << where;
        EXPECT_NE(pod["spec"]["volumes"].dump().find("\"medium\":\"Memory\",\"sizeLimit\":\"" + j.shm + "\""),
                  std::string::npos)
            << where;
      }
      if (j.step == "allreduce") {
        EXPECT_EQ(job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"], 3) << name;
      }
      if (j.step == "ddp") {
        EXPECT_EQ(job["spec"]["runPolicy"]["schedulingPolicy"]["queue"], "gpu");
      }
      docs.emplace_back(name + (values ? "-other" : "-defaults"), r.job);
    }
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output;
}

// A queue given as "" at run time takes the label and the suspension away; hostile texts
// are refused by the label rule, or stay one string value (an annotation).
TEST(Scheduling, RunTimeValuesAreDataNeverStructure) {
  auto out = testing::build_train(program("pytorch_job", ""), {}, "p.pipe");
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto r = testing::render(out.call, testing::input_texts(out, {{"queue", ""}, {"priority", ""}}));
  ASSERT_TRUE(r.ok) << r.error;
  json job = json::parse(r.job);
  EXPECT_FALSE(job["metadata"]["labels"].contains("kueue.x-k8s.io/queue-name"));
  EXPECT_FALSE(job["spec"]["runPolicy"].contains("suspend"));
  EXPECT_FALSE(job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"].contains("priorityClassName"));
  for (const char* hostile : {"a\"}, \"x\": {\"y", "line\nbreak", "{{workflow.name}}"}) {
    r = testing::render(out.call, testing::input_texts(out, {{"queue", hostile}}));
    EXPECT_FALSE(r.ok) << hostile;
    EXPECT_NE(r.error.find("value 'queue'"), std::string::npos) << r.error;
    r = testing::render(out.call, testing::input_texts(out, {{"priority", hostile}}));
    EXPECT_FALSE(r.ok) << hostile;
    r = testing::render(out.call, testing::input_texts(out, {{"team", hostile}}));
    EXPECT_FALSE(r.ok) << hostile;
    EXPECT_NE(r.error.find("label value"), std::string::npos) << r.error;
  }
  // An annotation's value may be any text: from a parameter it stays that one string, on
  // the job and on every pod template, and the job keeps its shape.
  const std::string annotated = R"(use arena
pipeline p {
  param owner: string = "a@example.com"
  step train = pytorch_job(image: "img:1", command: "python t.py", workers: 2,
                           annotations: {"example.com/owner": owner})
})";
  auto with_owner = testing::build_train(annotated, {}, "a.pipe");
  ASSERT_TRUE(with_owner.built) << with_owner.diagnostics;
  auto plain = testing::render(with_owner.call, testing::input_texts(with_owner, {}));
  ASSERT_TRUE(plain.ok) << plain.error;
  for (const std::string hostile : {"a\"}, \"x\": {\"y", "line\nbreak", "{{workflow.name}}", "$(id) `id`"}) {
    r = testing::render(with_owner.call, testing::input_texts(with_owner, {{"owner", hostile}}));
    ASSERT_TRUE(r.ok) << r.error;
    json job = json::parse(r.job);
    EXPECT_EQ(job["metadata"]["annotations"]["example.com/owner"], hostile);
    for (const auto& [role, replica] : job["spec"]["pytorchReplicaSpecs"].items())
      EXPECT_EQ(replica["template"]["metadata"]["annotations"]["example.com/owner"], hostile) << role;
    json shape = json::parse(plain.job);
    shape["metadata"]["annotations"]["example.com/owner"] = hostile;
    for (auto& [role, replica] : shape["spec"]["pytorchReplicaSpecs"].items())
      replica["template"]["metadata"]["annotations"]["example.com/owner"] = hostile;
    EXPECT_EQ(job, shape) << r.job;
  }
}

// runtime "trainer-v2": the TrainJob carries the queue label and the suspension, the
// labels and annotations on the job and on the pods (a runtime patch) and /dev/shm; a
// priority class or a gang, which a TrainJob cannot say, is a located error.
TEST(Scheduling, TrainerV2CarriesWhatATrainJobCanSay) {
  const std::string v2 = R"(use arena
pipeline p {
  param queue: string = "team-a"
  step train = pytorch_job(runtime: "trainer-v2", image: "img:1", command: "python t.py", queue: queue,
                           labels: {"cost-center": "cv-42"}, annotations: {"example.com/owner": "a"},
                           shm_size: "8Gi")
})";
  std::vector<std::pair<std::string, std::string>> docs;
  for (std::string op : {"pytorch_job", "mpi_job"}) {
    std::string text = v2;
    text.replace(text.find("pytorch_job"), 11, op);
    auto out = testing::build_train(text, {}, "v2.pipe");
    ASSERT_TRUE(out.built) << out.diagnostics;
    auto r = testing::render(out.call, testing::input_texts(out, {}));
    ASSERT_TRUE(r.ok) << r.error;
    auto t = runtime::to_trainjob(r.job, "");
    ASSERT_TRUE(t.ok) << t.error;
    json job = json::parse(t.job);
    EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a");
    EXPECT_EQ(job["metadata"]["annotations"]["example.com/owner"], "a");
    EXPECT_EQ(job["spec"]["suspend"], true);
    for (const auto& rj : job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]) {
      const json& pod = rj["template"]["spec"]["template"];
      EXPECT_EQ(pod["metadata"]["labels"]["cost-center"], "cv-42") << op;
      EXPECT_NE(pod["spec"]["containers"][0]["volumeMounts"].dump().find("/dev/shm"), std::string::npos) << op;
    }
    docs.emplace_back(op + "-trainjob", t.job);
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
  for (const auto& [name, text] : docs)
    EXPECT_NE(v.output.find(name + ".json: ok"), std::string::npos) << name << "\n" << v.output;

  std::string refused = v2;
  refused.replace(refused.find("shm_size"), 8, "priority_class: \"high\", shm_size");
  auto out = testing::build_train(refused, {}, "v2.pipe");
  EXPECT_FALSE(out.built);
  EXPECT_NE(out.diagnostics.find("v2.pipe:6:44:"), std::string::npos) << out.diagnostics;
  EXPECT_NE(out.diagnostics.find("cannot be given with runtime 'trainer-v2'"), std::string::npos) << out.diagnostics;
  // From a value, the launcher refuses it when it makes the TrainJob.
  auto bound = testing::build_train(program("pytorch_job", ""), {}, "p.pipe");
  ASSERT_TRUE(bound.built);
  auto r = testing::render(bound.call, testing::input_texts(bound, {}));
  ASSERT_TRUE(r.ok) << r.error;
  auto t = runtime::to_trainjob(r.job, "");
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.error.find("priorityClassName"), std::string::npos) << t.error;
}

// runtime "pods": every Pod carries the labels, the annotations, the priority class and
// /dev/shm, and in a queue the pods are one Kueue pod group of as many pods as the job has.
TEST(Scheduling, TfPodsAreOneKueuePodGroup) {
  auto out = testing::build_train(program("tf_job", R"(, runtime: "pods", ps: 1)"), {}, "pods.pipe");
  ASSERT_TRUE(out.built) << out.diagnostics;
  auto r = testing::render(out.call, testing::input_texts(out, {}));
  ASSERT_TRUE(r.ok) << r.error;
  auto pods = runtime::tfjob_to_pods(json::parse(r.job), "wf-train-1", "team", {{"pipelines.kubeflow.org/step", "x"}},
                                     nullptr);
  ASSERT_TRUE(pods.ok) << pods.error;
  ASSERT_EQ(pods.size(), 3u);
  std::vector<std::pair<std::string, std::string>> docs;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    json pod = pods.pod(i);
    EXPECT_EQ(pod["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a");
    EXPECT_EQ(pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"], "wf-train-1");
    EXPECT_EQ(pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"], "3");
    EXPECT_EQ(pod["metadata"]["annotations"]["example.com/owner"], "a@example.com");
    EXPECT_EQ(pod["spec"]["priorityClassName"], "high");
    EXPECT_NE(pod["spec"]["containers"][0]["volumeMounts"].dump().find("/dev/shm"), std::string::npos);
    docs.emplace_back("pod-" + std::to_string(i), pod.dump());
  }
  auto v = testing::validate_jobs(docs);
  EXPECT_EQ(v.code, 0) << v.output;
}

// Literal arguments meet the launcher's rules at compile time, at their place.
TEST(Scheduling, BadLiteralsAreLocatedErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(queue: "Team A")", "a queue name"},
      {R"(priority_class: "High")", "a Kubernetes name"},
      {R"(shm_size: "lots")", "a Kubernetes quantity"},
      {R"(labels: {team: "a b"})", "not a Kubernetes label value"},
      {R"(min_available: -1)", "at least 0"},
  };
  for (const auto& [arg, message] : cases) {
    std::string text = "use arena\npipeline p {\n  step t = pytorch_job(image: \"i\", command: \"c\", " + arg + ")\n}\n";
    auto out = testing::build_train(text, {}, "bad.pipe");
    EXPECT_FALSE(out.built) << arg;
    EXPECT_NE(out.diagnostics.find("bad.pipe:3:"), std::string::npos) << out.diagnostics;
    EXPECT_NE(out.diagnostics.find(message), std::string::npos) << out.diagnostics;
  }
}

}  // namespace
}  // namespace pipec
