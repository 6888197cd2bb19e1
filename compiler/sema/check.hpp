#pragma once

#include <memory>
#include <optional>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"

namespace pipec::sema {

/// A program that passed every check: the pipeline of the main file, the ops it can
/// call (its own, `use`d files' and stdlib modules'), resolved names and types.
/// Defined in sema/program.hpp; only ir/lower.cpp looks inside.
struct Program;

/// Parses `main`, loads what it `use`s (stdlib modules from the embedded table,
/// relative files through `sources`), and runs every check: names, types,
/// constraints, the step graph. Reports every error it finds in `diags`.
/// Returns nullptr if any error was reported.
[[nodiscard]] std::shared_ptr<const Program> check_program(SourceManager& sources, FileId main,
                                                           Diagnostics& diags);

}  // namespace pipec::sema
