#pragma once
// Names Kubernetes, Argo and the environment accept: one rule each, applied by the compiler
// to literals and by the launcher to values known only at run time.

#include <cstddef>
#include <string>
#include <string_view>

namespace pipec::rules {

/// The Kubernetes/Argo name derived from a source name: lower-case, '_' and other
/// separators become '-', characters outside [a-z0-9-] are dropped, and leading or
/// trailing '-' removed ("all_reduce" -> "all-reduce"). May return "" when nothing
/// is left; callers report that, and collisions, as errors.
std::string to_dns1123(std::string_view name);

/// True for a DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most `max_length` bytes.
[[nodiscard]] bool is_dns1123_label(std::string_view name, std::size_t max_length = 63);

/// True for a DNS-1123 subdomain (a claim's, a service account's or a runtime's name):
/// labels joined by '.', at most 253 bytes.
[[nodiscard]] bool is_dns1123_subdomain(std::string_view name);

/// Longest DNS-1123 name pipec derives for a step, op or loop template.
inline constexpr std::size_t kMaxK8sNameLength = 63;

/// A qualified name such as a resource name (amd.com/gpu) or a label key: [prefix/]name,
/// prefix a DNS-1123 subdomain, name at most 63 of [A-Za-z0-9-_.] with alphanumeric ends.
[[nodiscard]] bool is_resource_name(std::string_view text);
[[nodiscard]] bool is_label_key(std::string_view text);

/// A label value: empty, or at most 63 of [A-Za-z0-9-_.] with alphanumeric ends.
[[nodiscard]] bool is_label_value(std::string_view text);

/// An environment variable name: [A-Za-z_][A-Za-z0-9_]*.
[[nodiscard]] bool is_env_name(std::string_view name);

/// Who sets a variable a step may not set itself: "pipec" for PIPEC_* (the shell form's
/// values arrive as PIPEC_<param>), "the operator" for TF_CONFIG in a training step's
/// replicas (the TFJob operator, or the launcher in its place, writes it); nullptr when
/// the step may set it.
[[nodiscard]] const char* env_reserved_by(std::string_view name, bool training);

/// What a name cut to fit ends in, so distinct long names stay distinct: '-' and 8 hex
/// digits of the FNV-1a hash of the whole `text`.
[[nodiscard]] std::string hash_suffix(std::string_view text);

/// The longest job name (kMaxJobName), and with runtime "pods" (kMaxPodsJobName: room
/// for `-evaluator-12345` in a 63-character name).
inline constexpr std::size_t kMaxJobName = 50;
inline constexpr std::size_t kMaxPodsJobName = 45;

/// The job a training step runs (and, with runtime "pods", the prefix of its pods'
/// names): lower-case DNS-1035 (a letter first; other characters become '-'), "job" when
/// nothing is left, and at most `max` characters: a longer name is cut and ends in '-'
/// and 8 hex digits of a hash of the whole step name, so distinct steps stay distinct and
/// `<name>-worker-NN` pod names stay valid. The compiler names the manifest's job so, and
/// the launcher the job it creates.
[[nodiscard]] std::string job_name_for_step(std::string_view step_name, std::size_t max = kMaxJobName);

}  // namespace pipec::rules

namespace pipec {
// Every pass names these unqualified, as it did when they lived in compiler/base.
using rules::is_dns1123_label;
using rules::is_dns1123_subdomain;
using rules::kMaxK8sNameLength;
using rules::to_dns1123;
}  // namespace pipec
