#pragma once
// What `pipec upload` and `pipec run` do with the API: upload or add a version, find or
// create the experiment, create the run, follow it. The functions print nothing except
// through the `progress` stream they are given.

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "compiler/base/status.hpp"
#include "compiler/client/kfp/api.hpp"
#include "compiler/client/kfp/parameters.hpp"

namespace pipec::client::kfp {

/// A package ready to upload, with the workflow inside it and its signature.
struct LocalPackage {
  std::string bytes;
  std::string filename;  // base name sent to the server
  std::string workflow_yaml;  // the Argo Workflow, or the KFP v2 pipeline spec
  Signature signature;
  bool v2 = false;  // a KFP v2 pipeline spec: uploaded and run through the v2beta1 API
};

/// Reads a package file (.tar.gz/.tgz/.zip/.yaml/.yml/.json), finds the workflow as the
/// server would, and reads its signature. Makes no request.
Status load_package_file(const std::string& path, LocalPackage& out);

/// The same from bytes in memory (a package just built from a .pipe file).
Status load_package_bytes(std::string bytes, std::string filename, LocalPackage& out);

/// The version name derived from the workflow: "sha256-" and 12 hex digits of its hash.
std::string content_version_name(const LocalPackage& package);

struct UploadOptions {
  std::string name;         // "" = the pipeline's own name (from the workflow)
  std::string description;
  std::string version;      // "" = content_version_name() when adding a version
};

struct UploadResult {
  PipelineInfo pipeline;
  VersionInfo version;
  bool created_pipeline = false;
  bool reused_version = false;  // a version with this content's name existed already
};

/// Uploads the package as a new pipeline, or, when a pipeline of that name exists, as a
/// new version of it (named `options.version`, else after the content, in which case an
/// existing version of that name is reused). A package over 32 MiB fails before any
/// request. On a first upload with `options.version`, the named version is added too.
ApiStatus upload(KfpApi& api, const LocalPackage& package, const UploadOptions& options,
                 UploadResult& out);

enum class RunEnd { Succeeded, Failed, TimedOut };

struct WaitOptions {
  std::chrono::milliseconds timeout{0};  // 0: no limit
  std::chrono::milliseconds poll{5000};
  /// The terminal `progress` writes to, for a progress line between polls ("-- Running,
  /// 3/7 steps done, 40 s"), erased before each other line; -1: none (not a terminal, -q).
  int progress_fd = -1;
};

/// Polls the run until it ends or the timeout passes, writing each state change to
/// `progress` ("run state: Running"). GET failures are retried inside KfpApi; one that
/// persists is returned as the error.
ApiStatus wait_for_run(KfpApi& api, const std::string& run_id, const WaitOptions& options,
                       std::ostream& progress, RunInfo& last, RunEnd& end);

/// Whether a run status is final, and whether it is a success.
bool is_final_status(std::string_view status);
bool is_success_status(std::string_view status);

/// The metrics as a table: step, name, value (PERCENTAGE values as "91.2%").
std::string metrics_table(const std::vector<RunMetric>& metrics);

/// Links into the KFP UI served under `host`.
std::string pipeline_link(const std::string& host, const std::string& pipeline_id,
                          const std::string& version_id);
std::string run_link(const std::string& host, const std::string& run_id);

}  // namespace pipec::client::kfp
