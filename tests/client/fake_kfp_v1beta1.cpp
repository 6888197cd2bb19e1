// The v1beta1 API (KFP 1.x, and kept by 2.x): uploads, pipelines and their versions,
// experiments, runs and recurring runs (jobs), in HEAD's or, with `legacy`, 1.8's answers.
#include "tests/client/fake_kfp.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <httplib.h>

#include "tests/client/fake_kfp_detail.hpp"

namespace pipec::client::testing {

using nlohmann::json;
using detail::grpc_error;
using detail::is_argo_workflow;
using detail::read_pipeline_file;
using detail::send_json;
using detail::upload_error;

namespace {

constexpr std::size_t kMaxFileLength = std::size_t{32} << 20;

std::string filter_name(const std::string& filter) {
  json f = json::parse(filter, nullptr, false);
  if (f.is_discarded() || !f.contains("predicates")) return {};
  for (const auto& p : f["predicates"])
    if (p.value("key", "") == "name" && p.value("op", "") == "EQUALS")
      return p.value("string_value", "");
  return {};
}

}  // namespace

void FakeKfp::routes_v1beta1() {
  auto& s = *server_;
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
    json status = {{"phase", states_[step]}};
    if (!failure_message_.empty()) status["message"] = failure_message_;
    if (!nodes_.is_null()) status["nodes"] = nodes_;
    if (last && (!failure_message_.empty() || !nodes_.is_null()))
      runtime["workflow_manifest"] = json{{"metadata", {{"name", "wf-" + it->first}}}, {"status", status}}.dump();
    send_json(res, 200, {{"run", out}, {"pipeline_runtime", runtime}});
  });
  // ReadArtifact: HEAD serves it by hand (run_artifact_server.go), 1.8 through grpc-gateway.
  s.Get(R"(/apis/v1beta1/runs/([^/]+)/nodes/([^/]+)/artifacts/([^/]+):read)",
        [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard lock(mutex_);
          std::string run = req.matches[1], node = req.matches[2], name = req.matches[3];
          auto it = artifacts_.find(node + "/" + name);
          if (!runs_.count(run) || it == artifacts_.end()) {
            std::string path = fmt::format("runs/{}/nodes/{}/artifacts/{}", run, node, name);
            if (legacy)
              send_json(res, 404, grpc_error(true, 5, "ResourceNotFoundError: artifact " + path + " not found."));
            else
              send_json(res, 404, {{"error_message", "artifact not found: <nil>"},
                                   {"error_details", "artifact not found: <nil>"}});
            return;
          }
          res.set_header("Cache-Control", "no-cache, private");
          res.set_content("{\"data\":\"" + base64(it->second) + "\"}", "application/json");
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
}

}  // namespace pipec::client::testing
