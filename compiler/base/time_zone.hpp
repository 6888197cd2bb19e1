#pragma once

// A time zone of a schedule (`pipec build --kind cron-workflow --timezone`), looked up on
// this machine.

#include <string>
#include <string_view>

namespace pipec {

/// Whether `name` is a time zone of the IANA database (Europe/Berlin, UTC), as Go's
/// time.LoadLocation reads it: a name of the shape rules/cron.hpp checks, and a TZif file
/// under /usr/share/zoneinfo. On failure `error` says why.
[[nodiscard]] bool check_time_zone(std::string_view name, std::string& error);

}  // namespace pipec
