// run_launcher(): the whole life of one training job.
// Order matters: every argument and run-time value is checked (exit 2) before the API is
// touched; the UI metadata is written before the job exists; the metrics file is written
// however the job ends; the job is deleted on a stop signal even with --keep-job.
#include "runtime/launcher.hpp"

#include <condition_variable>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/json.hpp"
#include "input/limits.hpp"
#include "runtime/job_render.hpp"
#include "runtime/kube_client.hpp"
#include "runtime/log_copy.hpp"
#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"
#include "runtime/tf_pods.hpp"
#include "runtime/trainer_v2.hpp"

namespace pipec::runtime {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string lower_dns_label(std::string_view text, std::size_t max) {
  std::string out;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (out.empty() && !(c >= 'a' && c <= 'z')) continue;  // DNS-1035 starts with a letter
    out.push_back(ok ? c : '-');
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty()) out = "job";
  if (out.size() > max) {
    std::uint32_t h = 2166136261u;  // FNV-1a of the original, so distinct steps stay distinct
    for (unsigned char c : text) h = (h ^ c) * 16777619u;
    out.resize(max - 9);
    while (!out.empty() && out.back() == '-') out.pop_back();
    out += fmt::format("-{:08x}", h);
  }
  return out;
}

// A label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends.
std::string label_value(std::string_view text) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  std::string out;
  for (char c : text) out.push_back(alnum(c) || c == '.' || c == '_' || c == '-' ? c : '-');
  if (out.size() > 63) {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : text) h = (h ^ c) * 16777619u;
    out = out.substr(0, 54) + fmt::format("-{:08x}", h);
  }
  while (!out.empty() && !alnum(out.front())) out.erase(out.begin());
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  return out;
}

// DNS-1123 label: what a namespace name must be.
bool is_dns_label(std::string_view s) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s)
    if (!alnum(c) && c != '-') return false;
  return true;
}

std::string format_duration(milliseconds d) {
  auto ms = d.count();
  if (ms % 86400000 == 0) return fmt::format("{}d", ms / 86400000);
  if (ms % 3600000 == 0) return fmt::format("{}h", ms / 3600000);
  if (ms % 60000 == 0) return fmt::format("{}m", ms / 60000);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

// Safe reads of API objects: a missing key or a wrong type reads as null / "" / 0.
const json& at(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}
template <typename... Keys>
const json& at(const json& j, const char* key, Keys... rest) {
  return at(at(j, key), rest...);
}
std::string text(const json& j, const char* key) {
  const json& v = at(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}
long long integer(const json& j, const char* key) {
  const json& v = at(j, key);
  return v.is_number_integer() ? v.get<long long>() : 0;
}

std::string status_message(const HttpResponse& r) {
  if (r.status == 0) return r.error;
  json body = input::parse_json(r.body);
  if (!text(body, "message").empty())
    return fmt::format("{} ({})", text(body, "message"), r.status);
  return fmt::format("HTTP {}", r.status);
}

bool transient(const HttpResponse& r) { return r.status == 0 || r.status >= 500 || r.status == 429; }

struct JobKind {
  std::string plural;      // mpijobs
  std::string replica_map; // mpiReplicaSpecs
  std::string leader_type; // launcher, chief, master, worker
  bool leader_index = false;  // select replica-index=0 too
  // The pod labels naming the job, the replica type and its index: the training
  // operator's, or JobSet's for a TrainJob (whose leader is job `node` index 0).
  std::string job_label = "training.kubeflow.org/job-name";
  std::string type_label = "training.kubeflow.org/replica-type";
  std::string index_label = "training.kubeflow.org/replica-index";
  std::string leader_extra;  // more of the leader's selector ("key=value"), or ""
};

class Launcher {
 public:
  Launcher(const LauncherOptions& o, const ConnectFn& connect, std::ostream& out,
           std::ostream& err, const std::atomic<bool>& stop)
      : o_(o), connect_(connect), out_(out), err_(err), stop_(stop) {}

  int run();

 private:
  enum class Outcome { Succeeded, Failed, PendingTimeout, RunningTimeout, Stopped, Deleted, ApiError };

  void say(const std::string& line) {
    std::lock_guard lock(err_mutex_);
    err_ << "pipec-launcher: " << line << '\n' << std::flush;
  }
  void error(const std::string& line) { say("error: " + line); }
  void warning(const std::string& line) { say("warning: " + line); }

  bool prepare();
  bool write_ui_metadata();
  std::optional<int> create_or_adopt();
  std::optional<int> create_pods();
  Outcome follow();
  Outcome follow_pods();
  bool delete_pods(bool ps_only);
  void follow_log();
  struct LeaderPod {
    std::string name, container;
    long long restarts = 0;  // the container's restartCount
  };
  std::optional<LeaderPod> find_leader_pod();
  bool pods_running();
  bool read_previous_log(const LeaderPod& pod);
  std::string log_path(const LeaderPod& pod, const char* options) const;
  HttpResponse stream_log(const std::string& path);
  void report_failure();
  bool delete_job();
  bool write_metrics();
  void report_api_error(const HttpResponse& r, std::string_view verb, std::string_view resource);
  HttpResponse call(std::string_view method, const std::string& path, const std::string& body = {});
  void sleep_for(milliseconds d, const std::atomic<bool>* also = nullptr);

  std::string jobs_path() const {
    return fmt::format("/apis/{}/namespaces/{}/{}", api_version_, ns_, kind_.plural);
  }
  std::string job_path() const { return jobs_path() + "/" + name_; }
  std::string resource() const {
    return fmt::format("{}.{}", kind_.plural, api_version_.substr(0, api_version_.find('/')));
  }

  const LauncherOptions& o_;
  const ConnectFn& connect_;
  KubeClient* client_ = nullptr;  // set once the arguments are checked
  std::ostream& out_;
  std::ostream& err_;
  const std::atomic<bool>& stop_;
  std::mutex err_mutex_;

  json job_;
  bool pods_mode_ = false;  // runtime "pods": the TFJob as Pods and Services (pods_)
  TfPods pods_;
  std::set<std::pair<std::string, std::string>> owned_;  // (plural, name) created or adopted
  json source_job_;                // as rendered (an operator's job), for the UI metadata
  std::string source_replica_map_; // its replica-spec map
  std::string source_kind_;        // the rendered job's kind (a TrainJob is made of it)
  std::string name_, ns_, api_version_;
  JobKind kind_;
  std::optional<MetricScraper> scraper_;
  std::string failure_reason_;

  // A 403 on listing pods or reading pods/log: reported once each, and exit 4 (docs/runtime.md).
  std::atomic<bool> pods_forbidden_{false};
  std::atomic<bool> log_forbidden_{false};
  std::atomic<bool> job_done_{false};
  std::atomic<bool> log_abort_{false};
  std::atomic<bool> log_finished_{false};
  std::mutex log_mutex_;
  std::condition_variable log_cv_;
  LogCursor cursor_;       // of the pod below; the log thread's alone
  std::string cursor_pod_;
  long long cursor_restarts_ = 0;  // restartCount of the container the cursor has read
};

void Launcher::sleep_for(milliseconds d, const std::atomic<bool>* also) {
  auto until = Clock::now() + d;
  while (Clock::now() < until && !stop_ && !(also && *also))
    std::this_thread::sleep_for(std::min<milliseconds>(milliseconds(20), d));
}

// A 403 is either the authorizer's (RBAC: "... is forbidden: User \"...\" cannot VERB
// resource ...") or an admission webhook's refusal of the object ("admission webhook
// \"NAME\" denied the request: REASON"), which no Role changes.
void Launcher::report_api_error(const HttpResponse& r, std::string_view verb,
                                std::string_view res) {
  if (r.status == 403) {
    json body = json::parse(r.body, nullptr, false);
    std::string message = text(body, "message");
    static constexpr std::string_view kWebhook = "admission webhook \"";
    static constexpr std::string_view kDenied = "\" denied the request: ";
    if (message.rfind(kWebhook, 0) == 0) {
      auto end = message.find(kDenied, kWebhook.size());
      if (end != std::string::npos) {
        error(fmt::format("cannot {} {} in namespace '{}': the admission webhook {} refused it: {}", verb,
                          res, ns_, message.substr(kWebhook.size(), end - kWebhook.size()),
                          message.substr(end + kDenied.size())));
        return;
      }
    }
    bool rbac = message.find(" is forbidden: User \"") != std::string::npos;
    error(fmt::format("forbidden: cannot {} {} in namespace '{}': {}", verb, res, ns_,
                      status_message(r)));
    if (rbac)
      say("note: the step's service account needs the Role in runtime/deploy/rbac.yaml "
          "(kubectl apply -n " + ns_ + " -f runtime/deploy/rbac.yaml)");
    return;
  }
  error(fmt::format("cannot {} {} in namespace '{}': {}", verb, res, ns_, status_message(r)));
}

// A request retried on 5xx, 429 and no answer. A stop signal sends nothing more: the
// answer is then `cancelled` (status 0) unless a request already got a final one.
HttpResponse Launcher::call(std::string_view method, const std::string& path,
                            const std::string& body) {
  HttpResponse r;
  r.cancelled = true;
  r.error = "stopped by a signal";
  for (int attempt = 0; attempt < std::max(1, o_.api_retries); ++attempt) {
    if (attempt > 0) sleep_for(o_.retry_delay);
    if (stop_) break;
    r = client_->request(method, path, body);
    if (!transient(r)) break;
  }
  return r;
}

bool Launcher::prepare() {
  auto rendered = render_job_from_args(o_.manifest, o_.bind_args, o_.value_args);
  if (!rendered.ok) {
    error(rendered.error);
    return false;
  }
  job_ = json::parse(rendered.job);
  source_job_ = job_;
  // Where it runs: the operator's CRD as rendered, or Trainer v2's TrainJob made from it.
  const std::string source_kind = text(job_, "kind");
  source_kind_ = source_kind;
  if (!is_training_runtime(source_kind, o_.runtime))
    return error(fmt::format("--runtime '{}': expected 'operator', 'trainer-v2' for a "
                             "pytorch_job or an mpi_job, or 'pods' for a tf_job",
                             o_.runtime)),
           false;
  pods_mode_ = o_.runtime == "pods";
  if (!o_.tf_chief_role.empty() && o_.tf_chief_role != "chief" && o_.tf_chief_role != "master")
    return error(fmt::format("--tf-chief-role '{}': expected 'chief' or 'master'", o_.tf_chief_role)), false;
  if (o_.runtime == "trainer-v2") {
    if (!o_.trainer_runtime.empty() && !is_dns1123_subdomain(o_.trainer_runtime))
      return error(fmt::format("--trainer-runtime '{}': not a Kubernetes name", o_.trainer_runtime)),
             false;
    auto train_job = to_trainjob(rendered.job, o_.trainer_runtime);
    if (!train_job.ok) return error(train_job.error), false;
    job_ = json::parse(train_job.job);
  }
  // Metrics: fixed specs, then specs given by run-time values.
  std::vector<MetricSpec> specs;
  std::string why;
  for (const auto& arg : o_.metric_args) {
    auto s = parse_metric_spec(arg, why);
    if (!s) return error(why), false;
    specs.push_back(std::move(*s));
  }
  auto value_text = [&](const std::string& value_name) {
    std::optional<std::string> text;
    for (const auto& v : o_.value_args) {
      std::string n, t, e;
      if (parse_value(v, n, t, e) && n == value_name) text = t;
    }
    return text;
  };
  for (const auto& value_name : o_.metric_value_args) {
    std::optional<std::string> text = value_text(value_name);
    if (!text) return error(fmt::format("no --value for '{}' (--metric-value)", value_name)), false;
    auto s = parse_metric_spec(*text, why);
    if (!s) return error(fmt::format("value '{}': {}", value_name, why)), false;
    specs.push_back(std::move(*s));
  }
  for (const auto& value_name : o_.metric_list_value_args) {
    std::optional<std::string> text = value_text(value_name);
    if (!text) return error(fmt::format("no --value for '{}' (--metric-list-value)", value_name)), false;
    json list = input::parse_json(*text);
    if (list.is_discarded() || !list.is_array())
      return error(fmt::format("value '{}' must be a JSON list of metric specs, got {}", value_name,
                               json(*text).dump())),
             false;
    for (const auto& item : list) {
      auto s = item.is_string() ? parse_metric_spec(item.get<std::string>(), why) : std::nullopt;
      if (!s) {
        if (!item.is_string()) why = "a metric spec must be a string, got " + item.dump();
        return error(fmt::format("value '{}': {}", value_name, why)), false;
      }
      specs.push_back(std::move(*s));
    }
  }
  if (!check_metric_specs(specs, why)) return error(why), false;
  scraper_.emplace(std::move(specs));

  // Where the job goes, what it is called, which pod speaks for it.
  api_version_ = job_["apiVersion"].get<std::string>();
  auto kind = job_["kind"].get<std::string>();
  source_replica_map_ = kind == "MPIJob"       ? "mpiReplicaSpecs"
                        : kind == "TFJob"      ? "tfReplicaSpecs"
                        : kind == "PyTorchJob" ? "pytorchReplicaSpecs"
                                               : "pytorchReplicaSpecs";
  if (kind == "MPIJob") kind_ = {"mpijobs", "mpiReplicaSpecs", "launcher", false};
  if (kind == "TFJob") kind_ = {"tfjobs", "tfReplicaSpecs", "worker", true};
  if (kind == "PyTorchJob") kind_ = {"pytorchjobs", "pytorchReplicaSpecs", "worker", true};
  if (kind == "TrainJob") {
    // The leader: the MPI runtime's launcher job, else node 0.
    kind_ = {"trainjobs", "", source_kind_ == "MPIJob" ? "launcher" : "node", true};
    kind_.job_label = "jobset.sigs.k8s.io/jobset-name";
    kind_.type_label = "jobset.sigs.k8s.io/replicatedjob-name";
    kind_.index_label = "jobset.sigs.k8s.io/job-index";
    // Job `node` is one indexed Job of numNodes pods: node 0 is its completion index 0.
    kind_.leader_extra = "batch.kubernetes.io/job-completion-index=0";
  }
  const json& replicas = at(job_, "spec", kind_.replica_map.c_str());
  if (kind == "TFJob" && replicas.contains("Chief")) kind_.leader_type = "chief", kind_.leader_index = false;
  else if (kind != "MPIJob" && replicas.contains("Master")) kind_.leader_type = "master", kind_.leader_index = false;

  // Pods and Services are named <job>-<role>-<index> and must stay DNS-1035 labels (63).
  name_ = pods_mode_ ? lower_dns_label(o_.step_name, kMaxPodsJobName) : job_name_for_step(o_.step_name);
  json& meta = job_["metadata"];
  if (!meta.is_object()) meta = json::object();
  meta.erase("generateName");
  meta.erase("resourceVersion");
  meta.erase("uid");
  meta["name"] = name_;
  if (!meta["labels"].is_object()) meta["labels"] = json::object();
  if (!o_.workflow_name.empty())
    meta["labels"]["pipelines.kubeflow.org/workflow"] = label_value(o_.workflow_name);
  meta["labels"]["pipelines.kubeflow.org/step"] = label_value(o_.step_name);
  if (!o_.pod_uid.empty()) {
    meta["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                            {"kind", "Pod"},
                                            {"name", o_.step_name},
                                            {"uid", o_.pod_uid},
                                            {"blockOwnerDeletion", false},
                                            {"controller", false}}});
  } else if (!o_.dry_run) {
    warning("POD_UID is not set: the job will not be deleted with the workflow");
  }
  return true;
}

bool Launcher::write_ui_metadata() {
  if (o_.tensorboard.empty()) return true;
  // Find the data volume whose mount holds the log directory (in the job as rendered,
  // before any TrainJob was made of it: the same volumes).
  const json& replicas = at(source_job_, "spec", source_replica_map_.c_str());
  for (const auto& [type, replica] : replicas.items()) {
    const json& spec = at(replica, "template", "spec");
    if (!spec.contains("containers")) continue;
    for (const auto& container : at(spec, "containers")) {
      if (!container.contains("volumeMounts")) continue;
      for (const auto& mount : at(container, "volumeMounts")) {
        auto vname = text(mount, "name");
        auto path = text(mount, "mountPath");
        if (vname.rfind("data-", 0) != 0) continue;
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        const auto& tb = o_.tensorboard;
        bool inside = tb == path || (tb.rfind(path, 0) == 0 && (path == "/" || tb[path.size()] == '/'));
        if (!inside) continue;
        std::string sub = tb.substr(path.size());
        while (!sub.empty() && sub.front() == '/') sub.erase(sub.begin());
        json volume;
        for (const auto& v : at(spec, "volumes"))
          if (text(v, "name") == vname) volume = v;
        if (volume.is_null()) continue;
        json doc = {{"version", 1},
                    {"outputs",
                     json::array({{{"type", "tensorboard"},
                                   {"source", "volume://" + vname + (sub.empty() ? "" : "/" + sub)},
                                   {"pod_template_spec",
                                    {{"spec",
                                      {{"containers", json::array({{{"volumeMounts",
                                                                      json::array({{{"name", vname},
                                                                                    {"mountPath", path}}})}}})},
                                       {"volumes", json::array({volume})}}}}}}})}};
        std::string why;
        if (!write_file_atomically(o_.ui_metadata_file, doc.dump() + "\n", why)) {
          error(why);
          return false;
        }
        return true;
      }
    }
  }
  error(fmt::format("--tensorboard '{}' is not inside a data volume of the job", o_.tensorboard));
  return false;
}

std::optional<int> Launcher::create_or_adopt() {
  if (pods_mode_) return create_pods();
  auto stopped = [this] {
    say("stopped by a signal before the job was created; nothing was sent after it");
    return kExitStopped;
  };
  auto r = call("POST", jobs_path(), job_.dump());
  if (r.status == 201 || r.status == 200) {
    say(fmt::format("created {} {}/{}", job_["kind"].get<std::string>(), ns_, name_));
    return std::nullopt;  // a stop now ends the following at once, and deletes the job
  }
  if (r.cancelled || (stop_ && transient(r))) return stopped();
  if (r.status == 409) {
    auto g = call("GET", job_path());
    if (g.cancelled || (stop_ && transient(g))) return stopped();
    if (!g.ok()) {
      report_api_error(g, "get", resource());
      return kExitApiError;
    }
    json existing = input::parse_json(g.body);
    std::string step;
    step = text(at(existing, "metadata", "labels"), "pipelines.kubeflow.org/step");
    if (step != label_value(o_.step_name)) {
      error(fmt::format("{} '{}' already exists in namespace '{}' and belongs to another step "
                        "(label pipelines.kubeflow.org/step is '{}')",
                        resource(), name_, ns_, step));
      return kExitApiError;
    }
    say(fmt::format("adopted the existing {} {}/{} (the step was restarted)",
                    job_["kind"].get<std::string>(), ns_, name_));
    return std::nullopt;
  }
  report_api_error(r, "create", resource());
  return kExitApiError;
}

std::string job_phase(const json& job, std::string* reason) {
  std::string phase = "Pending";
  for (const auto& c : at(job, "status", "conditions")) {
    if (text(c, "status") != "True") continue;
    auto type = text(c, "type");
    // A TrainJob (from its JobSet) says Complete where the operator's jobs say Succeeded.
    if (type == "Complete") type = "Succeeded";
    if (type == "Failed" || type == "Succeeded") {
      if (reason) {
        auto why = text(c, "reason");
        auto msg = text(c, "message");
        *reason = why.empty() ? msg : msg.empty() ? why : why + ": " + msg;
      }
      return type;
    }
    phase = type;
  }
  // A TrainJob has no Running condition (Trainer v2.3.0: Suspended, Complete, Failed). Its
  // nodes run when a Job of its JobSet is ready, every pod of it ready or done, or has
  // ended: status.jobsStatus, Trainer's copy of the JobSet's replicatedJobsStatus.
  if (phase == "Pending" && text(job, "kind") == "TrainJob") {
    for (const auto& j : at(job, "status", "jobsStatus"))
      if (integer(j, "ready") > 0 || integer(j, "succeeded") > 0 || integer(j, "failed") > 0) return "Running";
  }
  return phase;
}

Launcher::Outcome Launcher::follow() {
  if (pods_mode_) return follow_pods();
  auto start = Clock::now();
  std::optional<Clock::time_point> running_since;
  std::string phase, rv;
  int failures = 0;
  bool polling = false;

  auto observe = [&](const json& obj) -> std::optional<Outcome> {
    std::string reason;
    auto p = job_phase(obj, &reason);
    if (p != phase) {
      phase = p;
      say(fmt::format("job {} is {}", name_, phase));
    }
    if ((p == "Running" || p == "Restarting") && !running_since) running_since = Clock::now();
    if (p == "Succeeded") return Outcome::Succeeded;
    if (p == "Failed") {
      failure_reason_ = reason;
      return Outcome::Failed;
    }
    return std::nullopt;
  };
  auto timed_out = [&]() -> std::optional<Outcome> {
    auto now = Clock::now();
    if (!running_since && o_.pending_timeout.count() > 0 && now - start >= o_.pending_timeout) {
      // A TrainJob's JobSet counts a Job ready only when all its pods are (an MPI node's
      // sshd waits for its readiness probe): before its pending timeout ends it, a TrainJob
      // whose pods already run is running.
      if (kind_.plural != "trainjobs" || !pods_running()) return Outcome::PendingTimeout;
      say(fmt::format("job {} is Running (its pods run)", name_));
      phase = "Running";
      running_since = now;
    }
    if (running_since && o_.running_timeout.count() > 0 &&
        now - *running_since >= o_.running_timeout)
      return Outcome::RunningTimeout;
    return std::nullopt;
  };

  // An API server that answers nothing useful for api_outage_limit ends the launcher.
  std::optional<Clock::time_point> outage;
  auto outage_over = [&](const HttpResponse& r) {
    if (!outage) outage = Clock::now();
    if (Clock::now() - *outage < o_.api_outage_limit) return false;
    error(fmt::format("the API server has not answered for {}: {}", format_duration(o_.api_outage_limit),
                      status_message(r)));
    return true;
  };

  while (true) {
    if (stop_) return Outcome::Stopped;
    if (auto t = timed_out()) return *t;
    if (polling || rv.empty()) {
      auto r = client_->request("GET", job_path());
      if (r.status == 404) return Outcome::Deleted;
      if (r.ok()) {
        outage.reset();
        json obj = input::parse_json(r.body);
        if (obj.is_object()) {
          rv = text(at(obj, "metadata"), "resourceVersion");
          if (auto o = observe(obj)) return *o;
        }
      } else if (!transient(r)) {
        report_api_error(r, "get", resource());
        return Outcome::ApiError;
      } else {
        if (!outage) warning(fmt::format("cannot get job {}: {}; retrying", name_, status_message(r)));
        if (outage_over(r)) return Outcome::ApiError;
      }
      if (polling || !r.ok()) {
        sleep_for(polling ? o_.poll_interval : o_.retry_delay);
        continue;
      }
    }
    // Watch from the last resourceVersion seen.
    std::string path = fmt::format(
        "{}?watch=true&allowWatchBookmarks=true&timeoutSeconds=300&fieldSelector={}&"
        "resourceVersion={}",
        jobs_path(), url_encode("metadata.name=" + name_), url_encode(rv));
    std::string buffer;
    std::optional<Outcome> result;
    bool gone = false, bad_event = false;
    int events = 0;
    auto began = Clock::now();
    auto r = client_->stream(
        path,
        [&](std::string_view data) {
          buffer.append(data);
          std::size_t nl;
          while ((nl = buffer.find('\n')) != std::string::npos) {
            std::string line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            if (line.empty()) continue;
            json ev = input::parse_json(line);
            if (text(ev, "type").empty() || !at(ev, "object").is_object()) {
              bad_event = true;
              return false;
            }
            ++events;
            auto type = text(ev, "type");
            const json& obj = at(ev, "object");
            if (type == "ERROR") {
              if (integer(obj, "code") == 410) gone = true;
              else bad_event = true;
              return false;
            }
            if (auto v = text(at(obj, "metadata"), "resourceVersion"); !v.empty()) rv = v;
            if (type == "DELETED") {
              result = Outcome::Deleted;
              return false;
            }
            if (type == "ADDED" || type == "MODIFIED") {
              result = observe(obj);
              if (result) return false;
            }
          }
          // One event is one line: a line that does not end within the bound is not one.
          if (buffer.size() > input::kMaxWatchEventBytes) {
            bad_event = true;
            return false;
          }
          return true;
        },
        [&] { return stop_.load() || timed_out().has_value(); });
    if (events > 0) outage.reset();
    if (result) return *result;
    if (gone) {  // the resourceVersion is too old: start again from a GET
      rv.clear();
      continue;
    }
    if (r.cancelled) continue;
    if (r.status == 403) {
      report_api_error(r, "watch", resource());
      return Outcome::ApiError;
    }
    bool quick_empty_close = r.ok() && events == 0 && Clock::now() - began < milliseconds(1000);
    if (r.ok() && !bad_event && !quick_empty_close) {
      failures = 0;
      continue;
    }
    ++failures;
    if (!r.ok() && outage_over(r)) return Outcome::ApiError;
    warning(fmt::format("the watch of job {} was interrupted ({}); reconnecting", name_,
                        bad_event ? "a malformed event" : r.ok() ? "closed at once" : status_message(r)));
    if (failures >= o_.watch_failures_before_polling) {
      polling = true;
      warning(fmt::format("watching failed {} times; polling job {} every {}", failures, name_,
                          format_duration(o_.poll_interval)));
    }
    sleep_for(o_.retry_delay);
  }
}

// Whether a pod of the job is running (phase Running).
bool Launcher::pods_running() {
  auto r = client_->request("GET", fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", ns_,
                                              url_encode(kind_.job_label + "=" + name_)));
  if (!r.ok()) {
    if (r.status == 403 && !pods_forbidden_.exchange(true)) report_api_error(r, "list", "pods");
    return false;
  }
  json list = json::parse(r.body, nullptr, false);
  for (const auto& p : at(list, "items"))
    if (text(at(p, "status"), "phase") == "Running") return true;
  return false;
}

std::optional<Launcher::LeaderPod> Launcher::find_leader_pod() {
  std::string selector =
      fmt::format("{}={},{}={}", kind_.job_label, name_, kind_.type_label, kind_.leader_type);
  if (kind_.leader_index) selector += "," + kind_.index_label + "=0";
  if (!kind_.leader_extra.empty()) selector += "," + kind_.leader_extra;
  auto r = client_->request("GET", fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", ns_,
                                              url_encode(selector)));
  if (!r.ok()) {
    if (r.status == 403 && !pods_forbidden_.exchange(true)) report_api_error(r, "list", "pods");
    return std::nullopt;
  }
  json list = input::parse_json(r.body);
  if (!at(list, "items").is_array()) return std::nullopt;
  const json* best = nullptr;
  auto key = [](const json& p) {
    return std::pair{text(at(p, "metadata"), "creationTimestamp"), text(at(p, "metadata"), "name")};
  };
  for (const auto& p : at(list, "items"))
    if (p.is_object() && (!best || key(p) > key(*best))) best = &p;
  if (!best) return std::nullopt;
  LeaderPod pod;
  pod.name = text(at(*best, "metadata"), "name");
  const json& containers = at(*best, "spec", "containers");
  if (containers.is_array()) {
    for (const auto& c : containers) {
      auto n = text(c, "name");
      if (n == "tensorflow" || n == "pytorch" || n == "node") pod.container = n;
    }
    if (pod.container.empty() && !containers.empty()) pod.container = text(containers[0], "name");
  }
  for (const auto& cs : at(*best, "status", "containerStatuses"))
    if (text(cs, "name") == pod.container) pod.restarts = integer(cs, "restartCount");
  return pod;
}

// The container restarted since the cursor last read it: what the old container printed
// after the last line seen is only in its `previous` log. Returns false to try again later.
bool Launcher::read_previous_log(const LeaderPod& pod) {
  auto r = stream_log(log_path(pod, "&previous=true"));
  return r.ok() || !(transient(r) && !r.cancelled);  // e.g. 400: no previous container left
}

// The log request of `pod` from the cursor's position, with extra query `options`.
std::string Launcher::log_path(const LeaderPod& pod, const char* options) const {
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/log?timestamps=true", ns_,
                                 url_encode(pod.name));
  if (!pod.container.empty()) path += "&container=" + url_encode(pod.container);
  path += options;
  if (auto since = cursor_.since_time(); !since.empty()) path += "&sinceTime=" + url_encode(since);
  return path;
}

// Copies one log stream to stdout through the cursor; a complete stream keeps its last line.
HttpResponse Launcher::stream_log(const std::string& path) {
  LogCopier copier(cursor_, out_, *scraper_);
  auto r = client_->stream(
      path,
      [&](std::string_view data) {
        copier.feed(data);
        for (auto& w : scraper_->take_warnings()) warning(w);
        return true;
      },
      [&] { return log_abort_.load(); },
      [&] { copier.flush(); });
  if (r.ok()) copier.finish();
  else copier.flush();  // the complete lines; the rest comes again after the cursor
  for (auto& w : scraper_->take_warnings()) warning(w);
  if (r.status == 403 && !log_forbidden_.exchange(true)) report_api_error(r, "get", "pods/log");
  return r;
}

void Launcher::follow_log() {
  while (!log_abort_) {
    bool final_pass = job_done_.load();
    auto pod = find_leader_pod();
    if (!pod) {
      if (final_pass) break;
      sleep_for(o_.retry_delay, &log_abort_);
      continue;
    }
    if (pod->name != cursor_pod_) {  // a new pod (restarted launcher): a new log
      cursor_ = LogCursor();
      cursor_pod_ = pod->name;
      cursor_restarts_ = 0;
    }
    // The same pod, a new container (a restart; also when first seen after one): finish the
    // old container's log, then read the new one after it.
    if (pod->restarts > cursor_restarts_) {
      if (!read_previous_log(*pod)) {
        if (final_pass || log_abort_) break;
        sleep_for(o_.retry_delay, &log_abort_);
        continue;
      }
      cursor_restarts_ = pod->restarts;
    }
    auto r = stream_log(log_path(*pod, final_pass ? "" : "&follow=true"));
    if (final_pass || log_abort_) break;
    // The stream ended while the job runs: the container exited or restarted, or the
    // connection dropped. Wait a little and continue after the last line printed.
    sleep_for(o_.retry_delay, &job_done_);
  }
  {
    std::lock_guard lock(log_mutex_);
    log_finished_ = true;
  }
  log_cv_.notify_all();
}

void Launcher::report_failure() {
  error(fmt::format("job {} failed{}", name_, failure_reason_.empty() ? "" : ": " + failure_reason_));
  auto r = client_->request("GET", fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", ns_,
                                              url_encode(kind_.job_label + "=" + name_)));
  if (!r.ok()) return;
  json list = input::parse_json(r.body);
  if (!at(list, "items").is_array()) return;
  // The failing pod: a failed phase or a container that ended with a non-zero code.
  const json* pod = nullptr;
  std::string container;
  bool previous = false;
  for (const auto& p : at(list, "items")) {
    bool leader = text(at(p, "metadata", "labels"), kind_.type_label.c_str()) == kind_.leader_type;
    // An init container (git-sync) that failed stops the pod before training starts.
    for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
      for (const auto& cs : at(p, "status", list)) {
        for (const char* state : {"state", "lastState"}) {
          const json& term = at(cs, state, "terminated");
          if (integer(term, "exitCode") != 0 && (!pod || leader)) {
            pod = &p;
            container = text(cs, "name");
            previous = std::string_view(state) == "lastState" && at(cs, "state", "terminated").is_null();
          }
        }
      }
    }
    if (!pod && text(at(p, "status"), "phase") == "Failed") pod = &p;
  }
  if (!pod) return;
  auto pod_name = text(at(*pod, "metadata"), "name");
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/log?tailLines={}", ns_,
                                 url_encode(pod_name), o_.failure_log_lines);
  if (!container.empty()) path += "&container=" + url_encode(container);
  if (previous) path += "&previous=true";
  auto log = client_->request("GET", path);
  if (!log.ok()) return;
  say(fmt::format("last lines of pod {}{}:", pod_name, container.empty() ? "" : " (" + container + ")"));
  std::lock_guard lock(err_mutex_);
  std::size_t start = 0;
  while (start < log.body.size()) {
    auto nl = log.body.find('\n', start);
    if (nl == std::string::npos) nl = log.body.size();
    err_ << "  | " << std::string_view(log.body).substr(start, nl - start) << '\n';
    start = nl + 1;
  }
  err_.flush();
}

bool Launcher::delete_job() {
  if (pods_mode_) return delete_pods(false);
  json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  HttpResponse r;
  for (int attempt = 0; attempt < std::max(1, o_.api_retries); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(o_.retry_delay);  // even when stopping
    r = client_->request("DELETE", job_path(), options.dump());
    if (!transient(r)) break;
  }
  if (r.ok() || r.status == 404) {
    say(fmt::format("deleted job {}", name_));
    return true;
  }
  report_api_error(r, "delete", resource());
  return false;
}

// Runtime "pods": the headless Services first (so every name resolves when the pods
// start), then the Pods, each with its TF_CONFIG. One that exists already is adopted when
// it carries this step's label (a restarted step), else it is an error. Whatever was
// created is deleted again when a later request fails.
std::optional<int> Launcher::create_pods() {
  const json& meta = job_["metadata"];
  json owner = at(meta, "ownerReferences").is_array() && !meta["ownerReferences"].empty()
                   ? meta["ownerReferences"][0]
                   : json();
  pods_ = tfjob_to_pods(job_, name_, ns_, at(meta, "labels"), owner, o_.tf_chief_role == "master");
  if (!pods_.ok) {
    error(pods_.error);
    return kExitBadArguments;
  }
  int created = 0;
  auto fail = [&](int code) -> std::optional<int> {
    if (created > 0) (void)delete_pods(false);
    return code;
  };
  auto make = [&](const char* plural, const json& object) -> std::optional<int> {
    std::string path = fmt::format("/api/v1/namespaces/{}/{}", ns_, plural);
    std::string name = text(at(object, "metadata"), "name");
    auto r = call("POST", path, object.dump());
    if (r.status == 201 || r.status == 200) {
      ++created;
      owned_.insert({plural, name});
      return std::nullopt;
    }
    if (r.cancelled || (stop_ && transient(r))) {
      say("stopped by a signal while creating the job's pods; nothing more was sent");
      return fail(kExitStopped);
    }
    if (r.status == 409) {
      auto g = call("GET", path + "/" + name);
      if (g.ok()) {
        json existing = input::parse_json(g.body);
        std::string step = text(at(existing, "metadata", "labels"), "pipelines.kubeflow.org/step");
        if (step == label_value(o_.step_name)) {  // adopted: the step was restarted
          owned_.insert({plural, name});
          ++created;
          return std::nullopt;
        }
        error(fmt::format("{} '{}' already exists in namespace '{}' and belongs to another step "
                          "(label pipelines.kubeflow.org/step is '{}')",
                          plural, name, ns_, step));
        return fail(kExitApiError);
      }
      r = g;
    }
    report_api_error(r, "create", plural);
    return fail(kExitApiError);
  };
  // Each made just before it is sent: all at once would hold every TF_CONFIG (issue 25).
  for (std::size_t i = 0; i < pods_.size(); ++i)
    if (auto code = make("services", pods_.service(i))) return code;
  for (std::size_t i = 0; i < pods_.size(); ++i)
    if (auto code = make("pods", pods_.pod(i))) return code;
  say(fmt::format("created {} pods and {} services for TFJob {}/{} (runtime pods)", pods_.size(),
                  pods_.size(), ns_, name_));
  return std::nullopt;
}

// Runtime "pods": the job's outcome from its pods, as the TFJob operator decides it: the
// chief (or master) when there is one; otherwise worker 0, or every worker with
// successPolicy AllWorkers. Any pod that fails fails the job. The ps never end.
Launcher::Outcome Launcher::follow_pods() {
  auto start = Clock::now();
  std::optional<Clock::time_point> running_since;
  Clock::time_point outage_began{};  // when requests began to fail; {} while they answer
  std::string phase;
  const bool all_workers = text(at(job_, "spec"), "successPolicy") == "AllWorkers";
  bool has_chief = false;
  for (const auto& r : pods_.replicas) has_chief |= r.role == "chief" || r.role == "master";
  auto set_phase = [&](const std::string& p) {
    if (p == phase) return;
    phase = p;
    say(fmt::format("job {} is {}", name_, phase));
  };
  const std::string path = fmt::format(
      "/api/v1/namespaces/{}/pods?labelSelector={}", ns_,
      url_encode("training.kubeflow.org/job-name=" + name_));
  while (true) {
    if (stop_) return Outcome::Stopped;
    auto now = Clock::now();
    if (!running_since && o_.pending_timeout.count() > 0 && now - start >= o_.pending_timeout)
      return Outcome::PendingTimeout;
    if (running_since && o_.running_timeout.count() > 0 && now - *running_since >= o_.running_timeout)
      return Outcome::RunningTimeout;
    auto r = client_->request("GET", path);
    if (!r.ok()) {
      if (!transient(r)) {
        report_api_error(r, "list", "pods");
        return Outcome::ApiError;
      }
      if (outage_began == Clock::time_point{}) {
        outage_began = Clock::now();
        warning(fmt::format("cannot list the pods of job {}: {}; retrying", name_, status_message(r)));
      } else if (Clock::now() - outage_began >= o_.api_outage_limit) {
        error(fmt::format("the API server has not answered for {}: {}", format_duration(o_.api_outage_limit),
                          status_message(r)));
        return Outcome::ApiError;
      }
      sleep_for(o_.retry_delay);
      continue;
    }
    outage_began = Clock::time_point{};
    json list = input::parse_json(r.body);
    std::map<std::string, const json*> by_name;
    for (const auto& p : at(list, "items")) by_name[text(at(p, "metadata"), "name")] = &p;
    bool any_running = false, leader_done = false, workers_done = true, worker0_done = false;
    for (const auto& replica : pods_.replicas) {
      auto it = by_name.find(replica.name);
      if (it == by_name.end()) {
        failure_reason_ = fmt::format("pod {} was deleted", replica.name);
        return Outcome::Deleted;
      }
      std::string p = text(at(*it->second, "status"), "phase");
      if (p == "Failed") {
        std::string why;
        for (const auto& cs : at(*it->second, "status", "containerStatuses")) {
          const json& term = at(cs, "state", "terminated");
          if (term.is_object())
            why = fmt::format(": container {} exited with {}{}", text(cs, "name"), integer(term, "exitCode"),
                              text(term, "reason").empty() ? "" : " (" + text(term, "reason") + ")");
        }
        failure_reason_ = fmt::format("pod {} ({} {}) failed{}", replica.name, replica.role, replica.index, why);
        set_phase("Failed");
        return Outcome::Failed;
      }
      any_running |= p == "Running";
      bool done = p == "Succeeded";
      if (replica.role == "chief" || replica.role == "master") leader_done = done;
      if (replica.role == "worker") {
        workers_done &= done;
        if (replica.index == 0) worker0_done = done;
      }
    }
    bool succeeded = has_chief ? leader_done : all_workers ? workers_done : worker0_done;
    if (succeeded) {
      set_phase("Succeeded");
      return Outcome::Succeeded;
    }
    if (any_running) {
      set_phase("Running");
      if (!running_since) running_since = Clock::now();
    } else {
      set_phase("Pending");
    }
    sleep_for(o_.poll_interval);
  }
}

// Runtime "pods": deletes the job's pods and services (with `ps_only`, the ps pods alone:
// they never exit by themselves). A pod or service already gone counts as deleted.
bool Launcher::delete_pods(bool ps_only) {
  json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  bool ok = true;
  int deleted = 0;
  auto remove = [&](const char* plural, const std::string& name) {
    HttpResponse r;
    for (int attempt = 0; attempt < std::max(1, o_.api_retries); ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(o_.retry_delay);  // even when stopping
      r = client_->request("DELETE", fmt::format("/api/v1/namespaces/{}/{}/{}", ns_, plural, name),
                           options.dump());
      if (!transient(r)) break;
    }
    if (r.ok() || r.status == 404) {
      ++deleted;
      return;
    }
    report_api_error(r, "delete", plural);
    ok = false;
  };
  // Only what this step created or adopted: never another step's pod in the way.
  for (const auto& replica : pods_.replicas) {
    if (ps_only && replica.role != "ps") continue;
    if (owned_.count({"pods", replica.name})) remove("pods", replica.name);
    if (!ps_only && owned_.count({"services", replica.name})) remove("services", replica.name);
  }
  if (ps_only) {
    if (deleted > 0) say(fmt::format("deleted the {} ps pods of job {} (they never exit)", deleted, name_));
  } else if (ok) {
    say(fmt::format("deleted job {} ({} pods and services)", name_, deleted));
  }
  return ok;
}

bool Launcher::write_metrics() {
  scraper_->finish();
  for (auto& w : scraper_->take_warnings()) warning(w);
  std::string why;
  if (!write_file_atomically(o_.metrics_file, scraper_->metrics_json(), why)) {
    error(why);
    return false;
  }
  if (!o_.executor_input.empty()) {
    // KFP v2 reads the metrics from the ExecutorOutput as the metrics artifact's metadata.
    std::string file, output;
    if (!scraper_->executor_output(o_.executor_input, file, output, why) ||
        !write_file_atomically(file, output, why)) {
      error(why);
      return false;
    }
  }
  for (std::size_t i = 0; i < scraper_->specs().size(); ++i)
    if (!scraper_->value(i))
      warning(fmt::format("metric '{}' was not found in the log", scraper_->specs()[i].name));
  return true;
}

int Launcher::run() {
  if (!prepare()) return kExitBadArguments;
  if (o_.dry_run) {
    // Everything is checked that can be without the cluster: print what would be created.
    out_ << job_.dump(2) << '\n' << std::flush;
    return kExitSucceeded;
  }
  if (!write_ui_metadata()) return kExitBadArguments;
  // Only now the API: a bad value never waits for (or fails on) the cluster configuration.
  std::string why;
  client_ = connect_(why);
  // From here on every exit writes the metrics file, so KFP always finds its output.
  if (!client_) {
    error(why);
    write_metrics();
    return kExitApiError;
  }
  ns_ = o_.namespace_name.empty() ? client_->config().namespace_name : o_.namespace_name;
  if (ns_.empty()) {
    error("no namespace: give --namespace");
    write_metrics();
    return kExitBadArguments;
  }
  if (!is_dns_label(ns_)) {  // it goes into request paths
    error(fmt::format("namespace '{}' is not a valid namespace name (lower-case letters, digits "
                      "and '-', at most 63)", ns_));
    write_metrics();
    return kExitBadArguments;
  }
  job_["metadata"]["namespace"] = ns_;
  if (auto code = create_or_adopt()) {
    write_metrics();
    return *code;
  }
  std::thread log_thread([this] { follow_log(); });
  Outcome outcome = follow();
  job_done_ = true;
  // Runtime "pods": the parameter servers never exit; once the job has ended they go at
  // once, even with --keep-job (whose pods otherwise stay to be looked at).
  if (pods_mode_ && (outcome == Outcome::Succeeded || outcome == Outcome::Failed)) (void)delete_pods(true);

  // Say why it ends, and for an end the job did not reach itself (a timeout, an API error,
  // a stop) delete the job first: its pods may still hold GPUs, and their log only ends
  // when they do. A job that succeeded or failed is deleted after its log and failure
  // report are read.
  int code = kExitSucceeded;
  switch (outcome) {
    case Outcome::Succeeded: break;
    case Outcome::Failed: code = kExitFailed; break;
    case Outcome::PendingTimeout:
      error(fmt::format("job {} did not start running within {} (--pending-timeout)", name_,
                        format_duration(o_.pending_timeout)));
      code = kExitTimeout;
      break;
    case Outcome::RunningTimeout:
      error(fmt::format("job {} ran longer than {} (--running-timeout)", name_,
                        format_duration(o_.running_timeout)));
      code = kExitTimeout;
      break;
    case Outcome::Stopped:
      say("stopped by a signal; deleting the job");
      code = kExitStopped;
      break;
    case Outcome::Deleted:
      error(fmt::format("job {} was deleted by someone else", name_));
      code = kExitFailed;
      break;
    case Outcome::ApiError: code = kExitApiError; break;
  }
  bool remove = outcome == Outcome::Stopped || (!o_.keep_job && outcome != Outcome::Deleted);
  bool cut_short = outcome != Outcome::Succeeded && outcome != Outcome::Failed &&
                   outcome != Outcome::Deleted;
  std::optional<bool> deleted;
  if (remove && cut_short) deleted = delete_job();
  // Runtime "pods": no operator stops the other pods of a failed job, and the leader's log
  // ends only when its pod does: say why it failed (the failed pod's last lines), then
  // delete everything, then read the leader's log to its end.
  bool reported = false;
  if (pods_mode_ && outcome == Outcome::Failed) {
    report_failure();
    reported = true;
    if (remove) deleted = delete_job();
  }
  {
    // Let the log catch up with the job's end, but not forever; a stop signal cuts it short.
    std::unique_lock lock(log_mutex_);
    auto until = Clock::now() + (outcome == Outcome::Stopped ? milliseconds(0) : o_.log_grace);
    while (!log_finished_ && Clock::now() < until && !(stop_ && outcome != Outcome::Stopped))
      log_cv_.wait_for(lock, milliseconds(20));
  }
  log_abort_ = true;
  log_thread.join();

  if (outcome == Outcome::Succeeded) say(fmt::format("job {} succeeded", name_));
  if (outcome == Outcome::Failed && !reported) report_failure();
  // The log could not be read for lack of permission: the job's outcome stands, but the
  // step's log and metrics are missing, which a success must not hide.
  if ((log_forbidden_ || pods_forbidden_) && code == kExitSucceeded) {
    error(fmt::format("job {} succeeded, but its log could not be read (forbidden), so the step's "
                      "log and metrics are missing",
                      name_));
    code = kExitApiError;
  }
  if (!write_metrics() && code == kExitSucceeded) code = kExitFailed;
  if (remove && !deleted.has_value()) deleted = delete_job();
  if (remove && !*deleted && code == kExitSucceeded) code = kExitApiError;
  return code;
}

}  // namespace

std::string job_name_for_step(std::string_view step_name) {
  return lower_dns_label(step_name, kMaxJobName);
}

int run_launcher(const LauncherOptions& options, const ConnectFn& connect, std::ostream& out,
                 std::ostream& err, const std::atomic<bool>& stop) {
  Launcher launcher(options, connect, out, err, stop);
  return launcher.run();
}

int run_launcher(const LauncherOptions& options, KubeClient& client, std::ostream& out,
                 std::ostream& err, const std::atomic<bool>& stop) {
  ConnectFn connect = [&client](std::string&) { return &client; };
  return run_launcher(options, connect, out, err, stop);
}

}  // namespace pipec::runtime
