#pragma once
// Why a training job waits, and how its replicas ended: pure functions over the job's
// pods and events as the API lists them (docs/runtime.md, "Why a job waits"). No I/O:
// the launcher reads the lists and prints what these return; `pipec runs get` can print
// the same.

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipec::runtime {

/// A reason's message is cut to this many bytes (at a character boundary, "..." added).
inline constexpr std::size_t kMaxReasonMessageBytes = 300;
/// At most this many distinct reasons are printed in one run (one more line says so).
inline constexpr std::size_t kMaxReasonsShown = 10;
/// The events of at most this many waiting pods are read in one poll (in turn).
inline constexpr std::size_t kMaxPodsForEvents = 4;
/// At most this many replicas are named in a failure report.
inline constexpr std::size_t kMaxTerminationsShown = 5;

/// One pod of a job, as far as why it waits or how it ended goes.
struct PodReport {
  struct Waiting {
    std::string container, reason, message;
  };
  struct Terminated {
    std::string container, reason;
    long long exit_code = 0;
    long long restarts = 0;  // > 0: it ended in an earlier container (lastState)
  };
  std::string name, role, index, phase;  // role and index from the replica labels ("" if none)
  std::vector<Waiting> waiting;        // containers (init containers first) waiting for a reason
  std::vector<Terminated> terminated;  // containers that ended OOMKilled or with a non-zero code
};

/// The pods of a pod list (`items`), in its order. `type_label` and `index_label` name the
/// replica labels (training.kubeflow.org/replica-type and -index, or JobSet's). Waiting
/// reasons exclude the normal ContainerCreating and PodInitializing.
[[nodiscard]] std::vector<PodReport> read_pods(const nlohmann::json& list, std::string_view type_label,
                                               std::string_view index_label);

/// One Warning event (Normal events say nothing is wrong).
struct EventReport {
  std::string kind, name;  // its involvedObject
  std::string reason, message;
};

/// The Warning events of an event list (`items`), at most `max_items` of them read.
[[nodiscard]] std::vector<EventReport> read_events(const nlohmann::json& list, std::size_t max_items);

/// One distinct reason: `key` (reason and message) says which, `text` is what is printed:
/// "2 of 4 workers Pending: FailedScheduling: 0/3 nodes are available: ..." for the pods,
/// "MPIJob train-1: FailedCreatePod: ..." for another object.
struct WaitReason {
  std::string key, text;
};

/// The distinct reasons the pods and events give, in order: the pods' waiting reasons, then
/// the events (in list order). Pods that share a reason are counted per role, against every
/// pod of that role.
[[nodiscard]] std::vector<WaitReason> wait_reasons(const std::vector<PodReport>& pods,
                                                   const std::vector<EventReport>& events);

/// What a run has printed: each distinct reason once, at most kMaxReasonsShown.
class ReasonLog {
 public:
  /// The lines to print now for `reasons`: those not printed before, and once the bound is
  /// reached one line that says more are not shown.
  [[nodiscard]] std::vector<std::string> fresh(const std::vector<WaitReason>& reasons);
  /// The text of the last reason printed ("" if none).
  const std::string& last() const { return last_; }

 private:
  std::set<std::string> seen_;
  std::string last_;
  bool capped_ = false;
};

/// The reasons named when the wait ends: at most three texts of `reasons`, "; "-separated,
/// "and N more" after them.
[[nodiscard]] std::string reasons_summary(const std::vector<WaitReason>& reasons);

/// The failure report's lines for the replicas that ended badly: "worker 1 (pod P):
/// container C terminated: OOMKilled (exit code 137)", OOMKilled first, at most
/// kMaxTerminationsShown (then "and N more replicas ...").
[[nodiscard]] std::vector<std::string> termination_lines(const std::vector<PodReport>& pods);

/// Text from the cluster made fit for one line of the log: control characters and
/// bidirectional controls become spaces or '?', runs of blanks one space, bytes that are
/// not UTF-8 '?', and at most `max_bytes` bytes kept (cut at a character, "..." added).
[[nodiscard]] std::string one_line(std::string_view text, std::size_t max_bytes);

}  // namespace pipec::runtime
