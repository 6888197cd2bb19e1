#include "compiler/driver/options.hpp"

#include <unistd.h>

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace pipec::driver {

void add_common_options(CLI::App& command, CommonOptions& options) {
  command.add_option("--diagnostics", options.diagnostics, "How errors are printed")
      ->check(CLI::IsMember({"text", "json"}))
      ->default_str("text");
}

void add_quiet_flag(CLI::App& command, bool& quiet) {
  command.add_flag("-q,--quiet", quiet, "No progress line on a terminal");
}

void add_param_options(CLI::App& command, std::vector<std::string>& params, std::string& params_file) {
  command.add_option("-p,--param", params, "Override a parameter: NAME=VALUE (checked against its declared type)")
      ->allow_extra_args(false);
  command.add_option("--params-file", params_file, "YAML or JSON mapping of parameter names to values (-p wins)");
}

std::string mode_group(std::string_view title, std::string_view flag, bool with) {
  return fmt::format("{} ({} {})", title, with ? "with" : "without", flag);
}

std::optional<ModeGroup> parse_mode_group(std::string_view group) {
  if (group.empty() || group.back() != ')') return std::nullopt;
  for (bool with : {true, false}) {
    std::string_view marker = with ? " (with --" : " (without --";
    std::size_t at = group.rfind(marker);
    if (at == std::string_view::npos) continue;
    std::string_view flag = group.substr(at + marker.size() - 2);
    flag.remove_suffix(1);
    if (flag.size() < 3 || flag.find(' ') != std::string_view::npos) return std::nullopt;
    return ModeGroup{std::string(flag), with};
  }
  return std::nullopt;
}

std::string mode_problem(const CLI::App& command) {
  for (const CLI::Option* opt : command.get_options()) {
    if (opt->count() == 0) continue;
    auto mode = parse_mode_group(opt->get_group());
    if (!mode) continue;
    const CLI::Option* flag = command.get_option_no_throw(mode->flag);
    bool on = flag && flag->count() > 0;
    if (on == mode->with) continue;
    std::string name = opt->get_name(false, true);
    return mode->with ? fmt::format("{} is an option of '{} {}'", name, command.get_name(), mode->flag)
                      : fmt::format("{} cannot be used with {}", name, mode->flag);
  }
  return {};
}

void print_diagnostics(const Diagnostics& diags, const SourceManager& sources,
                       const CommonOptions& options) {
  RenderOptions render_options;
  render_options.format = options.diagnostics == "json" ? DiagnosticFormat::Json : DiagnosticFormat::Text;
  render_options.color = render_options.format == DiagnosticFormat::Text && want_color(STDERR_FILENO);
  render(diags, sources, std::cerr, render_options);
}

}  // namespace pipec::driver
