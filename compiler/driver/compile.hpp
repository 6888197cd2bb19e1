#pragma once

#include <optional>
#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/emit/argo/workflow_writer.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::driver {

/// Parses, checks and lowers the pipeline in `main` (and what it uses).
/// Returns nullopt if any error was reported in `diags`.
std::optional<ir::Pipeline> compile(SourceManager& sources, FileId main, Diagnostics& diags);

/// compile() and then the Argo writer: the workflow YAML for the file at `path`.
/// Diagnostics (with a load failure as a located-less error) go to `diags`.
std::optional<std::string> compile_to_yaml(SourceManager& sources, const std::string& path,
                                           const emit::argo::WriteOptions& options,
                                           Diagnostics& diags);

/// The chosen back end writes `pipeline`: "kfp-v1" the Argo Workflow (KFP v1), "kfp-v2"
/// the KFP v2 pipeline spec (docs/kfp-v2.md). Returns false if it reported an error.
bool write_target(const std::string& target, const ir::Pipeline& pipeline,
                  const emit::argo::WriteOptions& write, std::string& out, Diagnostics& diags);

}  // namespace pipec::driver
