#pragma once
// Cron expressions, checked once for every place pipec sends one: KFP recurring runs
// (`pipec schedule create --cron`, the 6-field form with seconds that KFP's scheduled
// workflow controller parses) and Argo CronWorkflows (`pipec build --kind cron-workflow`,
// the 5-field form). One parser, two spellings of the same schedule.

#include <string>
#include <string_view>

namespace pipec {

/// A checked schedule. `fields` are the six fields (second minute hour day-of-month month
/// day-of-week) as written, with runs of blanks collapsed; a descriptor (@daily, ...)
/// becomes its fields.
struct CronSchedule {
  std::string fields[6];
  std::string descriptor;  // "@daily" etc. as written (lower-cased), or ""

  /// The 6-field form KFP takes: "0 0 2 * * *".
  std::string kfp() const;
  /// The 5-field form (or the descriptor) Argo takes; "" when the seconds field is not 0
  /// (Argo's cron has no seconds).
  std::string argo() const;
};

/// Parses `text`: 5 fields (minute hour day-of-month month day-of-week; seconds 0), 6
/// fields (seconds first, as KFP writes them), or @yearly, @annually, @monthly, @weekly,
/// @daily, @midnight, @hourly. Each field is `*`, a value, a range
/// `a-b`, a step `*/n`, `a/n` or `a-b/n`, or a comma-separated list of those (`?` = `*`,
/// as robfig/cron takes it); months take
/// JAN..DEC and days SUN..SAT (any case). On failure returns false with `error` naming
/// the field and its range: "minute field '75': minute 75 is out of range 0-59"; a number
/// too long for an int is out of range too, a step past one "out of range 1-2147483647";
/// control characters are written as `\xNN`.
[[nodiscard]] bool parse_cron(std::string_view text, CronSchedule& out, std::string& error);

/// `text` as a message shows it: a control character or a byte outside ASCII as `\xNN`,
/// so a schedule from the command line never writes raw control sequences to a terminal.
[[nodiscard]] std::string cron_text(std::string_view text);

/// Whether `name` has the shape of a time zone name as Go's time.LoadLocation takes one
/// (not empty, no "..", no leading '/', letters, digits and `/_-+`): a name that can
/// be looked up in the IANA database (compiler/base/time_zone.hpp does). On failure
/// `error` says why.
[[nodiscard]] bool time_zone_name(std::string_view name, std::string& error);

}  // namespace pipec
