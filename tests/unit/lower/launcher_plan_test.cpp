// The launcher call of each training step, built once by the lowering into the plan
// (ir::Plan::launchers) with the build's options (lower::Options), for every consumer.
#include "compiler/lower/lower.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/sema/check.hpp"
#include "compiler/training/launcher_call.hpp"
#include "rules/launcher_cli.hpp"

namespace pipec::lower {
namespace {

using Option = rules::LauncherOption;

std::optional<ir::Pipeline> lower_text(const std::string& text, const Options& options = {}) {
  SourceManager sources;
  FileId file = sources.add("input", text);
  Diagnostics diags;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  EXPECT_TRUE(program && !diags.has_errors());
  if (!program) return std::nullopt;
  auto pipeline = lower(std::move(*program), diags, options);
  EXPECT_TRUE(pipeline && !diags.has_errors());
  return pipeline;
}

nlohmann::json manifest_of(const ir::LauncherCall& call) {
  const ir::LauncherWord* m = call.value(Option::Manifest);
  EXPECT_TRUE(m);
  return m ? nlohmann::json::parse(m->text) : nlohmann::json();
}

const char* const kSteps = R"(use arena
op prep() -> (n: int) {
  image "busybox"
  command ["sh", "-c", "echo 2 > /tmp/n"]
  outputs {n: "/tmp/n"}
}
pipeline p {
  param ids: list<int> = [1, 2]
  step first = prep()
  for id in ids {
    step train = mpi_job(image: "horovod", command: "mpirun python train.py", workers: first.n)
  }
  step tf = tf_job(image: "tf", command: "python train.py", workers: 2, metrics: ["loss:min"])
  finally {
    step last = pytorch_job(image: "torch", command: "python last.py", workers: 1)
  }
}
)";

TEST(LauncherPlan, OneCallPerTrainingStepInLoopsAndFinallyNoneForContainers) {
  auto p = lower_text(kSteps);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->plan.launchers.size(), 3u);
  EXPECT_EQ(p->plan.launcher("first"), nullptr);  // a container step: its Invocation
  ASSERT_NE(p->plan.launcher("train"), nullptr);
  ASSERT_NE(p->plan.launcher("tf"), nullptr);
  ASSERT_NE(p->plan.launcher("last"), nullptr);
  EXPECT_EQ(manifest_of(*p->plan.launcher("train"))["kind"], "MPIJob");
  EXPECT_EQ(manifest_of(*p->plan.launcher("last"))["kind"], "PyTorchJob");
  // The run-time worker count reaches the call as an input the DAG task passes.
  const ir::LauncherCall& train = *p->plan.launcher("train");
  ASSERT_EQ(train.inputs.size(), 1u);
  EXPECT_EQ(train.inputs[0].second.ref->name, "first");
  // Options read by their id, never by their words.
  ASSERT_EQ(p->plan.launcher("tf")->values(Option::Metric).size(), 1u);
  EXPECT_EQ(p->plan.launcher("tf")->values(Option::Metric)[0]->text, "loss:min");
  EXPECT_TRUE(p->plan.launcher("tf")->writes_metrics);
  EXPECT_EQ(p->plan.launcher("train")->value(Option::StepName)->kind, ir::LauncherWord::Kind::PodName);
}

TEST(LauncherPlan, TheBuildOptionsShapeTheCall) {
  auto plain = lower_text(kSteps);
  Options options;
  options.mpi_v1 = true;
  options.training_runtime = "trainer-v2,pods";
  auto built = lower_text(kSteps, options);
  ASSERT_TRUE(plain && built);
  EXPECT_EQ(manifest_of(*plain->plan.launcher("train"))["apiVersion"], "kubeflow.org/v2beta1");
  EXPECT_EQ(manifest_of(*built->plan.launcher("train"))["apiVersion"], "kubeflow.org/v1");
  EXPECT_EQ(plain->plan.launcher("tf")->value(Option::Runtime), nullptr);
  ASSERT_NE(built->plan.launcher("tf")->value(Option::Runtime), nullptr);
  EXPECT_EQ(built->plan.launcher("tf")->value(Option::Runtime)->text, "pods");  // the first that fits a TFJob
  EXPECT_EQ(built->plan.launcher("last")->value(Option::Runtime)->text, "trainer-v2");
}

TEST(LauncherPlan, IsTheCallTheTrainingLoweringBuilds) {
  Options options;
  options.mpi_v1 = true;
  auto p = lower_text(kSteps, options);
  ASSERT_TRUE(p);
  training::JobOptions job;
  job.mpi_v1 = true;
  job.params = &p->params;
  const auto& loop = std::get<ir::Loop>(p->dag.at(1));
  ir::LauncherCall again;
  Diagnostics diags;
  ASSERT_TRUE(training::build_launcher_call(std::get<ir::Step>(loop.body.at(0)), job, again, diags));
  const ir::LauncherCall& planned = *p->plan.launcher("train");
  EXPECT_EQ(planned.args, again.args);
  ASSERT_EQ(planned.inputs.size(), again.inputs.size());
  for (std::size_t i = 0; i < planned.inputs.size(); ++i) EXPECT_EQ(planned.inputs[i].first, again.inputs[i].first);
  EXPECT_EQ(planned.writes_metrics, again.writes_metrics);
}

TEST(LauncherPlan, ACalledPipelinesCallIsInItsOwnPlanWithItsParameters) {
  auto p = lower_text(R"(use arena
pipeline fit {
  param n: int = 3
  step train = pytorch_job(image: "torch", command: "python train.py", workers: n)
}
pipeline top {
  step a = fit(n: 5)
}
)");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->plan.launchers.empty());  // `a` calls a pipeline: no launcher of its own
  const ir::Pipeline* fit = p->callee("fit");
  ASSERT_NE(fit, nullptr);
  ASSERT_NE(fit->plan.launcher("train"), nullptr);
  // The manifest's placeholder is the callee parameter's default; the call binds the value.
  nlohmann::json m = manifest_of(*fit->plan.launcher("train"));
  EXPECT_EQ(m["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], 3);
  ASSERT_EQ(fit->plan.launcher("train")->inputs.size(), 1u);
}

}  // namespace
}  // namespace pipec::lower
