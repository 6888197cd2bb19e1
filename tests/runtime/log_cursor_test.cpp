#include "runtime/log_cursor.hpp"

#include <string>
#include <vector>

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

}  // namespace
}  // namespace pipec::runtime
