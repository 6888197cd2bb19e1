#include "compiler/driver/options.hpp"

#include <unistd.h>

#include <iostream>

#include <CLI/CLI.hpp>

namespace pipec::driver {

void add_common_options(CLI::App& command, CommonOptions& options) {
  command.add_option("--diagnostics", options.diagnostics, "How errors are printed")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_str("text");
}

void print_diagnostics(const Diagnostics& diags, const SourceManager& sources,
                       const CommonOptions& options) {
  RenderOptions render_options;
  render_options.format = options.diagnostics == "json" ? DiagnosticFormat::Json : DiagnosticFormat::Text;
  render_options.color = render_options.format == DiagnosticFormat::Text && want_color(STDERR_FILENO);
  render(diags, sources, std::cerr, render_options);
}

}  // namespace pipec::driver
