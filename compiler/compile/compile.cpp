#include "compiler/compile/compile.hpp"

#include <iostream>
#include <iterator>

#include <fmt/format.h>

#include "compiler/compile/budgets.hpp"
#include "compiler/emit/argo/workflow_writer.hpp"
#include "compiler/emit/kfpv2/pipeline_spec_writer.hpp"
#include "compiler/lower/lower.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "compiler/sema/check.hpp"
#include "pipec_version.hpp"
#include "compiler/compile/host.hpp"

namespace pipec::compile {

namespace {

// Below this many bytes of YAML no package can be over KFP's 32 MiB: a tar header and
// gzip's worst case add far less. Above it, the package is made to be measured.
constexpr std::size_t kPackageSlack = 64 * 1024;

}  // namespace

bool write_target(const TargetOptions& options, const ir::Pipeline& pipeline, std::string& out,
                  Diagnostics& diags, const TextSink& sink) {
  if (options.target == "kfp-v2") {
    emit::kfpv2::WriteOptions v2;
    v2.launcher_image = options.launcher_image;
    v2.sdk_version = std::string("pipec-") + PIPEC_VERSION;
    if (!emit::kfpv2::write_pipeline_spec(pipeline, v2, out, diags)) return false;
    if (sink) {  // a spec is small (one component per op): written whole, then handed on
      sink(out);
      out.clear();
    }
    return true;
  }
  emit::argo::WriteOptions argo;
  argo.service_account = options.service_account;
  argo.launcher_image = options.launcher_image;
  argo.kind = options.kind;
  argo.cron = options.cron;
  return emit::argo::write_workflow(pipeline, argo, out, diags, sink);
}

FileId load_input(SourceManager& sources, const std::string& input, Diagnostics& diags) {
  std::string error;
  FileId id = kNoFile;
  if (input != "-") {
    id = sources.load(input, error);
  } else {
    // The same bound as a file's, as the input is read: a pipe has no size to check first.
    std::string text;
    if (input::read_stream(std::cin, input::kMaxSourceBytes, text, error)) id = sources.add("<stdin>", std::move(text));
  }
  if (id == kNoFile) diags.error({}, fmt::format("cannot read '{}': {}", input, error));
  return id;
}

Compiled compile_program(SourceManager& sources, FileId main, const TargetOptions& options, Diagnostics& diags,
                         std::optional<package::Format> package, const TextSink& sink) {
  Compiled out;
  auto program = sema::check_program(sources, main, diags, machine_host(), options.pipeline);
  if (!program || diags.has_errors()) return out;
  lower::Options lowering;  // the launcher calls of training steps (ir::Plan::launchers)
  lowering.mpi_v1 = options.mpi_v1;
  lowering.training_runtime = options.training_runtime;
  auto pipeline = lower::lower(std::move(*program), diags, lowering);
  program.reset();  // what the IR did not take: the writer reuses this memory
  if (!pipeline || diags.has_errors()) return out;
  // A sink takes the text only where it is the output itself (a .yaml): a package, or the
  // package's size measured for the budget, needs the text whole.
  const bool yaml = package == package::Format::Yaml;
  std::size_t written = 0;
  TextSink counted;
  if (yaml && sink) counted = [&](std::string_view piece) {
    written += piece.size();
    sink(piece);
  };
  if (!write_target(options, *pipeline, out.text, diags, counted)) return out;
  out.text_bytes = counted ? written : out.text.size();
  std::size_t package_size = out.text_bytes;
  if (package ? !yaml : out.text_bytes + kPackageSlack >= Budgets{}.package_bytes) {
    out.package = package::make_package(package.value_or(package::Format::TarGz), out.text);
    package_size = out.package.size();
  }
  check_budgets(*pipeline, options.target == "kfp-v2" ? 0 : out.text_bytes, package_size, diags, {},
                options.allow_oversize);
  if (!diags.has_errors()) out.pipeline = std::move(pipeline);
  return out;
}

Compiled compile_file(SourceManager& sources, const std::string& input, const TargetOptions& options,
                      Diagnostics& diags, std::optional<package::Format> package, const TextSink& sink) {
  FileId main = load_input(sources, input, diags);
  if (main == kNoFile) return {};
  return compile_program(sources, main, options, diags, package, sink);
}

}  // namespace pipec::compile
