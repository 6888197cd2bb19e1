#include "compiler/driver/compile.hpp"

#include <fmt/format.h>

#include "compiler/emit/kfpv2/pipeline_spec_writer.hpp"
#include "compiler/ir/lower.hpp"
#include "pipec_version.hpp"
#include "compiler/sema/check.hpp"

namespace pipec::driver {

std::optional<ir::Pipeline> compile(SourceManager& sources, FileId main, Diagnostics& diags) {
  auto program = sema::check_program(sources, main, diags);
  if (!program || diags.has_errors()) return std::nullopt;
  return ir::lower(*program, diags);
}

std::optional<std::string> compile_to_yaml(SourceManager& sources, const std::string& path,
                                           const emit::argo::WriteOptions& options,
                                           Diagnostics& diags) {
  std::string error;
  FileId main = sources.load(path, error);
  if (main == kNoFile) {
    diags.error({}, fmt::format("cannot read '{}': {}", path, error));
    return std::nullopt;
  }
  auto pipeline = compile(sources, main, diags);
  if (!pipeline) return std::nullopt;
  std::string yaml;
  if (!emit::argo::write_workflow(*pipeline, options, yaml, diags)) return std::nullopt;
  return yaml;
}

bool write_target(const std::string& target, const ir::Pipeline& pipeline,
                  const emit::argo::WriteOptions& write, std::string& out, Diagnostics& diags) {
  if (target == "kfp-v2") {
    emit::kfpv2::WriteOptions v2;
    v2.launcher_image = write.launcher_image;
    v2.mpi_v1 = write.mpi_v1;
    v2.training_runtime = write.training_runtime;
    v2.sdk_version = std::string("pipec-") + PIPEC_VERSION;
    return emit::kfpv2::write_pipeline_spec(pipeline, v2, out, diags);
  }
  return emit::argo::write_workflow(pipeline, write, out, diags);
}

}  // namespace pipec::driver
