#pragma once
// The one path from a .pipe file to a target's output that every command takes (check,
// build, graph, lsp, run --local, upload, run): load, check, lower, write the target in
// memory, check the scale budgets. So every command reports the same diagnostics for the
// same program; a command differs only in what it does with the result.

#include <optional>
#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/base/text_sink.hpp"
#include "compiler/emit/argo/workflow_writer.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/package/package.hpp"

namespace pipec::compile {

/// The image of pipec-launcher that training steps run unless --launcher-image says.
inline constexpr const char* kDefaultLauncherImage = "ghcr.io/pipec/pipec-launcher:0.1.0";

/// Which target a program is compiled for, and the options of its output.
struct TargetOptions {
  std::string target = "kfp-v1";  ///< kfp-v1: Argo Workflow (KFP v1); kfp-v2: KFP v2 pipeline spec
  std::string service_account;    ///< "" = the pipeline's settings, else "pipeline-runner"
  std::string launcher_image = kDefaultLauncherImage;
  bool mpi_v1 = false;            ///< kubeflow.org/v1 MPIJobs instead of v2beta1
  std::string training_runtime;   ///< runtimes of training steps that name none (a list)
  bool allow_oversize = false;    ///< the budgets a server would refuse are warnings
  /// kfp-v1 only: the Argo document written (a Workflow, a WorkflowTemplate or a
  /// CronWorkflow with `cron`), for `argo template create` / `argo cron create`.
  emit::argo::DocumentKind kind = emit::argo::DocumentKind::Workflow;
  emit::argo::CronOptions cron;
  /// The pipeline of the file to build (--pipeline); "" = the one no other pipeline calls.
  std::string pipeline;
};

/// What compiling a program gives: the pipeline and the target's text, unset on error.
struct Compiled {
  std::optional<ir::Pipeline> pipeline;
  std::string text;     ///< the target's YAML (empty when it went to a sink)
  std::size_t text_bytes = 0;  ///< the size of the target's YAML, held or not
  std::string package;  ///< the package's bytes, when a package format was asked for
};

/// The program: the file at `input`, or standard input for `-` (named `<stdin>`).
/// Reports a failure to read as an error without a place.
FileId load_input(SourceManager& sources, const std::string& input, Diagnostics& diags);

/// Parses, checks and lowers the pipeline in `main` (and what it uses), writes the target
/// and checks the budgets. `package`: the format the output is packaged in (its bytes go
/// to Compiled::package); without one, the budgets are checked for the default .tar.gz.
/// With package Format::Yaml and a `sink`, the text goes to the sink in pieces as it is
/// written, instead of into Compiled::text (nothing goes there if the program has errors;
/// the budgets are checked after, so an error may still follow the text).
Compiled compile_program(SourceManager& sources, FileId main, const TargetOptions& options, Diagnostics& diags,
                         std::optional<package::Format> package = std::nullopt, const TextSink& sink = {});

/// The chosen target's writer alone: for a command that needs a second target's text of
/// a pipeline compile_program() gave. Returns false if it reported an error. With a
/// `sink`, the text goes there instead of into `out`.
bool write_target(const TargetOptions& options, const ir::Pipeline& pipeline, std::string& out,
                  Diagnostics& diags, const TextSink& sink = {});

/// load_input() and compile_program().
Compiled compile_file(SourceManager& sources, const std::string& input, const TargetOptions& options,
                      Diagnostics& diags, std::optional<package::Format> package = std::nullopt,
                      const TextSink& sink = {});

}  // namespace pipec::compile
