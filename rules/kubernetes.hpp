#pragma once
// What a training step's pods are given, checked once: tolerations, `data` entries and
// their mount paths, the operators' policies.

#include <optional>
#include <string>
#include <string_view>

namespace pipec::rules {

/// A toleration spec "key", "key=value", either with ":NoSchedule" / ":PreferNoSchedule" /
/// ":NoExecute", or "*" (tolerate everything), as a Kubernetes toleration (JSON); nullopt
/// if bad.
[[nodiscard]] std::optional<std::string> toleration_json(std::string_view spec);

/// An absolute mount path without ':', '..' or control characters, at most 4096 bytes.
[[nodiscard]] bool is_mount_path(std::string_view path);

/// One `data` entry, `pvc-name:/mount/path`: a DNS-1123 subdomain claim name and a mount
/// path; trailing '/' are dropped ("/data/" mounts "/data"). nullopt if malformed.
struct DataEntry {
  std::string claim;
  std::string path;
};
[[nodiscard]] std::optional<DataEntry> parse_data_entry(std::string_view entry);

/// "None", "Running", "All".
[[nodiscard]] bool is_clean_pod_policy(std::string_view text);
/// "" or "AllWorkers".
[[nodiscard]] bool is_success_policy(std::string_view text);

}  // namespace pipec::rules
