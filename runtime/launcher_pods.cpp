// Runtime "pods": a TFJob run as plain Pods and headless Services, each pod with the
// TF_CONFIG the operator would give it (runtime/tf_pods, rules/tf_config), followed and
// cleaned up by the launcher itself.
#include "runtime/launcher_job.hpp"

#include <algorithm>
#include <map>
#include <thread>

namespace pipec::runtime::launcher_detail {
using kube::HttpResponse;
using kube::url_encode;

std::optional<int> Launcher::create_pods() {
  const json& meta = job_["metadata"];
  json owner = member(meta, "ownerReferences").is_array() && !meta["ownerReferences"].empty()
                   ? meta["ownerReferences"][0]
                   : json();
  pods_ = tfjob_to_pods(job_, name_, ns_, member(meta, "labels"), owner, o_.tf_chief_role == "master");
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
    std::string name = member_text(member(object, "metadata"), "name");
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
        std::string step = member_text(member(existing, "metadata", "labels"), "pipelines.kubeflow.org/step");
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
  const bool all_workers = member_text(member(job_, "spec"), "successPolicy") == "AllWorkers";
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
    for (const auto& p : member(list, "items")) by_name[member_text(member(p, "metadata"), "name")] = &p;
    bool any_running = false, leader_done = false, workers_done = true, worker0_done = false;
    for (const auto& replica : pods_.replicas) {
      auto it = by_name.find(replica.name);
      if (it == by_name.end()) {
        failure_reason_ = fmt::format("pod {} was deleted", replica.name);
        return Outcome::Deleted;
      }
      std::string p = member_text(member(*it->second, "status"), "phase");
      if (p == "Failed") {
        std::string why;
        for (const auto& cs : member(*it->second, "status", "containerStatuses")) {
          const json& term = member(cs, "state", "terminated");
          if (term.is_object())
            why = fmt::format(": container {} exited with {}{}", member_text(cs, "name"), integer(term, "exitCode"),
                              member_text(term, "reason").empty() ? "" : " (" + member_text(term, "reason") + ")");
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
      if (!running_since) {
        running_since = Clock::now();
        job_started();
      }
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

}  // namespace pipec::runtime::launcher_detail
