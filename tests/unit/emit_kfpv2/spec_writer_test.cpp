// compiler/emit/kfpv2: the pipeline spec written from the lowered IR, read back as YAML.
// tests/kfpv2 loads whole programs' specs in kfp 2.17; these check single decisions.
#include "compiler/emit/kfpv2/pipeline_spec_writer.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "tests/unit/syntax/test_support.hpp"

namespace pipec::emit::kfpv2 {
namespace {

struct Built {
  bool ok = false;
  std::string yaml;
  std::string diagnostics;
  YAML::Node spec;
};

Built build(const std::string& text) {
  SourceManager sources;
  FileId file = sources.add("input", text);
  Diagnostics diags;
  Built b;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  if (program && !diags.has_errors()) {
    auto pipeline = lower::lower(std::move(*program), diags);
    if (pipeline && !diags.has_errors()) b.ok = write_pipeline_spec(*pipeline, WriteOptions{}, b.yaml, diags);
  }
  b.diagnostics = testing::render_text(diags, sources);
  if (b.ok) b.spec = YAML::LoadAll(b.yaml).at(0);
  return b;
}

const char* const kProgram =
    "op make(n: int = 1) -> (out: string) {\n"
    "  image \"busybox:1.36\"\n"
    "  command [\"sh\", \"-c\", \"echo ${n} > /tmp/out\"]\n"
    "  outputs {out: \"/tmp/out\"}\n"
    "}\n"
    "op take(x: string) {\n"
    "  image \"busybox:1.36\"\n"
    "  command [\"echo\", \"${x}\"]\n"
    "}\n"
    "pipeline chain {\n"
    "  param count: int = 3\n"
    "  param tags: list<string> = [\"a\"]\n"
    "  step a = make(n: count)\n"
    "  step b = take(x: a.out)\n"
    "}\n";

TEST(SpecWriter, ParametersTakeKfpTypesAndDefaults) {
  Built b = build(kProgram);
  ASSERT_TRUE(b.ok) << b.diagnostics;
  YAML::Node params = b.spec["root"]["inputDefinitions"]["parameters"];
  EXPECT_EQ(params["count"]["parameterType"].as<std::string>(), "NUMBER_INTEGER");
  EXPECT_EQ(params["count"]["defaultValue"].as<int>(), 3);
  EXPECT_EQ(params["tags"]["parameterType"].as<std::string>(), "LIST");
  EXPECT_EQ(b.spec["pipelineInfo"]["name"].as<std::string>(), "chain");
}

TEST(SpecWriter, AStepOutputIsATaskOutputAndAnUpstreamTask) {
  Built b = build(kProgram);
  ASSERT_TRUE(b.ok) << b.diagnostics;
  YAML::Node tasks = b.spec["root"]["dag"]["tasks"];
  YAML::Node x = tasks["b"]["inputs"]["parameters"]["x"]["taskOutputParameter"];
  EXPECT_EQ(x["producerTask"].as<std::string>(), "a");
  EXPECT_EQ(x["outputParameterKey"].as<std::string>(), "out");
  ASSERT_TRUE(tasks["b"]["dependentTasks"].IsSequence());
  EXPECT_EQ(tasks["b"]["dependentTasks"][0].as<std::string>(), "a");
  EXPECT_EQ(tasks["a"]["inputs"]["parameters"]["n"]["componentInputParameter"].as<std::string>(), "count");
}

TEST(SpecWriter, EachOpIsAComponentWithItsExecutorImage) {
  Built b = build(kProgram);
  ASSERT_TRUE(b.ok) << b.diagnostics;
  EXPECT_TRUE(b.spec["components"]["comp-make"]);
  EXPECT_TRUE(b.spec["components"]["comp-take"]);
  YAML::Node executors = b.spec["deploymentSpec"]["executors"];
  EXPECT_EQ(executors["exec-make"]["container"]["image"].as<std::string>(), "busybox:1.36");
  EXPECT_EQ(b.spec["components"]["comp-make"]["outputDefinitions"]["parameters"]["out"]["parameterType"].as<std::string>(),
            "STRING");
}

TEST(SpecWriter, TheSameProgramGivesTheSameBytes) {
  Built first = build(kProgram), second = build(kProgram);
  ASSERT_TRUE(first.ok) << first.diagnostics;
  EXPECT_EQ(first.yaml, second.yaml);
}

// A failure policy that v2 cannot express is an error at its place, naming the target.
TEST(SpecWriter, AFormTheTargetCannotExpressIsALocatedError) {
  std::string text = kProgram;
  text.replace(text.find("  step b = take(x: a.out)\n"), 26, "  step b = take(x: \"x\") after a.failed\n");
  Built b = build(text);
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.diagnostics.find("input:14:"), std::string::npos) << b.diagnostics;
  EXPECT_NE(b.diagnostics.find("KFP v2"), std::string::npos) << b.diagnostics;
}

}  // namespace
}  // namespace pipec::emit::kfpv2
