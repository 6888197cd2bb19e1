#pragma once
// Retries that know why: which failures a retry may fix, and the memory each attempt gets.
// One evaluator for the compiler (the `retries {on: [...]}` items it checks and writes),
// the launcher (a training job re-created after a replica failed) and `run --local`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipec::rules {

/// One item of `retries {on: [...]}`: "oom", "evicted", "exit:N" (0-255) or "message:TEXT".
struct RetryOn {
  enum class Kind { Oom, Evicted, Exit, Message };
  Kind kind = Kind::Oom;
  int exit_code = 0;  // Exit
  std::string text;   // Message: a substring of the failure's message
};

/// How an attempt ended: the container's exit code (none when it never ran or was not
/// reported), Kubernetes' termination reason ("OOMKilled", "Evicted", "Error", ...; empty
/// when unknown) and the message that came with it.
struct Failure {
  std::optional<int> exit_code;
  std::string reason;
  std::string message;
};

/// The longest `message:` text.
inline constexpr std::size_t kMaxRetryMessage = 200;
/// The most items an `on` list holds.
inline constexpr std::size_t kMaxRetryOn = 20;

/// Reads one item; nullopt with `why` when malformed. A message text is 1 to 200 printable
/// ASCII characters without ' " \ { } or a comma (it is quoted in Argo's expression
/// language and listed in the launcher's --retry-on).
[[nodiscard]] std::optional<RetryOn> parse_retry_on(std::string_view item, std::string& why);
/// The item as written: "oom", "evicted", "exit:137", "message:TEXT".
[[nodiscard]] std::string retry_on_text(const RetryOn& on);
/// A comma-separated list of items (the launcher's --retry-on); nullopt with `why`.
[[nodiscard]] std::optional<std::vector<RetryOn>> parse_retry_on_list(std::string_view list, std::string& why);

/// With memory growing, each attempt's memory is written out (an Argo pod patch indexes it
/// by the retry count): at most this many retries.
inline constexpr long long kMaxGrowingRetries = 20;

/// Whether one item matches a failure:
///   oom      the reason is OOMKilled, or the exit code is 137 (SIGKILL, as the kernel's
///            out-of-memory killer ends a process), or the message says OOMKilled
///   evicted  the reason is Evicted, or the message says Evicted, evicted or
///            "The node was low on resource" (the kubelet's eviction message)
///   exit:N   the exit code is N
///   message:TEXT  the message holds TEXT (case-sensitive)
[[nodiscard]] bool retry_matches(const RetryOn& on, const Failure& failure);
/// Retry or not: an empty list retries every failure; else any item matching does.
[[nodiscard]] bool should_retry(const std::vector<RetryOn>& on, const Failure& failure);


/// The memory of attempt `attempt` (0 = the first run): `base` as written on attempt 0;
/// then base x factor^attempt rounded up to a whole Mi, never above `max` (when given: then
/// `max` as written). Written with the largest binary suffix that keeps it whole (6Gi,
/// 4608Mi). `base` and `max` are quantities (checked by the caller), factor >= 1.
[[nodiscard]] std::string grown_memory(std::string_view base, double factor, std::string_view max, int attempt);

}  // namespace pipec::rules
