#pragma once

#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::emit::kfpv2 {

struct WriteOptions {
  /// Image of runtime/'s pipec-launcher, which training steps run.
  std::string launcher_image = "ghcr.io/pipec/pipec-launcher:0.1.0";
  /// `sdkVersion` of the spec.
  std::string sdk_version = "pipec";
};

/// Writes the KFP v2 pipeline spec (`PipelineSpec`, schema 2.1.0) for `pipeline` as YAML
/// into `out`, followed by a second document with the Kubernetes platform spec when a
/// step needs one (docs/kfp-v2.md). Deterministic: the same IR and options give the same
/// bytes. Returns false if it reported an error.
[[nodiscard]] bool write_pipeline_spec(const ir::Pipeline& pipeline, const WriteOptions& options,
                                       std::string& out, Diagnostics& diags);

}  // namespace pipec::emit::kfpv2
