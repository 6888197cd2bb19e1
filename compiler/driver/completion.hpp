#pragma once
// Shell completion generated from the command registry: the CLI11 app that parses
// pipec's command line is walked to write the bash and zsh scripts, so a command or an
// option added to the registry is completed without touching a second list.

#include <string>

namespace CLI {
class App;
}

namespace pipec::driver {

/// The bash completion script for `app` (`complete -F _pipec pipec`). An option named
/// `param` completes `NAME=` with the parameters of the first `.pipe` file on the line,
/// as `pipec __params FILE` lists them.
[[nodiscard]] std::string bash_completion(const CLI::App& app);

/// The zsh completion function for `app` (`#compdef pipec`), with each command's and
/// option's help text as its description.
[[nodiscard]] std::string zsh_completion(const CLI::App& app);

/// Every visible command (a command of a command as "runs list") on a line, then one line
/// "COMMAND<TAB>NAMES" for each of its options but -h/--help: the registry walked as
/// completion walks it.
[[nodiscard]] std::string registry_listing(const CLI::App& app);

/// Registers the hidden `pipec __commands`, which prints registry_listing(app) (for the
/// test that help, the man page and both completions name every option).
void add_registry_command(CLI::App& app, int& exit_code);

/// Registers `pipec completion bash|zsh`, which prints the script for `app` as it is
/// when the command runs: register it after every other command.
void add_completion_command(CLI::App& app, int& exit_code);

/// Registers the hidden `pipec __params FILE`: the names of the pipeline's parameters,
/// one a line (nothing, and exit 0, when the file does not parse). Completion calls it.
void add_params_command(CLI::App& app, int& exit_code);

}  // namespace pipec::driver
