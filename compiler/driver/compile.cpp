#include "compiler/driver/compile.hpp"

#include <fmt/format.h>

#include "compiler/ir/lower.hpp"
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

}  // namespace pipec::driver
