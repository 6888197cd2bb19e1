// The order matters: everything that can be checked locally is checked before the first
// request (argo#10482, kfp#5292), and a POST is never repeated, so a failure part-way
// leaves at most what was created, which the messages name.

#include "compiler/client/kfp/commands.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "compiler/client/kfp/logs.hpp"
#include "compiler/client/kfp/resources.hpp"
#include "compiler/client/kfp/series.hpp"
#include "rules/durations.hpp"

namespace pipec::client::kfp {

void print_error(std::ostream& err, const std::string& message) {
  err << "pipec: error: " << message << '\n';
}

namespace {


std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void print_upload(const UploadResult& result, const Connection& connection, std::ostream& out) {
  if (result.created_pipeline) {
    out << fmt::format("uploaded pipeline '{}' (id {})\n", result.pipeline.name, result.pipeline.id);
    out << fmt::format("version '{}' (id {})\n", result.version.name, result.version.id);
  } else if (result.reused_version) {
    out << fmt::format("pipeline '{}' (id {}) has this content already as version '{}' (id {})\n",
                       result.pipeline.name, result.pipeline.id, result.version.name,
                       result.version.id);
  } else {
    out << fmt::format("added version '{}' (id {}) to pipeline '{}' (id {})\n", result.version.name,
                       result.version.id, result.pipeline.name, result.pipeline.id);
  }
  out << "  " << pipeline_link(connection.host, result.pipeline.id, result.version.id) << '\n';
}

// -p and --params-file, parsed without looking at the pipeline. Returns false after
// printing every problem.
bool read_overrides(const RunArgs& args, std::vector<Override>& overrides, std::ostream& err) {
  std::vector<std::string> errors;
  if (!args.params_file.empty()) (void)load_params_file(args.params_file, overrides, errors);
  for (const auto& argument : args.params) {
    Override o;
    std::string error;
    if (parse_override(argument, o, error)) {
      overrides.push_back(std::move(o));
    } else {
      errors.push_back(error);
    }
  }
  for (const auto& e : errors) print_error(err, e);
  return errors.empty();
}

bool check(const Signature& signature, const std::vector<Override>& overrides,
           std::vector<std::pair<std::string, std::string>>& values, std::ostream& err) {
  std::vector<std::string> errors;
  if (check_overrides(signature, overrides, values, errors)) return true;
  for (const auto& e : errors) print_error(err, e);
  err << fmt::format("pipec: nothing was sent: {} problem{} with the parameters\n", errors.size(),
                     errors.size() == 1 ? "" : "s");
  return false;
}

}  // namespace

int upload_command(const LocalPackage& package, const UploadArgs& args,
                   const Connection& connection, HttpTransport& transport, std::ostream& shown_out,
                   std::ostream& shown_err, const RetryPolicy& retry) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api(transport, connection, retry);
  if (package.v2) api.set_api_version(ApiVersion::V2beta1);
  UploadResult result;
  if (ApiStatus status = upload(api, package, {args.name, args.description, args.version}, result);
      !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  print_upload(result, connection, out);
  return kExitOk;
}

namespace {

// What run_command and schedule_create_command share: the overrides read and checked,
// the package uploaded (or the pipeline given by id found, its workflow fetched and the
// overrides checked against it), the experiment found or created. Returns false after
// printing the problem; `exit_code` is then the status to return.
struct Prepared {
  KfpApi* api = nullptr;
  std::string pipeline_name, pipeline_id, version_id, experiment_id;
  std::vector<std::pair<std::string, std::string>> values;       // canonical text
  std::vector<std::pair<std::string, std::string>> json_values;  // typed JSON (v2beta1)

  /// What a run and a recurring run are made of alike: the experiment, the pipeline and
  /// version, the parameters, and the description.
  void fill(RunRequest& request, const std::string& description) const {
    request.description = description;
    request.experiment_id = experiment_id;
    request.pipeline_id = pipeline_id;
    request.version_id = version_id;
    request.parameters = values;
    request.json_parameters = json_values;
  }
};

bool prepare(KfpApi& api, const std::optional<LocalPackage>& package, const std::string& pipeline_id,
             const RunArgs& args, const Connection& connection, std::ostream& out, std::ostream& err,
             Prepared& result) {
  std::vector<Override> overrides;
  if (!read_overrides(args, overrides, err)) return false;
  std::vector<std::pair<std::string, std::string>>& values = result.values;
  if (package && !check(package->signature, overrides, values, err)) return false;

  const bool v2 = package ? package->v2 : args.v2;
  if (v2) api.set_api_version(ApiVersion::V2beta1);
  Signature signature;  // of what runs, to type the values the v2 API takes
  if (package) signature = package->signature;
  std::string& pipeline_name = result.pipeline_name;
  std::string& run_pipeline_id = result.pipeline_id;
  std::string& version_id = result.version_id;
  if (package) {
    UploadResult uploaded;
    if (ApiStatus status = upload(api, *package, {"", "", args.version}, uploaded); !status) {
      print_error(err, status.message);
      return false;
    }
    print_upload(uploaded, connection, out);
    pipeline_name = uploaded.pipeline.name;
    run_pipeline_id = uploaded.pipeline.id;
    version_id = uploaded.version.id;
  } else {
    PipelineInfo pipeline;
    if (ApiStatus status = api.get_pipeline(pipeline_id, pipeline); !status) {
      print_error(err, status.message);
      return false;
    }
    pipeline_name = pipeline.name;
    run_pipeline_id = pipeline.id;
    version_id = pipeline.default_version_id;
    if (!args.version.empty()) {
      std::optional<VersionInfo> version;
      if (ApiStatus status = api.find_version(pipeline.id, args.version, version); !status) {
        print_error(err, status.message);
        return false;
      }
      if (!version) {
        print_error(err, fmt::format("pipeline '{}' (id {}) has no version '{}'", pipeline.name,
                                     pipeline.id, args.version));
        return false;
      }
      version_id = version->id;
    }
    std::string yaml;
    ApiStatus fetched = version_id.empty() ? api.get_pipeline_template(pipeline.id, yaml)
                                           : api.get_version_template(version_id, yaml, pipeline.id);
    if (!fetched) {
      print_error(err, fetched.message);
      return false;
    }
    std::string error;
    if (!read_signature(yaml, signature, error)) {
      print_error(err, fmt::format("pipeline '{}' (id {}): {}", pipeline.name, pipeline.id, error));
      return false;
    }
    if (!check(signature, overrides, values, err)) return false;
  }

  std::optional<ExperimentInfo> experiment;
  if (ApiStatus status = api.find_experiment(args.experiment, experiment); !status) {
    print_error(err, status.message);
    return false;
  }
  if (!experiment) {
    ExperimentInfo created;
    if (ApiStatus status = api.create_experiment(args.experiment, created); !status) {
      print_error(err, status.message);
      return false;
    }
    out << fmt::format("created experiment '{}' (id {})\n", args.experiment, created.id);
    experiment = created;
  }
  result.experiment_id = experiment->id;
  for (const auto& [name, value] : values) {
    const DeclaredParam* declared = signature.find(name);
    result.json_values.emplace_back(name,
                                    typed_json_value(declared ? declared->type : ParamType{}, value));
  }
  return true;
}

}  // namespace

int run_command(const std::optional<LocalPackage>& package, const std::string& pipeline_id,
                const RunArgs& args, const Connection& connection, HttpTransport& transport,
                std::ostream& shown_out, std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api(transport, connection, args.retry);
  Prepared prepared;
  if (!prepare(api, package, pipeline_id, args, connection, out, err, prepared)) return kExitErrors;
  const std::string& pipeline_name = prepared.pipeline_name;

  RunRequest request;
  request.name = args.run_name.empty() ? fmt::format("{} {}", pipeline_name, utc_now()) : args.run_name;
  prepared.fill(request, args.description);
  RunInfo run;
  if (ApiStatus status = api.create_run(request, run); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  out << fmt::format("started run '{}' (id {}) in experiment '{}'\n", request.name, run.id,
                     args.experiment);
  out << "  " << run_link(connection.host, run.id) << '\n' << std::flush;
  if (!args.wait) return kExitOk;

  return follow_run(api, run.id, request.name, {args.timeout, args.poll, args.progress_fd}, connection, out, err);
}

int follow_run(KfpApi& api, const std::string& run_id, const std::string& shown_name,
               const WaitOptions& options, const Connection& connection, std::ostream& out,
               std::ostream& err) {
  RunInfo last;
  RunEnd end = RunEnd::Failed;
  if (ApiStatus status = wait_for_run(api, run_id, options, out, last, end); !status) {
    // Only a run that was created or seen may still be going: not one the server does not
    // know (404), nor one no answer has shown yet.
    bool seen = !shown_name.empty() || !last.id.empty();
    if (seen && status.http_status != 404)
      status.message +=
          fmt::format("\n  the run may still be going: {}", run_link(connection.host, run_id));
    print_error(err, status.message);
    return kExitErrors;
  }
  const std::string& name = shown_name.empty() ? last.name : shown_name;
  if (!last.metrics.empty()) out << "metrics:\n" << metrics_table(last.metrics)
                                  << series_section(api, run_id, last.series_steps);
  switch (end) {
    case RunEnd::Succeeded:
      out << fmt::format("run '{}' {}\n", name, last.status);
      return kExitOk;
    case RunEnd::Failed:
      print_failed_steps(api, run_id, out);
      print_error(err, fmt::format("run '{}' {}{}", name, last.status,
                                   last.message.empty() ? "" : ": " + last.message));
      return kExitRunFailed;
    case RunEnd::TimedOut:
      print_error(err, fmt::format("run '{}' is still {} after the --timeout; it goes on: {}",
                                   name, last.status.empty() ? "starting" : last.status,
                                   run_link(connection.host, run_id)));
      return kExitRunTimedOut;
  }
  PIPEC_UNREACHABLE();
}

int schedule_create_command(const std::optional<LocalPackage>& package,
                            const std::string& pipeline_id, const ScheduleArgs& args,
                            const Connection& connection, HttpTransport& transport,
                            std::ostream& shown_out, std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api(transport, connection, args.run.retry);
  Prepared prepared;
  if (!prepare(api, package, pipeline_id, args.run, connection, out, err, prepared))
    return kExitErrors;
  ScheduleRequest request;
  request.name = args.name.empty() ? prepared.pipeline_name : args.name;
  prepared.fill(request, args.run.description);
  request.cron = args.cron;
  request.interval_seconds = args.interval_seconds;
  request.start_time = args.start_time;
  request.end_time = args.end_time;
  request.max_concurrency = args.max_concurrency;
  request.no_catchup = !args.catchup;
  request.enabled = args.enabled;
  Record created;
  if (ApiStatus status = create_schedule(api, request, created); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  out << fmt::format("created schedule '{}' (id {}) in experiment '{}': {}\n", request.name,
                     created.value("id", std::string()), args.run.experiment,
                     request.cron.empty() ? fmt::format("every {}s", request.interval_seconds)
                                          : "cron '" + request.cron + "'");
  return kExitOk;
}

bool parse_duration(std::string_view text, std::chrono::milliseconds& out) {
  // The launcher's rule (rules/durations.hpp): one syntax for every duration pipec reads.
  auto d = rules::parse_duration(text);
  if (!d) return false;
  out = *d;
  return true;
}

}  // namespace pipec::client::kfp
