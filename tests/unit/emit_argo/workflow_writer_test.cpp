// The Argo writer on small programs: names, scopes and imports of loop bodies, conditions
// as expressions, container bodies (exec, shell, mixed words), resources, annotations.
#include "compiler/emit/argo/workflow_writer.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/base/source_manager.hpp"
#include "compiler/lower/lower.hpp"
#include "compiler/sema/check.hpp"
#include "rules/launcher_cli.hpp"

namespace pipec::emit::argo {
namespace {

struct Built {
  bool ok = false;
  std::string yaml;
  std::string diagnostics;
  YAML::Node doc;
};

Built build(std::string text) {
  SourceManager sources;
  FileId file = sources.add("input", std::move(text));
  Diagnostics diags;
  Built b;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  if (program && !diags.has_errors()) {
    auto pipeline = lower::lower(std::move(*program), diags);
    if (pipeline && !diags.has_errors()) b.ok = write_workflow(*pipeline, WriteOptions{}, b.yaml, diags);
  }
  std::ostringstream rendered;
  render(diags, sources, rendered, RenderOptions{});
  b.diagnostics = rendered.str();
  if (b.ok) b.doc = YAML::Load(b.yaml);
  return b;
}

YAML::Node find_template(const YAML::Node& doc, const std::string& name) {
  for (const auto& t : doc["spec"]["templates"])
    if (t["name"].as<std::string>() == name) return t;
  return YAML::Node();
}

YAML::Node find_task(const YAML::Node& dag, const std::string& name) {
  for (const auto& t : dag["dag"]["tasks"])
    if (t["name"].as<std::string>() == name) return t;
  return YAML::Node();
}

std::string arg(const YAML::Node& task, const std::string& name) {
  for (const auto& p : task["arguments"]["parameters"])
    if (p["name"].as<std::string>() == name) return p["value"].as<std::string>();
  return "<none>";
}

constexpr const char* kEcho = R"(
op echo(message: string) {
  image "busybox:1.36"
  command ["echo", "${message}"]
}
)";

constexpr const char* kCount = R"(
op count() -> (files: int) {
  image "busybox:1.36"
  command "ls | wc -l > /tmp/n"
  outputs {files: "/tmp/n"}
}
)";

TEST(WorkflowWriter, TopLevelShape) {
  auto b = build(std::string(kEcho) + R"(
## The greeting.
pipeline Hello_World {
  description "says hi"
  ## Who to greet.
  param who: string = "world"
  param n: int in 1..10 = 3
  param mode: string in ["a", "b"] = "a"
  param must: float
  step say = echo(message: who)
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  EXPECT_EQ(b.doc["apiVersion"].as<std::string>(), "argoproj.io/v1alpha1");
  EXPECT_EQ(b.doc["kind"].as<std::string>(), "Workflow");
  EXPECT_EQ(b.doc["metadata"]["generateName"].as<std::string>(), "hello-world-");
  EXPECT_EQ(b.doc["spec"]["entrypoint"].as<std::string>(), "hello-world");
  EXPECT_EQ(b.doc["spec"]["serviceAccountName"].as<std::string>(), "pipeline-runner");
  auto params = b.doc["spec"]["arguments"]["parameters"];
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0]["name"].as<std::string>(), "who");
  EXPECT_EQ(params[0]["value"].as<std::string>(), "world");
  EXPECT_EQ(params[0]["description"].as<std::string>(), "Who to greet.");
  EXPECT_EQ(params[1]["value"].as<std::string>(), "3");
  EXPECT_EQ(params[1]["value"].Tag(), "!");  // quoted: stays a string for Argo
  EXPECT_EQ(params[2]["enum"].size(), 2u);
  EXPECT_FALSE(params[3]["value"].IsDefined());  // required: the run must give it
  auto spec = nlohmann::json::parse(
      b.doc["metadata"]["annotations"]["pipelines.kubeflow.org/pipeline_spec"].as<std::string>());
  EXPECT_EQ(spec["name"], "Hello_World");
  EXPECT_EQ(spec["description"], "says hi");
  EXPECT_EQ(spec["inputs"][1]["type"], "Integer");
  EXPECT_EQ(spec["inputs"][1]["default"], "3");
  EXPECT_EQ(spec["inputs"][3]["type"], "Float");
  EXPECT_FALSE(spec["inputs"][3].contains("default"));
  auto typed = nlohmann::json::parse(b.doc["metadata"]["annotations"]["pipec.dev/parameters"].as<std::string>());
  EXPECT_EQ(typed[1]["type"], "int");
  EXPECT_EQ(typed[1]["min"], 1);
  EXPECT_EQ(typed[1]["max"], 10);
  EXPECT_EQ(typed[1]["default"], 3);
  EXPECT_EQ(typed[3]["required"], true);
  auto dag = find_template(b.doc, "hello-world");
  auto say = find_task(dag, "say");
  EXPECT_EQ(say["template"].as<std::string>(), "echo");
  EXPECT_EQ(arg(say, "message"), "{{workflow.parameters.who}}");
  auto echo = find_template(b.doc, "echo");
  EXPECT_EQ(echo["container"]["command"][1].as<std::string>(), "{{inputs.parameters.message}}");
}

TEST(WorkflowWriter, ServiceAccountOption) {
  SourceManager sources;
  FileId file = sources.add("input", std::string(kEcho) + "pipeline p { step a = echo(message: \"x\") }");
  Diagnostics diags;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  ASSERT_TRUE(program);
  auto pipeline = lower::lower(std::move(*program), diags);
  ASSERT_TRUE(pipeline);
  WriteOptions options;
  options.service_account = "trainer";
  std::string yaml;
  ASSERT_TRUE(write_workflow(*pipeline, options, yaml, diags));
  EXPECT_EQ(YAML::Load(yaml)["spec"]["serviceAccountName"].as<std::string>(), "trainer");
}

TEST(WorkflowWriter, ShellFormKeepsValuesOutOfTheScript) {
  auto b = build(R"(
op run(n: int, name: string) {
  image "busybox:1.36"
  command "echo ${name} && seq ${n}"
}
pipeline p {
  param name: string = "x"
  step r = run(n: 3, name: name)
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto c = find_template(b.doc, "run")["container"];
  EXPECT_EQ(c["command"][0].as<std::string>(), "sh");
  EXPECT_EQ(c["command"][1].as<std::string>(), "-c");
  EXPECT_EQ(c["command"][2].as<std::string>(), "echo \"${PIPEC_name}\" && seq \"${PIPEC_n}\"");
  EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "PIPEC_name");
  EXPECT_EQ(c["env"][0]["value"].as<std::string>(), "{{inputs.parameters.name}}");
  EXPECT_EQ(c["env"][1]["name"].as<std::string>(), "PIPEC_n");
}

TEST(WorkflowWriter, ExecWordsThatMixTextAndValuesAreArgoSubstitutionsWithoutAShell) {
  auto b = build(R"(
op get(bucket: string, n: int) {
  image "busybox:1.36"
  command ["fetch", "gs://${bucket}/it's.csv", "--n=${n}"]
}
op entry(out: string) {
  image "busybox:1.36"
  args ["--out", "gs://${out}/x"]
}
pipeline p {
  step g = get(bucket: "b", n: 1)
  step e = entry(out: "o")
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto c = find_template(b.doc, "get")["container"];
  ASSERT_EQ(c["command"].size(), 3u);
  EXPECT_EQ(c["command"][0].as<std::string>(), "fetch");
  EXPECT_EQ(c["command"][1].as<std::string>(), "gs://{{inputs.parameters.bucket}}/it's.csv");
  EXPECT_EQ(c["command"][2].as<std::string>(), "--n={{inputs.parameters.n}}");
  EXPECT_FALSE(c["env"]);  // no PIPEC_ variables: no shell reads them
  // Only args: the image's ENTRYPOINT stays (no command written).
  auto e = find_template(b.doc, "entry")["container"];
  EXPECT_FALSE(e["command"]);
  EXPECT_EQ(e["args"][1].as<std::string>(), "gs://{{inputs.parameters.out}}/x");
}

TEST(WorkflowWriter, LiteralBracesNeverBecomeArgoTags) {
  auto b = build(R"(
op show(v: string) {
  image "busybox:1.36"
  command ["echo", "{{workflow.name}}", "{${v}", "a}}b"]
  env {T: "x{{y}}z"}
}
pipeline p { step s = show(v: "w") })");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto c = find_template(b.doc, "show")["container"];
  EXPECT_EQ(c["command"][1].as<std::string>(), "{{='\\u007b\\u007b'}}workflow.name}}");
  EXPECT_EQ(c["command"][2].as<std::string>(), "{{='\\u007b'}}{{inputs.parameters.v}}");
  EXPECT_EQ(c["command"][3].as<std::string>(), "a}}b");
  EXPECT_EQ(c["env"][0]["value"].as<std::string>(), "x{{='\\u007b\\u007b'}}y}}z");
}

TEST(WorkflowWriter, FlagWordsStayArgoSubstitutions) {
  auto b = build(R"(
op get(n: int) {
  image "busybox:1.36"
  command ["fetch", "--n=${n}", "N=${n}"]
}
pipeline p { step g = get(n: 1) })");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto c = find_template(b.doc, "get")["container"];
  EXPECT_EQ(c["command"][1].as<std::string>(), "--n={{inputs.parameters.n}}");
  EXPECT_EQ(c["command"][2].as<std::string>(), "N={{inputs.parameters.n}}");
}

TEST(WorkflowWriter, ResourcesLiteralAndFromParameters) {
  auto b = build(R"(
op t(cpu: string, gpus: int) {
  image "busybox:1.36"
  command ["true"]
  resources {cpu: cpu, memory: "1Gi", gpus: gpus}
}
op u() {
  image "busybox:1.36"
  command ["true"]
  resources {cpu: "500m", gpus: 2, gpu_vendor: "amd.com/gpu"}
}
pipeline p {
  param cpu: string = "1"
  step a = t(cpu: cpu, gpus: 1)
  step b = u()
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto t = find_template(b.doc, "t");
  EXPECT_EQ(t["container"]["resources"]["limits"]["memory"].as<std::string>(), "1Gi");
  EXPECT_EQ(t["podSpecPatch"].as<std::string>(),
            "{\"containers\":[{\"name\":\"main\",\"resources\":{\"limits\":{\"cpu\":{{=toJson(inputs."
            "parameters['cpu'])}},\"nvidia.com/gpu\":{{=toJson(inputs.parameters['gpus'])}}},"
            "\"requests\":{\"cpu\":{{=toJson(inputs.parameters['cpu'])}},\"nvidia.com/gpu\":{{=toJson("
            "inputs.parameters['gpus'])}}}}}]}");
  auto u = find_template(b.doc, "u");
  EXPECT_EQ(u["container"]["resources"]["limits"]["amd.com/gpu"].as<std::string>(), "2");
  EXPECT_EQ(u["container"]["resources"]["requests"]["cpu"].as<std::string>(), "500m");
}

TEST(WorkflowWriter, ConditionsAreExpressionsOverValues) {
  auto b = build(std::string(kCount) + kEcho + R"(
pipeline p {
  param mode: string = "it's {{x}}"
  param min: int = 1
  param dry: bool = false
  step c = count()
  if c.files >= min and not dry {
    if mode == "a'}}b" { step full = echo(message: "f") }
  } else {
    step other = echo(message: "o")
  }
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto dag = find_template(b.doc, "p");
  EXPECT_EQ(find_task(dag, "full")["when"].as<std::string>(),
            "{{=(((asInt(tasks['c'].outputs.parameters['files']) >= "
            "asInt(workflow.parameters['min'])) && !(workflow.parameters['dry'] in ['true', 'True', 'TRUE', 't', 'T', '1'])) && "
            "(workflow.parameters['mode'] == 'a\\'\\u007d\\u007db'))}}");
  EXPECT_EQ(find_task(dag, "other")["when"].as<std::string>().substr(0, 5), "{{=!(");
  EXPECT_EQ(find_task(dag, "full")["dependencies"][0].as<std::string>(), "c");
}

TEST(WorkflowWriter, LoopBodiesImportWhatTheyUse) {
  auto b = build(std::string(kCount) + kEcho + R"(
pipeline p {
  param shards: list<string> = ["a", "b"]
  step c = count()
  for shard in shards {
    for run in [{name: "s", lr: "0.1"}] {
      step say = echo(message: "${shard} ${run.name} ${c.files}")
    }
  }
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto main = find_template(b.doc, "p");
  auto outer = find_task(main, "for-shard");
  EXPECT_EQ(outer["withParam"].as<std::string>(), "{{workflow.parameters.shards}}");
  EXPECT_EQ(outer["dependencies"][0].as<std::string>(), "c");
  EXPECT_EQ(arg(outer, "shard"), "{{item}}");
  EXPECT_EQ(arg(outer, "c-files"), "{{tasks.c.outputs.parameters.files}}");
  auto outer_t = find_template(b.doc, "for-shard");
  auto inner = find_task(outer_t, "for-run");
  EXPECT_EQ(inner["withItems"][0]["name"].as<std::string>(), "s");
  EXPECT_EQ(arg(inner, "shard"), "{{inputs.parameters.shard}}");
  EXPECT_EQ(arg(inner, "run-name"), "{{item.name}}");
  EXPECT_EQ(arg(inner, "c-files"), "{{inputs.parameters.c-files}}");
  auto inner_t = find_template(b.doc, "for-run");
  EXPECT_EQ(arg(find_task(inner_t, "say"), "message"),
            "{{inputs.parameters.shard}} {{inputs.parameters.run-name}} {{inputs.parameters.c-files}}");
}

TEST(WorkflowWriter, ExitHandler) {
  auto b = build(std::string(kEcho) + R"(
pipeline p {
  step a = echo(message: "a")
  finally {
    step clean = echo(message: "c")
    step tell = echo(message: "t") after clean
  }
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  EXPECT_EQ(b.doc["spec"]["onExit"].as<std::string>(), "p-finally");
  auto fin = find_template(b.doc, "p-finally");
  EXPECT_EQ(find_task(fin, "tell")["dependencies"][0].as<std::string>(), "clean");
}

TEST(WorkflowWriter, OutputsArePathsPassedByReference) {
  auto b = build(R"(
op make() -> (model: string) {
  image "busybox:1.36"
  command "echo m > /tmp/model"
  outputs {model: "/tmp/model"}
}
)" + std::string(kEcho) + R"(
pipeline p {
  step m = make()
  step e = echo(message: m.model)
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto make = find_template(b.doc, "make");
  EXPECT_EQ(make["outputs"]["parameters"][0]["valueFrom"]["path"].as<std::string>(), "/tmp/model");
  EXPECT_EQ(make["outputs"]["artifacts"][0]["path"].as<std::string>(), "/tmp/model");
  auto e = find_task(find_template(b.doc, "p"), "e");
  EXPECT_EQ(arg(e, "message"), "{{tasks.m.outputs.parameters.model}}");
  EXPECT_EQ(e["dependencies"][0].as<std::string>(), "m");
}

TEST(WorkflowWriter, TemplateNameCollisionsAreErrors) {
  auto b = build(std::string(kEcho) + R"(
pipeline echo {
  step a = echo(message: "a")
})");
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.diagnostics.find("both become the Argo template 'echo'"), std::string::npos) << b.diagnostics;
}

TEST(WorkflowWriter, TrainingStepRunsTheLauncherAndDeclaresMetrics) {
  auto b = build(R"(
use arena
pipeline p {
  param workers: int = 2
  step train = mpi_job(image: "horovod:1", command: "mpirun x", workers: workers, metrics: ["acc"])
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto t = find_template(b.doc, "train");
  EXPECT_EQ(t["container"]["command"][0].as<std::string>(), "pipec-launcher");
  EXPECT_EQ(t["outputs"]["artifacts"][0]["name"].as<std::string>(), "mlpipeline-metrics");
  // The metric series beside it: an output the UIs list, optional as the metrics file is.
  EXPECT_EQ(t["outputs"]["artifacts"][1]["name"].as<std::string>(), "metric-series");
  EXPECT_EQ(t["outputs"]["artifacts"][1]["path"].as<std::string>(), "/tmp/outputs/metric-series.json");
  EXPECT_TRUE(t["outputs"]["artifacts"][1]["optional"].as<bool>());
  EXPECT_EQ(t["container"]["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(), "metadata.uid");
  auto task = find_task(find_template(b.doc, "p"), "train");
  EXPECT_EQ(arg(task, "workers"), "{{workflow.parameters.workers}}");
}

// gpu_vendor as KFP's set_gpu_limit: "amd" is amd.com/gpu; from a value, Argo computes the
// same key in the pod patch (no longer dropped), and the patch is valid JSON around tags.
TEST(WorkflowWriter, GpuVendorFromLiteralAndFromAValue) {
  auto b = build(R"(
op lit() {
  image "busybox"
  resources {gpu_vendor: "amd", gpus: 2}
}
op dyn(v: string) {
  image "busybox"
  resources {gpu_vendor: v, gpus: 1}
}
pipeline p {
  param vendor: string = "nvidia"
  step a = lit()
  step b = dyn(v: vendor)
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  EXPECT_EQ(find_template(b.doc, "lit")["container"]["resources"]["limits"]["amd.com/gpu"].as<std::string>(), "2");
  auto patch = find_template(b.doc, "dyn")["podSpecPatch"].as<std::string>();
  EXPECT_NE(patch.find("{\"limits\":{ {{=toJson(sprig.ternary(inputs.parameters['v'], "
                       "inputs.parameters['v'] + '.com/gpu', sprig.contains('/', inputs.parameters['v'])))}}:\"1\"}"),
            std::string::npos)
      << patch;
}

// The Pipelines UI labels a task with its template's task_display_name annotation (else the
// template's name): steps sharing an op each get a template that names the step.
TEST(WorkflowWriter, EveryStepNamedInTheUi) {
  auto b = build(std::string(kEcho) + R"(
op echo_2(message: string) {
  image "busybox:1.36"
  command ["echo", "${message}"]
}
pipeline p {
  step first = echo(message: "a")
  step second = echo(message: "b")
  step third = echo(message: "c")
  step other = echo_2(message: "d")
})");
  ASSERT_TRUE(b.ok) << b.diagnostics;
  auto dag = find_template(b.doc, "p");
  std::set<std::string> templates;
  for (const char* step : {"first", "second", "third", "other"}) {
    auto task = find_task(dag, step);
    std::string tmpl = task["template"].as<std::string>();
    templates.insert(tmpl);
    auto t = find_template(b.doc, tmpl);
    ASSERT_TRUE(t) << tmpl;
    EXPECT_EQ(t["metadata"]["annotations"]["pipelines.kubeflow.org/task_display_name"].as<std::string>(), step);
    EXPECT_EQ(t["container"]["command"][1].as<std::string>(), "{{inputs.parameters.message}}");
  }
  EXPECT_EQ(templates.size(), 4u);
  EXPECT_EQ(find_task(dag, "first")["template"].as<std::string>(), "echo");
  EXPECT_EQ(find_task(dag, "other")["template"].as<std::string>(), "echo-2");
  EXPECT_EQ(find_task(dag, "second")["template"].as<std::string>(), "echo-3");
  EXPECT_EQ(find_task(dag, "third")["template"].as<std::string>(), "echo-4");
}

// The writer prints the launcher call the lowering put in the plan (ir::Plan::launchers):
// it builds none of its own, and without one it fails.
TEST(WorkflowWriter, PrintsThePlansLauncherCall) {
  SourceManager sources;
  FileId file = sources.add("input", "use arena\npipeline p {\n  step train = pytorch_job(image: \"torch\", "
                                     "command: \"python t.py\", workers: 1)\n}\n");
  Diagnostics diags;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  ASSERT_TRUE(program);
  auto pipeline = lower::lower(std::move(*program), diags);
  ASSERT_TRUE(pipeline);
  using Option = rules::LauncherOption;
  using Word = ir::LauncherWord;
  ir::LauncherCall& call = pipeline->plan.launchers.at("train");
  call.args = {{Option::Manifest, Word("{}")},
               {Option::Tensorboard, Word(Word::Kind::Input, "tb")},
               {Option::StepName, Word(Word::Kind::PodName, "")}};
  std::string yaml;
  ASSERT_TRUE(write_workflow(*pipeline, WriteOptions{}, yaml, diags));
  std::vector<std::string> args;
  for (const auto& a : find_template(YAML::Load(yaml), "train")["container"]["args"]) args.push_back(a.as<std::string>());
  EXPECT_EQ(args, (std::vector<std::string>{"--manifest", "{}", "--tensorboard", "{{inputs.parameters.tb}}",
                                             "--step-name", "{{pod.name}}"}));
  pipeline->plan.launchers.clear();
  std::string none;
  EXPECT_FALSE(write_workflow(*pipeline, WriteOptions{}, none, diags));
}

}  // namespace
}  // namespace pipec::emit::argo
