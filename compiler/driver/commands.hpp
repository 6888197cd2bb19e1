#pragma once

#include <string>
#include <vector>

#include "compiler/sema/component.hpp"

namespace CLI {
class App;
}

namespace pipec::driver {

/// Registers `pipec check FILE`: parse and check, exit 0 / 1 (errors) / 2 (usage).
void add_check_command(CLI::App& app, int& exit_code);

/// `--training-runtime LIST`: where training steps that name no runtime run (`build`,
/// `preflight`), checked as a comma-separated list of operator, trainer-v2, pods.
void add_training_runtime_option(CLI::App& command, std::string& runtime);

/// Registers `pipec build FILE [-o OUT]`: compile to a KFP package or YAML.
void add_build_command(CLI::App& app, int& exit_code);

/// `pipec graph FILE [--format dot|mermaid|json|svg] [-o OUT]`.
void add_graph_command(CLI::App& app, int& exit_code);

/// `pipec report RUN_DIR... -o report.html`: a page of local runs (compiler/tools/report.hpp).
void add_report_command(CLI::App& app, int& exit_code);

/// `pipec fmt FILE... [--check | --write]`: the canonical layout (format.hpp).
void add_fmt_command(CLI::App& app, int& exit_code);

/// `pipec lsp`: a Language Server Protocol server over stdio (lsp.hpp).
void add_lsp_command(CLI::App& app, int& exit_code);

/// `pipec component show FILE`: the op a KFP component makes, as .pipe source.
void add_component_command(CLI::App& app, int& exit_code);

struct CommonOptions;
/// Reads a component file into `c` and resolves a graph component's references (with
/// `fetch`: downloading what the cache lacks, `saved` listing what it saved); prints the
/// diagnostics. Returns the exit code: kExitOk, kExitErrors, or kExitUsage (unreadable).
int read_component_file(const std::string& file, const CommonOptions& common, sema::component::Component& c,
                        const sema::component::Fetch& fetch = {}, std::vector<std::string>* saved = nullptr);

}  // namespace pipec::driver
