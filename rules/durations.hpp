#pragma once
// Durations: one syntax for the launcher's timeouts, op timeouts and retries, cache
// staleness, and `pipec run --timeout`.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pipec::rules {

/// `0`, `90` (seconds), `500ms`, `90s`, `30m`, `4h`, `2d`, or units largest first, each
/// once: `1h30m`, `2d12h`; nullopt if malformed.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);
/// The same; when a number is past kMaxDurationNumber, `why` (if given) says so:
/// "the number 99999999999 is out of range 0-1000000000".
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(std::string_view text, std::string* why);

/// The largest number a duration takes before its unit (`1000000000s`).
inline constexpr std::int64_t kMaxDurationNumber = 1'000'000'000;

/// A duration as ISO 8601 (whole seconds): P0D, P7D, PT1H30M, P1DT12H.
[[nodiscard]] std::string iso8601_duration(std::chrono::milliseconds d);

}  // namespace pipec::rules
