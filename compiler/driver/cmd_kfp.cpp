// `pipec upload` and `pipec run`: the command line, building a .pipe file into a
// package, and the connection; the steps themselves are client::kfp's commands.

#include "compiler/driver/cmd_kfp.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "compiler/base/source_manager.hpp"
#include "rules/cron.hpp"
#include "compiler/base/progress.hpp"
#include "compiler/client/kfp/commands.hpp"
#include "compiler/client/kfp/compare.hpp"
#include "compiler/client/kfp/logs.hpp"
#include "compiler/client/kfp/operate.hpp"
#include "compiler/compile/compile.hpp"
#include "compiler/driver/cmd_local.hpp"
#include "compiler/driver/cmd_preflight.hpp"
#include "compiler/driver/commands.hpp"
#include "compiler/driver/options.hpp"
#include "compiler/package/package.hpp"
#include "compiler/sema/component.hpp"
#include "compiler/tools/report.hpp"
#include "input/json.hpp"
#include "rules/durations.hpp"

namespace pipec::driver {

using namespace compile;  // compile_file(), the one path (compiler/compile)

namespace {

namespace kfp = client::kfp;

struct KfpOptions {
  std::string target;
  std::string build_target = "kfp-v1";  // what a .pipe file is built to: kfp-v1 or kfp-v2
  kfp::ConnectionFlags connection;
  CommonOptions common;
  kfp::UploadArgs upload;
  kfp::RunArgs run;
  std::string timeout;
  std::string poll = "5s";
  bool quiet = false;  // run --wait -q
  bool preflight = false;  // run --preflight
  PreflightOptions checks;  // its --kubeconfig, --strict, --registry
};

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A .pipe or an existing file is a package; a word without a file behind it is a
// pipeline id on the server.
bool looks_like_file(const std::string& target) {
  return ends_with(target, ".pipe") || is_file(target) || target.find('/') != std::string::npos ||
         ends_with(target, ".yaml") || ends_with(target, ".yml") || ends_with(target, ".tar.gz") ||
         ends_with(target, ".tgz") || ends_with(target, ".zip") || ends_with(target, ".json");
}

void add_connection_options(CLI::App& cmd, kfp::ConnectionFlags& flags, const std::string& group = "Options") {
  cmd.add_option("--host", flags.host,
                 "KFP API endpoint, e.g. https://kubeflow.example.com/pipeline "
                 "(default: $KF_PIPELINES_ENDPOINT)")
      ->group(group);
  cmd.add_option("--token", flags.token,
                 "Bearer token (default: $KF_PIPELINES_TOKEN, or the file "
                 "$KF_PIPELINES_SA_TOKEN_PATH); prefer those, a flag shows in the process list")
      ->group(group);
  cmd.add_option("--cookie", flags.cookie,
                 "Cookie header for a server behind an auth proxy, e.g. "
                 "'authservice_session=...' (default: $KF_PIPELINES_COOKIE; prefer it, a flag "
                 "shows in the process list)")
      ->group(group);
  cmd.add_option("--user", flags.user, "Send this identity as kubeflow-userid (behind an auth proxy)")
      ->group(group);
  cmd.add_option("--namespace", flags.namespace_name, "Namespace of a multi-user install")
      ->group(group);
  cmd.add_option("--ca-file", flags.ca_file, "CA bundle (PEM) to verify the server's certificate")
      ->group(group);
  cmd.add_flag("--insecure-skip-tls-verify", flags.insecure_skip_tls_verify,
               "Do not verify the server's TLS certificate")
      ->group(group);
  cmd.add_option("--request-timeout", flags.request_timeout,
                 "End a request whose answer stalls this long (under 1 KiB/s), and one whose "
                 "connection takes this long or 10s (default: $PIPEC_REQUEST_TIMEOUT, else 30s)")
      ->group(group);
}

// The package to send: a .pipe file is built; anything else is read as a package file.
// Returns nullopt after printing the problem (`exit_code` set).
std::optional<kfp::LocalPackage> load_target(const KfpOptions& options, int& exit_code) {
  kfp::LocalPackage package;
  if (ends_with(options.target, ".pipe")) {
    SourceManager sources;
    Diagnostics diags;
    // Built as `pipec build` builds it for the target: a KFP v2 spec as its YAML, an Argo
    // workflow in a .tar.gz. No other target's writer runs.
    const bool v2 = options.build_target == "kfp-v2";
    TargetOptions target;
    if (v2) target.target = "kfp-v2";
    Compiled compiled = compile_file(sources, options.target, target, diags,
                                     v2 ? std::nullopt : std::optional(package::Format::TarGz));
    print_diagnostics(diags, sources, options.common);
    if (!compiled.pipeline || diags.has_errors()) {
      exit_code = kExitErrors;
      return std::nullopt;
    }
    std::string stem = options.target.substr(0, options.target.size() - 5);
    stem = stem.substr(stem.find_last_of('/') + 1);
    Status status = v2 ? kfp::load_package_bytes(std::move(compiled.text), stem + ".yaml", package)
                       : kfp::load_package_bytes(std::move(compiled.package), stem + ".tar.gz", package);
    // Overrides are checked against the pipeline's own parameters (the IR's, with the
    // enumerations and ranges a v2 spec cannot hold), as a package read back gives them.
    kfp::Signature declared;
    std::string problem;
    if (status && kfp::read_parameters_json(ir::parameters_json(*compiled.pipeline), declared, problem))
      package.signature.params = std::move(declared.params);
    if (!status) {
      std::cerr << "pipec: error: " << status.message() << '\n';
      exit_code = kExitErrors;
      return std::nullopt;
    }
    return package;
  }
  if (Status status = kfp::load_package_file(options.target, package); !status) {
    std::cerr << "pipec: error: " << status.message() << '\n';
    exit_code = kExitErrors;
    return std::nullopt;
  }
  return package;
}

bool connect(const KfpOptions& options, kfp::Connection& connection) {
  Status status = kfp::resolve_connection(options.connection, [](const char* name) {
    return static_cast<const char*>(std::getenv(name));
  }, connection);
  if (!status) std::cerr << "pipec: error: " << status.message() << '\n';
  return status.is_ok();
}

// `pipec component fetch FILE.yaml`: the components a graph component's componentRefs name
// that are not in the component cache, downloaded from their urls (http or https, through
// the client's one HTTP transport, bounded), checked against their digests and saved there,
// recursively; then the graph component imports offline (docs/language.md "Graph components").
int run_component_fetch(const std::string& file, const CommonOptions& common, bool quiet) {
  client::TransportOptions options;
  options.timeout = std::chrono::seconds(60);
  client::CurlTransport transport(options);
  // On a terminal, while a download goes on: "-- fetching 3: URL (2 files, 45,210 bytes so
  // far)" on standard error, erased when it ends (so no diagnostic ever follows it).
  const bool progress = !quiet && progress_wanted(STDERR_FILENO);
  std::size_t files = 0, bytes = 0;
  sema::component::Fetch fetch = [&](const std::string& url, std::string& body, std::string& why) {
    if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) {
      why = "only http and https urls are fetched";
      return false;
    }
    client::HttpRequest request;
    request.url = url;
    client::HttpResponse response;
    if (progress)
      std::cerr << progress_line(STDERR_FILENO, fmt::format("-- fetching {}: {} ({} files, {} bytes so far)",
                                                            files + 1, url, files, bytes))
                << std::flush;
    Status sent = transport.send(request, response);
    if (progress) std::cerr << kProgressErase << std::flush;
    if (!sent.is_ok()) {
      why = sent.message();
      return false;
    }
    if (response.status != 200) {
      why = response.location.empty() ? fmt::format("the server answered HTTP {}", response.status)
                                      : fmt::format("the server answered HTTP {} (redirects to {}, which pipec "
                                                    "does not follow)",
                                                    response.status, response.location);
      return false;
    }
    ++files;
    bytes += response.body.size();
    body = std::move(response.body);
    return true;
  };
  sema::component::Component c;
  std::vector<std::string> saved;
  int code = read_component_file(file, common, c, fetch, &saved);
  for (const auto& path : saved) std::cout << "saved " << path << "\n";
  if (code != kExitOk) return code;
  if (!c.graph) std::cout << "'" << file << "' is not a graph component: it references no components\n";
  return kExitOk;
}

int run_upload(const KfpOptions& options) {
  kfp::Connection connection;
  if (!connect(options, connection)) return kExitUsage;
  int exit_code = kExitOk;
  auto package = load_target(options, exit_code);
  if (!package) return exit_code;
  client::CurlTransport transport(connection.transport);
  return kfp::upload_command(*package, options.upload, connection, transport, std::cout, std::cerr);
}

int run_run(KfpOptions options) {
  kfp::Connection connection;
  if (!connect(options, connection)) return kExitUsage;
  if (!options.timeout.empty() && !kfp::parse_duration(options.timeout, options.run.timeout)) {
    std::cerr << fmt::format("pipec: error: --timeout '{}': expected a duration such as 90s, 15m or 2h\n",
                             options.timeout);
    return kExitUsage;
  }
  if (!kfp::parse_duration(options.poll, options.run.poll) || options.run.poll.count() <= 0) {
    std::cerr << fmt::format("pipec: error: --poll '{}': expected a duration such as 5s\n", options.poll);
    return kExitUsage;
  }
  if (!options.quiet && progress_wanted(STDOUT_FILENO)) options.run.progress_fd = STDOUT_FILENO;
  const bool is_package = looks_like_file(options.target);
  if (options.preflight) {
    // Before anything is uploaded: the same checks as `pipec preflight`, stopping on errors.
    PreflightOptions checks = options.checks;
    checks.file = options.target;
    checks.target = options.build_target;
    checks.params = options.run.params;
    checks.params_file = options.run.params_file;
    checks.namespace_name = options.connection.namespace_name;
    checks.common = options.common;
    if (int code = run_preflight(checks); code != kExitOk) {
      if (code == kExitErrors) std::cerr << "pipec: nothing was uploaded: preflight found errors\n";
      return code;
    }
  }
  std::optional<kfp::LocalPackage> package;
  if (is_package) {
    int exit_code = kExitOk;
    package = load_target(options, exit_code);
    if (!package) return exit_code;
  }
  options.run.v2 = options.build_target == "kfp-v2";
  client::CurlTransport transport(connection.transport);
  return kfp::run_command(package, is_package ? std::string() : options.target, options.run,
                          connection, transport, std::cout, std::cerr);
}

// The options every operating command takes: the connection, the API, the output.
struct OperateOptions {
  kfp::ConnectionFlags connection;
  std::string target = "kfp-v1";
  std::string output = "table";
  kfp::ListArgs list;
  std::string id;
  std::string version;
  std::string name, description;
  std::string timeout, poll = "5s";
  bool quiet = false;  // runs wait -q
};

void add_operate_options(CLI::App& cmd, OperateOptions& options, bool output) {
  cmd.add_option("--target", options.target,
                 "kfp-v1: the v1beta1 API (Argo pipelines; default); kfp-v2: the v2beta1 API "
                 "(KFP v2 pipelines on KFP 2.x)")
      ->check(CLI::IsMember({"kfp-v1", "kfp-v2"}))
      ->default_str("kfp-v1");
  if (output)
    cmd.add_option("-o,--output", options.output, "table (default) or json (stable records)")
        ->check(CLI::IsMember({"table", "json"}))
        ->default_str("table");
  add_connection_options(cmd, options.connection);
}

void add_list_options(CLI::App& cmd, OperateOptions& options) {
  cmd.add_option("--page-size", options.list.page_size, "Items per page (1-200)")
      ->check(CLI::Range(1, 200))
      ->default_str("20");
  cmd.add_option("--page-token", options.list.page_token, "The page after the one that printed this token");
  cmd.add_flag("--all", options.list.all, "Every page, not only the first");
}

// Runs `body` with the connection and transport made from `options`; usage errors are 2.
template <typename Body>
int operate(const OperateOptions& options, Body body) {
  KfpOptions connect_options;
  connect_options.connection = options.connection;
  kfp::Connection connection;
  if (!connect(connect_options, connection)) return kExitUsage;
  kfp::OperateArgs args;
  args.v2 = options.target == "kfp-v2";
  args.json = options.output == "json";
  client::CurlTransport transport(connection.transport);
  return body(args, connection, transport);
}

// `NOUN VERB ID`: one action on one thing.
void add_action(CLI::App& parent, const char* verb, const char* help, kfp::Kind kind,
                kfp::Action action, const char* id_help, int& exit_code, bool with_version = false) {
  auto options = std::make_shared<OperateOptions>();
  CLI::App* cmd = parent.add_subcommand(verb, help);
  cmd->add_option("id", options->id, id_help)->required();
  if (with_version)
    cmd->add_option("--version", options->version, "Only this version (its name) of the pipeline");
  add_operate_options(*cmd, *options, false);
  cmd->callback([options, kind, action, &exit_code] {
    exit_code = operate(*options, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                      client::HttpTransport& t) {
      return kfp::act_command(kind, action, options->id, options->version, args, c, t, std::cout,
                              std::cerr);
    });
  });
}

CLI::App* add_list(CLI::App& parent, const char* verb, const char* help, kfp::Kind kind,
                   std::shared_ptr<OperateOptions> options, int& exit_code) {
  CLI::App* cmd = parent.add_subcommand(verb, help);
  add_list_options(*cmd, *options);
  add_operate_options(*cmd, *options, true);
  cmd->callback([options, kind, &exit_code] {
    exit_code = operate(*options, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                      client::HttpTransport& t) {
      return kfp::list_command(kind, options->list, args, c, t, std::cout, std::cerr);
    });
  });
  return cmd;
}

void add_get(CLI::App& parent, const char* help, kfp::Kind kind, const char* id_help, int& exit_code) {
  auto options = std::make_shared<OperateOptions>();
  CLI::App* cmd = parent.add_subcommand("get", help);
  cmd->add_option("id", options->id, id_help)->required();
  add_operate_options(*cmd, *options, true);
  cmd->callback([options, kind, &exit_code] {
    exit_code = operate(*options, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                      client::HttpTransport& t) {
      return kfp::get_command(kind, options->id, args, c, t, std::cout, std::cerr);
    });
  });
}

bool read_wait_options(const std::string& timeout, const std::string& poll, kfp::WaitOptions& out) {
  if (!timeout.empty() && !kfp::parse_duration(timeout, out.timeout)) {
    std::cerr << fmt::format("pipec: error: --timeout '{}': expected a duration such as 90s, 15m or 2h\n",
                             timeout);
    return false;
  }
  if (!kfp::parse_duration(poll, out.poll) || out.poll.count() <= 0) {
    std::cerr << fmt::format("pipec: error: --poll '{}': expected a duration such as 5s\n", poll);
    return false;
  }
  return true;
}

// A local run directory as `runs compare` compares it: summary.json and parameters.json,
// read as `pipec report` reads them (the metrics' texts as summary.json has them).
bool read_local_run(const std::string& dir, kfp::ComparedRun& out) {
  tools::ReportRun run;
  std::string error;
  if (!tools::read_report_run(dir, run, error)) {
    std::cerr << "pipec: error: " << error << "\n";
    return false;
  }
  out.run = out.id = dir;
  out.source = "local";
  out.name = run.label;
  out.state = input::member_text(run.summary, "outcome");
  for (const auto& [name, value] : run.parameters.items())
    out.parameters.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
  for (const auto& step : run.summary["steps"]) {
    for (const auto& [name, text] : tools::report_metrics(input::member_text(step, "metrics")))
      out.metrics.push_back({input::member_text(step, "step") + "." + name, std::strtod(text.c_str(), nullptr), ""});
  }
  return true;
}

// `pipec runs compare RUN...`: a RUN that is a directory is a local run; the server is asked
// only for the others (so local runs alone need no --host).
void add_runs_compare(CLI::App& runs, int& exit_code) {
  struct CompareOptions : OperateOptions {
    std::vector<std::string> runs;
    std::string metric;
  };
  auto compare = std::make_shared<CompareOptions>();
  CLI::App* cmd = runs.add_subcommand(
      "compare", "Parameters and metrics of several runs side by side (server runs or local run directories)");
  cmd->add_option("runs", compare->runs, "Run ids, or run directories of pipec run --local")->required();
  cmd->add_option("--metric", compare->metric, "Only this metric (METRIC or STEP.METRIC)");
  add_operate_options(*cmd, *compare, true);
  cmd->callback([compare, &exit_code] {
    std::vector<kfp::CompareInput> inputs;
    bool all_local = true;
    for (const auto& run : compare->runs) {
      kfp::CompareInput input;
      std::error_code ec;
      input.local = std::filesystem::is_directory(run, ec);
      input.id = run;
      if (input.local && !read_local_run(run, input.run)) {
        exit_code = kfp::kExitErrors;
        return;
      }
      all_local = all_local && input.local;
      inputs.push_back(std::move(input));
    }
    if (all_local) {
      kfp::OperateArgs args;
      args.json = compare->output == "json";
      exit_code = kfp::compare_command(inputs, compare->metric, args, kfp::Connection{}, nullptr, std::cout,
                                       std::cerr);
      return;
    }
    exit_code = operate(*compare, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                      client::HttpTransport& t) {
      return kfp::compare_command(inputs, compare->metric, args, c, &t, std::cout, std::cerr);
    });
  });
}

void add_runs_commands(CLI::App& app, int& exit_code) {
  CLI::App* runs = app.add_subcommand("runs", "List runs, show one, compare them, wait for, stop, retry, archive or delete runs");
  runs->require_subcommand(1);
  auto list = std::make_shared<OperateOptions>();
  CLI::App* ls = add_list(*runs, "list", "List runs, newest first", kfp::Kind::Run, list, exit_code);
  ls->add_option("--experiment", list->list.experiment, "Only the runs of this experiment (name or id)");
  ls->add_option("--pipeline", list->list.pipeline,
                 "Only the runs of this pipeline (name or id; filtered on each page read)");
  ls->add_option("--state", list->list.state, "Only runs in this state (e.g. Running, Succeeded, Failed)");
  ls->add_flag("--archived", list->list.archived, "The archived runs instead");
  add_get(*runs, "Show a run: state, parameters, times, metrics, each step's state and duration",
          kfp::Kind::Run, "The run's id", exit_code);

  auto wait = std::make_shared<OperateOptions>();
  CLI::App* wt = runs->add_subcommand("wait", "Follow a run to its end (exit 0 succeeded, 4 failed, 5 timed out)");
  wt->add_option("id", wait->id, "The run's id")->required();
  wt->add_option("--timeout", wait->timeout, "Give up waiting after this long (e.g. 30m)");
  wt->add_option("--poll", wait->poll, "Time between status checks")->default_str("5s");
  add_quiet_flag(*wt, wait->quiet);
  add_operate_options(*wt, *wait, false);
  wt->callback([wait, &exit_code] {
    kfp::WaitOptions options;
    if (!read_wait_options(wait->timeout, wait->poll, options)) {
      exit_code = kExitUsage;
      return;
    }
    if (!wait->quiet && progress_wanted(STDOUT_FILENO)) options.progress_fd = STDOUT_FILENO;
    exit_code = operate(*wait, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                   client::HttpTransport& t) {
      return kfp::wait_command(wait->id, options, args, c, t, std::cout, std::cerr);
    });
  });
  add_runs_compare(*runs, exit_code);
  add_action(*runs, "stop", "Terminate a run", kfp::Kind::Run, kfp::Action::Terminate, "The run's id", exit_code);
  add_action(*runs, "retry", "Retry a failed run's failed steps", kfp::Kind::Run, kfp::Action::Retry,
             "The run's id", exit_code);
  add_action(*runs, "archive", "Archive a run", kfp::Kind::Run, kfp::Action::Archive, "The run's id", exit_code);
  add_action(*runs, "unarchive", "Restore an archived run", kfp::Kind::Run, kfp::Action::Unarchive,
             "The run's id", exit_code);
  add_action(*runs, "delete", "Delete a run", kfp::Kind::Run, kfp::Action::Delete, "The run's id", exit_code);
}

void add_logs_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<OperateOptions>();
  auto logs = std::make_shared<kfp::LogsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "logs", "Print a run's step logs (through the KFP UI's server, else the Kubernetes API)");
  cmd->add_option("run", logs->run_id, "The run's id")->required();
  cmd->add_option("step", logs->step, "A step's name (or node id, or pod); default: every step");
  cmd->add_flag("-f,--follow", logs->follow,
                "Stream the log until the step's container ends (reads the Kubernetes API)");
  cmd->add_option("--ui-host", logs->ui_host,
                  "Address of the KFP UI (default: --host; through the Kubeflow ingress they are "
                  "the same)");
  cmd->add_option("--kubeconfig", logs->kubeconfig,
                  "Kubeconfig for the Kubernetes API (default: in-cluster, $KUBECONFIG, ~/.kube/config)");
  cmd->add_flag("--kube", logs->kube_only, "Read from the Kubernetes API only");
  add_operate_options(*cmd, *options, false);
  cmd->callback([options, logs, &exit_code] {
    exit_code = operate(*options, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                      client::HttpTransport& t) {
      return kfp::logs_command(*logs, args, c, t, std::cout, std::cerr);
    });
  });
}

void add_experiments_commands(CLI::App& app, int& exit_code) {
  CLI::App* exps = app.add_subcommand("experiments", "List, create, archive or delete experiments");
  exps->require_subcommand(1);
  auto list = std::make_shared<OperateOptions>();
  CLI::App* ls = add_list(*exps, "list", "List experiments, newest first", kfp::Kind::Experiment, list, exit_code);
  ls->add_flag("--archived", list->list.archived, "The archived experiments instead");
  auto create = std::make_shared<OperateOptions>();
  CLI::App* cr = exps->add_subcommand("create", "Create an experiment (nothing happens if it exists)");
  cr->add_option("name", create->name, "The experiment's name")->required();
  cr->add_option("--description", create->description, "Its description");
  add_operate_options(*cr, *create, false);
  cr->callback([create, &exit_code] {
    exit_code = operate(*create, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                     client::HttpTransport& t) {
      return kfp::experiment_create_command(create->name, create->description, args, c, t,
                                            std::cout, std::cerr);
    });
  });
  add_action(*exps, "archive", "Archive an experiment (and its runs)", kfp::Kind::Experiment,
             kfp::Action::Archive, "The experiment's name or id", exit_code);
  add_action(*exps, "unarchive", "Restore an archived experiment", kfp::Kind::Experiment,
             kfp::Action::Unarchive, "The experiment's name or id", exit_code);
  add_action(*exps, "delete", "Delete an experiment", kfp::Kind::Experiment, kfp::Action::Delete,
             "The experiment's name or id", exit_code);
}

void add_pipelines_commands(CLI::App& app, int& exit_code) {
  CLI::App* pipes = app.add_subcommand("pipelines", "List pipelines and their versions, delete them");
  pipes->require_subcommand(1);
  auto list = std::make_shared<OperateOptions>();
  add_list(*pipes, "list", "List pipelines, newest first", kfp::Kind::Pipeline, list, exit_code);
  auto versions = std::make_shared<OperateOptions>();
  CLI::App* vs = add_list(*pipes, "versions", "List a pipeline's versions, newest first",
                          kfp::Kind::Version, versions, exit_code);
  vs->add_option("pipeline", versions->list.pipeline, "The pipeline's name or id")->required();
  // The pipeline's name resolves to its id before listing (operate.cpp); versions are
  // listed under it.
  vs->callback([versions, &exit_code] {
    exit_code = operate(*versions, [&](const kfp::OperateArgs& args, const kfp::Connection& c,
                                       client::HttpTransport& t) {
      return kfp::list_command(kfp::Kind::Version, versions->list, args, c, t, std::cout, std::cerr);
    });
  });
  add_get(*pipes, "Show a pipeline", kfp::Kind::Pipeline, "The pipeline's name or id", exit_code);
  add_action(*pipes, "delete", "Delete a pipeline (it must have no versions left on KFP 2.x), or one version of it",
             kfp::Kind::Pipeline, kfp::Action::Delete, "The pipeline's name or id", exit_code, true);
}

int run_schedule_create(OperateOptions& options, kfp::ScheduleArgs args, const std::string& every,
                        const std::string& target, const std::string& build_target,
                        const CommonOptions& common) {
  if (options.list.experiment.empty()) args.run.experiment = "Default";
  else args.run.experiment = options.list.experiment;
  if (args.cron.empty() == every.empty()) {
    std::cerr << "pipec: error: give the schedule with either --cron or --every\n";
    return kExitUsage;
  }
  if (!args.cron.empty()) {
    CronSchedule schedule;
    std::string error;
    if (!parse_cron(args.cron, schedule, error)) {
      std::cerr << fmt::format("pipec: error: --cron '{}': {}\n", cron_text(args.cron), error);
      return kExitUsage;
    }
    args.cron = schedule.kfp();
  } else {
    std::chrono::milliseconds interval{0};
    std::string why;
    auto parsed = rules::parse_duration(every, &why);
    if (parsed) interval = *parsed;
    if (!parsed || interval.count() < 1000 || interval.count() % 1000 != 0) {
      std::cerr << fmt::format("pipec: error: --every '{}': {}expected a duration of whole seconds, at "
                               "least 1s, each number at most {} (e.g. 90s, 15m, 6h, 1d)\n",
                               cron_text(every), why.empty() ? "" : why + "; ", rules::kMaxDurationNumber);
      return kExitUsage;
    }
    args.interval_seconds = interval.count() / 1000;
  }
  if (args.max_concurrency < 1 || args.max_concurrency > 10) {
    std::cerr << fmt::format("pipec: error: --max-concurrency {}: KFP takes 1 to 10\n", args.max_concurrency);
    return kExitUsage;
  }
  for (const std::string* t : {&args.start_time, &args.end_time}) {
    std::tm tm{};
    const char* rest = t->empty() ? nullptr : ::strptime(t->c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (!t->empty() && (!rest || (*rest != 'Z' && *rest != '+' && *rest != '-' && *rest != '.'))) {
      std::cerr << fmt::format("pipec: error: '{}' is not an RFC 3339 time (e.g. 2026-12-01T02:00:00Z)\n", *t);
      return kExitUsage;
    }
  }
  KfpOptions build;
  build.target = target;
  build.build_target = build_target;
  build.connection = options.connection;
  build.common = common;
  kfp::Connection connection;
  if (!connect(build, connection)) return kExitUsage;
  std::optional<kfp::LocalPackage> package;
  if (looks_like_file(target)) {
    int exit_code = kExitOk;
    package = load_target(build, exit_code);
    if (!package) return exit_code;
  }
  args.run.v2 = build_target == "kfp-v2";
  client::CurlTransport transport(connection.transport);
  return kfp::schedule_create_command(package, package ? std::string() : target, args, connection,
                                      transport, std::cout, std::cerr);
}

void add_schedule_commands(CLI::App& app, int& exit_code) {
  CLI::App* sched = app.add_subcommand("schedule", "Recurring runs: create, list, get, enable, disable, delete");
  sched->require_subcommand(1);

  struct Create {
    OperateOptions options;
    kfp::ScheduleArgs args;
    std::string every, target, build_target = "kfp-v1";
    bool no_catchup = false, disabled = false;
    CommonOptions common;
  };
  auto create = std::make_shared<Create>();
  CLI::App* cr = sched->add_subcommand(
      "create", "Run a pipeline on a schedule (building and uploading a .pipe first), with typed overrides");
  cr->add_option("pipeline", create->target, "A .pipe file, a package, or the id of a pipeline on the server")
      ->required();
  cr->add_option("--cron", create->args.cron,
                 "When: 5 fields ('0 2 * * *'), 6 with seconds first ('0 0 2 * * *'), or @daily, "
                 "@hourly, @weekly, @monthly, @yearly (the controller's time zone, UTC by default)");
  cr->add_option("--every", create->every, "Or: every so long (90s, 15m, 6h, 1d, 1h30m)");
  cr->add_option("--name", create->args.name, "The schedule's name (default: the pipeline's)");
  cr->add_option("--description", create->args.run.description, "Its description");
  cr->add_option("--experiment", create->options.list.experiment, "Experiment of its runs, created if missing")
      ->default_str("Default");
  cr->add_option("--max-concurrency", create->args.max_concurrency, "Runs at most this many at once (1-10)")
      ->default_str("1");
  cr->add_flag("--catchup,!--no-catchup", create->args.catchup,
               "Start the runs missed while paused or before --start (default), or not");
  cr->add_option("--start", create->args.start_time, "Not before this time (RFC 3339, e.g. 2026-12-01T00:00:00Z)");
  cr->add_option("--end", create->args.end_time, "Not after this time (RFC 3339)");
  cr->add_flag("--disabled", create->disabled, "Create it disabled (enable it later)");
  cr->add_option("-p,--param", create->args.run.params,
                 "Override a parameter: NAME=VALUE (checked against its declared type)")
      ->allow_extra_args(false);
  cr->add_option("--params-file", create->args.run.params_file,
                 "YAML or JSON mapping of parameter names to values (-p wins)");
  cr->add_option("--version", create->args.run.version,
                 "Package: name of the uploaded version; pipeline id: the version to run");
  cr->add_option("--target", create->build_target,
                 "kfp-v1 (Argo, v1beta1 jobs; default) or kfp-v2 (pipeline spec, v2beta1 recurring "
                 "runs): what a .pipe file is built to, or what the pipeline of an id is")
      ->check(CLI::IsMember({"kfp-v1", "kfp-v2"}))
      ->default_str("kfp-v1");
  add_connection_options(*cr, create->options.connection);
  add_common_options(*cr, create->common);
  cr->callback([create, &exit_code] {
    kfp::ScheduleArgs args = create->args;
    args.enabled = !create->disabled;
    exit_code = run_schedule_create(create->options, args, create->every, create->target,
                                    create->build_target, create->common);
  });

  auto list = std::make_shared<OperateOptions>();
  CLI::App* ls = add_list(*sched, "list", "List schedules, newest first", kfp::Kind::Schedule, list, exit_code);
  ls->add_option("--experiment", list->list.experiment, "Only the schedules of this experiment (name or id)");
  add_get(*sched, "Show a schedule", kfp::Kind::Schedule, "The schedule's id", exit_code);
  add_action(*sched, "enable", "Enable a schedule", kfp::Kind::Schedule, kfp::Action::Enable,
             "The schedule's id", exit_code);
  add_action(*sched, "disable", "Disable a schedule (its runs go on)", kfp::Kind::Schedule,
             kfp::Action::Disable, "The schedule's id", exit_code);
  add_action(*sched, "delete", "Delete a schedule", kfp::Kind::Schedule, kfp::Action::Delete,
             "The schedule's id", exit_code);
}

}  // namespace

void add_kfp_commands(CLI::App& app, int& exit_code) {
  auto upload = std::make_shared<KfpOptions>();
  CLI::App* up = app.add_subcommand(
      "upload", "Upload a package (building a .pipe first); adds a version if the pipeline exists");
  up->add_option("package", upload->target, "A .pipe file, or a package (.tar.gz, .tgz, .zip, .yaml)")
      ->required();
  up->add_option("--target", upload->build_target,
                 "What a .pipe file is built to: kfp-v1 (Argo, v1beta1 API; default) or kfp-v2 "
                 "(pipeline spec, v2beta1 API); a package file says what it is")
      ->check(CLI::IsMember({"kfp-v1", "kfp-v2"}))
      ->default_str("kfp-v1");
  up->add_option("--name", upload->upload.name, "Pipeline name (default: the pipeline's own)");
  up->add_option("--description", upload->upload.description, "Pipeline or version description");
  up->add_option("--version", upload->upload.version,
                 "Version name (default: sha256-<12 hex digits of the workflow>)");
  add_connection_options(*up, upload->connection);
  add_common_options(*up, upload->common);
  up->callback([upload, &exit_code] { exit_code = run_upload(*upload); });

  auto run = std::make_shared<KfpOptions>();
  CLI::App* rn = app.add_subcommand(
      "run", "Start a run (building and uploading as needed), with typed parameter overrides; with "
             "--local, run the pipeline on this machine instead");
  rn->add_option("pipeline", run->target,
                 "A .pipe file, a package, or the id of a pipeline on the server (with --local: the "
                 ".pipe file)")
      ->required();
  // `run --local` is parsed before this command (cmd_local.cpp) with the same local
  // options; they are registered here too, so that help, the man page and completion,
  // all made from this registry, show them.
  static LocalOptions local;
  add_local_flag(*rn, local.local);
  add_param_options(*rn, run->run.params, run->run.params_file);
  add_quiet_flag(*rn, run->quiet);
  add_common_options(*rn, run->common);
  add_local_options(*rn, local);
  std::string remote = mode_group("Remote options", "--local", false);
  rn->add_option("--target", run->build_target,
                 "kfp-v1 (Argo, v1beta1 API; default) or kfp-v2 (pipeline spec, v2beta1 API): what "
                 "a .pipe file is built to, or what the pipeline of an id is; a package file says "
                 "what it is")
      ->check(CLI::IsMember({"kfp-v1", "kfp-v2"}))
      ->default_str("kfp-v1")
      ->group(remote);
  rn->add_option("--experiment", run->run.experiment, "Experiment, created if missing")
      ->default_str("Default")
      ->group(remote);
  rn->add_option("--run-name", run->run.run_name, "Run name (default: '<pipeline> <UTC time>')")->group(remote);
  rn->add_option("--description", run->run.description, "Run description")->group(remote);
  rn->add_option("--version", run->run.version,
                 "Package: name of the uploaded version; pipeline id: the version to run")
      ->group(remote);
  rn->add_flag("--wait", run->run.wait, "Follow the run to its end; print state changes and metrics")
      ->group(remote);
  rn->add_option("--timeout", run->timeout, "With --wait: give up waiting after this long (e.g. 30m)")
      ->group(remote);
  rn->add_option("--poll", run->poll, "With --wait: time between status checks")->default_str("5s")->group(remote);
  rn->add_flag("--preflight", run->preflight,
               "Before uploading a .pipe file, ask the Kubernetes API about what it needs as `pipec "
               "preflight` does; stop on errors")
      ->group(remote);
  add_preflight_options(*rn, run->checks, remote);
  add_connection_options(*rn, run->connection, remote);
  rn->callback([run, rn, &exit_code] {
    if (std::string problem = mode_problem(*rn); !problem.empty()) {
      std::cerr << "pipec: error: " << problem << "\nTry 'pipec run --help' for more information.\n";
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_run(*run);
  });

  struct FetchOptions {
    std::string file;
    bool quiet = false;
    CommonOptions common;
  };
  auto fetch = std::make_shared<FetchOptions>();
  CLI::App* fetch_cmd = app.get_subcommand("component")->add_subcommand(
      "fetch", "Download the components a graph component.yaml references (by url, checked against "
               "their digests) into the component cache");
  fetch_cmd->add_option("file", fetch->file, "The graph component.yaml")->required();
  add_quiet_flag(*fetch_cmd, fetch->quiet);
  add_common_options(*fetch_cmd, fetch->common);
  fetch_cmd->callback([fetch, &exit_code] {
    exit_code = run_component_fetch(fetch->file, fetch->common, fetch->quiet);
  });

  add_runs_commands(app, exit_code);
  add_logs_command(app, exit_code);
  add_schedule_commands(app, exit_code);
  add_experiments_commands(app, exit_code);
  add_pipelines_commands(app, exit_code);
}

}  // namespace pipec::driver
