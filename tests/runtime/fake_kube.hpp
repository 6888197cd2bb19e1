#pragma once
// A Kubernetes API peer for the launcher's tests: cpp-httplib on 127.0.0.1 with a port
// chosen at run time. It keeps one namespace of Kubeflow jobs and pods, answers with the
// real API shapes (objects, Status errors, newline-delimited watch events, chunked log
// streams) and can be told to fail: a given status on create, 500s, dropped streams.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
struct Response;
}

namespace pipec::runtime::testing {

/// PEM files that make the peer speak HTTPS; with `client_ca_file` it also requires a
/// client certificate signed by that CA (mutual TLS, as a kubeconfig's client certificate).
struct FakeKubeTls {
  std::string cert_file, key_file, client_ca_file;
};

class FakeKube {
 public:
  FakeKube();
  explicit FakeKube(const FakeKubeTls& tls);
  ~FakeKube();
  FakeKube(const FakeKube&) = delete;
  FakeKube& operator=(const FakeKube&) = delete;

  std::string url() const {
    return (tls_ ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_);
  }
  int port() const { return port_; }

  // --- state the tests drive -------------------------------------------------------------
  /// Waits until a job exists; returns its name ("" on timeout).
  std::string wait_for_job(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::optional<nlohmann::json> job(const std::string& name);
  /// Puts a job in place as if created earlier (for adoption).
  void put_job(const std::string& plural, nlohmann::json job);
  /// Sets condition `type` True (the others False, like the operators) and sends MODIFIED.
  void set_condition(const std::string& name, const std::string& type,
                     const std::string& reason = {}, const std::string& message = {});
  /// Adds a pod of the job with the operators' labels.
  void add_pod(const std::string& pod, const std::string& job, const std::string& replica_type,
               int index, const std::string& container = "main");
  /// Adds a pod of a TrainJob with JobSet's labels (replicated job, Job index 0, completion
  /// index `index`: the node's rank), container `node`.
  void add_jobset_pod(const std::string& pod, const std::string& trainjob,
                      const std::string& replicated_job, int index);
  /// Appends a log line; the timestamp advances by `step_ns` (0: same as the previous line).
  void log(const std::string& pod, const std::string& text, std::int64_t step_ns = 1'000'000);
  /// The container ended: a followed log stream completes; exit code and termination reason
  /// (default Completed for 0, else Error; the kubelet says OOMKilled, 137) in the pod status.
  void end_pod(const std::string& pod, int exit_code, const std::string& reason = {});
  /// The pod waits (phase Pending), its container's state.waiting the `reason` and
  /// `message` the kubelet gives (ImagePullBackOff, CreateContainerConfigError, ...).
  void wait_pod(const std::string& pod, const std::string& reason, const std::string& message);
  /// Adds `copies` Events (core/v1) about the object `kind`/`name`, each its own object, as a
  /// storm of them would be; `type` Warning or Normal. Listed by
  /// `GET /api/v1/namespaces/NS/events` with the fieldSelector fields the real API supports
  /// (an unsupported one is a 400, as there) and `limit`.
  void add_event(const std::string& kind, const std::string& name, const std::string& type,
                 const std::string& reason, const std::string& message, int copies = 1);
  /// The container ended with `exit_code` and the kubelet started it again in the same pod:
  /// a followed stream completes, its log becomes the `previous=true` log, restartCount
  /// goes up and new lines go to the new container.
  void restart_container(const std::string& pod, int exit_code);
  /// Applies a JSON merge patch (RFC 7386) to a pod object, e.g. to its status.
  void patch_pod(const std::string& pod, const nlohmann::json& patch);
  /// Someone else deletes the job (a DELETED watch event).
  void remove_job(const std::string& name);
  /// Pods and Services POSTed to the core API (runtime "pods"): the names of those that
  /// exist now, and one object. A POSTed pod starts Pending with one container status.
  std::vector<std::string> pod_names();
  std::vector<std::string> service_names();
  std::optional<nlohmann::json> pod_object(const std::string& name);
  std::optional<nlohmann::json> service(const std::string& name);
  /// The pod's container starts running (phase Running).
  void start_pod(const std::string& pod);

  // --- Kubeflow Trainer v2.3.0 and JobSet v0.12.0 -----------------------------------------
  /// From now on the peer acts as Trainer's controllers, its admission webhook and JobSet's
  /// controller for TrainJobs (kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/jobset,
  /// pkg/runtime/core; kubernetes-sigs/jobset v0.12.0 pkg/controllers):
  /// - a TrainJob whose runtimeRef names no ClusterTrainingRuntime of `runtimes` (name ->
  ///   "torch" or "mpi") is refused by the webhook validator.trainjob.trainer.kubeflow.org (403);
  /// - a created TrainJob gets a JobSet of the same name, with replicated job `node`
  ///   (numNodes pods; an MPI runtime runs the launcher as a node: numNodes - 1) and, for an
  ///   MPI runtime, `launcher` (1 pod, created once `node` is ready: dependsOn Ready). Pods
  ///   `<trainjob>-<job>-0-<index>-<5 chars>` with JobSet's labels start Pending;
  /// - the JobSet's status (replicatedJobsStatus: ready = every pod of the Job ready or done)
  ///   and conditions (Completed AllJobsCompleted once every job, or for MPI the launcher, has
  ///   succeeded; Failed FailedJobs once a job has failed) follow the pods, and Trainer copies
  ///   them to the TrainJob (jobsStatus; Complete, Failed: no Running condition), sending
  ///   MODIFIED. A pod that ends with a non-zero code fails its Job (its backoffLimit spent);
  /// - deleting the TrainJob deletes the JobSet and its pods (background propagation).
  void install_trainer(std::map<std::string, std::string> runtimes = {{"torch-distributed", "torch"},
                                                                      {"deepspeed-distributed", "mpi"},
                                                                      {"mlx-distributed", "mpi"},
                                                                      {"jax-distributed", "torch"},
                                                                      {"xgboost-distributed", "torch"}});
  /// The pods of a TrainJob's JobSet, in creation order (waits up to `timeout` for `at_least`).
  std::vector<std::string> jobset_pods(const std::string& trainjob, std::size_t at_least = 1,
                                       std::chrono::milliseconds timeout = std::chrono::seconds(5));
  std::optional<nlohmann::json> jobset(const std::string& name);
  /// Trainer's progress report (v2.3.0 status.trainerStatus: progressPercentage,
  /// estimatedRemainingSeconds, metrics): replaced, lastUpdatedTime set, MODIFIED sent.
  void set_trainer_status(const std::string& name, const nlohmann::json& trainer_status);
  /// The pod's container runs but its readiness probe has not passed (an MPI node's sshd).
  void start_pod_unready(const std::string& pod);

  // --- what preflight reads (fake_kube_objects.cpp) ----------------------------------------
  /// Puts an object where GET finds it: `path` is its API path
  /// (/api/v1/namespaces/team/secrets/s3, /apis/scheduling.k8s.io/v1/priorityclasses/high).
  /// A GET of its collection lists it (persistentvolumeclaims, resourcequotas, nodes, ...).
  void put_object(const std::string& path, nlohmann::json object);
  /// Discovery serves `group_version` (kubeflow.org/v1) with these resources' plurals; once
  /// any is set, the others are 404 and a dryRun=All create of a kind not served is a 404.
  /// Until then, the training operator's kinds and Trainer's are served.
  void serve_api(const std::string& group_version, std::vector<std::string> plurals);
  /// A Role bound to `subject` (system:serviceaccount:team:runner; "" for the caller of a
  /// SelfSubjectAccessReview): `verbs` on `resources` of API `group` ("*" for any).
  /// Local/SelfSubjectAccessReviews are answered from these; until the first, every review
  /// is allowed (a cluster without RBAC).
  void add_role(const std::string& subject, const std::string& group,
                std::vector<std::string> resources, std::vector<std::string> verbs);
  std::atomic<int> reads_403{0};  ///< preflight's object GETs and reviews answer 403 (N times)
  /// GETs of paths under `prefix` (/api/v1/nodes) answer 403, as to an identity whose
  /// Role lacks them.
  void forbid(const std::string& prefix);
  /// An admission webhook `webhook` (a policy engine's) that refuses every job created,
  /// dry run or not, without the label `label` on the job (403, the API's message for a
  /// webhook's denial).
  void require_label(const std::string& label, const std::string& webhook);
  /// The image registry on the same port (`HEAD /v2/NAME/manifests/REF`, which a GET of it
  /// answers too): every manifest exists but those of `repository_reference`
  /// ("library/python:3.11", "team/train@sha256:...") made absent here (404).
  void image_absent(const std::string& repository_reference);

  // --- faults ----------------------------------------------------------------------------
  // (create_status and create_500s fail creates; a dryRun=All create is answered as usual.)
  std::atomic<int> create_status{0};     ///< answer POSTs with this Status code (0: normal)
  std::atomic<int> create_500s{0};       ///< the next N POSTs get a 500
  std::atomic<int> watch_500s{0};        ///< the next N watch requests get a 500
  std::atomic<bool> watch_broken{false}; ///< every watch request gets a 500
  std::atomic<int> drop_watch_after{-1}; ///< drop one watch stream after N events
  std::atomic<bool> jobs_broken{false};  ///< every GET of a job or watch gets a 500
  std::atomic<int> watch_gone{0};        ///< the next N watches send ERROR 410 Gone
  std::atomic<int> drop_log_after{-1};   ///< drop one log stream after N lines
  std::atomic<int> log_500s{0};          ///< the next N log requests get a 500
  std::atomic<int> pods_403{0};          ///< list pods answers 403 (N times)
  std::atomic<int> log_403{0};           ///< pods/log answers 403 (N times)
  std::atomic<int> pods_500s{0};         ///< the next N lists of pods get a 500
  std::atomic<int> events_403{0};        ///< list events answers 403 (N times)
  std::atomic<int> delete_status{0};     ///< answer DELETEs with this Status code (0: normal)
  std::atomic<int> log_lines_sent{0};    ///< lines sent on followed log streams so far
  /// Only these bearer tokens are accepted, others get 401 (empty, the default: any).
  void accept_tokens(std::vector<std::string> tokens);

  // --- what the launcher did -------------------------------------------------------------
  std::vector<std::string> requests();   ///< "METHOD /path?query"
  /// Creates that were not dry runs: POSTs of jobs, pods and services without dryRun.
  int creates();
  int count(const std::string& prefix);  ///< requests that start with prefix
  std::vector<std::string> tokens_seen();  ///< the Authorization header of each request

 private:
  struct LogLine {
    std::int64_t sec;
    std::int32_t nanos;
    std::string text;
  };
  struct Pod {
    nlohmann::json object;
    std::vector<LogLine> lines;
    std::vector<LogLine> previous;  // of the container before the last restart
    int restarts = 0;
    bool ended = false;
  };
  struct Event {
    std::uint64_t rv;
    std::string type;
    nlohmann::json object;
  };

  void emit(const std::string& type, nlohmann::json& object);  // bumps rv; mutex held
  void reconcile_trainer();  // JobSet and Trainer controllers, after any change; mutex held
  void add_jobset_pod_locked(const std::string& trainjob, const std::string& replicated_job, int index);
  void routes();
  void event_routes();  // fake_kube_events.cpp
  void object_routes();  // fake_kube_objects.cpp
  // Whether a dryRun=All create of `plural` in `group_version` is served (any, until
  // serve_api is called); mutex held.
  bool serves_locked(const std::string& group_version, const std::string& plural) const;
  // Why the admission webhooks refuse creating `job` (require_label's, Trainer's for a
  // TrainJob), or nullopt when they admit it; mutex held.
  std::optional<std::string> admission_refusal_locked(const std::string& plural, const std::string& ns,
                                                      nlohmann::json& job);
  struct Role {
    std::string subject, group;
    std::vector<std::string> resources, verbs;
  };
  void start();

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool tls_ = false;
  std::atomic<bool> stopping_{false};

  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t rv_ = 1000;
  std::map<std::string, nlohmann::json> jobs_;
  std::map<std::string, std::string> plurals_;
  std::vector<Event> events_;
  std::map<std::string, Pod> pods_;
  std::map<std::string, nlohmann::json> services_;
  std::map<std::string, nlohmann::json> kube_events_;  // core/v1 Events by name (etcd's order)
  std::int64_t log_sec_ = 1'795'000'000;  // 2026-11-18
  std::int32_t log_nanos_ = 0;
  int pod_serial_ = 0;
  std::vector<std::string> requests_;
  std::vector<std::string> tokens_;
  std::vector<std::string> accepted_tokens_;
  std::map<std::string, std::string> trainer_runtimes_;  // empty: no Trainer installed
  std::map<std::string, nlohmann::json> jobsets_;
  std::map<std::string, nlohmann::json> objects_;                // by API path
  std::map<std::string, std::vector<std::string>> served_;       // group/version -> plurals
  std::vector<Role> roles_;
  std::vector<std::string> absent_images_;
  std::vector<std::string> forbidden_;
  std::map<std::string, std::string> required_labels_;  // label -> webhook
  std::map<std::string, std::vector<std::string>> jobset_pods_;  // in creation order
};

/// A Status answer (`kind: Status`, the API's error shape) with `code`.
void send_status(httplib::Response& res, int code, const std::string& reason, const std::string& message);

}  // namespace pipec::runtime::testing
