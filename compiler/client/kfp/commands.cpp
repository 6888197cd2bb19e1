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

#include "rules/durations.hpp"

namespace pipec::client::kfp {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitErrors = 1;

void print_error(std::ostream& err, const std::string& message) {
  err << "pipec: error: " << message << '\n';
}

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
                   const Connection& connection, HttpTransport& transport, std::ostream& out,
                   std::ostream& err, const RetryPolicy& retry) {
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

int run_command(const std::optional<LocalPackage>& package, const std::string& pipeline_id,
                const RunArgs& args, const Connection& connection, HttpTransport& transport,
                std::ostream& out, std::ostream& err) {
  std::vector<Override> overrides;
  if (!read_overrides(args, overrides, err)) return kExitErrors;
  std::vector<std::pair<std::string, std::string>> values;
  if (package && !check(package->signature, overrides, values, err)) return kExitErrors;

  KfpApi api(transport, connection, args.retry);
  const bool v2 = package ? package->v2 : args.v2;
  if (v2) api.set_api_version(ApiVersion::V2beta1);
  Signature signature;  // of what runs, to type the values the v2 API takes
  if (package) signature = package->signature;
  std::string pipeline_name;
  std::string run_pipeline_id;
  std::string version_id;
  if (package) {
    UploadResult uploaded;
    if (ApiStatus status = upload(api, *package, {"", "", args.version}, uploaded); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    print_upload(uploaded, connection, out);
    pipeline_name = uploaded.pipeline.name;
    run_pipeline_id = uploaded.pipeline.id;
    version_id = uploaded.version.id;
  } else {
    PipelineInfo pipeline;
    if (ApiStatus status = api.get_pipeline(pipeline_id, pipeline); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    pipeline_name = pipeline.name;
    run_pipeline_id = pipeline.id;
    version_id = pipeline.default_version_id;
    if (!args.version.empty()) {
      std::optional<VersionInfo> version;
      if (ApiStatus status = api.find_version(pipeline.id, args.version, version); !status) {
        print_error(err, status.message);
        return kExitErrors;
      }
      if (!version) {
        print_error(err, fmt::format("pipeline '{}' (id {}) has no version '{}'", pipeline.name,
                                     pipeline.id, args.version));
        return kExitErrors;
      }
      version_id = version->id;
    }
    std::string yaml;
    ApiStatus fetched = version_id.empty() ? api.get_pipeline_template(pipeline.id, yaml)
                                           : api.get_version_template(version_id, yaml, pipeline.id);
    if (!fetched) {
      print_error(err, fetched.message);
      return kExitErrors;
    }
    std::string error;
    if (!read_signature(yaml, signature, error)) {
      print_error(err, fmt::format("pipeline '{}' (id {}): {}", pipeline.name, pipeline.id, error));
      return kExitErrors;
    }
    if (!check(signature, overrides, values, err)) return kExitErrors;
  }

  std::optional<ExperimentInfo> experiment;
  if (ApiStatus status = api.find_experiment(args.experiment, experiment); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  if (!experiment) {
    ExperimentInfo created;
    if (ApiStatus status = api.create_experiment(args.experiment, created); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    out << fmt::format("created experiment '{}' (id {})\n", args.experiment, created.id);
    experiment = created;
  }

  RunRequest request;
  request.name = args.run_name.empty() ? fmt::format("{} {}", pipeline_name, utc_now()) : args.run_name;
  request.description = args.description;
  request.experiment_id = experiment->id;
  request.pipeline_id = run_pipeline_id;
  request.version_id = version_id;
  request.parameters = values;
  for (const auto& [name, value] : values) {
    const DeclaredParam* declared = signature.find(name);
    request.json_parameters.emplace_back(
        name, typed_json_value(declared ? declared->type : ParamType{}, value));
  }
  RunInfo run;
  if (ApiStatus status = api.create_run(request, run); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  out << fmt::format("started run '{}' (id {}) in experiment '{}'\n", request.name, run.id,
                     args.experiment);
  out << "  " << run_link(connection.host, run.id) << '\n' << std::flush;
  if (!args.wait) return kExitOk;

  RunInfo last;
  RunEnd end = RunEnd::Failed;
  if (ApiStatus status = wait_for_run(api, run.id, {args.timeout, args.poll}, out, last, end);
      !status) {
    print_error(err, status.message + fmt::format("\n  the run may still be going: {}",
                                                  run_link(connection.host, run.id)));
    return kExitErrors;
  }
  if (!last.metrics.empty()) out << "metrics:\n" << metrics_table(last.metrics);
  switch (end) {
    case RunEnd::Succeeded:
      out << fmt::format("run '{}' {}\n", request.name, last.status);
      return kExitOk;
    case RunEnd::Failed:
      print_error(err, fmt::format("run '{}' {}{}", request.name, last.status,
                                   last.message.empty() ? "" : ": " + last.message));
      return kExitRunFailed;
    case RunEnd::TimedOut:
      print_error(err, fmt::format("run '{}' is still {} after the --timeout; it goes on: {}",
                                   request.name, last.status.empty() ? "starting" : last.status,
                                   run_link(connection.host, run.id)));
      return kExitRunTimedOut;
  }
  PIPEC_UNREACHABLE();
}

bool parse_duration(std::string_view text, std::chrono::milliseconds& out) {
  // The launcher's rule (rules/durations.hpp): one syntax for every duration pipec reads.
  auto d = rules::parse_duration(text);
  if (!d) return false;
  out = *d;
  return true;
}

}  // namespace pipec::client::kfp
