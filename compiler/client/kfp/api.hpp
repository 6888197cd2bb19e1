#pragma once
// The KFP v1beta1 REST API, as far as pipec uses it (shared/kfp-api/CONTRACT.md). The
// v1beta1 runs API is used against 2.x servers too: only it applies parameter overrides
// to Argo (v1) pipelines. GETs are retried with backoff on 5xx, resets and timeouts;
// POSTs are sent once, so nothing is created twice.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/client/http.hpp"
#include "compiler/client/kfp/answer.hpp"
#include "compiler/client/kfp/config.hpp"

namespace pipec::client::kfp {

struct PipelineInfo {
  std::string id;
  std::string name;
  std::string default_version_id;
  std::string default_version_name;
};

struct VersionInfo {
  std::string id;
  std::string name;
};

struct ExperimentInfo {
  std::string id;
  std::string name;
};

struct RunMetric {
  std::string node_id;
  std::string name;
  double value = 0;
  std::string format;  // "RAW", "PERCENTAGE" or ""
};

struct StepInfo {
  std::string name;   // the step's display name
  std::string state;  // Argo node phase (v1beta1) or KFP task state (v2beta1)
  std::string reason;  // why it waits or failed, when the server says (step_reason)
};

/// A step whose outputs list its metric series artifact (series.hpp).
struct SeriesStep {
  std::string node_id;  // the Argo node id, as ReadArtifact takes it
  std::string name;     // the step's display name
};

struct RunInfo {
  std::string id;
  std::string name;
  std::string status;   // the workflow phase: Pending, Running, Succeeded, Failed, Error, ...
  std::string message;  // the workflow's status message, when the server sent the manifest
  std::vector<RunMetric> metrics;
  std::vector<StepInfo> steps;  // when the answer holds them, in start order
  /// v1beta1: the steps whose outputs list a series artifact; nullopt when the answer held
  /// no workflow status.
  std::optional<std::vector<SeriesStep>> series_steps;
};

/// A package to send as the multipart part `uploadfile`.
struct PackageUpload {
  std::string_view bytes;
  std::string filename;  // the server decides the format by its extension
  std::string name;
  std::string description;
};

struct RunRequest {
  std::string name;
  std::string description;
  std::string experiment_id;
  std::string pipeline_id;
  std::string version_id;
  std::vector<std::pair<std::string, std::string>> parameters;  // canonical text values
  /// v2beta1 only: the same values as JSON texts (typed_json_value), in the same order.
  std::vector<std::pair<std::string, std::string>> json_parameters;
};

/// The outcome of one API call. A failure's message is ready to print: what was being
/// done, the HTTP status, the server's message and details, and what to do. It never
/// holds the token.
struct [[nodiscard]] ApiStatus {
  bool ok = true;
  long http_status = 0;   // 0 when no answer came
  bool reached = false;   // a connection was made (an answer, or part of one, came)
  bool conflict = false;  // the thing exists already (409, or KFP 1.8's 500 "already exist")
  std::string message;

  explicit operator bool() const { return ok; }
  static ApiStatus success() { return {}; }
};

struct RetryPolicy {
  int get_attempts = 5;  // total tries of one GET
  std::chrono::milliseconds first_delay{500};
  std::chrono::milliseconds max_delay{8000};
};

/// One KFP API server. Not thread-safe (one transport).
class KfpApi {
 public:
  using Sleep = std::function<void(std::chrono::milliseconds)>;

  KfpApi(HttpTransport& transport, Connection connection, RetryPolicy retry = {},
         Sleep sleep = {});

  const Connection& connection() const { return connection_; }
  HttpTransport& transport() const { return transport_; }
  void set_api_version(ApiVersion version) { version_ = version; }
  ApiVersion api_version() const { return version_; }

  /// The pipeline called `name` (in --namespace, if set), or nullopt in `out`.
  ApiStatus find_pipeline(std::string_view name, std::optional<PipelineInfo>& out);
  ApiStatus get_pipeline(std::string_view id, PipelineInfo& out);
  /// The version called `name` of a pipeline, or nullopt in `out`.
  ApiStatus find_version(std::string_view pipeline_id, std::string_view name,
                         std::optional<VersionInfo>& out);
  /// v2beta1: the newest version of a pipeline (v2beta1 pipelines name no default
  /// version), or nullopt in `out`.
  ApiStatus latest_version(std::string_view pipeline_id, std::optional<VersionInfo>& out);
  /// The workflow YAML (v2beta1: the pipeline spec as JSON) of a pipeline's default
  /// version, or of one version.
  ApiStatus get_pipeline_template(std::string_view pipeline_id, std::string& yaml);
  ApiStatus get_version_template(std::string_view version_id, std::string& yaml,
                                 std::string_view pipeline_id = {});

  ApiStatus upload_pipeline(const PackageUpload& package, PipelineInfo& out);
  ApiStatus upload_version(std::string_view pipeline_id, const PackageUpload& package,
                           VersionInfo& out);

  ApiStatus find_experiment(std::string_view name, std::optional<ExperimentInfo>& out);
  ApiStatus create_experiment(std::string_view name, ExperimentInfo& out,
                              std::string_view description = {});

  ApiStatus create_run(const RunRequest& request, RunInfo& out);
  ApiStatus get_run(std::string_view run_id, RunInfo& out);

  /// One call of the operating commands (resources.hpp): `path` under the host, a GET
  /// retried as above, a POST or DELETE sent once; `json_body` "" sends no body. `what`
  /// begins the message of a failure ("cannot stop run 'r1'"). A 2xx answer that does not
  /// hold `shape` (answer.hpp) is a failure too.
  ApiStatus call(const std::string& method, const std::string& what, const std::string& path,
                 const std::string& json_body, const Shape& shape, nlohmann::json& answer);

  /// A GET of text (the KFP UI's logs, an artifact), sent once: a 2xx answer's body goes to
  /// `write` as it comes, whatever its size (`write` bounds it), unless it is an HTML page
  /// (then an error, as for JSON, saying the page is not `expected`).
  ApiStatus get_text(const std::string& what, const std::string& path,
                     const std::function<bool(std::string_view)>& write,
                     std::string_view expected = "a log");

 private:
  ApiStatus get(const std::string& what, const std::string& path, const Shape& shape,
                nlohmann::json& out);
  ApiStatus post(const std::string& what, HttpRequest request, const Shape& shape,
                 nlohmann::json& out);
  /// A 2xx answer read as `shape` says, else the failure naming what came back.
  ApiStatus accept(const std::string& what, HttpResponse& response, const Shape& shape,
                   nlohmann::json& out) const;
  /// The failure of a request that had no whole answer (`attempts` tries).
  ApiStatus no_answer(const std::string& what, const HttpResponse& response, const Status& sent,
                      int attempts, bool sent_once) const;
  /// "/apis/v2beta1/REST" or "/apis/v1beta1/REST", by the API version.
  std::string api_path(std::string_view rest) const;
  /// Sets the pipeline's default version to its newest (v2beta1 has no default version).
  ApiStatus add_newest_version(PipelineInfo& pipeline);
  /// The path of the list of `collection` (pipelines, experiments) filtered on one name
  /// (v2beta1's key `v2_key`, v1beta1's `name`), in the connection's namespace.
  std::string named_list_path(std::string_view collection, std::string_view v2_key, std::string_view name) const;
  /// GETs the list of `kind` at `path` and calls `found` with its item named `name` (by
  /// `name`, else `display_name`), if there is one.
  ApiStatus look_up(const std::string& what, const std::string& path, Kind kind,
                    std::string_view name, const std::function<void(const nlohmann::json&)>& found);
  HttpRequest make_request(std::string method, const std::string& path) const;
  /// `text` with the token and the cookie (whole, and each value of 8 or more
  /// characters, in case a server quotes just the value) replaced by "[redacted]".
  std::string redact_secrets(std::string text) const;
  ApiStatus failure(const std::string& what, const HttpRequest& request,
                    const HttpResponse& response) const;

  HttpTransport& transport_;
  Connection connection_;
  RetryPolicy retry_;
  Sleep sleep_;
  ApiVersion version_ = ApiVersion::V1beta1;
};

/// The server's message from an error body: `message`, else `error`, else
/// `error_message` (upload), and the details (`error_details`, or those inside `details`).
std::pair<std::string, std::string> server_message(std::string_view body);

/// The body of a run (and of a recurring run, which adds its trigger) in the API version's
/// spelling: v2beta1's display_name, pipeline_version_reference and runtime_config (the
/// typed parameters), v1beta1's name, pipeline_spec and resource_references (experiment
/// OWNER, version CREATOR); the experiment (v2beta1) and the description when given.
nlohmann::json run_body(const RunRequest& run, ApiVersion version);

/// The filter query value (URL-encoded JSON) matching `key` EQUALS `value`; v2beta1
/// spells the predicate's operator `operation`, v1beta1 `op`.
std::string equals_filter(std::string_view key, std::string_view value,
                          ApiVersion version = ApiVersion::V1beta1);

}  // namespace pipec::client::kfp
