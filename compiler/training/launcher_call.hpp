#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::training {

struct JobOptions {
  /// Target the training-operator's kubeflow.org/v1 MPIJob instead of mpi-operator v2beta1.
  bool mpi_v1 = false;
  /// The pipeline's parameters: a `Param` reference takes the parameter's default as the
  /// manifest's value. Without them (or without a default) a type-valid placeholder is used.
  /// Either way the value is bound and replaced at run time.
  const std::vector<ir::Param>* params = nullptr;
  /// Image (with `sh` and `git`) of the init container `git-sync` that clones `sync_source`.
  std::string git_sync_image = "alpine/git:2.45.2";
  /// The runtimes for steps whose `runtime` argument is "" (`pipec build --training-runtime`),
  /// comma-separated: each step takes the first that fits its op ("trainer-v2" a
  /// pytorch_job, "pods" a tf_job); none fitting, the training operator.
  std::string default_runtime;
};

/// One word of the launcher's argv: text, or a value each target spells its own way.
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

/// The value that carries a step's workspace entry (`--value workspace=CLAIM:PATH`, bound
/// with the `data` entries): the claim is the run's, known only when it runs, so it
/// reaches the launcher as data, never as part of the manifest.
inline constexpr const char* kWorkspaceValue = "workspace";

/// The workspace claim of a workflow named `run`, made from its template `kfp-workspace`
/// (Argo names it `RUN-kfp-workspace`, and KFP v2's backend the same), and its data entry
/// at `path`.
inline std::string workspace_claim(std::string_view run) { return std::string(run) + "-" + ir::kWorkspaceVolume; }
inline std::string workspace_entry(std::string_view run, std::string_view path) {
  return workspace_claim(run) + ":" + std::string(path);
}

/// What the writers need to emit a training step's container: the launcher's argv (see
/// docs/runtime.md) and the inputs it refers to. The local run reads the same call.
struct LauncherCall {
  /// Arguments after the `pipec-launcher` command. Run-time values appear only as whole
  /// Input words, or as Binding words after `--value` (never spliced into text).
  std::vector<LauncherWord> args;
  /// Template input parameters: the name used in `{{inputs.parameters.NAME}}`, and the
  /// IR value the DAG task passes for it (a Ref, or a value built from refs).
  std::vector<std::pair<std::string, ir::Value>> inputs;
  bool writes_metrics = false;      // declare the mlpipeline-metrics artifact
  bool writes_ui_metadata = false;  // declare the mlpipeline-ui-metadata artifact
};

/// Builds the job manifest for the defaults, the bindings and the launcher arguments
/// for a training step (OpKind MpiJob, TfJob, PyTorchJob, TrainJob). sema has checked
/// every argument (compiler/sema/check_training.cpp); the only diagnostics are those of
/// placing values in the command's script (compiler/shell). Returns false if it reported
/// an error, or for a step sema would have refused.
[[nodiscard]] bool build_launcher_call(const ir::Step& step, const JobOptions& options,
                                       LauncherCall& call, Diagnostics& diags);

/// The same with a build's options (`pipec build --mpi-v1 --training-runtime`), as both
/// writers call it: the pipeline's parameters give the manifest's defaults.
[[nodiscard]] inline bool build_launcher_call(const ir::Step& step, const std::vector<ir::Param>& params,
                                              bool mpi_v1, const std::string& default_runtime,
                                              LauncherCall& call, Diagnostics& diags) {
  JobOptions job;
  job.mpi_v1 = mpi_v1;
  job.default_runtime = default_runtime;
  job.params = &params;
  return build_launcher_call(step, job, call, diags);
}

}  // namespace pipec::training
