#pragma once
// Reading one pod's log again after a reconnect without losing or repeating lines.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pipec::runtime {

/// A kubelet log timestamp (`timestamps=true`: RFC 3339, UTC, up to 9 fraction digits).
struct LogTime {
  std::int64_t seconds = 0;
  std::int32_t nanos = 0;
  auto operator<=>(const LogTime&) const = default;
};

/// Parses `2026-11-22T19:30:01.123456789Z` (the fraction is optional; month 1-12, day
/// 1-31, hour 0-23, minute 0-59, second 0-60). Returns nullopt for anything else.
[[nodiscard]] std::optional<LogTime> parse_log_time(std::string_view text);

/// `2026-11-22T19:30:01Z`: what `sinceTime` accepts (whole seconds).
[[nodiscard]] std::string rfc3339_seconds(std::int64_t seconds);

/// Follows what was printed of one pod's log. A read asks for `since_time()` (a whole
/// second, so it repeats lines); accept() then drops the lines older than the last one
/// printed, and as many lines with its exact timestamp as were printed. Lines without a
/// timestamp are passed through.
class LogCursor {
 public:
  /// The `sinceTime` for the next read ("" when nothing was printed yet).
  std::string since_time() const;
  /// Call before each read of the log.
  void begin_read() { to_skip_ = at_last_; }
  /// The line without its timestamp, or nullopt if it was printed before.
  [[nodiscard]] std::optional<std::string_view> accept(std::string_view line);

 private:
  /// parse_log_time() with the last date remembered.
  std::optional<LogTime> parse(std::string_view stamp);

  char date_[10] = {};             // `YYYY-MM-DD` of the last timestamp read
  std::int64_t date_seconds_ = 0;  // its midnight
  LogTime last_;
  std::size_t at_last_ = 0;  // lines printed with the timestamp last_
  std::size_t to_skip_ = 0;  // of those, still to skip in this read
};

}  // namespace pipec::runtime
