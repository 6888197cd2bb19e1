// Following a training job to its end, and the leader pod's log as it is written
// (docs/runtime.md, "Following the job"): the job's phase, the log thread, the failure
// report.
#include "runtime/launcher_job.hpp"

#include <functional>
#include <thread>

#include "input/limits.hpp"
#include "runtime/log_copy.hpp"

namespace pipec::runtime::launcher_detail {
using kube::HttpResponse;
using kube::url_encode;

std::string job_phase(const json& job, std::string* reason) {
  std::string phase = "Pending";
  for (const auto& c : member(job, "status", "conditions")) {
    if (member_text(c, "status") != "True") continue;
    auto type = member_text(c, "type");
    // A TrainJob (from its JobSet) says Complete where the operator's jobs say Succeeded.
    if (type == "Complete") type = "Succeeded";
    if (type == "Failed" || type == "Succeeded") {
      if (reason) {
        auto why = member_text(c, "reason");
        auto msg = member_text(c, "message");
        *reason = why.empty() ? msg : msg.empty() ? why : why + ": " + msg;
      }
      return type;
    }
    phase = type;
  }
  // A TrainJob has no Running condition (Trainer v2.3.0: Suspended, Complete, Failed). Its
  // nodes run when a Job of its JobSet is ready, every pod of it ready or done, or has
  // ended: status.jobsStatus, Trainer's copy of the JobSet's replicatedJobsStatus.
  if (phase == "Pending" && member_text(job, "kind") == "TrainJob") {
    for (const auto& j : member(job, "status", "jobsStatus"))
      if (integer(j, "ready") > 0 || integer(j, "succeeded") > 0 || integer(j, "failed") > 0) return "Running";
  }
  return phase;
}

namespace {

// One watch connection's events, one line of JSON each (at most kMaxWatchEventBytes), and
// why the connection ended when it did.
struct WatchLines {
  std::string buffer;
  int events = 0;
  bool gone = false;       // ERROR 410: the resourceVersion is too old
  bool bad_event = false;  // a line that is no watch event, or one too long
  bool deleted = false;    // the job is gone
};

// Takes `data` of the watch stream; returns false to end it. `rv` follows the events'
// resourceVersion; `observe` takes each ADDED or MODIFIED object and returns true when the
// job has reached its outcome.
bool take_watch_data(WatchLines& w, std::string_view data, std::string& rv,
                     const std::function<bool(const json&)>& observe) {
  w.buffer.append(data);
  std::size_t nl;
  while ((nl = w.buffer.find('\n')) != std::string::npos) {
    std::string line = w.buffer.substr(0, nl);
    w.buffer.erase(0, nl + 1);
    if (line.empty()) continue;
    json ev = input::parse_json(line);
    if (member_text(ev, "type").empty() || !member(ev, "object").is_object()) {
      w.bad_event = true;
      return false;
    }
    ++w.events;
    auto type = member_text(ev, "type");
    const json& obj = member(ev, "object");
    if (type == "ERROR") {
      if (integer(obj, "code") == 410) w.gone = true;
      else w.bad_event = true;
      return false;
    }
    if (auto v = member_text(member(obj, "metadata"), "resourceVersion"); !v.empty()) rv = v;
    if (type == "DELETED") {
      w.deleted = true;
      return false;
    }
    if ((type == "ADDED" || type == "MODIFIED") && observe(obj)) return false;
  }
  // One event is one line: a line that does not end within the bound is not one.
  if (w.buffer.size() > input::kMaxWatchEventBytes) {
    w.bad_event = true;
    return false;
  }
  return true;
}

}  // namespace

Launcher::Outcome Launcher::follow() {
  if (pods_mode_) return follow_pods();
  auto start = Clock::now();
  std::optional<Clock::time_point> running_since;
  std::string phase, rv;
  int failures = 0;
  bool polling = false;

  auto observe = [&](const json& obj) -> std::optional<Outcome> {
    follow_trainer_status(obj);
    std::string reason;
    auto p = job_phase(obj, &reason);
    if (p != phase) {
      phase = p;
      say(fmt::format("job {} is {}", name_, phase));
    }
    if ((p == "Running" || p == "Restarting") && !running_since) {
      running_since = Clock::now();
      job_started();
    }
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
      job_started();
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
          rv = member_text(member(obj, "metadata"), "resourceVersion");
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
    WatchLines w;
    std::optional<Outcome> result;
    auto began = Clock::now();
    auto r = client_->stream(
        path,
        [&](std::string_view data) {
          return take_watch_data(w, data, rv, [&](const json& obj) {
            result = observe(obj);
            return result.has_value();
          });
        },
        [&] { return stop_.load() || timed_out().has_value(); });
    if (w.events > 0) outage.reset();
    if (w.deleted) return Outcome::Deleted;
    if (result) return *result;
    if (w.gone) {  // the resourceVersion is too old: start again from a GET
      rv.clear();
      continue;
    }
    if (r.cancelled) continue;
    if (r.status == 403) {
      report_api_error(r, "watch", resource());
      return Outcome::ApiError;
    }
    bool quick_empty_close = r.ok() && w.events == 0 && Clock::now() - began < milliseconds(1000);
    if (r.ok() && !w.bad_event && !quick_empty_close) {
      failures = 0;
      continue;
    }
    ++failures;
    if (!r.ok() && outage_over(r)) return Outcome::ApiError;
    warning(fmt::format("the watch of job {} was interrupted ({}); reconnecting", name_,
                        w.bad_event ? "a malformed event" : r.ok() ? "closed at once" : status_message(r)));
    if (failures >= o_.watch_failures_before_polling) {
      polling = true;
      warning(fmt::format("watching failed {} times; polling job {} every {}", failures, name_,
                          format_duration(o_.poll_interval)));
    }
    sleep_for(o_.retry_delay);
  }
}

// A TrainJob's status.trainerStatus: a progress line each time what it says changes, and
// its metrics as the step's reported ones (the scraped ones win on a shared name).
void Launcher::follow_trainer_status(const json& job) {
  if (kind_.plural != "trainjobs") return;
  auto progress = trainer_progress(job);
  if (!progress || progress == progress_) return;
  progress_ = progress;
  say(progress_line(*progress));
  scraper_->set_reported(progress->metrics);
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
  for (const auto& p : member(list, "items"))
    if (member_text(member(p, "status"), "phase") == "Running") return true;
  return false;
}

std::optional<Launcher::LeaderPod> Launcher::find_leader_pod() {
  // launcher_first: every pod of index 0, of which the launcher's or the leader type's.
  std::string selector =
      kind_.launcher_first
          ? fmt::format("{}={}", kind_.job_label, name_)
          : fmt::format("{}={},{}={}", kind_.job_label, name_, kind_.type_label, kind_.leader_type);
  if (kind_.leader_index) selector += "," + kind_.index_label + "=0";
  if (!kind_.leader_extra.empty()) selector += "," + kind_.leader_extra;
  auto r = client_->request("GET", fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", ns_,
                                              url_encode(selector)));
  if (!r.ok()) {
    if (r.status == 403 && !pods_forbidden_.exchange(true)) report_api_error(r, "list", "pods");
    return std::nullopt;
  }
  json list = input::parse_json(r.body);
  if (!member(list, "items").is_array()) return std::nullopt;
  const json* best = nullptr;
  auto key = [](const json& p) {
    return std::pair{member_text(member(p, "metadata"), "creationTimestamp"), member_text(member(p, "metadata"), "name")};
  };
  auto type = [&](const json& p) { return member_text(member(p, "metadata", "labels"), kind_.type_label.c_str()); };
  auto rank = [&](const json& p) { return kind_.launcher_first && type(p) == "launcher"; };  // before node 0
  for (const auto& p : member(list, "items")) {
    if (!p.is_object() || (kind_.launcher_first && type(p) != "launcher" && type(p) != kind_.leader_type)) continue;
    if (!best || std::pair{rank(p), key(p)} > std::pair{rank(*best), key(*best)}) best = &p;
  }
  if (!best) return std::nullopt;
  LeaderPod pod;
  pod.name = member_text(member(*best, "metadata"), "name");
  const json& containers = member(*best, "spec", "containers");
  if (containers.is_array()) {
    for (const auto& c : containers) {
      auto n = member_text(c, "name");
      if (n == "tensorflow" || n == "pytorch" || n == "node") pod.container = n;
    }
    if (pod.container.empty() && !containers.empty()) pod.container = member_text(containers[0], "name");
  }
  for (const auto& cs : member(*best, "status", "containerStatuses"))
    if (member_text(cs, "name") == pod.container) pod.restarts = integer(cs, "restartCount");
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
  json list = r.ok() ? input::parse_json(r.body) : json();
  keep_failures(list);
  if (!member(list, "items").is_array()) return;
  print_failure_log(list);
  // After the log tail: each replica whose container ended badly (OOMKilled first), with
  // its termination reason and exit code, so the last lines say who failed and how.
  for (const auto& line : termination_lines(read_pods(list, kind_.type_label, kind_.rank_label)))
    say("replica " + line);
}

// The last lines of the failing container of the job's pods (`list`), each as "  | LINE".
void Launcher::print_failure_log(const json& list) {
  // The failing pod: a failed phase or a container that ended with a non-zero code.
  const json* pod = nullptr;
  std::string container;
  bool previous = false;
  for (const auto& p : member(list, "items")) {
    bool leader = member_text(member(p, "metadata", "labels"), kind_.type_label.c_str()) == kind_.leader_type;
    // An init container (git-sync) that failed stops the pod before training starts.
    for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
      for (const auto& cs : member(p, "status", list)) {
        for (const char* state : {"state", "lastState"}) {
          const json& term = member(cs, state, "terminated");
          if (integer(term, "exitCode") != 0 && (!pod || leader)) {
            pod = &p;
            container = member_text(cs, "name");
            previous = std::string_view(state) == "lastState" && member(cs, "state", "terminated").is_null();
          }
        }
      }
    }
    if (!pod && member_text(member(p, "status"), "phase") == "Failed") pod = &p;
  }
  if (!pod) return;
  auto pod_name = member_text(member(*pod, "metadata"), "name");
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

}  // namespace pipec::runtime::launcher_detail
