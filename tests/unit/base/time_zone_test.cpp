// check_time_zone(): a name of the right shape (rules/cron.hpp) found in this machine's
// zone database.

#include "compiler/base/time_zone.hpp"

#include <string>

#include <gtest/gtest.h>

namespace pipec {
namespace {

TEST(TimeZone, NamesOfTheDatabaseOnly) {
  std::string error;
  EXPECT_TRUE(check_time_zone("UTC", error)) << error;
  EXPECT_TRUE(check_time_zone("Europe/Berlin", error)) << error;
  EXPECT_TRUE(check_time_zone("America/New_York", error)) << error;
  EXPECT_FALSE(check_time_zone("Europe/Berlln", error));
  EXPECT_EQ(error,
            "unknown time zone 'Europe/Berlln' (not in the IANA database; e.g. UTC, Europe/Berlin, "
            "America/New_York)");
  EXPECT_FALSE(check_time_zone("../../etc/passwd", error));
  EXPECT_EQ(error, "'../../etc/passwd' is not a time zone name (e.g. UTC, Europe/Berlin, America/New_York)");
  EXPECT_FALSE(check_time_zone("Europe", error));  // a directory, not a zone
  EXPECT_FALSE(check_time_zone("", error));
  EXPECT_FALSE(check_time_zone("CET; rm -rf /", error));
}

}  // namespace
}  // namespace pipec
