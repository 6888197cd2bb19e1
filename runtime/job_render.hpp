#pragma once
// Applies the launcher's bindings to a job manifest (docs/runtime.md, "Binding kinds").
// Pure: no I/O, no Kubernetes. The compiler's tests call it to render and validate jobs.

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pipec::runtime {

/// What a bound value is and how it goes in (docs/runtime.md, "Binding kinds"). Count,
/// Tolerations, EnvMap, NodeSelector, GpuResource, CleanPodPolicy and SuccessPolicy change
/// the job's shape, so any training argument can be a run-time value.
enum class BindingKind {
  String, Int, Quantity, Bool, Env, Data,
  Count,           ///< POINTER is a replica spec: 0 removes the role, n sets its replicas
  Tolerations,     ///< POINTER is the replica-spec map: a JSON list of toleration specs
  EnvMap,          ///< replica-spec map: a JSON object of variables for every main container
  NodeSelector,    ///< replica-spec map: a JSON object of node labels for every pod
  GpuResource,     ///< replica-spec map: the resource name of the GPU limit ("" = nvidia.com/gpu)
  CleanPodPolicy,  ///< POINTER is /spec/runPolicy/cleanPodPolicy: None, Running or All
  SuccessPolicy,   ///< POINTER is /spec: successPolicy "" (none) or AllWorkers
};

/// The rules a literal argument meets at compile time and a run-time value meets in the
/// launcher: one implementation, linked by both (compiler/emit/kubeflow, runtime/).
/// A duration: `0`, `90` (seconds), `500ms`, `90s`, `30m`, `4h`, `2d`, or units largest
/// first, each once: `1h30m`, `2d12h`; nullopt if malformed. One rule for the launcher's
/// timeouts, op `timeout`s and `pipec run --timeout`.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
/// A Kubernetes quantity: 2, 500m, 10Gi, 1e3.
[[nodiscard]] bool is_quantity(std::string_view text);
/// A toleration spec "key", "key=value", either with ":NoSchedule" / ":PreferNoSchedule" /
/// ":NoExecute", or "*" (tolerate everything), as a Kubernetes toleration; nullopt if bad.
[[nodiscard]] std::optional<std::string> toleration_json(std::string_view spec);
/// A resource name such as amd.com/gpu.
[[nodiscard]] bool is_resource_name(std::string_view text);
/// A DNS-1123 subdomain (a claim's or a runtime's name): lower-case labels of [a-z0-9-].
[[nodiscard]] bool is_dns1123_subdomain(std::string_view text);
/// A label (or annotation) key: [prefix/]name, prefix a DNS subdomain, name at most 63 of
/// [A-Za-z0-9-_.] with alphanumeric ends.
[[nodiscard]] bool is_label_key(std::string_view text);
/// A label value: empty, or at most 63 of [A-Za-z0-9-_.] with alphanumeric ends.
[[nodiscard]] bool is_label_value(std::string_view text);
/// A duration as ISO 8601 (whole seconds): P0D, P7D, PT1H30M, P1DT12H.
[[nodiscard]] std::string iso8601_duration(std::chrono::milliseconds d);
/// The most replicas one role of a training job may have (Worker, PS, Evaluator; a chief
/// or master is one). A literal count meets it at compile time, a run-time value and the
/// rendered manifest in the launcher (docs/training-ops.md, "Limits"). With runtime
/// "pods" every TF_CONFIG lists every replica, so the bound also bounds each pod's size.
inline constexpr long kMaxReplicas = 10000;
/// Whether `n` replicas of one role are within kMaxReplicas (any n <= 0 is: the minimum
/// is the caller's rule, which differs by field and op).
[[nodiscard]] constexpr bool within_max_replicas(long long n) { return n <= kMaxReplicas; }
/// "None", "Running", "All".
[[nodiscard]] bool is_clean_pod_policy(std::string_view text);
/// "" or "AllWorkers".
[[nodiscard]] bool is_success_policy(std::string_view text);

/// One `data` entry, `pvc-name:/mount/path`: a DNS-1123 subdomain claim name and an
/// absolute path without ':', '..' or control characters; trailing '/' are dropped
/// ("/data/" mounts "/data"). nullopt if malformed.
struct DataEntry {
  std::string claim;
  std::string path;
};
[[nodiscard]] std::optional<DataEntry> parse_data_entry(std::string_view entry);

/// One `--bind POINTER=NAME:KIND`: the value NAME replaces what the manifest holds at
/// the RFC 6901 POINTER. For `data`, POINTER is the replica-spec map
/// (`/spec/mpiReplicaSpecs`, `/spec/tfReplicaSpecs`, `/spec/pytorchReplicaSpecs`) and NAME
/// may list several values, `a,b,c`: each is one entry or a JSON list of entries.
struct Binding {
  std::string pointer;
  std::string name;
  BindingKind kind = BindingKind::String;
};

/// Parses `POINTER=NAME:KIND` (the last `=` before the last `:` separates; a pointer may
/// hold `=`, a name may not). Returns nullopt and sets `error` when malformed.
[[nodiscard]] std::optional<Binding> parse_binding(std::string_view spec, std::string& error);

/// Parses `NAME=TEXT` (only the first `=` separates). Returns false and sets `error`.
[[nodiscard]] bool parse_value(std::string_view spec, std::string& name, std::string& text,
                               std::string& error);

/// The outcome of render_job(): `job` is the rendered JSON document when `ok`;
/// otherwise `error` says what is wrong and names the value, e.g.
/// `value 'workers' must be an integer >= 1, got "two"`.
struct RenderResult {
  bool ok = false;
  std::string job;
  std::string error;
};

/// Applies `bindings` with the run-time texts in `values` (NAME -> TEXT) to `manifest`
/// (one JSON document: an MPIJob, TFJob or PyTorchJob) and checks the result: every
/// bound value has a text, fits its kind, and its pointer exists in the manifest;
/// replica counts are >= 1; `data` entries are `pvc-name:/mount/path` with distinct
/// paths. Values without a binding are ignored (e.g. a metric chosen by a parameter).
[[nodiscard]] RenderResult render_job(std::string_view manifest,
                                      std::span<const Binding> bindings,
                                      const std::map<std::string, std::string>& values);

/// The same from the launcher's argument texts: each of `bind_args` is `POINTER=NAME:KIND`,
/// each of `value_args` is `NAME=TEXT`.
[[nodiscard]] RenderResult render_job_from_args(std::string_view manifest,
                                                std::span<const std::string> bind_args,
                                                std::span<const std::string> value_args);

}  // namespace pipec::runtime
