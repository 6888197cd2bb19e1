#include "runtime/log_cursor.hpp"

#include <ctime>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>

namespace pipec::runtime {
namespace {

std::vector<std::string> read(LogCursor& c, const std::vector<std::string>& lines) {
  c.begin_read();
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (auto kept = c.accept(l)) out.emplace_back(*kept);
  return out;
}

TEST(RuntimeLogCursor, ParsesKubeletTimestamps) {
  auto t = parse_log_time("2026-11-22T19:30:01.123456789Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->seconds, 1795375801);
  EXPECT_EQ(t->nanos, 123456789);
  EXPECT_EQ(parse_log_time("2026-11-22T19:30:01Z")->nanos, 0);
  // Go trims trailing zeros: .5 is later than .25.
  EXPECT_GT(*parse_log_time("2026-11-22T19:30:01.5Z"), *parse_log_time("2026-11-22T19:30:01.25Z"));
  EXPECT_FALSE(parse_log_time("2026-11-22 19:30:01Z"));
  EXPECT_FALSE(parse_log_time("2026-11-22T19:30:01.x1Z"));
  EXPECT_FALSE(parse_log_time("2026-11-22T19:30:01+01:00"));
  EXPECT_FALSE(parse_log_time("epoch=1"));
  EXPECT_EQ(rfc3339_seconds(1795375801), "2026-11-22T19:30:01Z");
}

TEST(RuntimeLogCursor, ARereadRepeatsNothing) {
  LogCursor c;
  EXPECT_EQ(c.since_time(), "");
  EXPECT_EQ(read(c, {"2026-11-22T19:30:00.9Z zero", "2026-11-22T19:30:01.1Z a",
                     "2026-11-22T19:30:01.2Z b", "2026-11-22T19:30:01.2Z c"}),
            (std::vector<std::string>{"zero", "a", "b", "c"}));
  EXPECT_EQ(c.since_time(), "2026-11-22T19:30:01Z");
  // The server sends the whole second again, and more.
  EXPECT_EQ(read(c, {"2026-11-22T19:30:01.1Z a", "2026-11-22T19:30:01.2Z b",
                     "2026-11-22T19:30:01.2Z c", "2026-11-22T19:30:01.2Z d",
                     "2026-11-22T19:30:02Z e"}),
            (std::vector<std::string>{"d", "e"}));
  EXPECT_EQ(read(c, {"2026-11-22T19:30:02Z e", "no timestamp here", "2026-11-22T19:30:03Z f"}),
            (std::vector<std::string>{"no timestamp here", "f"}));
}

TEST(RuntimeLogCursor, KeepsTheTextAfterTheTimestampWhole) {
  LogCursor c;
  EXPECT_EQ(read(c, {"2026-11-22T19:30:00Z  indented: x=1 ", "2026-11-22T19:30:00Z "}),
            (std::vector<std::string>{" indented: x=1 ", ""}));
}

// The arithmetic that replaced timegm() agrees with it, across days, months, leap years
// and centuries, and refuses what timegm() would have normalised.
TEST(RuntimeLogCursor, TimestampsAgreeWithTimegm) {
  std::mt19937_64 rng(12);
  for (int i = 0; i < 20000; ++i) {
    std::tm tm{};
    tm.tm_year = static_cast<int>(rng() % 300);  // 1900 ... 2199
    tm.tm_mon = static_cast<int>(rng() % 12);
    tm.tm_mday = 1 + static_cast<int>(rng() % 28);
    tm.tm_hour = static_cast<int>(rng() % 24);
    tm.tm_min = static_cast<int>(rng() % 60);
    tm.tm_sec = static_cast<int>(rng() % 60);
    std::tm copy = tm;
    auto expected = static_cast<std::int64_t>(timegm(&copy));
    auto text = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.5Z", tm.tm_year + 1900,
                            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    auto t = parse_log_time(text);
    ASSERT_TRUE(t) << text;
    EXPECT_EQ(t->seconds, expected) << text;
    EXPECT_EQ(t->nanos, 500000000);
  }
  EXPECT_EQ(parse_log_time("2024-02-29T00:00:00Z")->seconds, 1709164800);
  EXPECT_EQ(parse_log_time("2024-03-01T00:00:00Z")->seconds, 1709251200);
  EXPECT_EQ(parse_log_time("1970-01-01T00:00:00Z")->seconds, 0);
  for (const char* bad : {"2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z",
                          "2026-01-32T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
                          "2026-01-01T00:00:61Z", "2026-01-01T0a:00:00Z"})
    EXPECT_FALSE(parse_log_time(bad)) << bad;
}

// The cursor remembers the last date: a new day, and a malformed time on a known day, are
// read as parse_log_time() reads them.
TEST(RuntimeLogCursor, RemembersTheDateWithoutTrustingIt) {
  LogCursor c;
  EXPECT_EQ(read(c, {"2026-11-22T23:59:59.9Z late", "2026-11-23T00:00:00.1Z next day",
                     "2026-11-22T23:59:59.95Z older, dropped", "2026-11-23T00:00:00.2Z later",
                     "2026-11-23T25:00:00Z not a time", "2026-11-23T00:00:00.3Z still on"}),
            (std::vector<std::string>{"late", "next day", "later", "2026-11-23T25:00:00Z not a time",
                                      "still on"}));
  EXPECT_EQ(c.since_time(), "2026-11-23T00:00:00Z");
  // A new cursor (a new pod) starts without a date.
  LogCursor fresh;
  EXPECT_EQ(read(fresh, {"2025-01-01T00:00:00Z a", "2026-11-23T00:00:00.1Z b"}),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(fresh.since_time(), "2026-11-23T00:00:00Z");
}

}  // namespace
}  // namespace pipec::runtime
