#pragma once

// A training step's `pipec-launcher` call (docs/runtime.md, docs/training-ops.md), decided
// once by the lowering (lower::plan_of, with compiler/training) and kept in the plan
// (Plan::launchers): the options of the launcher's command line in order, each value a
// word each target spells its own way. The writers print its words; the local run and
// `pipec preflight` read its options as data (never by reading words back).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/launcher_cli.hpp"

namespace pipec::ir {

struct Value;

/// The run's workspace (`settings { workspace ... }`): a claim made for the run, named
/// kWorkspaceVolume in the workflow (Argo names the claim `{{workflow.name}}-kfp-workspace`,
/// as KFP v2's backend does), mounted by the steps that ask for it, deleted after the run.
inline constexpr const char* kWorkspaceVolume = "kfp-workspace";

/// One value of the launcher's argv: text, or a value each target spells its own way.
struct LauncherWord {
  enum class Kind {
    Text,          // `text` as it is
    Input,         // the value of input `text` (Argo `{{inputs.parameters.NAME}}`)
    Binding,       // `text=` and the value of input `text`, after `--value`
    WorkflowName,  // the run's name (Argo `{{workflow.name}}`)
    PodName,       // the pod's name (Argo `{{pod.name}}`)
    Workspace,     // after `--value`: kWorkspaceValue=, the run's workspace claim, `:` and
                   // `text` (a mount path): a data entry (workspace_entry())
  };
  Kind kind = Kind::Text;
  std::string text;

  LauncherWord(std::string t) : text(std::move(t)) {}  // NOLINT: text words read as text
  LauncherWord(const char* t) : text(t) {}             // NOLINT
  LauncherWord(Kind k, std::string t) : kind(k), text(std::move(t)) {}
  friend bool operator==(const LauncherWord&, const LauncherWord&) = default;
};

/// One option of the call (rules/launcher_cli.def) and its value: the words
/// `rules::launcher_flag(option)` and `value`.
struct LauncherArg {
  rules::LauncherOption option;
  LauncherWord value;
  friend bool operator==(const LauncherArg&, const LauncherArg&) = default;
};

/// The value that carries a step's workspace entry (`--value workspace=CLAIM:PATH`, bound
/// with the `data` entries): the claim is the run's, known only when it runs, so it
/// reaches the launcher as data, never as part of the manifest.
inline constexpr const char* kWorkspaceValue = "workspace";

/// The workspace claim of a workflow named `run`, made from its template `kfp-workspace`
/// (Argo names it `RUN-kfp-workspace`, and KFP v2's backend the same), and its data entry
/// at `path`.
inline std::string workspace_claim(std::string_view run) { return std::string(run) + "-" + kWorkspaceVolume; }
inline std::string workspace_entry(std::string_view run, std::string_view path) {
  return workspace_claim(run) + ":" + std::string(path);
}

/// What the writers need to emit a training step's container, and what the local run and
/// preflight read of it: the launcher's options and the inputs they refer to.
struct LauncherCall {
  /// The options after the `pipec-launcher` command, in order. Run-time values appear only
  /// as whole Input words, or as Binding words after `--value` (never spliced into text).
  std::vector<LauncherArg> args;
  /// Template input parameters: the name used in `{{inputs.parameters.NAME}}`, and the
  /// IR value the DAG task passes for it (a Ref, or a value built from refs).
  std::vector<std::pair<std::string, Value>> inputs;
  bool writes_metrics = false;      // declare the mlpipeline-metrics artifact
  bool writes_ui_metadata = false;  // declare the mlpipeline-ui-metadata artifact

  /// The value of each `option` given, in order (a List option's every value).
  [[nodiscard]] std::vector<const LauncherWord*> values(rules::LauncherOption option) const {
    std::vector<const LauncherWord*> out;
    for (const auto& a : args)
      if (a.option == option) out.push_back(&a.value);
    return out;
  }
  /// The value of `option`, the last given (a Text option's), or nullptr.
  [[nodiscard]] const LauncherWord* value(rules::LauncherOption option) const {
    const LauncherWord* last = nullptr;
    for (const auto& a : args)
      if (a.option == option) last = &a.value;
    return last;
  }
};

}  // namespace pipec::ir
