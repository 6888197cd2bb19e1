#pragma once

#include <string>

#include "compiler/base/diagnostics.hpp"

namespace CLI {
class App;
}

namespace pipec::driver {

/// Options shared by every command that reads a .pipe file.
struct CommonOptions {
  std::string diagnostics = "text";  // text | json
};

/// Adds `--diagnostics=text|json` to a subcommand.
void add_common_options(CLI::App& command, CommonOptions& options);

/// Renders `diags` to stderr in the chosen format (colour only on a terminal).
void print_diagnostics(const Diagnostics& diags, const SourceManager& sources,
                       const CommonOptions& options);

/// Exit codes of every pipec command.
enum ExitCode : int { kExitOk = 0, kExitErrors = 1, kExitUsage = 2, kExitInternal = 3 };

}  // namespace pipec::driver
