// Each call builds its request, sends it (GETs with retries), and reads the answer with
// nlohmann::json, whose exceptions stay in this file (parse with exceptions off, read
// fields through typed helpers). Answers may carry members a spec adds later, or
// placeholder members (kfp-mock's `"error": "string"` in a 200 body); only the status
// code decides success.

#include "compiler/client/kfp/api.hpp"

#include <algorithm>
#include <cctype>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/client/kfp/resources.hpp"
#include "compiler/client/kfp/series.hpp"
#include "input/json.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"

namespace pipec::client::kfp {

namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxShownBody = 600;

// Safe reads of the server's answers (input/json.hpp).
using input::member;
using input::member_text;

// The item named `name` in the list `key` of a list answer, or nullptr.
const json* find_named(const json& answer, std::string_view key, std::string_view name) {
  const json& list = member(answer, key);
  if (!list.is_array()) return nullptr;
  for (const json& item : list)
    if (member_text(item, "name") == name) return &item;
  for (const json& item : list)  // v2beta1 answers may hold only display_name
    if (member_text(item, "name").empty() && member_text(item, "display_name") == name) return &item;
  return nullptr;
}

// v2beta1 objects name things `pipeline_id`, `display_name`, ...; `name` may be absent.
std::string name_of(const json& object) {
  std::string name = member_text(object, "name");
  return name.empty() ? member_text(object, "display_name") : name;
}

PipelineInfo read_pipeline_v2(const json& object) {
  PipelineInfo info;
  info.id = member_text(object, "pipeline_id");
  info.name = name_of(object);
  return info;
}

VersionInfo read_version_v2(const json& object) {
  return VersionInfo{member_text(object, "pipeline_version_id"), name_of(object)};
}

// A v2beta1Run: `state` is SUCCEEDED, FAILED, ...; `error.message` says why it failed.
// The v2 API reports no metrics in a run (they are artifacts in ML Metadata).
RunInfo read_run_v2(const json& run) {
  RunInfo info;
  info.id = member_text(run, "run_id");
  info.name = member_text(run, "display_name");
  info.status = member_text(run, "state");
  if (info.status == "RUNTIME_STATE_UNSPECIFIED") info.status.clear();
  info.message = member_text(member(run, "error"), "message");
  const json& tasks = member(member(run, "run_details"), "task_details");
  if (tasks.is_array()) {
    for (const json& task : tasks) {
      std::string state = member_text(task, "state");
      if (state == "RUNTIME_STATE_UNSPECIFIED") state.clear();
      info.steps.push_back({member_text(task, "display_name"), state,
                            step_reason(member_text(member(task, "error"), "message"))});
    }
  }
  return info;
}

std::string reason_phrase(long status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  if (text.size() > kMaxShownBody) text = text.substr(0, kMaxShownBody) + "...";
  return text;
}

bool retryable(long status) { return status >= 500 && status != 501; }

PipelineInfo read_pipeline(const json& object) {
  PipelineInfo info;
  info.id = member_text(object, "id");
  info.name = member_text(object, "name");
  const json& version = member(object, "default_version");
  info.default_version_id = member_text(version, "id");
  info.default_version_name = member_text(version, "name");
  return info;
}

RunInfo read_run_detail(const json& detail) {
  RunInfo info;
  const json& run = member(detail, "run");
  info.id = member_text(run, "id");
  info.name = member_text(run, "name");
  info.status = member_text(run, "status");
  const json& metrics = member(run, "metrics");
  if (metrics.is_array()) {
    for (const json& metric : metrics) {
      RunMetric m;
      m.node_id = member_text(metric, "node_id");
      m.name = member_text(metric, "name");
      const json& value = member(metric, "number_value");
      m.value = value.is_number() ? value.get<double>() : 0.0;
      m.format = member_text(metric, "format");
      info.metrics.push_back(std::move(m));
    }
  }
  // The workflow (a JSON string) says why a run failed.
  std::string manifest = member_text(member(detail, "pipeline_runtime"), "workflow_manifest");
  if (!manifest.empty()) {
    json workflow = input::parse_json(manifest);
    info.message = member_text(member(workflow, "status"), "message");
    for (const auto& step : workflow_steps(manifest))
      info.steps.push_back({step["name"].get<std::string>(), step["state"].get<std::string>(),
                            step["reason"].get<std::string>()});
    info.series_steps = series_steps(manifest);
  }
  return info;
}

}  // namespace

std::pair<std::string, std::string> server_message(std::string_view body) {
  json parsed = input::parse_json(body);
  if (parsed.is_discarded() || !parsed.is_object()) {
    std::string text(body);
    std::size_t begin = text.find_first_not_of(" \t\r\n");
    text = begin == std::string::npos ? std::string() : text.substr(begin);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    return {one_line(text), {}};
  }
  std::string message = member_text(parsed, "message");
  if (message.empty()) message = member_text(parsed, "error");
  if (message.empty()) message = member_text(parsed, "error_message");
  std::string details = member_text(parsed, "error_details");
  const json& list = member(parsed, "details");
  if (details.empty() && list.is_array()) {
    for (const json& item : list) {
      std::string d = member_text(item, "error_details");
      if (!d.empty() && d != message) details = d;
    }
  }
  if (!details.empty() && message.find(details) != std::string::npos) details.clear();
  return {one_line(message), one_line(details)};
}

std::string equals_filter(std::string_view key, std::string_view value, ApiVersion version) {
  const char* op = version == ApiVersion::V2beta1 ? "operation" : "op";
  json filter = {{"predicates", json::array({{{op, "EQUALS"},
                                              {"key", std::string(key)},
                                              {"string_value", std::string(value)}}})}};
  return url_encode(filter.dump(-1, ' ', false, json::error_handler_t::replace));
}

KfpApi::KfpApi(HttpTransport& transport, Connection connection, RetryPolicy retry, Sleep sleep)
    : transport_(transport),
      connection_(std::move(connection)),
      retry_(retry),
      sleep_(sleep ? std::move(sleep)
                   : Sleep([](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); })) {}

HttpRequest KfpApi::make_request(std::string method, const std::string& path) const {
  HttpRequest request;
  request.method = std::move(method);
  request.url = connection_.host + path;
  request.headers.emplace_back("Accept", "application/json");
  if (!connection_.token.empty())
    request.headers.emplace_back("Authorization", "Bearer " + connection_.token);
  if (!connection_.cookie.empty()) request.headers.emplace_back("Cookie", connection_.cookie);
  if (!connection_.user.empty()) request.headers.emplace_back("kubeflow-userid", connection_.user);
  return request;
}

std::string KfpApi::redact_secrets(std::string text) const {
  return kfp::redact_secrets(connection_, std::move(text));
}

ApiStatus KfpApi::failure(const std::string& what, const HttpRequest& request,
                          const HttpResponse& response) const {
  ApiStatus status;
  status.ok = false;
  status.reached = true;
  status.http_status = response.status;
  auto [message, details] = server_message(response.body);
  std::string reason = reason_phrase(response.status);
  std::string text = fmt::format("{}: HTTP {}{}", what, response.status,
                                 reason.empty() ? "" : " " + reason);
  if (!message.empty()) text += ": " + message;
  if (!details.empty()) text += fmt::format(" ({})", details);

  std::string lower = message + " " + details;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  status.conflict = response.status == 409 ||
                    (response.status == 500 && lower.find("already exist") != std::string::npos);

  std::string hint;
  if (response.status >= 300 && response.status < 400) {
    hint = fmt::format("the server redirects to '{}' (a login page?); behind an auth proxy give "
                       "--cookie with the session cookie set after login (or KF_PIPELINES_COOKIE), "
                       "--token, or --user from inside the mesh",
                       response.location);
  } else if (response.status == 401) {
    hint = !connection_.token.empty()
               ? fmt::format("the server refused the token from {}", connection_.token_source)
           : !connection_.cookie.empty()
               ? "the server refused the cookie (a session expires: log in again and copy it anew)"
               : "the server wants credentials: give --token, set KF_PIPELINES_TOKEN or "
                 "KF_PIPELINES_SA_TOKEN_PATH, or --user behind the auth proxy";
  } else if (response.status == 403) {
    hint = connection_.namespace_name.empty()
               ? "the identity may not do this; in a multi-user install give --namespace"
               : fmt::format("the identity may not do this in namespace '{}'",
                             connection_.namespace_name);
  } else if (version_ == ApiVersion::V2beta1 &&
             (response.status == 501 ||
              (response.status == 404 &&
               (message.empty() || message == "Not Found" || message == "404 page not found") &&
               request.url.find("/apis/v2beta1/") != std::string::npos))) {
    // KFP 1.x has no v2beta1 routes: say that, not the HTTP details.
    status.message = redact_secrets(fmt::format(
        "{}: the server at '{}' has no KFP v2 API (/apis/v2beta1 answered HTTP {})\n  hint: a "
        "KFP v2 pipeline spec needs a KFP 2.x server; for a KFP 1.x server build the Argo "
        "package (--target kfp-v1, the default)",
        what, connection_.host, response.status));
    return status;
  } else if (response.status == 404 && message.empty()) {
    hint = fmt::format("nothing answers at '{}'; check --host (a path prefix such as /pipeline?)",
                       connection_.host);
  } else if (response.status == 413) {
    hint = "the package is too large for the server or a proxy in front of it";
  }
  if (!hint.empty()) text += "\n  hint: " + hint;
  status.message = redact_secrets(std::move(text));
  return status;
}

ApiStatus KfpApi::accept(const std::string& what, HttpResponse& response, const Shape& shape,
                         json& out) const {
  std::string problem = read_answer(response.body, shape, out);
  if (problem.empty()) return ApiStatus::success();
  if (is_html(response)) problem = "an HTML page, not JSON";
  ApiStatus status;
  status.ok = false;
  status.reached = true;
  status.http_status = response.status;
  status.message = redact_secrets(not_kfp_message(what, connection_.host, response, problem));
  return status;
}

ApiStatus KfpApi::no_answer(const std::string& what, const HttpResponse& response,
                            const Status& sent, int attempts, bool sent_once) const {
  ApiStatus status;
  status.ok = false;
  status.reached = response.connected;
  std::string text =
      fmt::format("{}: no answer from {}: {}", what, connection_.host, sent.message());
  if (attempts > 1) text += fmt::format(" (after {} attempts)", attempts);
  const auto& transport = connection_.transport;
  if (response.failure == SendFailure::TooLarge) {
    text = fmt::format(
        "{}: the answer from {} is larger than {}, more than pipec reads (not asked again)", what,
        connection_.host, input::size_text(input::kMaxAnswerBytes));
  } else if (response.failure == SendFailure::TimedOut && response.connected) {
    text += fmt::format(
        "\n  hint: the server accepted the connection but did not answer in time (less than {} "
        "bytes a second for {} s): a slow server or proxy may need a longer --request-timeout",
        kLowSpeedBytes, transport.stall_timeout.count());
  } else if (response.failure == SendFailure::TimedOut) {
    text += fmt::format(
        "\n  hint: nothing accepted the connection within {} ms: check --host (and a proxy "
        "or firewall between), or give a longer --request-timeout",
        transport.connect_timeout.count());
  }
  if (sent_once)
    text +=
        "\n  hint: the request may have reached the server; check before repeating it (pipec "
        "does not resend it)";
  status.message = redact_secrets(std::move(text));
  return status;
}

// A size refusal or a timeout is not retried: the same answer would come again, and a
// stalled server would hold the command for each try (docs/client.md "Timeouts").
ApiStatus KfpApi::get(const std::string& what, const std::string& path, const Shape& shape,
                      json& out) {
  HttpRequest request = make_request("GET", path);
  std::chrono::milliseconds delay = retry_.first_delay;
  int attempts = std::max(1, retry_.get_attempts);
  for (int attempt = 1;; ++attempt) {
    HttpResponse response;
    Status sent = transport_.send(request, response);
    bool last = attempt >= attempts;
    if (sent && response.status >= 200 && response.status < 300)
      return accept(what, response, shape, out);
    if (sent && (!retryable(response.status) || last)) {
      ApiStatus status = failure(what, request, response);
      if (retryable(response.status) && attempt > 1)
        status.message += fmt::format("\n  (after {} attempts)", attempt);
      return status;
    }
    if (!sent && (last || response.failure == SendFailure::TooLarge ||
                  response.failure == SendFailure::TimedOut))
      return no_answer(what, response, sent, attempt, false);
    sleep_(delay);
    delay = std::min(delay * 2, retry_.max_delay);
  }
}

ApiStatus KfpApi::post(const std::string& what, HttpRequest request, const Shape& shape,
                       json& out) {
  HttpResponse response;
  Status sent = transport_.send(request, response);
  if (!sent) return no_answer(what, response, sent, 1, true);
  if (response.status < 200 || response.status >= 300) return failure(what, request, response);
  return accept(what, response, shape, out);
}

ApiStatus KfpApi::get_text(const std::string& what, const std::string& path,
                           const std::function<bool(std::string_view)>& write, std::string_view expected) {
  HttpRequest request = make_request("GET", path);
  BodyStream stream;
  stream.accept = [](long status, std::string_view content_type) {
    HttpResponse head;
    head.content_type = std::string(content_type);
    return status >= 200 && status < 300 && !is_html(head);
  };
  stream.write = write;
  request.stream = &stream;
  HttpResponse response;
  Status sent = transport_.send(request, response);
  if (!sent) return no_answer(what, response, sent, 1, false);
  if (response.status < 200 || response.status >= 300) return failure(what, request, response);
  if (response.streamed) return ApiStatus::success();
  if (is_html(response)) {
    ApiStatus status;
    status.ok = false;
    status.reached = true;
    status.http_status = response.status;
    status.message = redact_secrets(
        not_kfp_message(what, connection_.host, response, fmt::format("an HTML page, not {}", expected)));
    return status;
  }
  if (!response.body.empty() && !write(response.body)) {
    ApiStatus status;
    status.ok = false;
    status.reached = true;
    status.message = what + ": the receiver of the answer stopped it";
    return status;
  }
  return ApiStatus::success();
}

std::string KfpApi::api_path(std::string_view rest) const {
  return (version_ == ApiVersion::V2beta1 ? "/apis/v2beta1/" : "/apis/v1beta1/") + std::string(rest);
}

std::string KfpApi::named_list_path(std::string_view collection, std::string_view v2_key,
                                    std::string_view name) const {
  bool v2 = version_ == ApiVersion::V2beta1;
  std::string path = fmt::format("/apis/{}/{}?page_size=100&filter=", v2 ? "v2beta1" : "v1beta1", collection) +
                     (v2 ? equals_filter(v2_key, name, version_) : equals_filter("name", name));
  if (!connection_.namespace_name.empty())
    path += (v2 ? "&namespace=" : "&resource_reference_key.type=NAMESPACE&resource_reference_key.id=") +
            url_encode(connection_.namespace_name);
  return path;
}

ApiStatus KfpApi::look_up(const std::string& what, const std::string& path, Kind kind,
                          std::string_view name, const std::function<void(const json&)>& found) {
  json answer;
  Shape shape = list_shape(kind, version_);
  if (ApiStatus status = get(what, path, shape, answer); !status) return status;
  if (const json* item = find_named(answer, shape.list, name)) found(*item);
  return ApiStatus::success();
}

ApiStatus KfpApi::find_pipeline(std::string_view name, std::optional<PipelineInfo>& out) {
  out.reset();
  bool v2 = version_ == ApiVersion::V2beta1;
  if (ApiStatus status = look_up(
          fmt::format("cannot look up pipeline '{}'", name),
          named_list_path("pipelines", "name", name), Kind::Pipeline, name,
          [&](const json& item) { out = v2 ? read_pipeline_v2(item) : read_pipeline(item); });
      !status || !out || !v2)
    return status;
  if (ApiStatus status = add_newest_version(*out); !status) {
    out.reset();
    return status;
  }
  return ApiStatus::success();
}

ApiStatus KfpApi::get_pipeline(std::string_view id, PipelineInfo& out) {
  bool v2 = version_ == ApiVersion::V2beta1;
  json answer;
  if (ApiStatus status =
          get(fmt::format("cannot get pipeline '{}'", id), api_path("pipelines/" + url_encode(id)),
              item_shape(Kind::Pipeline, version_), answer);
      !status)
    return status;
  out = v2 ? read_pipeline_v2(answer) : read_pipeline(answer);
  return v2 ? add_newest_version(out) : ApiStatus::success();
}

ApiStatus KfpApi::add_newest_version(PipelineInfo& pipeline) {
  std::optional<VersionInfo> newest;
  if (ApiStatus status = latest_version(pipeline.id, newest); !status) return status;
  if (newest) {
    pipeline.default_version_id = newest->id;
    pipeline.default_version_name = newest->name;
  }
  return ApiStatus::success();
}

ApiStatus KfpApi::latest_version(std::string_view pipeline_id, std::optional<VersionInfo>& out) {
  out.reset();
  json answer;
  if (ApiStatus status = get(fmt::format("cannot list the versions of pipeline '{}'", pipeline_id),
                             "/apis/v2beta1/pipelines/" + url_encode(pipeline_id) +
                                 "/versions?page_size=1&sort_by=" + url_encode("created_at desc"),
                             list_shape(Kind::Version, ApiVersion::V2beta1), answer);
      !status)
    return status;
  const json& list = member(answer, "pipeline_versions");
  if (list.is_array() && !list.empty()) out = read_version_v2(list.front());
  return ApiStatus::success();
}

ApiStatus KfpApi::find_version(std::string_view pipeline_id, std::string_view name,
                               std::optional<VersionInfo>& out) {
  out.reset();
  bool v2 = version_ == ApiVersion::V2beta1;
  std::string path = v2 ? "/apis/v2beta1/pipelines/" + url_encode(pipeline_id) + "/versions?page_size=100&filter=" +
                              equals_filter("name", name, version_)
                        : "/apis/v1beta1/pipeline_versions?resource_key.type=PIPELINE&resource_key.id=" +
                              url_encode(pipeline_id) + "&page_size=100&filter=" + equals_filter("name", name);
  return look_up(fmt::format("cannot look up version '{}' of pipeline '{}'", name, pipeline_id),
                 path, Kind::Version, name, [&](const json& item) {
                   out = v2 ? read_version_v2(item) : VersionInfo{member_text(item, "id"), member_text(item, "name")};
                 });
}

ApiStatus KfpApi::get_pipeline_template(std::string_view pipeline_id, std::string& yaml) {
  json answer;
  if (version_ == ApiVersion::V2beta1) {
    std::optional<VersionInfo> newest;
    if (ApiStatus status = latest_version(pipeline_id, newest); !status) return status;
    if (!newest) {
      yaml.clear();
      return ApiStatus::success();
    }
    return get_version_template(newest->id, yaml, pipeline_id);
  }
  if (ApiStatus status = get(fmt::format("cannot get the workflow of pipeline '{}'", pipeline_id),
                             "/apis/v1beta1/pipelines/" + url_encode(pipeline_id) + "/templates",
                             text_shape("pipeline's workflow", "template"), answer);
      !status)
    return status;
  yaml = member_text(answer, "template");
  return ApiStatus::success();
}

ApiStatus KfpApi::get_version_template(std::string_view version_id, std::string& yaml,
                                       std::string_view pipeline_id) {
  json answer;
  if (version_ == ApiVersion::V2beta1) {
    if (ApiStatus status =
            get(fmt::format("cannot get the spec of pipeline version '{}'", version_id),
                "/apis/v2beta1/pipelines/" + url_encode(pipeline_id) + "/versions/" +
                    url_encode(version_id),
                item_shape(Kind::Version, version_), answer);
        !status)
      return status;
    const json& spec = member(answer, "pipeline_spec");
    yaml = spec.is_object() ? spec.dump(-1, ' ', false, json::error_handler_t::replace) : std::string();
    return ApiStatus::success();
  }
  if (ApiStatus status =
          get(fmt::format("cannot get the workflow of pipeline version '{}'", version_id),
              "/apis/v1beta1/pipeline_versions/" + url_encode(version_id) + "/templates",
              text_shape("version's workflow", "template"), answer);
      !status)
    return status;
  yaml = member_text(answer, "template");
  return ApiStatus::success();
}

ApiStatus KfpApi::upload_pipeline(const PackageUpload& package, PipelineInfo& out) {
  bool v2 = version_ == ApiVersion::V2beta1;
  std::string path = fmt::format("/apis/{}/pipelines/upload?name=", v2 ? "v2beta1" : "v1beta1") +
                     url_encode(package.name);
  if (v2) path += "&display_name=" + url_encode(package.name);
  if (!package.description.empty()) path += "&description=" + url_encode(package.description);
  if (!connection_.namespace_name.empty())
    path += "&namespace=" + url_encode(connection_.namespace_name);
  HttpRequest request = make_request("POST", path);
  request.file = FilePart{"uploadfile", package.filename, std::string(package.bytes)};
  json answer;
  if (ApiStatus status = post(fmt::format("cannot upload pipeline '{}'", package.name),
                              std::move(request), item_shape(Kind::Pipeline, version_), answer);
      !status)
    return status;
  if (!v2) {
    out = read_pipeline(answer);
    return ApiStatus::success();
  }
  // A v2beta1Pipeline names no version: the upload made one, which a listing finds.
  out = read_pipeline_v2(answer);
  std::optional<VersionInfo> first;
  if (ApiStatus status = latest_version(out.id, first); !status) {
    status.message += fmt::format("\n  (pipeline '{}' was created, id {})", package.name, out.id);
    return status;
  }
  if (first) {
    out.default_version_id = first->id;
    out.default_version_name = first->name;
  }
  return ApiStatus::success();
}

ApiStatus KfpApi::upload_version(std::string_view pipeline_id, const PackageUpload& package,
                                 VersionInfo& out) {
  bool v2 = version_ == ApiVersion::V2beta1;
  std::string path = fmt::format("/apis/{}/pipelines/upload_version?name=",
                                 v2 ? "v2beta1" : "v1beta1") +
                     url_encode(package.name) + "&pipelineid=" + url_encode(pipeline_id);
  if (v2) path += "&display_name=" + url_encode(package.name);
  if (!package.description.empty()) path += "&description=" + url_encode(package.description);
  HttpRequest request = make_request("POST", path);
  request.file = FilePart{"uploadfile", package.filename, std::string(package.bytes)};
  json version;
  if (ApiStatus status = post(
          fmt::format("cannot upload version '{}' of pipeline '{}'", package.name, pipeline_id),
          std::move(request), item_shape(Kind::Version, version_), version);
      !status)
    return status;
  out = v2 ? read_version_v2(version) : VersionInfo{member_text(version, "id"), member_text(version, "name")};
  return ApiStatus::success();
}

ApiStatus KfpApi::find_experiment(std::string_view name, std::optional<ExperimentInfo>& out) {
  out.reset();
  bool v2 = version_ == ApiVersion::V2beta1;
  return look_up(fmt::format("cannot look up experiment '{}'", name),
                 named_list_path("experiments", "display_name", name), Kind::Experiment, name,
                 [&](const json& item) {
                   out = v2 ? ExperimentInfo{member_text(item, "experiment_id"), name_of(item)}
                            : ExperimentInfo{member_text(item, "id"), member_text(item, "name")};
                 });
}

ApiStatus KfpApi::create_experiment(std::string_view name, ExperimentInfo& out,
                                     std::string_view description) {
  bool v2 = version_ == ApiVersion::V2beta1;
  json experiment = {{v2 ? "display_name" : "name", std::string(name)}};
  if (!description.empty()) experiment["description"] = std::string(description);
  if (v2 && !connection_.namespace_name.empty()) {
    experiment["namespace"] = connection_.namespace_name;
  } else if (!connection_.namespace_name.empty()) {
    experiment["resource_references"] = json::array(
        {{{"key", {{"type", "NAMESPACE"}, {"id", connection_.namespace_name}}},
          {"relationship", "OWNER"}}});
  }
  HttpRequest request = make_request("POST", v2 ? "/apis/v2beta1/experiments" : "/apis/v1beta1/experiments");
  request.content_type = "application/json";
  request.body = experiment.dump(-1, ' ', false, json::error_handler_t::replace);
  json created;
  if (ApiStatus status = post(fmt::format("cannot create experiment '{}'", name),
                              std::move(request), item_shape(Kind::Experiment, version_), created);
      !status)
    return status;
  out = v2 ? ExperimentInfo{member_text(created, "experiment_id"), name_of(created)}
           : ExperimentInfo{member_text(created, "id"), member_text(created, "name")};
  return ApiStatus::success();
}

json run_body(const RunRequest& run, ApiVersion version) {
  json body;
  if (version == ApiVersion::V2beta1) {
    json parameters = json::object();
    for (const auto& [name, value] : run.json_parameters) {
      json parsed = input::parse_json(value);
      parameters[name] = parsed.is_discarded() ? json(value) : parsed;
    }
    json reference = {{"pipeline_id", run.pipeline_id}};
    if (!run.version_id.empty()) reference["pipeline_version_id"] = run.version_id;
    body = {{"display_name", run.name},
            {"pipeline_version_reference", reference},
            {"runtime_config", {{"parameters", parameters}}}};
    if (!run.experiment_id.empty()) body["experiment_id"] = run.experiment_id;
  } else {
    json parameters = json::array();
    for (const auto& [name, value] : run.parameters) parameters.push_back({{"name", name}, {"value", value}});
    json spec = {{"parameters", parameters}};
    if (!run.pipeline_id.empty()) spec["pipeline_id"] = run.pipeline_id;
    json references = json::array();
    if (!run.experiment_id.empty())
      references.push_back({{"key", {{"type", "EXPERIMENT"}, {"id", run.experiment_id}}}, {"relationship", "OWNER"}});
    if (!run.version_id.empty())
      references.push_back(
          {{"key", {{"type", "PIPELINE_VERSION"}, {"id", run.version_id}}}, {"relationship", "CREATOR"}});
    body = {{"name", run.name}, {"pipeline_spec", spec}, {"resource_references", references}};
  }
  if (!run.description.empty()) body["description"] = run.description;
  return body;
}

ApiStatus KfpApi::create_run(const RunRequest& run, RunInfo& out) {
  HttpRequest request = make_request("POST", api_path("runs"));
  request.content_type = "application/json";
  request.body = run_body(run, version_).dump(-1, ' ', false, json::error_handler_t::replace);
  json answer;
  if (ApiStatus status = post(fmt::format("cannot create run '{}'", run.name), std::move(request),
                              item_shape(Kind::Run, version_, true), answer);
      !status)
    return status;
  out = version_ == ApiVersion::V2beta1 ? read_run_v2(answer) : read_run_detail(answer);
  return ApiStatus::success();
}

ApiStatus KfpApi::get_run(std::string_view run_id, RunInfo& out) {
  json answer;
  if (ApiStatus status =
          get(fmt::format("cannot get run '{}'", run_id), api_path("runs/" + url_encode(run_id)),
              item_shape(Kind::Run, version_, true), answer);
      !status)
    return status;
  out = version_ == ApiVersion::V2beta1 ? read_run_v2(answer) : read_run_detail(answer);
  return ApiStatus::success();
}

ApiStatus KfpApi::call(const std::string& method, const std::string& what, const std::string& path,
                       const std::string& json_body, const Shape& shape, json& answer) {
  if (method == "GET") return get(what, path, shape, answer);
  HttpRequest request = make_request(method, path);
  if (!json_body.empty()) {
    request.content_type = "application/json";
    request.body = json_body;
  }
  return post(what, std::move(request), shape, answer);
}

}  // namespace pipec::client::kfp
