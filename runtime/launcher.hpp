#pragma once
// The launcher: render the job, create or adopt it, follow it and its log, collect the
// metrics, clean up, and return the exit code of docs/runtime.md.

#include <atomic>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/job_render.hpp"

namespace pipec::kube {
class KubeClient;
}  // namespace pipec::kube

namespace pipec::runtime {

/// Exit codes (docs/runtime.md).
enum ExitCode : int {
  kExitSucceeded = 0,
  kExitFailed = 1,
  kExitBadArguments = 2,
  kExitTimeout = 3,
  kExitApiError = 4,
  kExitStopped = 5,
};

struct LauncherOptions {
  std::string manifest;
  std::vector<std::string> bind_args, value_args;
  std::vector<std::string> metric_args;        ///< `--metric SPEC`
  std::vector<std::string> metric_value_args;  ///< `--metric-value NAME`
  std::vector<std::string> metric_list_value_args;  ///< `--metric-list-value NAME` (a JSON list)
  std::string metrics_file = "/tmp/outputs/mlpipeline-metrics.json";
  std::string series_file;  ///< "" is metric-series.json beside metrics_file
  std::string ui_metadata_file = "/tmp/outputs/mlpipeline-ui-metadata.json";
  std::string tensorboard;
  std::string executor_input;  ///< KFP v2's `{{$}}`: also write the ExecutorOutput (metrics)
  std::string runtime;          ///< `--runtime`: "" / "operator" or "trainer-v2" (a TrainJob)
  std::string trainer_runtime;  ///< `--trainer-runtime`: the TrainJob's runtime (runtimeRef.name)
  std::string trainer_runtime_kind;  ///< `--trainer-runtime-kind`: its kind (runtimeRef.kind)
  std::string tf_chief_role;    ///< `--tf-chief-role`: runtime "pods" calls the chief "chief" or "master"
  std::string workflow_name, step_name;
  std::string pod_uid;  ///< from $POD_UID
  std::chrono::milliseconds pending_timeout{0}, running_timeout{0};
  // Re-creating a failed job (docs/runtime.md "Retries"): --retry-limit, --retry-on,
  // --memory-factor, --memory-max, checked by the launcher (exit 2).
  std::string retry_limit, retry_on, memory_factor, memory_max;
  int attempt = 0;  ///< which attempt this run is (0: the first); set by run_launcher
  bool keep_job = false;
  bool dry_run = false;  ///< `--dry-run`: check, print the job to `out`, create nothing
  bool print_version = false;  ///< `--version`, answered by main() when given alone
  bool print_help = false;     ///< `--help`: parse_options() gives the usage instead
  std::string namespace_name;
  std::string kubeconfig;
  // Pacing, in ms so tests run fast (--poll-interval, --retry-delay, --log-grace).
  std::chrono::milliseconds poll_interval{2000};
  std::chrono::milliseconds retry_delay{1000};
  std::chrono::milliseconds log_grace{10000};  ///< how long the log may lag the job's end
  int watch_failures_before_polling = 5;
  int api_retries = 5;  ///< attempts for a request answered with 5xx or not at all
  /// While following, how long the API server may fail every request before exit 4.
  std::chrono::milliseconds api_outage_limit{std::chrono::minutes(10)};
  int failure_log_lines = 20;
};

// parse_duration() comes from runtime/job_render.hpp: the compiler checks literals with it.

/// Parses the command line (without argv[0]) with the table of rules/launcher_cli.def. Returns nullopt with `error` set (exit 2),
/// or with `error` empty when --help was asked (the usage is in `help`).
[[nodiscard]] std::optional<LauncherOptions> parse_options(const std::vector<std::string>& args,
                                                           std::string& error, std::string& help);

/// Makes the API client once the arguments are checked; returns nullptr and sets the
/// error when there is no usable configuration (exit 4).
using ConnectFn = std::function<kube::KubeClient*(std::string& error)>;

/// Runs the launcher. Copies the training log to `out`, reports to `err`. `stop` is set
/// by SIGTERM/SIGINT. Returns an ExitCode.
[[nodiscard]] int run_launcher(const LauncherOptions& options, const ConnectFn& connect,
                               std::ostream& out, std::ostream& err,
                               const std::atomic<bool>& stop);
/// The same with a client made beforehand.
[[nodiscard]] int run_launcher(const LauncherOptions& options, kube::KubeClient& client,
                               std::ostream& out, std::ostream& err,
                               const std::atomic<bool>& stop);

}  // namespace pipec::runtime
