// The v2beta1 API (KFP 2.x): uploads of Argo Workflows and KFP v2 pipeline specs,
// pipelines and their versions, experiments, runs and recurring runs. A 1.8 server
// (`legacy`) has none of these routes.
#include "tests/client/fake_kfp.hpp"

#include <algorithm>
#include <cctype>

#include <httplib.h>

#include "tests/client/fake_kfp_detail.hpp"

namespace pipec::client::testing {

using nlohmann::json;
using detail::grpc_error;
using detail::is_argo_workflow;
using detail::read_pipeline_file;
using detail::send_json;
using detail::upload_error;
using detail::v2_spec;

namespace {

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

}  // namespace

void FakeKfp::routes_v2beta1() {
  auto& s = *server_;
  // A 1.8 server (`legacy`) has no v2beta1 route: 404.
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
  // Recurring runs, as v1beta1's jobs: the body is kept (last_schedule_request) and echoed
  // with an id.
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

}  // namespace pipec::client::testing
