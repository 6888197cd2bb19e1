#pragma once
// A stateful Kubeflow Pipelines API peer for the client's tests: cpp-httplib on
// 127.0.0.1 with a port chosen at run time. It keeps pipelines, versions, experiments and
// runs, applies the server's rules from shared/kfp-api/CONTRACT.md (archive shape, 32 MiB,
// name conflicts, unknown run parameters) and answers errors in the real servers' bodies:
// HEAD's grpc-gateway `{"code","message","details"}`, or with `legacy` KFP 1.8's (500 on
// duplicates, `error` member), and `{"error_message","error_details"}` from uploads.
// Faults can be injected per request prefix: a status, a dropped connection, a delay, and
// answers that are not KFP's (issue 42): any status, content type and body (an HTML page,
// broken or deep or wrongly typed JSON, bytes that are not UTF-8), a Content-Length that
// lies, a body sent a byte at a time.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace pipec::client::testing {

class FakeKfp {
 public:
  FakeKfp();
  ~FakeKfp();
  FakeKfp(const FakeKfp&) = delete;
  FakeKfp& operator=(const FakeKfp&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // --- behaviour -------------------------------------------------------------------------
  std::atomic<bool> legacy{false};     ///< answer like KFP 1.8 (duplicates: 500)
  std::atomic<bool> echo_auth{false};  ///< 401 bodies quote the Authorization and Cookie headers
  void require_token(std::string token);       ///< other bearer tokens get 401
  void forbid_namespace(std::string name);     ///< requests naming it get 403
  /// Each GET of a run moves one step along `states`; the last one stays. Metrics are
  /// reported once the run is in its last state; a failure message goes in the workflow.
  void script_runs(std::vector<std::string> states, nlohmann::json metrics = nlohmann::json::array(),
                   std::string message = {});
  /// In the last state, a v1beta1 run's workflow_manifest holds these Argo nodes
  /// (status.nodes: id -> node, with outputs.artifacts as Argo lists them).
  void script_nodes(nlohmann::json nodes);
  /// What ReadArtifact (`GET /apis/v1beta1/runs/RUN/nodes/NODE/artifacts/NAME:read`) hands
  /// out for NODE's artifact NAME, of any run: `{"data": BASE64 of bytes}` (the shape of 1.8's
  /// ReadArtifact and of HEAD's streaming handler, run_artifact_server.go). Others: 404 with
  /// HEAD's `{"error_message": "artifact not found: <nil>", ...}` (1.8: its grpc-gateway
  /// ResourceNotFoundError).
  void add_artifact(const std::string& node_id, const std::string& name, std::string bytes);

  // --- faults, for requests whose "METHOD /path" starts with `prefix` ---------------------
  // (`times` < 0: every such request)
  void fail(const std::string& prefix, int status, int times, std::string body = {});
  void drop(const std::string& prefix, int times);  ///< close the connection mid-answer
  void delay(const std::string& prefix, std::chrono::milliseconds how_long, int times);
  /// Answers `status` with this Content-Type and body, as they are.
  void answer(const std::string& prefix, int status, std::string content_type, std::string body,
              int times = -1);
  /// Answers 200 with a Content-Length of `length`, shorter than `body`, then sends all of
  /// `body` (the client reads `length` bytes: a cut answer).
  void lie_about_length(const std::string& prefix, std::string body, std::size_t length,
                        int times = -1);
  /// Answers 200 with `body`, one byte every `interval`, until the client goes.
  void drip(const std::string& prefix, std::string body, std::chrono::milliseconds interval,
            int times = -1);

  // --- state -----------------------------------------------------------------------------
  /// Adds a pipeline (as if uploaded before) with one version named like it; returns its id.
  std::string add_pipeline(const std::string& name, const std::string& workflow_yaml,
                           const std::string& namespace_name = {});
  struct Version {
    std::string id, name, pipeline_id, filename, yaml;
  };
  std::vector<Version> versions(const std::string& pipeline_id);
  int pipeline_count();
  nlohmann::json last_run_request();  ///< the body of the last accepted POST /runs
  nlohmann::json last_schedule_request();  ///< of the last POST /jobs or /recurringruns
  std::vector<nlohmann::json> experiments();

  // --- what the client did ---------------------------------------------------------------
  std::vector<std::string> requests();       ///< "METHOD /path?query" (query as sent)
  int count(const std::string& prefix);      ///< requests starting with prefix
  std::vector<std::string> header_values(const std::string& header);  ///< one per request

 private:
  struct Fault {
    std::string prefix;
    enum Kind { Status, Drop, Delay, Answer, Lie, Drip } kind;
    int status = 0;
    std::string body;
    std::chrono::milliseconds delay{0};
    int times = 0;
    std::string content_type = "application/json";
    std::size_t length = 0;  // Lie: the Content-Length sent
  };
  struct Pipeline {
    std::string id, name, namespace_name, default_version;
  };
  struct Run {
    nlohmann::json request;
    std::size_t step = 0;
  };
  void routes();          ///< what every request passes, then the routes below
  void routes_v1beta1();  ///< fake_kfp_v1beta1.cpp
  void routes_v2beta1();  ///< fake_kfp_v2beta1.cpp
  bool forbidden(const httplib::Request& req, httplib::Response& res);
  /// Answers as the fault says (Answer, Lie, Drip).
  void send_fault(const Fault& fault, httplib::Response& res);
  std::string next_id(const std::string& kind);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  int ids_ = 0;
  std::string token_;
  std::string forbidden_namespace_;
  std::vector<std::string> states_ = {"Running", "Succeeded"};
  nlohmann::json metrics_ = nlohmann::json::array();
  std::string failure_message_;
  nlohmann::json nodes_;  // null: no workflow_manifest unless a failure message
  std::map<std::string, std::string> artifacts_;  // "NODE/NAME" -> bytes
  std::vector<Fault> faults_;
  std::vector<std::string> requests_;
  std::vector<std::map<std::string, std::string>> headers_;
  std::map<std::string, Pipeline> pipelines_;
  std::map<std::string, Version> versions_;
  std::vector<std::string> version_order_;
  std::map<std::string, nlohmann::json> experiments_;
  std::vector<std::string> experiment_order_;
  std::map<std::string, Run> runs_;
  nlohmann::json last_run_;
  nlohmann::json last_schedule_;
};

/// Standard base64 with padding (Go's base64.StdEncoding), for answers that carry bytes.
std::string base64(const std::string& bytes);

/// A gzip'd tar (or zip) holding `members` in order, made with libarchive, for tests.
std::string make_archive(const std::vector<std::pair<std::string, std::string>>& members,
                         bool zip = false);

}  // namespace pipec::client::testing
