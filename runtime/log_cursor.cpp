// log_cursor: the kubelet's timestamps decide which lines a new read repeats.
#include "runtime/log_cursor.hpp"

#include <ctime>

#include <fmt/format.h>

namespace pipec::runtime {

std::optional<LogTime> parse_log_time(std::string_view s) {
  // 2026-11-22T19:30:01.123456789Z
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':' || s.back() != 'Z')
    return std::nullopt;
  auto num = [&](std::size_t pos, std::size_t len) -> int {
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  std::tm tm{};
  int year = num(0, 4), mon = num(5, 2), day = num(8, 2), hh = num(11, 2), mm = num(14, 2),
      ss = num(17, 2);
  if (year < 0 || mon < 1 || day < 1 || hh < 0 || mm < 0 || ss < 0) return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hh;
  tm.tm_min = mm;
  tm.tm_sec = ss;
  LogTime t;
  t.seconds = static_cast<std::int64_t>(timegm(&tm));
  std::size_t i = 19;
  if (s[i] == '.') {
    ++i;
    std::int32_t scale = 100000000;
    for (; i < s.size() - 1; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      t.nanos += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  if (i != s.size() - 1) return std::nullopt;
  return t;
}

std::string rfc3339_seconds(std::int64_t seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string LogCursor::since_time() const {
  return at_last_ == 0 ? std::string() : rfc3339_seconds(last_.seconds);
}

std::optional<std::string_view> LogCursor::accept(std::string_view line) {
  auto space = line.find(' ');
  if (space == std::string_view::npos) return line;
  auto t = parse_log_time(line.substr(0, space));
  if (!t) return line;
  if (at_last_ > 0 && *t < last_) return std::nullopt;
  if (at_last_ > 0 && *t == last_) {
    if (to_skip_ > 0) {
      --to_skip_;
      return std::nullopt;
    }
    ++at_last_;
  } else {
    last_ = *t;
    at_last_ = 1;
    to_skip_ = 0;
  }
  return line.substr(space + 1);
}

}  // namespace pipec::runtime
