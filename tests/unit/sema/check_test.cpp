#include "compiler/sema/check.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/sema/program.hpp"
#include "tests/unit/syntax/test_support.hpp"

namespace pipec::sema {
namespace {

using testing::check_string;

const char* const kEcho =
    "op echo(message: string, count: int = 1) -> (out: string) {\n"
    "  image \"busybox\"\n"
    "  command [\"echo\", \"${message}\"]\n"
    "  outputs {out: \"/tmp/out\"}\n"
    "}\n";

TEST(TypeCheck, RejectsStringForIntParam) {
  auto out = check_string("pipeline p {\n  param n: int = \"x\"\n}\n");
  EXPECT_FALSE(out.program);
  EXPECT_EQ(out.diagnostics,
            "input:2:18: error: default for 'n' must be int, got string\n"
            "  param n: int = \"x\"\n"
            "                 ^~~\n");
}

TEST(TypeCheck, WidensIntToFloat) {
  auto out =
      check_string("pipeline p {\n  param lr: float = 1\n  param xs: list<float> = [1, 2.5]\n}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  const auto& params = out.program->params;
  ASSERT_EQ(params.size(), 2u);
  EXPECT_TRUE(params[0].default_value->is_number_float());
  EXPECT_EQ(params[0].default_value->dump(), "1.0");
  EXPECT_EQ(params[1].type.str(), "list<float>");
  EXPECT_EQ(params[1].default_value->dump(), "[1.0,2.5]");
}

TEST(TypeCheck, WidensNestedIntsAndFillsEmptyListTypes) {
  auto out = check_string(
      "pipeline p {\n  param xs: list<list<float>> = [[1], [2.5], []]\n  param ys: list<int> = "
      "[]\n}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  EXPECT_EQ(out.program->params[0].default_value->dump(), "[[1.0],[2.5],[]]");
  EXPECT_EQ(out.program->params[1].type.str(), "list<int>");
}

TEST(TypeCheck, NestedEmptyListsHaveADepth) {
  auto out = check_string("pipeline p {\n  param xs: list<int> = [[]]\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:2:25: error: default for 'xs' must be list<int>, got list<list<?>>\n"
            "  param xs: list<int> = [[]]\n"
            "                        ^~~~\n");
  EXPECT_TRUE(check_string("pipeline p {\n  param xs: list<list<int>> = [[], [1]]\n}\n").program);
}

TEST(TypeCheck, KeepsParamsDocsAndConstraints) {
  auto out = check_string(
      "pipeline p {\n"
      "  description \"demo\"\n"
      "  ## The optimizer.\n"
      "  param opt: string in [\"sgd\", \"adam\"] = \"sgd\"\n"
      "  param workers: int in 1..64\n"
      "  param env: map<string> = {A: \"1\"}\n"
      "}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  const auto& p = *out.program;
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.description, "demo");
  ASSERT_EQ(p.params.size(), 3u);
  EXPECT_EQ(p.params[0].doc, "The optimizer.");
  EXPECT_EQ(ir::Literal(p.params[0].constraint.one_of).dump(), "[\"sgd\",\"adam\"]");
  EXPECT_FALSE(p.params[1].default_value);
  EXPECT_EQ(*p.params[1].constraint.min, 1.0);
  EXPECT_EQ(*p.params[1].constraint.max, 64.0);
  EXPECT_EQ(p.params[2].type.str(), "map<string>");
  EXPECT_EQ(p.params[2].default_value->dump(), "{\"A\":\"1\"}");
}

TEST(TypeCheck, ChecksConstraintOnDefault) {
  auto out = check_string("pipeline p {\n  param w: float in 0.0..1.0 = 1.5\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:2:32: error: default 1.5 of 'w' is outside its range 0.0..1.0\n"
            "  param w: float in 0.0..1.0 = 1.5\n"
            "                               ^~~\n");
}

TEST(ResolveNames, ReportsEveryErrorWithNotes) {
  auto out = check_string(std::string(kEcho) +
                          "pipeline p {\n"
                          "  param count: int = 1\n"
                          "  step a = echo(mesage: \"x\", count: cuont)\n"
                          "}\n");
  EXPECT_FALSE(out.program);
  EXPECT_EQ(out.diagnostics,
            "input:8:17: error: unknown argument 'mesage' for op 'echo'\n"
            "  step a = echo(mesage: \"x\", count: cuont)\n"
            "                ^~~~~~\n"
            "input:8:17: note: did you mean 'message'?\n"
            "input:1:4: note: 'echo' declared here\n"
            "op echo(message: string, count: int = 1) -> (out: string) {\n"
            "   ^~~~\n"
            "input:8:37: error: unknown name 'cuont'\n"
            "  step a = echo(mesage: \"x\", count: cuont)\n"
            "                                    ^~~~~\n"
            "input:8:37: note: did you mean 'count'?\n");
}

TEST(ResolveNames, StepOutputsCreateDependencies) {
  auto out = check_string(std::string(kEcho) +
                          "pipeline p {\n"
                          "  param go: bool = true\n"
                          "  step b = echo(message: \"${a.out}!\") after c\n"
                          "  step a = echo(message: \"x\")\n"
                          "  step c = echo(message: \"y\")\n"
                          "  if a.out == \"ok\" and go {\n"
                          "    step d = echo(message: c.out)\n"
                          "  }\n"
                          "}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  const auto& body = out.program->body;
  ASSERT_EQ(body.size(), 4u);
  EXPECT_EQ(body[0].name, "b");
  EXPECT_EQ(body[0].deps, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(body[3].kind, Stmt::Kind::If);
  EXPECT_EQ(body[3].condition->op, ir::Condition::Op::And);
  ASSERT_EQ(body[3].then_body.size(), 1u);
  // d uses c directly and a through its condition.
  EXPECT_EQ(body[3].then_body[0].deps, (std::vector<std::string>{"a", "c"}));
}

TEST(CheckGraph, NamesTheStepsOfACycle) {
  auto out = check_string(std::string(kEcho) +
                          "pipeline p {\n"
                          "  step fetch = echo(message: train.out)\n"
                          "  step train = echo(message: \"x\") after fetch\n"
                          "}\n");
  EXPECT_EQ(out.diagnostics,
            "input:7:8: error: steps form a cycle: fetch -> train -> fetch\n"
            "  step fetch = echo(message: train.out)\n"
            "       ^~~~~\n");
}

TEST(CheckGraph, LoopItemsComeFromListOutputs) {
  auto out = check_string(
      "op list_files() -> (files: list<string>) {\n"
      "  image \"busybox\"\n"
      "  outputs {files: \"/tmp/files\"}\n"
      "}\n"
      "op use_file(f: string) {\n"
      "  image \"busybox\"\n"
      "}\n"
      "pipeline p {\n"
      "  step ls = list_files()\n"
      "  for f in ls.files {\n"
      "    step one = use_file(f: f)\n"
      "  }\n"
      "}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  const auto& loop = out.program->body.at(1);
  ASSERT_EQ(loop.kind, Stmt::Kind::For);
  EXPECT_EQ(loop.item_type.str(), "string");
  EXPECT_EQ(loop.deps, (std::vector<std::string>{"ls"}));
  EXPECT_EQ(loop.items->ref->kind, ir::Ref::Kind::StepOutput);
}

TEST(CheckOps, ChecksContainerBody) {
  auto out = check_string(
      "op t(epochs: int = 3) -> (model: string) {\n"
      "  image \"python:3.11\"\n"
      "  command \"python t.py --epochs ${epochs}\"\n"
      "  env {MODE: \"fast\"}\n"
      "  resources {cpu: \"1\", gpus: 1}\n"
      "  outputs {model: \"/tmp/model\"}\n"
      "}\n"
      "pipeline p {\n"
      "  step s = t()\n"
      "}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  const auto& op = out.program->ops.at("t");
  ASSERT_TRUE(op.container);
  EXPECT_TRUE(op.container->shell);
  ASSERT_EQ(op.container->command.size(), 1u);
  const auto& cmd = op.container->command[0];
  EXPECT_EQ(cmd.kind, ir::Value::Kind::Interpolation);
  ASSERT_EQ(cmd.parts.size(), 2u);
  EXPECT_EQ(cmd.parts[0].text, "python t.py --epochs ");
  EXPECT_EQ(cmd.parts[1].ref->kind, ir::Ref::Kind::OpParam);
  EXPECT_EQ(cmd.parts[1].ref->name, "epochs");
  EXPECT_EQ(op.container->outputs.at(0).path, "/tmp/model");
  EXPECT_EQ(op.container->resources.size(), 2u);
  EXPECT_EQ(op.container->env.at(0).first, "MODE");
}

TEST(CheckOps, TrainingOpsNeedTheStdlib) {
  auto out = check_string(
      "use arena\npipeline p {\n  step t = mpi_job(image: \"i\", command: \"c\", workers: 2)\n}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  EXPECT_EQ(out.program->ops.at("mpi_job").kind, ir::OpKind::MpiJob);
  EXPECT_EQ(out.program->ops.at("tf_job").kind, ir::OpKind::TfJob);
  EXPECT_EQ(out.program->ops.at("pytorch_job").kind, ir::OpKind::PyTorchJob);
  EXPECT_EQ(out.program->ops.at("train_job").kind, ir::OpKind::TrainJob);
  EXPECT_FALSE(out.program->ops.at("mpi_job").params.at(0).doc.empty());
}

// A volume's kind is decided once, here, from its source word: the writers, the local run
// and preflight switch on ir::ContainerOp::Volume::Kind (`memory` is an emptyDir of medium
// Memory), and a word that names no kind is refused.
TEST(CheckOps, VolumeKindsAreDecidedBySema) {
  auto out = check_string(
      "op o() {\n  image \"busybox\"\n  volumes {\"/a\": \"pvc:claim/sub\", \"/b\": \"memory:1Gi\", "
      "\"/c\": \"ephemeral:5Gi\", \"/d\": \"configmap:cfg:ro\", \"/e\": \"secret:s\", "
      "\"/f\": \"empty\", \"/kfp-workspace\": \"workspace\"}\n}\npipeline p {\n}\n");
  ASSERT_TRUE(out.program) << out.diagnostics;
  using Kind = ir::ContainerOp::Volume::Kind;
  const auto& vols = out.program->ops.at("o").container->volumes;
  ASSERT_EQ(vols.size(), 7u);
  const Kind kinds[] = {Kind::Pvc, Kind::Empty, Kind::Ephemeral, Kind::ConfigMap, Kind::Secret, Kind::Empty,
                        Kind::Workspace};
  for (std::size_t i = 0; i < vols.size(); ++i) EXPECT_EQ(vols[i].kind, kinds[i]) << vols[i].path;
  EXPECT_EQ(vols[0].name, "claim");
  EXPECT_EQ(vols[0].sub_path, "sub");
  EXPECT_TRUE(vols[1].memory);
  EXPECT_EQ(vols[1].size, "1Gi");
  EXPECT_FALSE(vols[5].memory);
  EXPECT_TRUE(vols[3].read_only);
  for (const char* word : {"pvc", "empty", "ephemeral", "configmap", "secret", "workspace"})
    EXPECT_STREQ(ir::volume_kind_word(*ir::volume_kind_of(word)), word);
  EXPECT_FALSE(ir::volume_kind_of("memory"));  // sema's: an Empty volume with `memory` set
  EXPECT_FALSE(ir::volume_kind_of("PVC"));
  EXPECT_NE(check_string("op o() {\n  image \"b\"\n  volumes {\"/a\": \"nfs:x\"}\n}\npipeline p {\n}\n")
                   .diagnostics.find("input:3:"),
            std::string::npos);
}

TEST(LoadModules, FollowsRelativeFilesAndReportsCycles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pipec-sema-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "main.pipe") << "use \"lib/a.pipe\"\npipeline p {\n  step s = from_b()\n}\n";
  std::ofstream(dir / "lib/a.pipe") << "use \"b.pipe\"\n";
  std::ofstream(dir / "lib/b.pipe") << "op from_b() {\n  image \"x\"\n}\n";
  SourceManager sources;
  std::string error;
  FileId main = sources.load((dir / "main.pipe").string(), error);
  Diagnostics diags;
  auto program = check_program(sources, main, diags, sema::Host{});
  EXPECT_TRUE(program) << testing::render_text(diags, sources);

  std::ofstream(dir / "lib/b.pipe") << "use \"a.pipe\"\n";
  SourceManager sources2;
  Diagnostics diags2;
  main = sources2.load((dir / "main.pipe").string(), error);
  EXPECT_FALSE(check_program(sources2, main, diags2, sema::Host{}));
  std::string text = testing::render_text(diags2, sources2);
  EXPECT_NE(
      text.find("error: files use each other in a cycle: " + (dir / "lib/a.pipe").string() +
                " -> " + (dir / "lib/b.pipe").string() + " -> " + (dir / "lib/a.pipe").string()),
      std::string::npos)
      << text;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipec::sema
