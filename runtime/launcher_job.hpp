#pragma once
// The launcher's state and steps, shared by the files that implement them (internal to
// pipec_runtime): launcher.cpp (the job's life: check, create or adopt, metrics, clean
// up), launcher_follow.cpp (following the job and the leader's log),
// launcher_pods.cpp (runtime "pods": a TFJob as Pods and Services).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/json.hpp"
#include "kube/client.hpp"
#include "rules/retry.hpp"
#include "runtime/job_reasons.hpp"
#include "runtime/launcher.hpp"
#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"
#include "runtime/tf_pods.hpp"
#include "runtime/trainer_status.hpp"

namespace pipec::runtime::launcher_detail {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A label value: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends.
inline std::string label_value(std::string_view text) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  std::string out;
  for (char c : text) out.push_back(alnum(c) || c == '.' || c == '_' || c == '-' ? c : '-');
  if (out.size() > 63) {
    out = out.substr(0, 54) + rules::hash_suffix(text);
  }
  while (!out.empty() && !alnum(out.front())) out.erase(out.begin());
  while (!out.empty() && !alnum(out.back())) out.pop_back();
  return out;
}

inline std::string format_duration(milliseconds d) {
  auto ms = d.count();
  if (ms % 86400000 == 0) return fmt::format("{}d", ms / 86400000);
  if (ms % 3600000 == 0) return fmt::format("{}h", ms / 3600000);
  if (ms % 60000 == 0) return fmt::format("{}m", ms / 60000);
  if (ms % 1000 == 0) return fmt::format("{}s", ms / 1000);
  return fmt::format("{}ms", ms);
}

// Safe reads of API objects (input/json.hpp): a missing key or a wrong type reads as
// null / "" / 0.
using input::member;
using input::member_text;
inline long long integer(const json& j, const char* key) {
  const json& v = member(j, key);
  return v.is_number_integer() ? v.get<long long>() : 0;
}

inline std::string status_message(const kube::HttpResponse& r) {
  if (r.status == 0) return r.error;
  json body = input::parse_json(r.body);
  if (!member_text(body, "message").empty())
    return fmt::format("{} ({})", member_text(body, "message"), r.status);
  return fmt::format("HTTP {}", r.status);
}

inline bool transient(const kube::HttpResponse& r) { return r.status == 0 || r.status >= 500 || r.status == 429; }

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
  // A TrainJob on a runtime known by name only: the pod of its replicated job `launcher`
  // (an MPI runtime's) leads when there is one, else the leader_type's.
  bool launcher_first = false;
  // The label that numbers a replica in messages: the index, or a TrainJob node's rank.
  std::string rank_label = "training.kubeflow.org/replica-index";
};

class Launcher {
 public:
  Launcher(const LauncherOptions& o, const ConnectFn& connect, std::ostream& out,
           std::ostream& err, const std::atomic<bool>& stop)
      : o_(o), connect_(connect), out_(out), err_(err), stop_(stop) {}

  int run();
  /// After run(): the job failed for a reason --retry-on names, attempts are left, and it
  /// was deleted and is gone: run_launcher creates it again (launcher_retry.cpp).
  bool retrying() const { return retrying_; }
  /// This attempt, for the list of attempts: "failed: replica worker 1: OOMKilled (exit
  /// code 137) (memory 12Gi)".
  std::string attempt_summary() const;
  /// The line that says the job is created again, and with what memory.
  std::string retry_line() const;

 private:
  enum class Outcome { Succeeded, Failed, PendingTimeout, RunningTimeout, Stopped, Deleted, ApiError };

  void say(const std::string& line) {
    std::lock_guard lock(err_mutex_);
    err_ << "pipec-launcher: " << line << '\n' << std::flush;
  }
  void error(const std::string& line) { say("error: " + line); }
  void warning(const std::string& line) { say("warning: " + line); }

  bool prepare();
  // Retries (launcher_retry.cpp): the options checked, the rendered job's memory grown for
  // this attempt, the failures of the job's pods kept, the decision.
  bool check_retries();
  void grow_memory(json& rendered);
  void keep_failures(const json& pods);
  void decide_retry();
  bool wait_gone();
  bool write_ui_metadata();
  std::optional<int> precheck();  // launcher_precheck.cpp
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
  void follow_trainer_status(const json& job);
  bool read_previous_log(const LeaderPod& pod);
  std::string log_path(const LeaderPod& pod, const char* options) const;
  kube::HttpResponse stream_log(const std::string& path);
  void report_failure();
  void print_failure_log(const json& pods);
  // Why the job waits (launcher_reasons.cpp): a thread reads it every poll interval until
  // the job runs or the following ends; the pending timeout's message names it.
  void watch_reasons();
  void read_reasons();
  std::string waiting_summary();
  void job_started() {
    started_ = true;
    waiting_over_ = true;
  }
  bool delete_job();
  bool write_metrics();
  void report_api_error(const kube::HttpResponse& r, std::string_view verb, std::string_view resource);
  kube::HttpResponse call(std::string_view method, const std::string& path, const std::string& body = {});
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
  kube::KubeClient* client_ = nullptr;  // set once the arguments are checked
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
  std::optional<TrainerProgress> progress_;  // a TrainJob's trainerStatus, last seen

  long long retry_limit_ = 0;
  std::vector<rules::RetryOn> retry_on_;
  double memory_factor_ = 0;                 // 0: the memory does not grow
  std::string memory_base_, memory_max_;     // the first container's memory as rendered
  std::string memory_;                       // this attempt's memory (the first container's)
  std::vector<rules::Failure> failures_;     // how the failed job's replicas ended
  std::vector<std::string> failure_texts_;   // each said as the list of attempts says it
  std::string outcome_text_;                 // "succeeded", "failed: ...", ...
  bool retrying_ = false;

  std::atomic<bool> started_{false};       // the job has run (or its pods, runtime "pods")
  std::atomic<bool> waiting_over_{false};  // the reasons thread stops
  std::mutex reasons_mutex_;               // one pass at a time; guards the three below
  ReasonLog reasons_;
  std::vector<WaitReason> current_reasons_;  // of the last pass that listed the pods
  std::size_t event_pod_turn_ = 0;           // whose events the next pass reads first
  std::atomic<bool> events_forbidden_{false};

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

/// The job's phase from its conditions: Pending, Running, Succeeded, Failed (with the
/// condition's reason and message in `reason`).
std::string job_phase(const json& job, std::string* reason);

}  // namespace pipec::runtime::launcher_detail
