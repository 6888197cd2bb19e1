#pragma once

#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::emit::argo {

struct WriteOptions {
  /// --service-account; "" = the pipeline's `settings { service_account ... }`, else
  /// "pipeline-runner" (KFP's).
  std::string service_account;
  /// Image of runtime/'s pipec-launcher, which training steps run.
  std::string launcher_image = "ghcr.io/pipec/pipec-launcher:0.1.0";
  /// Target the training-operator's kubeflow.org/v1 MPIJob instead of mpi-operator v2beta1.
  bool mpi_v1 = false;
  /// Runtimes of training steps whose `runtime` is "" (comma-separated: operator,
  /// trainer-v2, pods; each step takes the first that fits its op).
  std::string training_runtime;
};

/// Writes the Argo Workflow (KFP v1 flavour) for `pipeline` as YAML into `out`.
/// Deterministic: the same IR and options give the same bytes.
/// Returns false if it reported an error.
[[nodiscard]] bool write_workflow(const ir::Pipeline& pipeline, const WriteOptions& options,
                                  std::string& out, Diagnostics& diags);

}  // namespace pipec::emit::argo
