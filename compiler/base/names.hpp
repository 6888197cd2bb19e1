#pragma once

#include <string>
#include <string_view>

namespace pipec {

/// The Kubernetes/Argo name derived from a source name: lower-case, '_' and other
/// separators become '-', characters outside [a-z0-9-] are dropped, and leading or
/// trailing '-' removed ("all_reduce" -> "all-reduce"). May return "" when nothing
/// is left; callers report that, and collisions, as errors.
std::string to_dns1123(std::string_view name);

/// True for a DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most `max_length` bytes.
bool is_dns1123_label(std::string_view name, std::size_t max_length = 63);

/// True for a DNS-1123 subdomain (a service account's name): labels joined by '.', at
/// most 253 bytes.
bool is_dns1123_subdomain(std::string_view name);

/// Longest DNS-1123 name pipec derives for a step, op or loop template.
inline constexpr std::size_t kMaxK8sNameLength = 63;

}  // namespace pipec
