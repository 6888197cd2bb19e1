#pragma once
// What a training step's pods are given, checked once: tolerations, `data` entries and
// their mount paths, the operators' policies.

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace pipec::rules {

/// A Kubernetes toleration, as data: what a spec "key", "key=value", either with
/// ":NoSchedule" / ":PreferNoSchedule" / ":NoExecute", or "*" (tolerate everything) says.
/// The spec has no tolerationSeconds, so neither has this.
struct Toleration {
  std::string key;     // "" only for "*" (with operator Exists: every taint)
  std::string op;      // Kubernetes' `operator`: "Exists" or "Equal"
  std::string value;   // Equal: the taint's value (may be "")
  std::string effect;  // "" (every effect), "NoSchedule", "PreferNoSchedule" or "NoExecute"
  bool operator==(const Toleration&) const = default;
};
/// The toleration a spec says; nullopt if bad (an unknown effect, an empty key).
[[nodiscard]] std::optional<Toleration> parse_toleration(std::string_view spec);

/// `t` as a Kubernetes Toleration object of any nlohmann JSON type: its fields in sorted
/// order (an ordered_json prints them as a json does), `key` only when given, `value` only
/// with Equal, `effect` only when given.
template <typename Json>
[[nodiscard]] Json toleration_object(const Toleration& t) {
  Json out = Json::object();
  if (!t.effect.empty()) out["effect"] = t.effect;
  if (!t.key.empty()) out["key"] = t.key;
  out["operator"] = t.op;
  if (t.op == "Equal") out["value"] = t.value;
  return out;
}

/// A spec as a Kubernetes toleration (JSON text, toleration_object); nullopt if bad.
[[nodiscard]] std::optional<std::string> toleration_json(std::string_view spec);

/// An absolute mount path without ':', '..' or control characters, at most 4096 bytes.
[[nodiscard]] bool is_mount_path(std::string_view path);

/// Whether `path` lies in the volume mounted at `mount` (a mount path without a trailing
/// '/'): `mount` itself or below it. A `tensorboard` directory must lie in a data volume.
[[nodiscard]] bool is_inside_mount(std::string_view path, std::string_view mount);

/// One `data` entry, `pvc-name:/mount/path`: a DNS-1123 subdomain claim name and a mount
/// path; trailing '/' are dropped ("/data/" mounts "/data"). nullopt if malformed.
struct DataEntry {
  std::string claim;
  std::string path;
};
[[nodiscard]] std::optional<DataEntry> parse_data_entry(std::string_view entry);

/// The most replicas one role of a training job may have (Worker, PS, Evaluator; a chief
/// or master is one). A literal count meets it at compile time, a run-time value and the
/// rendered manifest in the launcher (docs/training-ops.md, "Limits"). With runtime
/// "pods" every TF_CONFIG lists every replica, so the bound also bounds each pod's size.
inline constexpr long kMaxReplicas = 10000;
/// Whether `n` replicas of one role are within kMaxReplicas (any n <= 0 is: the minimum
/// is the caller's rule, which differs by field and op).
[[nodiscard]] constexpr bool within_max_replicas(long long n) { return n <= kMaxReplicas; }

/// Kueue's names (docs/training-ops.md, "Scheduling"): the label that submits a job or a
/// pod to a LocalQueue, and the label and annotation that make pods one gang (Kueue's pod
/// groups: every pod of the group is admitted together or none).
inline constexpr std::string_view kKueueQueueLabel = "kueue.x-k8s.io/queue-name";
inline constexpr std::string_view kKueuePodGroupLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr std::string_view kKueuePodGroupCount = "kueue.x-k8s.io/pod-group-total-count";
/// The volume every main container mounts at /dev/shm for `shm_size`.
inline constexpr std::string_view kShmVolume = "dshm";
/// The scheduling arguments of a training op that a TrainJob (Trainer v2.3) has no field
/// for: runtime "trainer-v2" refuses them, `train_job` takes none of them. Why, as the
/// compiler's messages say it.
inline constexpr std::array<std::string_view, 4> kNotInTrainJob = {"priority_class", "scheduler", "gang_queue",
                                                                   "min_available"};
inline constexpr std::string_view kNotInTrainJobWhy =
    "a TrainJob (Trainer v2.3) has no field for a pod's priority class or gang scheduling: the training "
    "runtime's pod template and podGroupPolicy set them";

/// "None", "Running", "All".
[[nodiscard]] bool is_clean_pod_policy(std::string_view text);
/// "" or "AllWorkers".
[[nodiscard]] bool is_success_policy(std::string_view text);

}  // namespace pipec::rules
