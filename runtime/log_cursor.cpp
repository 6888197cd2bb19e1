// log_cursor: the kubelet's timestamps decide which lines a new read repeats.
// accept() runs once per log line, so a timestamp is read with plain arithmetic (no timegm)
// and the cursor keeps the seconds of the last date it saw: a line of the same day costs a
// 10-byte comparison and the time of day.
#include "runtime/log_cursor.hpp"

#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace pipec::runtime {
namespace {

// Digits at s[pos, pos + len) as a number, or -1.
int digits(std::string_view s, std::size_t pos, std::size_t len) {
  int v = 0;
  for (std::size_t i = pos; i < pos + len; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool has_shape(std::string_view s) {
  return s.size() >= 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' &&
         s[16] == ':' && s.back() == 'Z';
}

// `YYYY-MM-DD` at the start of s: the seconds of that day's midnight.
bool day_seconds(std::string_view s, std::int64_t& seconds) {
  int year = digits(s, 0, 4), mon = digits(s, 5, 2), day = digits(s, 8, 2);
  if (year < 0 || mon < 1 || mon > 12 || day < 1 || day > 31) return false;
  seconds = days_from_civil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day)) * 86400;
  return true;
}

// `HH:MM:SS[.fraction]Z` from s[11]: the time of day into t (seconds added to `day`).
bool time_of_day(std::string_view s, std::int64_t day, LogTime& t) {
  int hh = digits(s, 11, 2), mm = digits(s, 14, 2), ss = digits(s, 17, 2);
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return false;
  t.seconds = day + hh * 3600 + mm * 60 + ss;
  t.nanos = 0;
  std::size_t i = 19;
  if (s[i] == '.') {
    ++i;
    std::int32_t scale = 100000000;
    for (; i < s.size() - 1; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      t.nanos += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  return i == s.size() - 1;
}

}  // namespace

std::optional<LogTime> parse_log_time(std::string_view s) {
  // 2026-11-22T19:30:01.123456789Z
  std::int64_t day = 0;
  LogTime t;
  if (!has_shape(s) || !day_seconds(s, day) || !time_of_day(s, day, t)) return std::nullopt;
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

std::optional<LogTime> LogCursor::parse(std::string_view s) {
  if (!has_shape(s)) return std::nullopt;
  if (std::memcmp(s.data(), date_, sizeof date_) != 0) {  // a new day (or the first line)
    std::int64_t day = 0;
    if (!day_seconds(s, day)) return std::nullopt;
    std::memcpy(date_, s.data(), sizeof date_);
    date_seconds_ = day;
  }
  LogTime t;
  if (!time_of_day(s, date_seconds_, t)) return std::nullopt;
  return t;
}

std::optional<std::string_view> LogCursor::accept(std::string_view line) {
  const auto* space = static_cast<const char*>(std::memchr(line.data(), ' ', line.size()));
  if (!space) return line;
  auto stamp = static_cast<std::size_t>(space - line.data());
  auto t = parse(line.substr(0, stamp));
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
  return line.substr(stamp + 1);
}

}  // namespace pipec::runtime
