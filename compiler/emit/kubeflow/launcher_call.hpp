#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::emit::kubeflow {

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

/// What the Argo writer needs to emit a training step's container template: the
/// launcher's argv (see docs/runtime.md) and the template inputs it refers to.
struct LauncherCall {
  /// Arguments after the `pipec-launcher` command. Run-time values appear only as
  /// whole `NAME={{inputs.parameters.NAME}}` words after `--value` (never spliced).
  std::vector<std::string> args;
  /// Template input parameters: the name used in `{{inputs.parameters.NAME}}`, and the
  /// IR value the DAG task passes for it (a Ref, or a value built from refs).
  std::vector<std::pair<std::string, ir::Value>> inputs;
  bool writes_metrics = false;      // declare the mlpipeline-metrics artifact
  bool writes_ui_metadata = false;  // declare the mlpipeline-ui-metadata artifact
};

/// Builds the job manifest for the defaults, the bindings and the launcher arguments
/// for a training step (OpKind MpiJob, TfJob, PyTorchJob). Reports misuse that only
/// the lowering can see (a literal data entry without ':', an invalid metric name)
/// at the argument's range. Returns false if it reported an error.
[[nodiscard]] bool build_launcher_call(const ir::Step& step, const JobOptions& options,
                                       LauncherCall& call, Diagnostics& diags);

}  // namespace pipec::emit::kubeflow
