#pragma once

#include <string>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/ir/launcher_call.hpp"

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

/// Builds the job manifest for the defaults, the bindings and the launcher arguments
/// for a training step (OpKind MpiJob, TfJob, PyTorchJob, TrainJob). The lowering calls it,
/// once per step (lower::plan_of), and keeps the call in the plan (ir::Plan::launchers).
/// sema has checked every argument (compiler/sema/check_training.cpp); the only
/// diagnostics are those of placing values in the command's script (compiler/shell).
/// Returns false if it reported an error, or for a step sema would have refused.
[[nodiscard]] bool build_launcher_call(const ir::Step& step, const JobOptions& options,
                                       ir::LauncherCall& call, Diagnostics& diags);

}  // namespace pipec::training
