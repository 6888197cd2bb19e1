#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/sema/host.hpp"

namespace pipec::sema {

/// A program that passed every check: the pipeline of the main file, the ops it can
/// call (its own, `use`d files' and stdlib modules'), resolved names and types.
/// Defined in sema/program.hpp; only ir/lower.cpp looks inside.
struct Program;

/// Parses `main`, loads what it `use`s (stdlib modules from the embedded table,
/// relative files through `sources`), and runs every check: names, types,
/// constraints, the step graph. Reports every error it finds in `diags`.
/// Returns nullptr if any error was reported.
/// The pipeline built is the one of `main` that no other pipeline of it calls, or
/// `pipeline` when given; the pipelines it calls as steps are checked with it.
/// What checking asks of the machine (a Python op's function checked by an interpreter,
/// the component cache) comes from `host` (sema/host.hpp); sema does no other I/O than
/// reading sources through `sources`.
[[nodiscard]] std::shared_ptr<Program> check_program(SourceManager& sources, FileId main,
                                                     Diagnostics& diags, const Host& host,
                                                     std::string_view pipeline = {});

}  // namespace pipec::sema
