// The cron rule (rules/cron.hpp) as a table: for each input, what KFP is sent
// (the 6-field form), what an Argo CronWorkflow is given (5 fields or the descriptor;
// "" = refused for Argo: seconds), or the error. `pipec schedule create --cron` and
// `pipec build --kind cron-workflow --cron` both call parse_cron, so this table is what
// both commands accept.

#include "rules/cron.hpp"

#include <string>

#include <gtest/gtest.h>

namespace pipec {
namespace {

struct Case {
  const char* input;
  const char* kfp;    // sent to KFP; nullptr when refused
  const char* argo;   // given to Argo
  const char* error;  // the whole message when refused
};

const Case kCases[] = {
    // 5 fields: seconds 0 added for KFP, as written for Argo.
    {"0 2 * * *", "0 0 2 * * *", "0 2 * * *", nullptr},
    {"*/15 * * * *", "0 */15 * * * *", "*/15 * * * *", nullptr},
    {"  0   2 *  * *  ", "0 0 2 * * *", "0 2 * * *", nullptr},  // blanks collapse
    {"0 9-17 * * MON-FRI", "0 0 9-17 * * MON-FRI", "0 9-17 * * MON-FRI", nullptr},
    {"0 0 1,15 * *", "0 0 0 1,15 * *", "0 0 1,15 * *", nullptr},
    {"30 8-18/2 * jan,jul sun", "0 30 8-18/2 * jan,jul sun", "30 8-18/2 * jan,jul sun", nullptr},
    {"5/10 * ? * *", "0 5/10 * ? * *", "5/10 * ? * *", nullptr},
    // 6 fields: KFP's own form; Argo only when the seconds are 0.
    {"0 0 2 * * *", "0 0 2 * * *", "0 2 * * *", nullptr},
    {"30 0 2 * * *", "30 0 2 * * *", "", nullptr},
    {"*/10 * * * * *", "*/10 * * * * *", "", nullptr},
    // Descriptors.
    {"@daily", "0 0 0 * * *", "@daily", nullptr},
    {"@midnight", "0 0 0 * * *", "@midnight", nullptr},
    {"@HOURLY", "0 0 * * * *", "@hourly", nullptr},
    {"@weekly", "0 0 0 * * 0", "@weekly", nullptr},
    {"@monthly", "0 0 0 1 * *", "@monthly", nullptr},
    {"@yearly", "0 0 0 1 1 *", "@yearly", nullptr},
    {"@annually", "0 0 0 1 1 *", "@annually", nullptr},
    // Errors name the field.
    {"0 25 * * *", nullptr, nullptr, "hour field '25': hour 25 is out of range 0-23"},
    {"60 * * * *", nullptr, nullptr, "minute field '60': minute 60 is out of range 0-59"},
    {"61 0 2 * * *", nullptr, nullptr, "second field '61': second 61 is out of range 0-59"},
    {"0 0 0 * * *  ", "0 0 0 * * *", "0 0 * * *", nullptr},
    {"0 2 0 * *", nullptr, nullptr,
     "day-of-month field '0': day-of-month 0 is out of range 1-31"},
    {"0 2 * 13 *", nullptr, nullptr, "month field '13': month 13 is out of range 1-12, JAN-DEC"},
    {"0 2 * * 7", nullptr, nullptr,
     "day-of-week field '7': day-of-week 7 is out of range 0-6, SUN-SAT"},
    {"0 2 * * FUN", nullptr, nullptr,
     "day-of-week field 'FUN': 'FUN' is not a number or a name (SUN-SAT)"},
    {"0 17-9 * * *", nullptr, nullptr, "hour field '17-9': the range '17-9' starts after it ends"},
    {"*/0 * * * *", nullptr, nullptr, "minute field '*/0': the step must be at least 1 (got 0)"},
    {"*/x * * * *", nullptr, nullptr, "minute field '*/x': the step 'x' is not a number"},
    {"0 2,,3 * * *", nullptr, nullptr, "hour field '2,,3': a value is missing"},
    {"0 two * * *", nullptr, nullptr, "hour field 'two': 'two' is not a number"},
    {"0 2 * *", nullptr, nullptr,
     "expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 4"},
    {"0 0 0 2 * * * *", nullptr, nullptr,
     "expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 8"},
    {"", nullptr, nullptr, "the cron expression is empty"},
    {"@daily 3", nullptr, nullptr, "'@daily' takes no fields after it"},
    {"@fortnightly", nullptr, nullptr,
     "unknown descriptor '@fortnightly' (expected @yearly, @annually, @monthly, @weekly, @daily, "
     "@midnight or @hourly)"},
    {"@every 1h", nullptr, nullptr,
     "'@every' is not taken here: give the interval with --every (e.g. --every 6h)"},
    // Numbers past an int are out of range, not "not a number" (issue 42); control
    // characters are shown escaped.
    {"99999999999 * * * *", nullptr, nullptr, "minute field '99999999999': minute 99999999999 is out of range 0-59"},
    {"0 0 0 * 99999999999 *", nullptr, nullptr,
     "month field '99999999999': month 99999999999 is out of range 1-12, JAN-DEC"},
    {"*/99999999999 * * * *", nullptr, nullptr,
     "minute field '*/99999999999': the step 99999999999 is out of range 1-2147483647"},
    {"0\x01 * * * *", nullptr, nullptr, "minute field '0\\x01': '0\\x01' is not a number"},
    {"0 \x1b[31m * * *", nullptr, nullptr, "hour field '\\x1b[31m': '\\x1b[31m' is not a number"},
    {"@daily\x7f", nullptr, nullptr,
     "unknown descriptor '@daily\\x7f' (expected @yearly, @annually, @monthly, @weekly, @daily, "
     "@midnight or @hourly)"},
    {"0 2 * * *\n0 3 * * *", nullptr, nullptr,
     "a cron expression is one line of ASCII fields separated by spaces"},
};

TEST(Cron, Table) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string("input: '") + c.input + "'");
    CronSchedule schedule;
    std::string error;
    bool ok = parse_cron(c.input, schedule, error);
    if (c.kfp) {
      ASSERT_TRUE(ok) << error;
      EXPECT_EQ(schedule.kfp(), c.kfp);
      EXPECT_EQ(schedule.argo(), c.argo);
    } else {
      ASSERT_FALSE(ok) << schedule.kfp();
      EXPECT_EQ(error, c.error);
    }
  }
}

}  // namespace
}  // namespace pipec
