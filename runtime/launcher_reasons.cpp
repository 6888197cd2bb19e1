// Why a job waits (docs/runtime.md, "Why a job waits"): while it has not started, a thread
// lists the job's pods and the Warning events of the job and of its waiting pods every
// poll interval, and prints each distinct reason once (runtime/job_reasons.hpp). The
// pending timeout's message names the reasons of the last pass.
#include "runtime/launcher_job.hpp"

#include "input/limits.hpp"

namespace pipec::runtime::launcher_detail {
using kube::url_encode;

namespace {
// A reason is worth a short wait, not the 30 s of a request that decides the job's fate.
constexpr long kReasonRequestMs = 10000;
}  // namespace

void Launcher::watch_reasons() {
  while (!waiting_over_ && !stop_) {
    read_reasons();
    sleep_for(o_.poll_interval, &waiting_over_);
  }
}

void Launcher::read_reasons() {
  std::lock_guard pass(reasons_mutex_);
  auto r = client_->request("GET", fmt::format("/api/v1/namespaces/{}/pods?labelSelector={}", ns_,
                                               url_encode(kind_.job_label + "=" + name_)),
                            {}, kReasonRequestMs);
  std::vector<PodReport> pods;
  if (r.status == 403) {
    if (!pods_forbidden_.exchange(true)) report_api_error(r, "list", "pods");
  } else if (!r.ok()) {
    return;  // passing: the next pass reads them again
  } else {
    pods = read_pods(input::parse_json(r.body), kind_.type_label, kind_.rank_label);
  }

  // Warning events of the job (a TrainJob's JobSet has its name too; runtime "pods" has no
  // job object) and of the waiting pods, at most kMaxPodsForEvents of them a pass, in turn.
  std::vector<std::string> selectors;
  if (!pods_mode_) selectors.push_back("involvedObject.name=" + name_ + ",type=Warning");
  std::vector<const PodReport*> waiting;
  for (const auto& p : pods)
    if (p.phase != "Running" && p.phase != "Succeeded" && p.phase != "Failed") waiting.push_back(&p);
  for (std::size_t i = 0; i < waiting.size() && i < kMaxPodsForEvents; ++i)
    selectors.push_back("involvedObject.kind=Pod,involvedObject.name=" +
                        waiting[(event_pod_turn_ + i) % waiting.size()]->name + ",type=Warning");
  if (!waiting.empty()) event_pod_turn_ = (event_pod_turn_ + kMaxPodsForEvents) % waiting.size();
  std::vector<EventReport> events;
  for (const auto& selector : selectors) {
    if (events_forbidden_ || stop_) break;
    auto e = client_->request("GET",
                              fmt::format("/api/v1/namespaces/{}/events?fieldSelector={}&limit={}", ns_,
                                          url_encode(selector), input::kMaxEventsListed),
                              {}, kReasonRequestMs);
    if (e.status == 403 && !events_forbidden_.exchange(true)) {
      // Not fatal: the job runs on; only the reasons from events are missing.
      warning(fmt::format("the events of job {} cannot be read, so why it waits may not be said: cannot list "
                          "events in namespace '{}': {}; the Role in runtime/deploy/rbac.yaml grants it",
                          name_, ns_, status_message(e)));
    }
    if (!e.ok()) continue;
    auto more = read_events(input::parse_json(e.body), input::kMaxEventsListed);
    events.insert(events.end(), more.begin(), more.end());
  }
  current_reasons_ = wait_reasons(pods, events);
  for (const auto& line : reasons_.fresh(current_reasons_)) say("waiting: " + line);
}

std::string Launcher::waiting_summary() {
  std::lock_guard lock(reasons_mutex_);
  std::string summary = reasons_summary(current_reasons_);
  return summary.empty() ? reasons_.last() : summary;
}

}  // namespace pipec::runtime::launcher_detail
