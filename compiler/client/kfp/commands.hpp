#pragma once
// `pipec upload` and `pipec run` once the package is at hand (the driver builds a .pipe
// file first): every step, its output and its exit status. Override problems are found
// before any request; for a pipeline given by id, before any request but the GETs that
// fetch its workflow.

#include <chrono>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "compiler/client/http.hpp"
#include "compiler/client/kfp/config.hpp"
#include "compiler/client/kfp/flows.hpp"

namespace pipec::client::kfp {

/// Exit statuses: the driver's 0 (success) and 1 (errors) (2 is usage, 3 internal), and
/// beyond them a run's end.
enum RunExit : int { kExitOk = 0, kExitErrors = 1, kExitRunFailed = 4, kExitRunTimedOut = 5 };

/// Reports `message` on `err` as every pipec command does: "pipec: error: MESSAGE".
void print_error(std::ostream& err, const std::string& message);

struct UploadArgs {
  std::string name;
  std::string description;
  std::string version;
};

struct RunArgs {
  std::vector<std::string> params;  // each "NAME=VALUE" from -p
  std::string params_file;
  std::string experiment = "Default";
  std::string run_name;             // "" = "<pipeline> <UTC time>"
  std::string description;
  std::string version;              // package: name of the uploaded version; id: version to run
  bool wait = false;
  std::chrono::milliseconds timeout{0};  // with wait; 0 = none
  std::chrono::milliseconds poll{5000};
  int progress_fd = -1;  // with wait: WaitOptions::progress_fd
  RetryPolicy retry;
  bool v2 = false;  // a pipeline given by id is a KFP v2 one: use the v2beta1 API
};

/// Uploads (or adds a version) and prints the ids and a UI link to `out`; errors go to
/// `err` as "pipec: error: ...". Returns the exit status.
int upload_command(const LocalPackage& package, const UploadArgs& args,
                   const Connection& connection, HttpTransport& transport, std::ostream& out,
                   std::ostream& err, const RetryPolicy& retry = {});

/// Runs a package (uploading it as needed) or, when `package` is empty, the pipeline
/// `pipeline_id` already on the server. Returns 0, 1 (errors, override problems),
/// kExitRunFailed or kExitRunTimedOut.
int run_command(const std::optional<LocalPackage>& package, const std::string& pipeline_id,
                const RunArgs& args, const Connection& connection, HttpTransport& transport,
                std::ostream& out, std::ostream& err);

/// Follows a run to its end (`pipec runs wait`, `pipec run --wait`): state changes of the
/// run and of each step, then the metrics, and for a failed run the failed steps and how
/// to read their logs. Returns 0, 1, kExitRunFailed or kExitRunTimedOut.
int follow_run(KfpApi& api, const std::string& run_id, const std::string& shown_name,
               const WaitOptions& options, const Connection& connection, std::ostream& out,
               std::ostream& err);

struct ScheduleArgs {
  RunArgs run;  // -p, --params-file, --experiment, --description, --version, v2
  std::string name;  // "" = the pipeline's name
  std::string cron;  // the 6-field form KFP takes (CronSchedule::kfp()), or ""
  long long interval_seconds = 0;  // --every, when no cron
  std::string start_time, end_time;  // RFC 3339
  long long max_concurrency = 1;
  bool catchup = true;
  bool enabled = true;
};

/// `pipec schedule create`: as run_command up to the run, then a recurring run (v1beta1
/// job, or v2beta1 recurring run for a KFP v2 pipeline) with the checked, typed overrides.
int schedule_create_command(const std::optional<LocalPackage>& package,
                            const std::string& pipeline_id, const ScheduleArgs& args,
                            const Connection& connection, HttpTransport& transport,
                            std::ostream& out, std::ostream& err);

/// Parses a duration: "90" (seconds), "90s", "15m", "2h", "1h30m", "500ms".
/// Returns false for anything else.
[[nodiscard]] bool parse_duration(std::string_view text, std::chrono::milliseconds& out);

}  // namespace pipec::client::kfp
