// parse_options(): the launcher's command line (docs/runtime.md, "Command line"), read with
// the one table of rules/launcher_cli.def that the compiler builds the argv from.
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "rules/launcher_cli.hpp"
#include "runtime/job_render.hpp"
#include "runtime/launcher.hpp"
#include "runtime/metrics.hpp"

namespace pipec::runtime {

using rules::parse_duration;
namespace {

using std::chrono::milliseconds;
using rules::LauncherOption;

// Where an option's value goes, by its shape in the table.
void set(bool LauncherOptions::*slot, LauncherOptions& to, const rules::LauncherArg&, std::string&) {
  to.*slot = true;
}
void set(std::string LauncherOptions::*slot, LauncherOptions& to, const rules::LauncherArg& a, std::string&) {
  to.*slot = a.value;
}
void set(std::vector<std::string> LauncherOptions::*slot, LauncherOptions& to, const rules::LauncherArg& a,
         std::string&) {
  (to.*slot).push_back(a.value);
}
void set(milliseconds LauncherOptions::*slot, LauncherOptions& to, const rules::LauncherArg& a, std::string& error) {
  // "" is none: a step's timeout chosen at run time may be left empty.
  auto d = a.value.empty() ? std::optional<milliseconds>(0) : parse_duration(a.value);
  if (!d)
    error = fmt::format("{} expects a duration (e.g. 90s, 30m, 4h, 2d, 0), got '{}'",
                        rules::launcher_option(a.id).word, a.value);
  else
    to.*slot = *d;
}

}  // namespace

std::optional<LauncherOptions> parse_options(const std::vector<std::string>& args,
                                             std::string& error, std::string& help) {
  LauncherOptions o;
  auto given = rules::split_launcher_args(args, error);
  if (!given) {
    if (error.empty()) help = rules::launcher_usage();
    return std::nullopt;
  }
  bool have_manifest = false;
  for (const rules::LauncherArg& a : *given) {
    switch (a.id) {
#define PIPEC_LAUNCHER_OPTION(id, word, shape, field, metavar, help) \
  case LauncherOption::id:                                           \
    set(&LauncherOptions::field, o, a, error);                       \
    break;
#include "rules/launcher_cli.def"
    }
    if (!error.empty()) return std::nullopt;
    have_manifest = have_manifest || a.id == LauncherOption::Manifest;
    if (a.id == LauncherOption::Version) {  // main() answers it alone, before parsing
      error = fmt::format("option '{}' is given alone", rules::launcher_option(a.id).word);
      return std::nullopt;
    }
  }
  if (!have_manifest) error = "missing " + rules::launcher_flag(LauncherOption::Manifest);
  else if (o.step_name.empty()) {
    // The kfp-v2 target gives no --step-name: the pod's name comes from the downward API.
    if (const char* pod = std::getenv("POD_NAME"); pod && *pod) o.step_name = pod;
    else error = "missing " + rules::launcher_flag(LauncherOption::StepName) + " (and POD_NAME is not set)";
  }
  if (error.empty() && !o.executor_input.empty()) {
    // Refused now rather than after the training ran: the same reader writes it at the end.
    std::string file, json;
    (void)MetricScraper({}).executor_output(o.executor_input, file, json, error);
  }
  if (!error.empty()) return std::nullopt;
  return o;
}

}  // namespace pipec::runtime
