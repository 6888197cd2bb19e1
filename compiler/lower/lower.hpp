#pragma once

#include <optional>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::sema {
struct Program;
}

namespace pipec::lower {

/// Turns a checked program into the IR: resolved references, defaults filled in,
/// dependencies from `after` and from output uses, conditions attached to steps.
/// Returns nullopt if it reported an error (a value where a shell-form script cannot
/// hold it as text, compiler/shell); it may warn (a script line that runs as a command).
/// Takes the program: its steps' argument values move into the IR (a caller that keeps
/// the program passes a copy, `sema::Program(program)`).
[[nodiscard]] std::optional<ir::Pipeline> lower(sema::Program&& program, Diagnostics& diags);

}  // namespace pipec::lower
