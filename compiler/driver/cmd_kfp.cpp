// `pipec upload` and `pipec run`: the command line, building a .pipe file into a
// package, and the connection; the steps themselves are client::kfp's commands.

#include "compiler/driver/cmd_kfp.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "compiler/base/source_manager.hpp"
#include "compiler/client/kfp/commands.hpp"
#include "compiler/compile/compile.hpp"
#include "compiler/driver/cmd_local.hpp"
#include "compiler/driver/options.hpp"
#include "compiler/package/package.hpp"

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
};

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
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
}

// The package to send: a .pipe file is built; anything else is read as a package file.
// Returns nullopt after printing the problem (`exit_code` set).
std::optional<kfp::LocalPackage> load_target(const KfpOptions& options, int& exit_code) {
  kfp::LocalPackage package;
  if (ends_with(options.target, ".pipe")) {
    SourceManager sources;
    Diagnostics diags;
    // The Argo workflow always: its pipec.dev/parameters annotation has the enumerations
    // and ranges the overrides are checked against, which a v2 spec cannot hold.
    Compiled compiled = compile_file(sources, options.target, TargetOptions{}, diags, package::Format::TarGz);
    std::optional<ir::Pipeline>& pipeline = compiled.pipeline;
    const std::string& workflow = compiled.text;
    std::string spec;
    if (pipeline && options.build_target == "kfp-v2") {
      TargetOptions v2;
      v2.target = "kfp-v2";
      if (!write_target(v2, *pipeline, spec, diags)) pipeline.reset();
    }
    print_diagnostics(diags, sources, options.common);
    if (!pipeline || diags.has_errors()) {
      exit_code = kExitErrors;
      return std::nullopt;
    }
    std::string stem = options.target.substr(0, options.target.size() - 5);
    stem = stem.substr(stem.find_last_of('/') + 1);
    Status status = spec.empty()
                        ? kfp::load_package_bytes(compiled.package, stem + ".tar.gz", package)
                        : kfp::load_package_bytes(spec, stem + ".yaml", package);
    if (status && package.v2) {
      kfp::Signature typed;
      std::string problem;
      if (kfp::read_signature(workflow, typed, problem)) package.signature.params = typed.params;
    }
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
  // A .pipe or an existing file is a package; a word without a file behind it is a
  // pipeline id on the server.
  bool looks_like_file = ends_with(options.target, ".pipe") || is_file(options.target) ||
                         options.target.find('/') != std::string::npos ||
                         ends_with(options.target, ".yaml") || ends_with(options.target, ".yml") ||
                         ends_with(options.target, ".tar.gz") || ends_with(options.target, ".tgz") ||
                         ends_with(options.target, ".zip") || ends_with(options.target, ".json");
  std::optional<kfp::LocalPackage> package;
  if (looks_like_file) {
    int exit_code = kExitOk;
    package = load_target(options, exit_code);
    if (!package) return exit_code;
  }
  options.run.v2 = options.build_target == "kfp-v2";
  client::CurlTransport transport(connection.transport);
  return kfp::run_command(package, looks_like_file ? std::string() : options.target, options.run,
                          connection, transport, std::cout, std::cerr);
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
  add_connection_options(*rn, run->connection, remote);
  rn->callback([run, rn, &exit_code] {
    if (std::string problem = mode_problem(*rn); !problem.empty()) {
      std::cerr << "pipec: error: " << problem << "\nTry 'pipec run --help' for more information.\n";
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_run(*run);
  });
}

}  // namespace pipec::driver
