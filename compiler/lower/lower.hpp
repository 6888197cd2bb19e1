#pragma once

#include <optional>
#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::sema {
struct Program;
}

namespace pipec::lower {

/// What the lowering takes of the build: the options that shape a training step's
/// launcher call (ir::Plan::launchers). `pipec run --local` lowers with the defaults.
struct Options {
  /// kubeflow.org/v1 MPIJobs instead of mpi-operator's v2beta1 (`--mpi-v1`).
  bool mpi_v1 = false;
  /// The runtimes of training steps that name none (`--training-runtime`, a list).
  std::string training_runtime;
};

/// Turns a checked program into the IR: resolved references, defaults filled in,
/// dependencies from `after` and from output uses, conditions attached to steps.
/// Returns nullopt if it reported an error (a value where a shell-form script cannot
/// hold it as text, compiler/shell); it may warn (a script line that runs as a command).
/// Takes the program: its steps' argument values move into the IR (a caller that keeps
/// the program passes a copy, `sema::Program(program)`).
[[nodiscard]] std::optional<ir::Pipeline> lower(sema::Program&& program, Diagnostics& diags,
                                                const Options& options = {});

}  // namespace pipec::lower
