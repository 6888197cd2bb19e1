#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// `-q/--quiet`: no progress line, even on a terminal (`run --local`, `run --wait`, `runs
/// wait`, `component fetch`; output that is not a terminal never has one).
void add_quiet_flag(CLI::App& command, bool& quiet);

/// `-p/--param NAME=VALUE` (repeatable) and `--params-file F`: the overrides `pipec run`
/// and `pipec run --local` both take, described once.
void add_param_options(CLI::App& command, std::vector<std::string>& params, std::string& params_file);

/// An option group that holds the options of one mode of a command: with `with`, those
/// taken only when the flag is given ("Local options (with --local)"), else those taken
/// only without it ("Remote options (without --local)"). Help prints the group under that
/// heading; completion offers it only in its mode (completion.cpp).
[[nodiscard]] std::string mode_group(std::string_view title, std::string_view flag, bool with);

/// The flag and the mode of a group named by mode_group(); nullopt for any other group.
struct ModeGroup {
  std::string flag;  // "--local"
  bool with = true;
};
[[nodiscard]] std::optional<ModeGroup> parse_mode_group(std::string_view group);

/// "" when every option given to `command` belongs to the mode its flags select; else the
/// error for the first that does not ("--run-dir is an option of 'run --local'").
[[nodiscard]] std::string mode_problem(const CLI::App& command);

/// Renders `diags` to stderr in the chosen format (colour only on a terminal).
void print_diagnostics(const Diagnostics& diags, const SourceManager& sources,
                       const CommonOptions& options);

/// Exit codes of every pipec command.
enum ExitCode : int { kExitOk = 0, kExitErrors = 1, kExitUsage = 2, kExitInternal = 3 };

}  // namespace pipec::driver
