#pragma once

// Test hooks for the training-op lowering: compile pipeline text, build the launcher call
// of its training step, read the call back, render the job with the launcher's own code
// (runtime/job_render.hpp) and validate it with /work/shared/tools/validate-workflow.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/training/launcher_call.hpp"
#include "compiler/lower/lower.hpp"
#include "compiler/sema/check.hpp"
#include "runtime/job_render.hpp"

namespace pipec::testing {

struct TrainOutcome {
  std::optional<ir::Pipeline> pipeline;
  std::optional<ir::Step> step;  // the first training step of the main DAG (named `step`, if given)
  ir::LauncherCall call;
  bool built = false;
  std::string diagnostics;  // rendered, `input:LINE:COL: error: ...`
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline TrainOutcome build_train(std::string text, training::JobOptions options = {},
                                std::string name = "input", const std::string& step = "") {
  SourceManager sources;
  FileId file = sources.add(std::move(name), std::move(text));
  Diagnostics diags;
  TrainOutcome out;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  if (program) out.pipeline = lower::lower(std::move(*program), diags);
  if (out.pipeline) {
    for (const auto& node : out.pipeline->dag)
      if (const auto* s = std::get_if<ir::Step>(&node);
          s && s->kind != ir::OpKind::Container && (step.empty() || s->name == step)) {
        out.step = *s;
        break;
      }
    if (out.step) {
      options.params = &out.pipeline->params;
      out.built = training::build_launcher_call(*out.step, options, out.call, diags);
    }
  }
  std::ostringstream rendered;
  render(diags, sources, rendered, RenderOptions{});
  out.diagnostics = rendered.str();
  return out;
}

/// The run-time texts of the call's inputs: each a whole parameter, from `values` or its default.
inline std::map<std::string, std::string> input_texts(const TrainOutcome& out,
                                                     const std::map<std::string, std::string>& values) {
  std::map<std::string, std::string> t;
  for (const auto& [input, value] : out.call.inputs) {
    const ir::Ref* r = ir::whole_ref(value);
    if (!r) {
      ADD_FAILURE() << "input " << input << " is not a whole parameter";
      continue;
    }
    if (auto it = values.find(r->name); it != values.end()) {
      t[input] = it->second;
      continue;
    }
    for (const auto& p : out.pipeline->params)
      if (p.name == r->name && p.default_value) t[input] = ir::literal_text(*p.default_value);
  }
  return t;
}

/// The launcher's arguments read back.
struct CallParts {
  nlohmann::json manifest;
  std::string manifest_text;
  std::vector<std::string> binds;
  std::vector<std::string> values;  // `NAME={{inputs.parameters.NAME}}`
  std::vector<std::string> metrics;
  std::vector<std::string> metric_values;
  std::map<std::string, std::string> flags;  // other options with their value
};

/// The launcher's words as the Argo template spells them (tests/golden holds the writer's
/// own output): an input as `{{inputs.parameters.NAME}}`.
inline std::vector<std::string> args_of(const ir::LauncherCall& call) {
  using Kind = ir::LauncherWord::Kind;
  std::vector<std::string> out;
  for (const auto& [option, w] : call.args) {
    out.push_back(rules::launcher_flag(option));
    switch (w.kind) {
      case Kind::Text: out.push_back(w.text); break;
      case Kind::Input: out.push_back("{{inputs.parameters." + w.text + "}}"); break;
      case Kind::Binding: out.push_back(w.text + "={{inputs.parameters." + w.text + "}}"); break;
      case Kind::WorkflowName: out.push_back("{{workflow.name}}"); break;
      case Kind::PodName: out.push_back("{{pod.name}}"); break;
      case Kind::Workspace: out.push_back(std::string(ir::kWorkspaceValue) + "=" +
                                          ir::workspace_entry("{{workflow.name}}", w.text)); break;
    }
  }
  return out;
}

inline CallParts parts_of(const ir::LauncherCall& call) {
  CallParts p;
  const std::vector<std::string> args = args_of(call);
  for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
    const auto& flag = args[i];
    const auto& value = args[i + 1];
    if (flag == "--manifest") {
      p.manifest_text = value;
      p.manifest = nlohmann::json::parse(value);
    } else if (flag == "--bind") {
      p.binds.push_back(value);
    } else if (flag == "--value") {
      p.values.push_back(value);
    } else if (flag == "--metric") {
      p.metrics.push_back(value);
    } else if (flag == "--metric-value") {
      p.metric_values.push_back(value);
    } else {
      p.flags[flag] = value;
    }
  }
  return p;
}

/// Renders the job with the run-time texts `values` (input name -> text), as the launcher.
inline runtime::RenderResult render(const ir::LauncherCall& call,
                                    const std::map<std::string, std::string>& values) {
  CallParts p = parts_of(call);
  std::vector<std::string> value_args;
  for (const auto& [k, v] : values) value_args.push_back(k + "=" + v);
  // Values the compiler wrote as literals (`--value data_1=claim:/path`) go as they are.
  for (const auto& v : p.values)
    if (v.find("{{inputs.parameters.") == std::string::npos) value_args.push_back(v);
  return runtime::render_job_from_args(p.manifest_text, p.binds, value_args);
}

/// Runs the shared validator on the given documents; returns its exit code and output.
struct Validation {
  int code = -1;
  std::string output;
};

inline Validation validate_jobs(const std::vector<std::pair<std::string, std::string>>& docs) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("pipec-jobs-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
  fs::create_directories(dir);
  std::string cmd = PIPEC_SHARED_DIR "/tools/validate-workflow/validate";
  for (const auto& [name, text] : docs) {
    fs::path f = dir / (name + ".json");
    std::ofstream(f) << text;
    cmd += " '" + f.string() + "'";
  }
  fs::path log = dir / "out.txt";
  cmd += " > '" + log.string() + "' 2>&1";
  Validation v;
  int status = std::system(cmd.c_str());
  v.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  v.output = read_text(log);
  fs::remove_all(dir);
  return v;
}

}  // namespace pipec::testing
