// Re-creating a failed training job (docs/runtime.md "Retries"): when a failure that
// --retry-on names ended the job (an OOMKilled replica, an eviction, an exit code, a
// message), the job is deleted and created again, up to --retry-limit times, each time
// with the memory of the first times --memory-factor per attempt, never above
// --memory-max. rules/retry decides, as it does for Argo's expression and `run --local`.
#include <cmath>
#include <cstdlib>

#include "rules/launcher_cli.hpp"
#include "rules/quantities.hpp"
#include "runtime/launcher_job.hpp"

namespace pipec::runtime {
namespace launcher_detail {

namespace {

json* child(json* object, const char* key) {
  if (object == nullptr || !object->is_object()) return nullptr;
  auto it = object->find(key);
  return it == object->end() ? nullptr : &*it;
}

// Every container of every replica of an operator's job (mpiReplicaSpecs, ...).
template <typename Fn>
void each_container(json& job, Fn fn) {
  json* spec = child(&job, "spec");
  if (spec == nullptr || !spec->is_object()) return;
  for (auto& [key, roles] : spec->items()) {
    if (key.size() <= 12 || key.compare(key.size() - 12, 12, "ReplicaSpecs") != 0 || !roles.is_object())
      continue;
    for (auto& [role, replica] : roles.items()) {
      json* containers = child(child(child(&replica, "template"), "spec"), "containers");
      if (containers == nullptr || !containers->is_array()) continue;
      for (auto& container : *containers)
        if (container.is_object()) fn(container);
    }
  }
}

}  // namespace

bool Launcher::check_retries() {
  using rules::LauncherOption;
  if (!o_.retry_limit.empty()) {
    char* end = nullptr;
    const long long n = std::strtoll(o_.retry_limit.c_str(), &end, 10);
    if (*end != '\0' || o_.retry_limit.find_first_not_of("0123456789") != std::string::npos ||
        n > rules::kMaxGrowingRetries)
      return error(fmt::format("{} '{}': expected a whole number from 0 to {}",
                               rules::launcher_flag(LauncherOption::RetryLimit), o_.retry_limit,
                               rules::kMaxGrowingRetries)),
             false;
    retry_limit_ = n;
  }
  std::string why;
  if (!o_.retry_on.empty()) {
    auto on = rules::parse_retry_on_list(o_.retry_on, why);
    if (!on)
      return error(fmt::format("{} '{}': {}", rules::launcher_flag(LauncherOption::RetryOn), o_.retry_on, why)), false;
    retry_on_ = std::move(*on);
  }
  if (!o_.memory_factor.empty()) {
    char* end = nullptr;
    const double f = std::strtod(o_.memory_factor.c_str(), &end);
    if (*end != '\0' || !std::isfinite(f) || f <= 1 || f > 10)
      return error(fmt::format("{} '{}': expected a number above 1 and at most 10",
                               rules::launcher_flag(LauncherOption::MemoryFactor), o_.memory_factor)),
             false;
    memory_factor_ = f;
  }
  if (!o_.memory_max.empty() && (!rules::is_quantity(o_.memory_max) || memory_factor_ == 0))
    return error(fmt::format("{} '{}': expected a memory quantity (e.g. 16Gi), with {}",
                             rules::launcher_flag(LauncherOption::MemoryMax), o_.memory_max,
                             rules::launcher_flag(LauncherOption::MemoryFactor))),
           false;
  return true;
}

// Each container's memory limit and request, as rendered, grown for this attempt.
void Launcher::grow_memory(json& rendered) {
  each_container(rendered, [&](json& container) {
    auto resources = container.find("resources");
    if (resources == container.end() || !resources->is_object()) return;
    for (const char* part : {"limits", "requests"}) {
      auto amounts = resources->find(part);
      if (amounts == resources->end() || !amounts->is_object()) continue;
      auto memory = amounts->find("memory");
      if (memory == amounts->end() || !memory->is_string() || !rules::is_quantity(memory->get<std::string>()))
        continue;
      const std::string base = memory->get<std::string>();
      if (memory_factor_ > 0) *memory = rules::grown_memory(base, memory_factor_, o_.memory_max, o_.attempt);
      if (memory_base_.empty()) {
        memory_base_ = base;
        memory_ = memory->get<std::string>();
      }
    }
  });
}

void Launcher::keep_failures(const json& pods) {
  failures_.clear();
  failure_texts_.clear();
  for (const auto& pod : read_pods(pods, kind_.type_label, kind_.rank_label)) {
    const std::string who = pod.role.empty() ? "pod " + pod.name : pod.role + " " + pod.index;
    for (const auto& t : pod.terminated) {
      failures_.push_back({static_cast<int>(t.exit_code), t.reason, failure_reason_});
      failure_texts_.push_back(fmt::format("replica {}: {} (exit code {})", who,
                                           t.reason.empty() ? "Error" : t.reason, t.exit_code));
    }
  }
  // A pod the kubelet evicted ends with no container state: its status says why.
  if (pods.is_object() && member(pods, "items").is_array())
    for (const auto& pod : member(pods, "items")) {
      const std::string reason = member_text(member(pod, "status"), "reason");
      if (reason.empty()) continue;
      const std::string message = one_line(member_text(member(pod, "status"), "message"), 300);
      failures_.push_back({std::nullopt, reason, message});
      failure_texts_.push_back(fmt::format("pod {}: {}: {}", member_text(member(pod, "metadata"), "name"),
                                           reason, message));
    }
  // The job's own Failed condition, for `message:` items.
  failures_.push_back({std::nullopt, "", failure_reason_});
  failure_texts_.push_back(failure_reason_.empty() ? "the job failed" : failure_reason_);
}

void Launcher::decide_retry() {
  if (o_.attempt >= retry_limit_) return;
  for (std::size_t i = 0; i < failures_.size(); ++i)
    if (rules::should_retry(retry_on_, failures_[i])) {
      retrying_ = true;
      // The failure the retry answers comes first in the list of attempts.
      std::swap(failure_texts_[0], failure_texts_[i]);
      return;
    }
}

// The deleted job is gone (its name free for the next create): a GET answers 404.
bool Launcher::wait_gone() {
  const auto until = Clock::now() + std::chrono::minutes(2);
  while (!stop_ && Clock::now() < until) {
    auto r = call("GET", job_path());
    if (r.status == 404) return true;
    if (!r.ok() && !transient(r)) return report_api_error(r, "get", resource()), false;
    sleep_for(o_.poll_interval);
  }
  if (!stop_) error(fmt::format("job {} was deleted but is still there after 2m; not creating it again", name_));
  return false;
}

std::string Launcher::attempt_summary() const {
  return outcome_text_ + (memory_.empty() ? "" : " (memory " + memory_ + ")");
}

std::string Launcher::retry_line() const {
  std::string line = fmt::format("retry {} of {}: job {} {}; creating it again", o_.attempt + 1,
                                 retry_limit_, name_, outcome_text_);
  if (memory_factor_ > 0 && !memory_base_.empty())
    line += " with memory " + rules::grown_memory(memory_base_, memory_factor_, o_.memory_max, o_.attempt + 1);
  return line;
}

}  // namespace launcher_detail

// Each attempt is a launcher of its own (its job created, followed, reported and deleted);
// after the last, a failure lists every attempt.
int run_launcher(const LauncherOptions& options, const ConnectFn& connect, std::ostream& out,
                 std::ostream& err, const std::atomic<bool>& stop) {
  LauncherOptions attempt = options;
  std::vector<std::string> attempts;
  for (;;) {
    launcher_detail::Launcher launcher(attempt, connect, out, err, stop);
    const int code = launcher.run();
    attempts.push_back(launcher.attempt_summary());
    if (!launcher.retrying()) {
      if (attempts.size() > 1 && code == kExitFailed) {
        err << "pipec-launcher: attempts:\n";
        for (std::size_t i = 0; i < attempts.size(); ++i)
          err << "pipec-launcher:   " << i + 1 << ": " << attempts[i] << '\n';
        err << std::flush;
      }
      return code;
    }
    err << "pipec-launcher: " << launcher.retry_line() << '\n' << std::flush;
    ++attempt.attempt;
  }
}

}  // namespace pipec::runtime
