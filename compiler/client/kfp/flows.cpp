// Upload is "create, or add a version": kfp#3901 and #2841 ask for it, and kfp#5881 for
// naming the versions. Nothing here resends a POST: a conflict on upload leads to a
// lookup and then a different request (the version), never the same one again.

#include "compiler/client/kfp/flows.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "compiler/base/progress.hpp"
#include "compiler/base/text.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"

#include "compiler/client/kfp/package_reader.hpp"
#include "compiler/base/sha256.hpp"

namespace pipec::client::kfp {

namespace {

std::string base_name(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

ApiStatus local_failure(std::string message) {
  ApiStatus status;
  status.ok = false;
  status.message = std::move(message);
  return status;
}

}  // namespace

namespace {

Status load(std::string bytes, std::string filename, const std::string& shown, LocalPackage& out) {
  out = LocalPackage{};
  out.bytes = std::move(bytes);
  out.filename = std::move(filename);
  if (Status read = read_workflow_from_package(out.bytes, out.filename, out.workflow_yaml); !read)
    return Status::error(fmt::format("'{}': {}", shown, read.message()));
  std::string error;
  if (!read_signature(out.workflow_yaml, out.signature, error))
    return Status::error(fmt::format("'{}': {}", shown, error));
  out.v2 = out.signature.source == SignatureSource::KfpV2PipelineSpec;
  return Status::ok();
}

}  // namespace

Status load_package_bytes(std::string bytes, std::string filename, LocalPackage& out) {
  std::string shown = filename;
  return load(std::move(bytes), std::move(filename), shown, out);
}

Status load_package_file(const std::string& path, LocalPackage& out) {
  std::string bytes, error;
  if (!input::read_file(path, input::kMaxPackageBytes, bytes, error))
    return Status::error(fmt::format("cannot read '{}': {}", path, error));
  return load(std::move(bytes), base_name(path), path, out);
}

std::string content_version_name(const LocalPackage& package) {
  return "sha256-" + sha256_hex(package.workflow_yaml).substr(0, 12);
}

ApiStatus upload(KfpApi& api, const LocalPackage& package, const UploadOptions& options,
                 UploadResult& out) {
  out = UploadResult{};
  std::string name = options.name.empty() ? package.signature.name : options.name;
  if (name.empty()) {
    name = package.filename.substr(0, package.filename.find('.'));
  }
  if (package.bytes.size() > kMaxUploadBytes) {
    return local_failure(fmt::format(
        "cannot upload '{}': the package has {} bytes; the server takes at most {} (32 MiB)",
        package.filename, package.bytes.size(), kMaxUploadBytes));
  }
  PackageUpload upload{package.bytes, package.filename, name, options.description};

  std::optional<PipelineInfo> existing;
  if (ApiStatus status = api.find_pipeline(name, existing); !status) return status;
  if (!existing) {
    PipelineInfo created;
    ApiStatus status = api.upload_pipeline(upload, created);
    if (!status && status.conflict) {
      // Another upload won the race, or the listing did not show it: add a version.
      if (ApiStatus again = api.find_pipeline(name, existing); !again) return again;
      if (!existing) {
        status.message += fmt::format(
            "\n  hint: a pipeline named '{}' exists but is not visible here; choose another "
            "--name or check --namespace",
            name);
        return status;
      }
    } else if (!status) {
      return status;
    } else {
      out.pipeline = created;
      out.created_pipeline = true;
      out.version = VersionInfo{created.default_version_id, created.default_version_name};
      if (options.version.empty() || options.version == out.version.name) return status;
      // KFP names a pipeline's first version after the pipeline (kfp#5881); add the one asked for.
      upload.name = options.version;
      return api.upload_version(created.id, upload, out.version);
    }
  }

  out.pipeline = *existing;
  bool derived = options.version.empty();
  upload.name = derived ? content_version_name(package) : options.version;
  std::optional<VersionInfo> version;
  if (ApiStatus status = api.find_version(existing->id, upload.name, version); !status)
    return status;
  auto exists_message = [&] {
    return fmt::format(
        "cannot add version '{}' to pipeline '{}' (id {}): a version of that name exists "
        "already\n  hint: choose another --version, or leave it out to name the version "
        "after the content",
        upload.name, name, existing->id);
  };
  if (version) {
    if (!derived) return local_failure(exists_message());
    out.version = *version;
    out.reused_version = true;
    return ApiStatus::success();
  }
  ApiStatus status = api.upload_version(existing->id, upload, out.version);
  if (!status && status.conflict) status.message += "\n  hint: " + exists_message();
  return status;
}

bool is_final_status(std::string_view status) {
  std::string s = ascii_lower(status);
  return s == "succeeded" || s == "skipped" || s == "completed" || s == "failed" ||
         s == "error" || s == "terminated" || s == "canceled" || s == "cancelled";
}

bool is_success_status(std::string_view status) {
  std::string s = ascii_lower(status);
  return s == "succeeded" || s == "skipped" || s == "completed";
}

ApiStatus wait_for_run(KfpApi& api, const std::string& run_id, const WaitOptions& options,
                       std::ostream& progress, RunInfo& last, RunEnd& end) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::string shown;
  std::map<std::string, std::string> step_shown;  // step name -> state printed last
  bool line_shown = false;                        // the progress line is on the terminal
  auto erase_line = [&] {
    if (line_shown) progress << kProgressErase;
    line_shown = false;
  };
  while (true) {
    RunInfo run;
    ApiStatus status = api.get_run(run_id, run);
    if (!status) {
      erase_line();
      return status;
    }
    last = run;
    if (!run.status.empty() && run.status != shown) {
      erase_line();
      progress << "run state: " << run.status << '\n' << std::flush;
      shown = run.status;
    }
    std::size_t finished = 0;
    for (const StepInfo& step : run.steps) {
      finished += is_final_status(step.state);
      // A step's state, with why it waits or failed when the server says: again when either
      // changes ("step train: Pending: Unschedulable: 0/3 nodes are available: ...").
      std::string shown_step = step.reason.empty() ? step.state : step.state + ": " + step.reason;
      if (step.state.empty() || step_shown[step.name] == shown_step) continue;
      erase_line();
      progress << "  step " << step.name << ": " << shown_step << '\n' << std::flush;
      step_shown[step.name] = shown_step;
    }
    if (is_final_status(run.status)) {
      erase_line();
      end = is_success_status(run.status) ? RunEnd::Succeeded : RunEnd::Failed;
      return ApiStatus::success();
    }
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (options.timeout.count() > 0 && elapsed >= options.timeout) {
      erase_line();
      end = RunEnd::TimedOut;
      return ApiStatus::success();
    }
    if (options.progress_fd >= 0) {
      progress << progress_line(options.progress_fd,
                                fmt::format("-- {}, {}/{} steps done, {} s", run.status.empty() ? "starting" : run.status,
                                            finished, run.steps.size(), elapsed.count() / 1000))
               << std::flush;
      line_shown = true;
    }
    auto pause = options.poll;
    if (options.timeout.count() > 0) pause = std::min(pause, options.timeout - elapsed);
    std::this_thread::sleep_for(pause);
  }
}

std::string metrics_table(const std::vector<RunMetric>& metrics) {
  std::vector<std::array<std::string, 3>> rows;
  rows.push_back({"step", "metric", "value"});
  for (const auto& m : metrics) {
    std::string value = m.format == "PERCENTAGE" ? fmt::format("{:.6g}%", m.value * 100)
                                                 : fmt::format("{}", m.value);
    rows.push_back({m.node_id, m.name, value});
  }
  std::size_t width[2] = {0, 0};
  for (const auto& row : rows)
    for (int i = 0; i < 2; ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows)
    out += fmt::format("  {:<{}}  {:<{}}  {}\n", row[0], width[0], row[1], width[1], row[2]);
  return out;
}

std::string pipeline_link(const std::string& host, const std::string& pipeline_id,
                          const std::string& version_id) {
  std::string link = fmt::format("{}/#/pipelines/details/{}", host, pipeline_id);
  if (!version_id.empty()) link += "/version/" + version_id;
  return link;
}

std::string run_link(const std::string& host, const std::string& run_id) {
  return fmt::format("{}/#/runs/details/{}", host, run_id);
}

}  // namespace pipec::client::kfp
