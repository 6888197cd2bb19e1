// The fake KFP server: its thread, the state and faults the tests set and read, and what
// every request passes through before its route (recording, injected faults, the bearer
// token, a forbidden namespace). The routes: fake_kfp_v1beta1.cpp, fake_kfp_v2beta1.cpp.
#include "tests/client/fake_kfp.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <httplib.h>

#include "tests/client/fake_kfp_detail.hpp"

namespace pipec::client::testing {

using nlohmann::json;

namespace detail {

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

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

}  // namespace detail

using detail::grpc_error;
using detail::send_json;
using detail::upload_error;

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

void FakeKfp::script_nodes(json nodes) {
  std::lock_guard lock(mutex_);
  nodes_ = std::move(nodes);
}

void FakeKfp::add_artifact(const std::string& node_id, const std::string& name, std::string bytes) {
  std::lock_guard lock(mutex_);
  artifacts_[node_id + "/" + name] = std::move(bytes);
}

std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                 static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += alphabet[(v >> s) & 63];
  }
  if (i + 1 == bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8;
    for (int s = 18; s >= 6; s -= 6) out += alphabet[(v >> s) & 63];
    out += "=";
  }
  return out;
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

void FakeKfp::answer(const std::string& prefix, int status, std::string content_type,
                     std::string body, int times) {
  std::lock_guard lock(mutex_);
  Fault fault{prefix, Fault::Answer, status, std::move(body), {}, times};
  fault.content_type = std::move(content_type);
  faults_.push_back(std::move(fault));
}

void FakeKfp::lie_about_length(const std::string& prefix, std::string body, std::size_t length,
                               int times) {
  std::lock_guard lock(mutex_);
  Fault fault{prefix, Fault::Lie, 200, std::move(body), {}, times};
  fault.length = length;
  faults_.push_back(std::move(fault));
}

void FakeKfp::drip(const std::string& prefix, std::string body, std::chrono::milliseconds interval,
                   int times) {
  std::lock_guard lock(mutex_);
  faults_.push_back({prefix, Fault::Drip, 200, std::move(body), interval, times});
}

void FakeKfp::send_fault(const Fault& fault, httplib::Response& res) {
  res.status = fault.status;
  res.set_header("Connection", "close");
  if (fault.kind == Fault::Answer) {
    res.set_content(fault.body, fault.content_type);
    return;
  }
  auto body = std::make_shared<std::string>(fault.body);
  if (fault.kind == Fault::Lie) {
    // The whole body, whatever the length said.
    res.set_content_provider(fault.length, fault.content_type,
                             [body](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                               return offset == 0 && sink.write(body->data(), body->size());
                             });
  } else {
    std::chrono::milliseconds interval = fault.delay;
    res.set_content_provider(
        body->size(), fault.content_type,
        [this, body, interval](std::size_t offset, std::size_t, httplib::DataSink& sink) {
          std::unique_lock lock(mutex_);
          if (stop_cv_.wait_for(lock, interval, [this] { return stopping_; })) return false;
          lock.unlock();
          return sink.write(body->data() + offset, 1);
        });
  }
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
      if (f.kind == Fault::Answer || f.kind == Fault::Lie || f.kind == Fault::Drip) {
        send_fault(f, res);
        return httplib::Server::HandlerResponse::Handled;
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
  routes_v1beta1();
  routes_v2beta1();
}

}  // namespace pipec::client::testing
