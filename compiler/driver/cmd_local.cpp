// `pipec run --local FILE.pipe`: the pipeline run on this machine (compiler/local,
// docs/local.md). Overrides are checked by the same code as `pipec run` (pipec_params)
// against the signature of the workflow the same build would upload.
#include "compiler/driver/cmd_local.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "compiler/base/progress.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/client/kfp/parameters.hpp"
#include "compiler/compile/compile.hpp"
#include "compiler/driver/options.hpp"
#include "compiler/local/local_run.hpp"

namespace pipec::driver {

using namespace compile;  // compile_file(), the one path (compiler/compile)

namespace {

std::string default_run_dir(const std::string& pipeline) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::string base = "pipec-runs/" + pipeline + "-" + stamp;
  std::string dir = base;
  for (int n = 2; std::filesystem::exists(dir); ++n) dir = base + "-" + std::to_string(n);
  return dir;
}

// --resume, --cache and --from (docs/local.md "Resume and the cache"), checked before
// anything runs: a run dir that is one (it has steps/), a cache directory made if missing,
// a step the pipeline has (its name, or a step's full name such as `each.1` or `te/train`),
// and --from only with something to reuse. Returns 0, or the exit status of a usage error.
int resume_options(const LocalOptions& options, const ir::Pipeline& pipeline, local::RunOptions& run) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto usage = [](const std::string& message) {
    std::cerr << "pipec: error: " << message << '\n';
    return local::kLocalUsage;
  };
  if (!options.resume.empty()) {
    if (!fs::is_directory(options.resume + "/steps", ec))
      return usage(fmt::format("--resume: '{}' is not the run dir of a local run (it has no steps/)", options.resume));
    run.resume_dir = fs::canonical(options.resume, ec).string();
  }
  if (!options.cache.empty()) {
    fs::create_directories(options.cache, ec);
    if (!fs::is_directory(options.cache, ec))
      return usage(fmt::format("--cache: '{}' is not a directory and cannot be made one", options.cache));
    run.cache_dir = fs::canonical(options.cache, ec).string();
  }
  if (!options.from.empty()) {
    if (run.resume_dir.empty() && run.cache_dir.empty())
      return usage("--from reruns a step of a run that reuses results: give --resume RUN_DIR or --cache DIR");
    // A step's full name: its calls before it (te/train), its loop items after it (each.1.0).
    std::string base = options.from.substr(options.from.rfind('/') == std::string::npos ? 0 : options.from.rfind('/') + 1);
    while (base.find('.') != std::string::npos &&
           base.find_first_not_of("0123456789", base.rfind('.') + 1) == std::string::npos && base.back() != '.')
      base.erase(base.rfind('.'));
    if (!local::has_step(pipeline, base))
      return usage(fmt::format("--from: pipeline '{}' has no step '{}'", pipeline.name, options.from));
    run.from = options.from;
  }
  return 0;
}

int run_local(const LocalOptions& options) {
  namespace kfp = client::kfp;
  // --volume CLAIM=DIR: a claim of `data` is this existing directory.
  std::map<std::string, std::string> volumes;
  for (const auto& v : options.volumes) {
    auto eq = v.find('=');
    std::error_code ec;
    std::string claim = eq == std::string::npos ? "" : v.substr(0, eq);
    std::string dir = eq == std::string::npos ? "" : v.substr(eq + 1);
    if (claim.empty() || dir.empty() || !std::filesystem::is_directory(dir, ec)) {
      std::cerr << fmt::format("pipec: error: --volume '{}' must be CLAIM=DIR with an existing directory\n", v);
      return local::kLocalUsage;
    }
    volumes[claim] = std::filesystem::canonical(dir, ec).string();
  }
  SourceManager sources;
  Diagnostics diags;
  std::string error;
  bool cluster_only = false;  // compiles, but needs what only a cluster has
  // Everything `build` checks.
  TargetOptions target;
  target.pipeline = options.pipeline;
  Compiled compiled = compile_file(sources, options.input, target, diags);
  std::optional<ir::Pipeline>& pipeline = compiled.pipeline;
  if (pipeline && !local::check_local(*pipeline, volumes, diags)) {
    cluster_only = true;
    pipeline.reset();
  }
  print_diagnostics(diags, sources, options.common);
  if (cluster_only) return local::kLocalUsage;
  if (!pipeline || diags.has_errors()) return kExitErrors;

  // Overrides: the same parsing and checks as `pipec run` (compiler/client/kfp/parameters).
  std::vector<std::string> errors;
  std::vector<kfp::Override> overrides;
  if (!options.params_file.empty()) (void)kfp::load_params_file(options.params_file, overrides, errors);
  for (const auto& argument : options.params) {
    kfp::Override o;
    if (kfp::parse_override(argument, o, error)) overrides.push_back(std::move(o));
    else errors.push_back(error);
  }
  kfp::Signature signature;
  std::vector<std::pair<std::string, std::string>> values;
  if (errors.empty()) {
    // The pipeline's own parameters, as `pipec run` reads them from the package.
    if (!kfp::read_parameters_json(ir::parameters_json(*pipeline), signature, error)) errors.push_back(error);
    else (void)kfp::check_overrides(signature, overrides, values, errors);
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::cerr << "pipec: error: " << e << '\n';
    std::cerr << fmt::format("pipec: nothing was run: {} problem{} with the parameters\n", errors.size(),
                             errors.size() == 1 ? "" : "s");
    return local::kLocalUsage;
  }

  local::RunOptions run;
  if (int bad = resume_options(options, *pipeline, run)) return bad;
  run.volumes = volumes;
  for (const auto& param : pipeline->params)
    if (param.default_value) run.params[param.name] = ir::literal_text(*param.default_value);
  for (const auto& [name, text] : values) run.params[name] = text;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  run.jobs = options.jobs > 0 ? options.jobs : static_cast<int>(cores > 0 ? cores : 1);
  run.progress = !options.quiet && progress_wanted(STDOUT_FILENO);
  run.ascii = options.ascii;
  // Container steps run under bubblewrap: say so before anything starts if it cannot.
  if (std::system("bwrap --ro-bind / / /bin/true >/dev/null 2>&1") != 0) {
    std::cerr << "pipec: error: run --local needs bubblewrap to sandbox the steps, and 'bwrap "
                 "--ro-bind / / /bin/true' failed: install the Debian package 'bubblewrap' (and "
                 "allow unprivileged user namespaces when not root)\n";
    return local::kLocalUsage;
  }
  // --resume RUN_DIR alone resumes that run in place.
  std::string dir = !options.run_dir.empty() ? options.run_dir
                    : !run.resume_dir.empty() ? run.resume_dir
                                              : default_run_dir(pipeline->name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << fmt::format("pipec: error: cannot create the run dir '{}': {}\n", dir, ec.message());
    return local::kLocalUsage;
  }
  run.run_dir = std::filesystem::canonical(dir, ec).string();
  for (const auto& d : {std::filesystem::path(options.input).parent_path(), std::filesystem::current_path(ec)}) {
    std::string visible = std::filesystem::weakly_canonical(std::filesystem::absolute(d, ec), ec).string();
    if (!visible.empty()) run.visible_dirs.push_back(visible);
  }
  std::cout << fmt::format("pipec: running {} locally in {} ({} at a time)\n", pipeline->name,
                           run.run_dir, local::effective_jobs(*pipeline, run.jobs));
  std::cout.flush();
  return local::run_pipeline(*pipeline, run, std::cout, std::cerr);
}

}  // namespace

bool is_local_run(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "run") != 0) return false;
  for (int i = 2; i < argc; ++i)
    if (std::strcmp(argv[i], "--local") == 0) return true;
  return false;
}

CLI::Option* add_local_flag(CLI::App& command, bool& local) {
  return command.add_flag("--local", local,
                          "Run on this machine: container steps as sandboxed processes, training steps as "
                          "local replicas (docs/local.md)");
}

void add_local_options(CLI::App& command, LocalOptions& options) {
  std::string group = mode_group("Local options", "--local", true);
  command.add_option("-j,--jobs", options.jobs, "Steps and loop items running at once (default: the cores)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            int n = 0;
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
            if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > 4096)
              return "expected a number of steps from 1 to 4096, got '" + value + "'";
            return {};
          },
          "N"))
      ->group(group);
  command.add_option("--volume", options.volumes,
                     "CLAIM=DIR: a data claim of a training step is this directory (repeatable)")
      ->allow_extra_args(false)
      ->group(group);
  command.add_option("--run-dir", options.run_dir,
                     "Where logs, outputs and metrics go (default: pipec-runs/<pipeline>-<UTC time>)")
      ->group(group);
  command.add_option("--resume", options.resume,
                     "RUN_DIR: reuse each step of that earlier run whose key (op, image, command, "
                     "environment, input bytes) is the same; the run goes there unless --run-dir")
      ->group(group);
  command.add_option("--cache", options.cache,
                     "DIR: keep each step's result there and reuse one with the same key (off by default)")
      ->group(group);
  command.add_option("--from", options.from,
                     "STEP: run this step and every step after it again (with --resume or --cache)")
      ->group(group);
  command.add_flag("--ascii", options.ascii,
                   "Draw the metric series' sparklines in ASCII (default: Unicode blocks in a UTF-8 locale)")
      ->group(group);
  command.add_option("--pipeline", options.pipeline,
                     "The pipeline of the file to run, when several are not called by another")
      ->group(group);
}

int run_local_command(int argc, char** argv) {
  auto options = std::make_shared<LocalOptions>();
  CLI::App app{"Run a pipeline on this machine: container steps as sandboxed processes, training "
               "steps as local replicas (docs/local.md)",
               "pipec run --local"};
  add_local_flag(app, options->local)->required();
  app.add_option("file", options->input, "The .pipe file")->required();
  add_param_options(app, options->params, options->params_file);
  add_local_options(app, *options);
  add_quiet_flag(app, options->quiet);
  add_common_options(app, options->common);
  try {
    app.parse(argc - 1, argv + 1);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pipec: error: " << e.what() << "\nTry 'pipec run --local --help' for more information.\n";
    return kExitUsage;
  }
  return run_local(*options);
}

}  // namespace pipec::driver
