#include "tests/client/fake_kfp.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <stdexcept>

#include <fmt/format.h>
#include <httplib.h>
#include <yaml-cpp/yaml.h>

namespace pipec::client::testing {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxFileLength = std::size_t{32} << 20;

struct HttpError {
  int status;
  json body;
};

// grpc-gateway error bodies: HEAD (v2) or 1.8 (v1.16, with `error` and api.Error details).
json grpc_error(bool legacy, int code, const std::string& message) {
  if (!legacy) return {{"code", code}, {"message", message}, {"details", json::array()}};
  return {{"error", message},
          {"code", code},
          {"message", message},
          {"details", json::array({{{"@type", "type.googleapis.com/api.Error"},
                                    {"error_message", message},
                                    {"error_details", message}}})}};
}

json upload_error(const std::string& message, const std::string& details) {
  return {{"error_message", message}, {"error_details", details}};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The server's ReadPipelineFile: extension, then magic; pipeline.yaml else first entry.
bool read_pipeline_file(const std::string& filename, const std::string& bytes, std::string& yaml,
                        std::string& error) {
  if (ends_with(filename, ".yaml") || ends_with(filename, ".yml") || ends_with(filename, ".json")) {
    yaml = bytes;
    return true;
  }
  bool zip = bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K';
  bool tgz = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
             static_cast<unsigned char>(bytes[1]) == 0x8b;
  if (!zip && !tgz) {
    error = "Unexpected pipeline file format. Support .zip, .tar.gz, .json or YAML.";
    return false;
  }
  archive* a = archive_read_new();
  if (zip) {
    archive_read_support_format_zip(a);
  } else {
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
  }
  bool found = false;
  std::string first_name, first;
  if (archive_read_open_memory(a, bytes.data(), bytes.size()) == ARCHIVE_OK) {
    archive_entry* entry;
    bool have_first = false;
    while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
      std::string name = archive_entry_pathname(entry);
      std::string content(static_cast<std::size_t>(archive_entry_size(entry)), '\0');
      if (!content.empty()) archive_read_data(a, content.data(), content.size());
      if (name == "pipeline.yaml") {
        yaml = content;
        found = true;
        break;
      }
      if (!have_first) {
        have_first = true;
        first_name = name;
        first = content;
      }
    }
  }
  archive_read_free(a);
  if (found) return true;
  if (!ends_with(first_name, ".yaml") && !ends_with(first_name, ".yml")) {
    error = "Error decompress the pipeline file: Expecting a pipeline.yaml file inside the "
            "tarball. Got: " + first_name;
    return false;
  }
  yaml = first;
  return true;
}

bool is_argo_workflow(const std::string& yaml, std::vector<std::string>& parameter_names) {
  try {
    YAML::Node root = YAML::Load(yaml);
    if (!root.IsMap() || !root["kind"] || root["kind"].as<std::string>() != "Workflow") return false;
    if (root["apiVersion"].as<std::string>().rfind("argoproj.io/", 0) != 0) return false;
    if (root["spec"] && root["spec"]["arguments"] && root["spec"]["arguments"]["parameters"])
      for (const auto& p : root["spec"]["arguments"]["parameters"])
        parameter_names.push_back(p["name"].as<std::string>());
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::string filter_name(const std::string& filter) {
  json f = json::parse(filter, nullptr, false);
  if (f.is_discarded() || !f.contains("predicates")) return {};
  for (const auto& p : f["predicates"])
    if (p.value("key", "") == "name" && p.value("op", "") == "EQUALS")
      return p.value("string_value", "");
  return {};
}

// v2beta1 filters spell the operator `operation` (a v1 `op` is an unknown field there).
// Sets `bad` (HEAD answers 400: unknown fields are refused) for a v1 `op`.
bool filter_v2(const std::string& filter, const std::string& key, std::string& value, bool& bad) {
  json f = json::parse(filter, nullptr, false);
  if (f.is_discarded() || !f.contains("predicates")) return false;
  for (const auto& p : f["predicates"]) {
    if (p.contains("op")) bad = true;
    if (p.value("key", "") == key && p.value("operation", "") == "EQUALS") {
      value = p.value("string_value", "");
      return true;
    }
  }
  return false;
}

json yaml_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(yaml_json(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& item : node) out[item.first.Scalar()] = yaml_json(item.second);
      return out;
    }
    case YAML::NodeType::Scalar: {
      if (node.Tag() == "!") return node.Scalar();
      json parsed = json::parse(node.Scalar(), nullptr, false);
      return parsed.is_discarded() || parsed.is_object() || parsed.is_array() ? json(node.Scalar()) : parsed;
    }
    default:
      return nullptr;
  }
}

// The first document of a KFP v2 pipeline spec as JSON, or null if it is not one.
json v2_spec(const std::string& yaml) {
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(yaml);
    if (docs.empty() || !docs[0].IsMap() || !docs[0]["pipelineInfo"] || !docs[0]["root"]) return nullptr;
    return yaml_json(docs[0]);
  } catch (const YAML::Exception&) {
    return nullptr;
  }
}

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

}  // namespace

FakeKfp::FakeKfp() : server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(8); };
  routes();
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("FakeKfp: cannot bind a port on 127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeKfp::~FakeKfp() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  server_->stop();
  thread_.join();
}

void FakeKfp::require_token(std::string token) {
  std::lock_guard lock(mutex_);
  token_ = std::move(token);
}

void FakeKfp::forbid_namespace(std::string name) {
  std::lock_guard lock(mutex_);
  forbidden_namespace_ = std::move(name);
}

void FakeKfp::script_runs(std::vector<std::string> states, json metrics, std::string message) {
  std::lock_guard lock(mutex_);
  states_ = std::move(states);
  metrics_ = std::move(metrics);
  failure_message_ = std::move(message);
}

void FakeKfp::fail(const std::string& prefix, int status, int times, std::string body) {
  std::lock_guard lock(mutex_);
  faults_.push_back({prefix, Fault::Status, status, std::move(body), {}, times});
}

void FakeKfp::drop(const std::string& prefix, int times) {
  std::lock_guard lock(mutex_);
  faults_.push_back({prefix, Fault::Drop, 0, {}, {}, times});
}

void FakeKfp::delay(const std::string& prefix, std::chrono::milliseconds how_long, int times) {
  std::lock_guard lock(mutex_);
  faults_.push_back({prefix, Fault::Delay, 0, {}, how_long, times});
}

std::string FakeKfp::next_id(const std::string& kind) {
  return fmt::format("{}-{:04}", kind, ++ids_);
}

std::string FakeKfp::add_pipeline(const std::string& name, const std::string& workflow_yaml,
                                  const std::string& namespace_name) {
  std::lock_guard lock(mutex_);
  Pipeline p{next_id("pipeline"), name, namespace_name, ""};
  Version v{next_id("version"), name, p.id, "pipeline.yaml", workflow_yaml};
  p.default_version = v.id;
  pipelines_[p.id] = p;
  versions_[v.id] = v;
  version_order_.push_back(v.id);
  return p.id;
}

std::vector<FakeKfp::Version> FakeKfp::versions(const std::string& pipeline_id) {
  std::lock_guard lock(mutex_);
  std::vector<Version> out;
  for (const auto& id : version_order_)
    if (versions_[id].pipeline_id == pipeline_id) out.push_back(versions_[id]);
  return out;
}

int FakeKfp::pipeline_count() {
  std::lock_guard lock(mutex_);
  return static_cast<int>(pipelines_.size());
}

json FakeKfp::last_schedule_request() {
  std::lock_guard lock(mutex_);
  return last_schedule_;
}

json FakeKfp::last_run_request() {
  std::lock_guard lock(mutex_);
  return last_run_;
}

std::vector<json> FakeKfp::experiments() {
  std::lock_guard lock(mutex_);
  std::vector<json> out;
  for (const auto& id : experiment_order_) out.push_back(experiments_[id]);
  return out;
}

std::vector<std::string> FakeKfp::requests() {
  std::lock_guard lock(mutex_);
  return requests_;
}

int FakeKfp::count(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& r : requests_) n += r.rfind(prefix, 0) == 0;
  return n;
}

std::vector<std::string> FakeKfp::header_values(const std::string& header) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& h : headers_) {
    auto it = h.find(header);
    out.push_back(it == h.end() ? "" : it->second);
  }
  return out;
}

// Called with mutex_ held. The namespace may be in the query (before the body is read) or
// in a JSON body (in the handlers).
bool FakeKfp::forbidden(const httplib::Request& req, httplib::Response& res) {
  if (forbidden_namespace_.empty()) return false;
  if (req.target.find(forbidden_namespace_) == std::string::npos &&
      req.body.find("\"" + forbidden_namespace_ + "\"") == std::string::npos)
    return false;
  std::string message = fmt::format(
      "PermissionDenied: User 'someone@example.com' is not authorized with reason:  "
      "(request: &ResourceAttributes{{Namespace:{},Verb:create}})",
      forbidden_namespace_);
  send_json(res, 403, grpc_error(legacy, 7, message));
  return true;
}

void FakeKfp::routes() {
  auto& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    std::string line = req.method + " " + req.target;
    std::unique_lock lock(mutex_);
    requests_.push_back(line);
    headers_.push_back({{"Authorization", req.get_header_value("Authorization")},
                        {"kubeflow-userid", req.get_header_value("kubeflow-userid")},
                        {"Cookie", req.get_header_value("Cookie")}});
    for (auto& f : faults_) {
      if (f.times == 0 || line.rfind(f.prefix, 0) != 0) continue;
      --f.times;
      if (f.kind == Fault::Delay) {
        stop_cv_.wait_for(lock, f.delay, [this] { return stopping_; });
        break;
      }
      if (f.kind == Fault::Status) {
        res.status = f.status;
        res.set_header("Connection", "close");
        res.set_content(f.body.empty() ? grpc_error(legacy, 13, "injected failure").dump() : f.body,
                        "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }
      // Drop: promise a body, then fail to provide it; httplib closes the connection.
      res.status = 200;
      res.set_content_provider(
          1000, "application/json",
          [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
      return httplib::Server::HandlerResponse::Handled;
    }
    bool upload = req.path.rfind("/apis/v1beta1/pipelines/upload", 0) == 0 ||
                  req.path.rfind("/apis/v2beta1/pipelines/upload", 0) == 0;
    std::string auth = req.get_header_value("Authorization");
    if (!token_.empty() && auth != "Bearer " + token_) {
      std::string message = "Unauthenticated: Request header error: there is no user identity "
                            "header.: Failed to authenticate";
      if (echo_auth)
        message += " (got Authorization: " + auth + ", Cookie: " + req.get_header_value("Cookie") + ")";
      res.set_header("Connection", "close");  // the request body was not read
      if (upload) {
        send_json(res, 400, upload_error("Failed to create a pipeline", message));
      } else {
        send_json(res, 401, grpc_error(legacy, 16, message));
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    if (forbidden(req, res)) {
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  auto handle_upload = [this](const httplib::Request& req, httplib::Response& res, bool version) {
    if (!req.is_multipart_form_data() || !req.has_file("uploadfile")) {
      send_json(res, 400, upload_error("Failed to read pipeline from file",
                                       "http: no such file"));
      return;
    }
    auto file = req.get_file_value("uploadfile");
    std::lock_guard lock(mutex_);
    if (file.content.size() > kMaxFileLength) {
      send_json(res, 400,
                legacy ? upload_error("Error read pipeline file.: File size too large. Maximum "
                                      "supported size: 32MB",
                                      "")
                       : upload_error("Failed to read a pipeline spec file", ""));
      return;
    }
    std::string yaml, error;
    if (!read_pipeline_file(file.filename, file.content, yaml, error)) {
      send_json(res, 400, upload_error(legacy ? "Error read pipeline file.: " + error
                                              : "Failed to read a pipeline spec file",
                                       error));
      return;
    }
    std::vector<std::string> params;
    if (!is_argo_workflow(yaml, params)) {
      send_json(res, legacy ? 500 : 400,
                upload_error("Failed to create a pipeline: invalid workflow", "not an Argo Workflow"));
      return;
    }
    std::string name = req.has_param("name") ? req.get_param_value("name") : file.filename;
    if (name.size() > (version ? 127u : 128u)) {
      send_json(res, 400, upload_error("Failed to create a pipeline: name too long", ""));
      return;
    }
    json parameters = json::array();
    for (const auto& p : params) parameters.push_back({{"name", p}});
    if (!version) {
      std::string ns = req.get_param_value("namespace");
      for (const auto& [id, p] : pipelines_) {
        if (p.name == name && p.namespace_name == ns) {
          std::string message = fmt::format(
              "Already exist error: Failed to create a new pipeline. The name {} already exist. "
              "Please specify a new name",
              name);
          send_json(res, legacy ? 500 : 409,
                    upload_error(legacy ? "Error creating pipeline: Create pipeline failed: " + message
                                        : "Failed to create a pipeline and a pipeline version",
                                 message));
          return;
        }
      }
      Pipeline p{next_id("pipeline"), name, ns, ""};
      Version v{next_id("version"), name, p.id, file.filename, yaml};
      p.default_version = v.id;
      pipelines_[p.id] = p;
      versions_[v.id] = v;
      version_order_.push_back(v.id);
      send_json(res, 200,
                {{"id", p.id},
                 {"name", name},
                 {"created_at", "2026-01-01T00:00:00Z"},
                 {"parameters", parameters},
                 {"default_version", {{"id", v.id}, {"name", name}, {"parameters", parameters}}}});
      return;
    }
    std::string pipeline_id = req.get_param_value("pipelineid");
    if (pipeline_id.empty()) {
      send_json(res, 400, upload_error(legacy ? "Please specify a pipeline id when creating versions."
                                              : "Failed to create a pipeline version",
                                       ""));
      return;
    }
    auto it = pipelines_.find(pipeline_id);
    if (it == pipelines_.end()) {
      send_json(res, 404, upload_error("Failed to create a pipeline version",
                                       "Pipeline " + pipeline_id + " not found"));
      return;
    }
    for (const auto& [id, v] : versions_) {
      if (v.pipeline_id == pipeline_id && v.name == name) {
        std::string message = fmt::format(
            "Already exist error: Failed to create a new pipeline version. The name {} already "
            "exist. Please specify a new name",
            name);
        send_json(res, legacy ? 500 : 409,
                  upload_error("Failed to create a pipeline version: " + message, message));
        return;
      }
    }
    Version v{next_id("version"), name, pipeline_id, file.filename, yaml};
    versions_[v.id] = v;
    version_order_.push_back(v.id);
    it->second.default_version = v.id;
    send_json(res, 200,
              {{"id", v.id},
               {"name", name},
               {"parameters", parameters},
               {"resource_references",
                json::array({{{"key", {{"type", "PIPELINE"}, {"id", pipeline_id}}},
                              {"relationship", "OWNER"}}})}});
  };
  s.Post("/apis/v1beta1/pipelines/upload", [handle_upload](const httplib::Request& req,
                                                           httplib::Response& res) {
    handle_upload(req, res, false);
  });
  s.Post("/apis/v1beta1/pipelines/upload_version",
         [handle_upload](const httplib::Request& req, httplib::Response& res) {
           handle_upload(req, res, true);
         });

  auto pipeline_json = [this](const Pipeline& p) {
    const Version& v = versions_[p.default_version];
    return json{{"id", p.id},
                {"name", p.name},
                {"created_at", "2026-01-01T00:00:00Z"},
                {"default_version", {{"id", v.id}, {"name", v.name}}}};
  };
  s.Get("/apis/v1beta1/pipelines", [this, pipeline_json](const httplib::Request& req,
                                                         httplib::Response& res) {
    std::lock_guard lock(mutex_);
    std::string name = filter_name(req.get_param_value("filter"));
    std::string ns = req.get_param_value("resource_reference_key.id");
    json list = json::array();
    for (const auto& [id, p] : pipelines_)
      if ((name.empty() || p.name == name) && p.namespace_name == ns) list.push_back(pipeline_json(p));
    json body = json::object();
    if (!list.empty()) body = {{"pipelines", list}, {"total_size", list.size()}};
    send_json(res, 200, body);
  });
  s.Get(R"(/apis/v1beta1/pipelines/([^/]+))", [this, pipeline_json](const httplib::Request& req,
                                                                     httplib::Response& res) {
    std::lock_guard lock(mutex_);
    auto it = pipelines_.find(req.matches[1]);
    if (it == pipelines_.end()) {
      send_json(res, 404,
                grpc_error(legacy, 5,
                           fmt::format("Failed to get pipeline: ResourceNotFoundError: Pipeline {} "
                                       "not found.",
                                       std::string(req.matches[1]))));
      return;
    }
    send_json(res, 200, pipeline_json(it->second));
  });
  s.Get(R"(/apis/v1beta1/pipelines/([^/]+)/templates)", [this](const httplib::Request& req,
                                                               httplib::Response& res) {
    std::lock_guard lock(mutex_);
    auto it = pipelines_.find(req.matches[1]);
    if (it == pipelines_.end()) {
      send_json(res, 404, grpc_error(legacy, 5, "Pipeline " + std::string(req.matches[1]) + " not found."));
      return;
    }
    send_json(res, 200, {{"template", versions_[it->second.default_version].yaml}});
  });
  s.Get("/apis/v1beta1/pipeline_versions", [this](const httplib::Request& req,
                                                   httplib::Response& res) {
    std::lock_guard lock(mutex_);
    if (req.get_param_value("resource_key.type") != "PIPELINE") {
      send_json(res, 400, grpc_error(legacy, 3, "Invalid input error: resource_key is required"));
      return;
    }
    std::string pipeline_id = req.get_param_value("resource_key.id");
    std::string name = filter_name(req.get_param_value("filter"));
    json list = json::array();
    for (const auto& id : version_order_) {
      const Version& v = versions_[id];
      if (v.pipeline_id == pipeline_id && (name.empty() || v.name == name))
        list.push_back({{"id", v.id}, {"name", v.name}});
    }
    json body = json::object();
    if (!list.empty()) body = {{"versions", list}, {"total_size", list.size()}};
    send_json(res, 200, body);
  });
  s.Get(R"(/apis/v1beta1/pipeline_versions/([^/]+)/templates)",
        [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard lock(mutex_);
          auto it = versions_.find(req.matches[1]);
          if (it == versions_.end()) {
            send_json(res, 404, grpc_error(legacy, 5, "Pipeline version not found."));
            return;
          }
          send_json(res, 200, {{"template", it->second.yaml}});
        });

  s.Get("/apis/v1beta1/experiments", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    std::string name = filter_name(req.get_param_value("filter"));
    json list = json::array();
    for (const auto& id : experiment_order_)
      if (name.empty() || experiments_[id]["name"] == name) list.push_back(experiments_[id]);
    json body = json::object();
    if (!list.empty()) body = {{"experiments", list}, {"total_size", list.size()}};
    send_json(res, 200, body);
  });
  s.Post("/apis/v1beta1/experiments", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    if (forbidden(req, res)) return;
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || body.value("name", "").empty()) {
      send_json(res, 400, grpc_error(legacy, 3, "Invalid input error: Experiment name is empty."));
      return;
    }
    for (const auto& [id, e] : experiments_) {
      if (e["name"] == body["name"]) {
        send_json(res, legacy ? 500 : 409,
                  grpc_error(legacy, legacy ? 13 : 6,
                             "Already exist error: Failed to create a new experiment. The name " +
                                 body["name"].get<std::string>() + " already exist."));
        return;
      }
    }
    body["id"] = next_id("experiment");
    body["created_at"] = "2026-01-01T00:00:00Z";
    experiments_[body["id"]] = body;
    experiment_order_.push_back(body["id"]);
    send_json(res, 200, body);
  });

  s.Post("/apis/v1beta1/runs", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    if (forbidden(req, res)) return;
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      send_json(res, 400, grpc_error(legacy, 3, "unexpected JSON"));
      return;
    }
    if (body.value("name", "").empty()) {
      send_json(res, 400, grpc_error(legacy, 3, "Invalid input error: The run name is empty. Please specify a valid name."));
      return;
    }
    std::string experiment, version;
    for (const auto& ref : body.value("resource_references", json::array())) {
      if (ref["key"]["type"] == "EXPERIMENT") experiment = ref["key"]["id"];
      if (ref["key"]["type"] == "PIPELINE_VERSION") version = ref["key"]["id"];
    }
    json spec = body.value("pipeline_spec", json::object());
    if (!experiment.empty() && !experiments_.count(experiment)) {
      send_json(res, 404, grpc_error(legacy, 5, "Experiment " + experiment + " not found."));
      return;
    }
    std::string pipeline_id = spec.value("pipeline_id", "");
    if (version.empty() && pipelines_.count(pipeline_id)) version = pipelines_[pipeline_id].default_version;
    if (!versions_.count(version)) {
      send_json(res, 400, grpc_error(legacy, 3, "Invalid input error: Please specify a pipeline by providing a (workflow manifest) or (pipeline id or/and pipeline version)."));
      return;
    }
    std::vector<std::string> declared;
    (void)is_argo_workflow(versions_[version].yaml, declared);
    for (const auto& p : spec.value("parameters", json::array())) {
      if (!p.contains("value") || !p["value"].is_string()) {
        send_json(res, 400, grpc_error(legacy, 3, "Invalid input error: parameter value must be a string"));
        return;
      }
      if (std::find(declared.begin(), declared.end(), p.value("name", "")) == declared.end()) {
        send_json(res, 400, grpc_error(legacy, 3, "Invalid input error: Unrecognized input parameter: " +
                                                      p.value("name", "")));
        return;
      }
    }
    std::string id = next_id("run");
    runs_[id] = Run{body, 0};
    last_run_ = body;
    send_json(res, 200, {{"run", {{"id", id}, {"name", body["name"]}, {"pipeline_spec", spec},
                                  {"resource_references", body["resource_references"]},
                                  {"created_at", "2026-01-01T00:00:00Z"}}},
                         {"pipeline_runtime", json::object()}});
  });
  s.Get(R"(/apis/v1beta1/runs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    auto it = runs_.find(req.matches[1]);
    if (it == runs_.end()) {
      send_json(res, 404, grpc_error(legacy, 5, "Run " + std::string(req.matches[1]) + " not found."));
      return;
    }
    Run& run = it->second;
    std::size_t step = std::min(run.step, states_.size() - 1);
    if (run.step < states_.size()) ++run.step;
    bool last = step + 1 == states_.size();
    json out = {{"id", it->first}, {"name", run.request["name"]}, {"status", states_[step]}};
    if (last && !metrics_.empty()) out["metrics"] = metrics_;
    json runtime = json::object();
    if (last && !failure_message_.empty())
      runtime["workflow_manifest"] = json{{"status", {{"phase", states_[step]}, {"message", failure_message_}}}}.dump();
    send_json(res, 200, {{"run", out}, {"pipeline_runtime", runtime}});
  });

  // --- v2beta1 (KFP 2.x): a 1.8 server (`legacy`) has none of these routes -------------
  auto v2_guard = [this](httplib::Response& res) {
    if (!legacy) return false;
    send_json(res, 404, {{"error", "Not Found"}, {"code", 5}, {"message", "Not Found"}});
    return true;
  };
  auto version_v2 = [](const Version& v) {
    return json{{"pipeline_id", v.pipeline_id}, {"pipeline_version_id", v.id}, {"name", v.name},
                {"display_name", v.name}, {"created_at", "2026-01-01T00:00:00Z"}};
  };
  auto handle_upload_v2 = [this, v2_guard, version_v2](const httplib::Request& req,
                                                        httplib::Response& res, bool version) {
    if (v2_guard(res)) return;
    if (!req.is_multipart_form_data() || !req.has_file("uploadfile")) {
      send_json(res, 400, upload_error("Failed to read pipeline from file", "http: no such file"));
      return;
    }
    auto file = req.get_file_value("uploadfile");
    std::lock_guard lock(mutex_);
    std::string yaml, error;
    if (!read_pipeline_file(file.filename, file.content, yaml, error)) {
      send_json(res, 400, upload_error("Failed to read a pipeline spec file", error));
      return;
    }
    std::vector<std::string> params;
    if (v2_spec(yaml).is_null() && !is_argo_workflow(yaml, params)) {
      send_json(res, 400, upload_error("Failed to create a pipeline", "unknown template format"));
      return;
    }
    std::string name = req.has_param("name") ? req.get_param_value("name") : file.filename;
    if (!version) {
      std::string ns = req.get_param_value("namespace");
      for (const auto& [id, p] : pipelines_) {
        if (p.name == name && p.namespace_name == ns) {
          send_json(res, 409, upload_error("Failed to create a pipeline and a pipeline version",
                                           "Already exist error: The name " + name + " already exist"));
          return;
        }
      }
      Pipeline p{next_id("pipeline"), name, ns, ""};
      Version v{next_id("version"), name, p.id, file.filename, yaml};
      p.default_version = v.id;
      pipelines_[p.id] = p;
      versions_[v.id] = v;
      version_order_.push_back(v.id);
      // A v2beta1Pipeline names no version.
      send_json(res, 200, {{"pipeline_id", p.id}, {"name", name}, {"display_name", name},
                           {"created_at", "2026-01-01T00:00:00Z"}});
      return;
    }
    std::string pipeline_id = req.get_param_value("pipelineid");
    auto it = pipelines_.find(pipeline_id);
    if (it == pipelines_.end()) {
      send_json(res, 404, upload_error("Failed to create a pipeline version",
                                       "Pipeline " + pipeline_id + " not found"));
      return;
    }
    for (const auto& [id, v] : versions_) {
      if (v.pipeline_id == pipeline_id && v.name == name) {
        send_json(res, 409, upload_error("Failed to create a pipeline version",
                                         "Already exist error: The name " + name + " already exist"));
        return;
      }
    }
    Version v{next_id("version"), name, pipeline_id, file.filename, yaml};
    versions_[v.id] = v;
    version_order_.push_back(v.id);
    it->second.default_version = v.id;
    send_json(res, 200, version_v2(v));
  };
  s.Post("/apis/v2beta1/pipelines/upload", [handle_upload_v2](const httplib::Request& req,
                                                              httplib::Response& res) {
    handle_upload_v2(req, res, false);
  });
  s.Post("/apis/v2beta1/pipelines/upload_version",
         [handle_upload_v2](const httplib::Request& req, httplib::Response& res) {
           handle_upload_v2(req, res, true);
         });
  s.Get("/apis/v2beta1/pipelines", [this, v2_guard](const httplib::Request& req, httplib::Response& res) {
    if (v2_guard(res)) return;
    std::lock_guard lock(mutex_);
    std::string name;
    bool bad = false;
    bool by_name = filter_v2(req.get_param_value("filter"), "name", name, bad);
    if (bad) return send_json(res, 400, grpc_error(false, 3, "unknown field \"op\" in filter"));
    std::string ns = req.get_param_value("namespace");
    json list = json::array();
    for (const auto& [id, p] : pipelines_)
      if ((!by_name || p.name == name) && p.namespace_name == ns)
        list.push_back({{"pipeline_id", p.id}, {"name", p.name}, {"display_name", p.name}});
    json body = json::object();
    if (!list.empty()) body = {{"pipelines", list}, {"total_size", list.size()}};
    send_json(res, 200, body);
  });
  s.Get(R"(/apis/v2beta1/pipelines/([^/]+))", [this, v2_guard](const httplib::Request& req,
                                                               httplib::Response& res) {
    if (v2_guard(res)) return;
    std::lock_guard lock(mutex_);
    auto it = pipelines_.find(req.matches[1]);
    if (it == pipelines_.end()) {
      send_json(res, 404, grpc_error(false, 5, "Pipeline " + std::string(req.matches[1]) + " not found."));
      return;
    }
    send_json(res, 200, {{"pipeline_id", it->first}, {"name", it->second.name},
                         {"display_name", it->second.name}});
  });
  s.Get(R"(/apis/v2beta1/pipelines/([^/]+)/versions)",
        [this, v2_guard, version_v2](const httplib::Request& req, httplib::Response& res) {
          if (v2_guard(res)) return;
          std::lock_guard lock(mutex_);
          std::string pipeline_id = req.matches[1];
          if (!pipelines_.count(pipeline_id)) {
            send_json(res, 404, grpc_error(false, 5, "Pipeline " + pipeline_id + " not found."));
            return;
          }
          std::string name;
          bool bad = false;
          bool by_name = filter_v2(req.get_param_value("filter"), "name", name, bad);
          if (bad) return send_json(res, 400, grpc_error(false, 3, "unknown field \"op\" in filter"));
          json list = json::array();
          for (const auto& id : version_order_) {
            const Version& v = versions_[id];
            if (v.pipeline_id == pipeline_id && (!by_name || v.name == name)) list.push_back(version_v2(v));
          }
          if (req.get_param_value("sort_by") == "created_at desc") {
            std::reverse(list.begin(), list.end());
          }
          std::string size = req.get_param_value("page_size");
          if (!size.empty() && list.size() > std::stoul(size)) list.erase(list.begin() + std::stol(size), list.end());
          json body = json::object();
          if (!list.empty()) body = {{"pipeline_versions", list}, {"total_size", list.size()}};
          send_json(res, 200, body);
        });
  s.Get(R"(/apis/v2beta1/pipelines/([^/]+)/versions/([^/]+))",
        [this, v2_guard, version_v2](const httplib::Request& req, httplib::Response& res) {
          if (v2_guard(res)) return;
          std::lock_guard lock(mutex_);
          auto it = versions_.find(req.matches[2]);
          if (it == versions_.end() || it->second.pipeline_id != req.matches[1]) {
            send_json(res, 404, grpc_error(false, 5, "Pipeline version not found."));
            return;
          }
          json out = version_v2(it->second);
          out["pipeline_spec"] = v2_spec(it->second.yaml);
          send_json(res, 200, out);
        });
  s.Get("/apis/v2beta1/experiments", [this, v2_guard](const httplib::Request& req, httplib::Response& res) {
    if (v2_guard(res)) return;
    std::lock_guard lock(mutex_);
    std::string name;
    bool bad = false;
    bool by_name = filter_v2(req.get_param_value("filter"), "display_name", name, bad);
    if (bad) return send_json(res, 400, grpc_error(false, 3, "unknown field \"op\" in filter"));
    json list = json::array();
    for (const auto& id : experiment_order_)
      if (!by_name || experiments_[id].value("display_name", "") == name) list.push_back(experiments_[id]);
    json body = json::object();
    if (!list.empty()) body = {{"experiments", list}, {"total_size", list.size()}};
    send_json(res, 200, body);
  });
  s.Post("/apis/v2beta1/experiments", [this, v2_guard](const httplib::Request& req, httplib::Response& res) {
    if (v2_guard(res)) return;
    std::lock_guard lock(mutex_);
    if (forbidden(req, res)) return;
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || body.value("display_name", "").empty() ||
        body.contains("name")) {
      send_json(res, 400, grpc_error(false, 3, "Invalid input error: Experiment display name is empty."));
      return;
    }
    body["experiment_id"] = next_id("experiment");
    body["created_at"] = "2026-01-01T00:00:00Z";
    experiments_[body["experiment_id"]] = body;
    experiment_order_.push_back(body["experiment_id"]);
    send_json(res, 200, body);
  });
  // Recurring runs: the body is kept (last_schedule_request) and echoed with an id.
  s.Post("/apis/v1beta1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    if (forbidden(req, res)) return;
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || body.value("name", "").empty()) {
      send_json(res, 400, grpc_error(legacy, 3, "Invalid input error: The job name is empty."));
      return;
    }
    last_schedule_ = body;
    body["id"] = next_id("job");
    send_json(res, 200, body);
  });
  s.Post("/apis/v2beta1/recurringruns", [this, v2_guard](const httplib::Request& req,
                                                         httplib::Response& res) {
    if (v2_guard(res)) return;
    std::lock_guard lock(mutex_);
    if (forbidden(req, res)) return;
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || body.value("display_name", "").empty()) {
      send_json(res, 400, grpc_error(false, 3, "Invalid input error: The recurring run display name is empty."));
      return;
    }
    last_schedule_ = body;
    body["recurring_run_id"] = next_id("recurring");
    send_json(res, 200, body);
  });
  s.Post("/apis/v2beta1/runs", [this, v2_guard](const httplib::Request& req, httplib::Response& res) {
    if (v2_guard(res)) return;
    std::lock_guard lock(mutex_);
    if (forbidden(req, res)) return;
    json body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || body.value("display_name", "").empty()) {
      send_json(res, 400, grpc_error(false, 3, "Invalid input error: The run display name is empty."));
      return;
    }
    json reference = body.value("pipeline_version_reference", json::object());
    std::string version = reference.value("pipeline_version_id", "");
    std::string pipeline_id = reference.value("pipeline_id", "");
    if (version.empty() && pipelines_.count(pipeline_id)) version = pipelines_[pipeline_id].default_version;
    if (!versions_.count(version)) {
      send_json(res, 400, grpc_error(false, 3, "Invalid input error: pipeline version not found"));
      return;
    }
    std::string experiment = body.value("experiment_id", "");
    if (!experiment.empty() && !experiments_.count(experiment)) {
      send_json(res, 404, grpc_error(false, 5, "Experiment " + experiment + " not found."));
      return;
    }
    json spec = v2_spec(versions_[version].yaml);
    json declared = spec.is_null() ? json::object()
                                   : spec["root"].value("inputDefinitions", json::object())
                                         .value("parameters", json::object());
    json parameters = body.value("runtime_config", json::object()).value("parameters", json::object());
    if (!parameters.is_object()) {
      send_json(res, 400, grpc_error(false, 3, "runtime_config.parameters must be an object"));
      return;
    }
    for (const auto& [name, value] : parameters.items()) {
      if (!declared.contains(name)) {
        send_json(res, 400, grpc_error(false, 3, "Invalid input error: Unrecognized input parameter: " + name));
        return;
      }
    }
    std::string id = next_id("run");
    runs_[id] = Run{body, 0};
    last_run_ = body;
    json out = body;
    out["run_id"] = id;
    out["state"] = "PENDING";
    send_json(res, 200, out);
  });
  s.Get(R"(/apis/v2beta1/runs/([^/]+))", [this, v2_guard](const httplib::Request& req, httplib::Response& res) {
    if (v2_guard(res)) return;
    std::lock_guard lock(mutex_);
    auto it = runs_.find(req.matches[1]);
    if (it == runs_.end()) {
      send_json(res, 404, grpc_error(false, 5, "Run " + std::string(req.matches[1]) + " not found."));
      return;
    }
    Run& run = it->second;
    std::size_t step = std::min(run.step, states_.size() - 1);
    if (run.step < states_.size()) ++run.step;
    bool last = step + 1 == states_.size();
    std::string state = states_[step];
    std::transform(state.begin(), state.end(), state.begin(), [](unsigned char c) { return std::toupper(c); });
    if (state == "ERROR") state = "FAILED";
    json out = {{"run_id", it->first}, {"display_name", run.request["display_name"]}, {"state", state}};
    if (last && !failure_message_.empty()) out["error"] = {{"code", 2}, {"message", failure_message_}};
    send_json(res, 200, out);
  });
}

std::string make_archive(const std::vector<std::pair<std::string, std::string>>& members, bool zip) {
  std::string out;
  archive* a = archive_write_new();
  if (zip) {
    archive_write_set_format_zip(a);
  } else {
    archive_write_add_filter_gzip(a);
    archive_write_set_format_pax_restricted(a);
  }
  archive_write_open(
      a, &out, nullptr,
      [](archive*, void* user, const void* buffer, std::size_t length) -> la_ssize_t {
        static_cast<std::string*>(user)->append(static_cast<const char*>(buffer), length);
        return static_cast<la_ssize_t>(length);
      },
      nullptr);
  for (const auto& [name, content] : members) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(content.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_write_header(a, entry);
    archive_write_data(a, content.data(), content.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

}  // namespace pipec::client::testing
