// The op body table (compiler/sema/op_body.hpp) is where component export learns what a
// KFP v1 component cannot hold: each field an op sets is exported, or said not to be,
// exactly as its row says. A new row without a sample here fails the first test, so a
// field is never added without this check.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <unistd.h>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/sema/op_body.hpp"
#include "compiler/tools/component_export.hpp"

namespace pipec {
namespace {

// A body line that sets each field (beside `image`, `command` and `outputs`, which every
// sample op has). The Python fields make an op of another form: see PythonOp below.
const std::map<std::string, std::string> kSamples = {
    {"image", ""},
    {"command", ""},
    {"outputs", ""},
    {"args", R"(args ["x"])"},
    {"env", R"(env {MODE: "a"})"},
    {"resources", R"(resources {cpu: "1"})"},
    {"retries", "retries 2"},
    {"timeout", R"(timeout "1h")"},
    {"node_selector", R"(node_selector {pool: "gpu"})"},
    {"tolerations", R"(tolerations ["gpu=true:NoSchedule"])"},
    {"labels", R"(labels {team: "a"})"},
    {"annotations", R"(annotations {note: "x"})"},
    {"cache", "cache false"},
    {"volumes", R"(volumes {"/data": "pvc:data"})"},
    {"secret_env", R"(secret_env {TOKEN: "creds:token"})"},
    {"image_pull_policy", R"(image_pull_policy "Always")"},
    {"working_dir", R"(working_dir "/work")"},
    {"run_as_user", "run_as_user 1000"},
    {"run_as_group", "run_as_group 1000"},
    {"run_as_non_root", "run_as_non_root true"},
    {"metrics", R"(metrics ["acc"])"},
    {"metrics_from", "metrics [\"acc\"]\n  metrics_from \"/tmp/metrics\""},
    {"inputs", R"(inputs {f: "/data/in"})"},
    {"python", ""},
    {"packages", ""},
    {"queue", R"(queue "team-a")"},
    {"priority_class", R"(priority_class "high")"},
    {"scheduler", R"(scheduler "volcano")"},
    {"shm_size", R"(shm_size "1Gi")"},
};

struct Exported {
  bool ok = false;
  std::string diagnostics;
};

Exported export_op(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("pipec-op-body-" + std::to_string(::getpid()) + ".pipe");
  std::ofstream(path) << text;
  SourceManager sources;
  Diagnostics diags;
  std::string yaml;
  Exported out;
  out.ok = tools::export_component_of(sources, path.string(), "t", yaml, diags);
  for (const auto& d : diags.all()) out.diagnostics += d.message + "\n";
  std::filesystem::remove(path);
  return out;
}

std::string op_with(const std::string& line) {
  return "op t(f: file) -> (o: string) {\n"
         "  image \"busybox\"\n"
         "  command [\"sh\", \"-c\", \"echo 1 > /tmp/o\"]\n"
         "  outputs {o: \"/tmp/o\"}\n  " +
         line + "\n}\n";
}

TEST(OpBody, EveryRowHasASample) {
  std::set<std::string> rows;
  for (const auto& field : sema::op_body_fields()) {
    rows.emplace(field.name);
    EXPECT_TRUE(kSamples.count(std::string(field.name))) << "no sample for body field '" << field.name << "'";
  }
  for (const auto& [name, line] : kSamples) EXPECT_TRUE(rows.count(name)) << "'" << name << "' is no row";
}

TEST(OpBody, ComponentExportSaysWhatItsRowSays) {
  for (const auto& field : sema::op_body_fields()) {
    auto sample = kSamples.find(std::string(field.name));
    if (sample == kSamples.end() || sample->second.empty()) continue;
    Exported e = export_op(op_with(sample->second));
    const std::string said = "'" + std::string(field.name) + "' is not exported";
    EXPECT_TRUE(e.ok) << field.name << ": " << e.diagnostics;
    EXPECT_EQ(e.diagnostics.find(said) != std::string::npos, !field.exported)
        << field.name << ": " << e.diagnostics;
  }
}

TEST(OpBody, PythonOp) {
  Exported e = export_op("op t(x: int) -> (y: int) {\n  packages [\"six\"]\n  python ```\n"
                         "    def t(x: int) -> int:\n        return x\n    ```\n}\n");
  EXPECT_EQ(e.diagnostics.find("is not exported"), std::string::npos) << e.diagnostics;
}

}  // namespace
}  // namespace pipec
