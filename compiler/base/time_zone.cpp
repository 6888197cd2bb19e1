// check_time_zone(): the name's shape by the cron rules, then the zone database's file.

#include "compiler/base/time_zone.hpp"

#include <sys/stat.h>

#include <cstdio>

#include <fmt/format.h>

#include "rules/cron.hpp"

namespace pipec {

bool check_time_zone(std::string_view name, std::string& error) {
  if (!time_zone_name(name, error)) return false;
  if (name == "UTC" || name == "Local") return true;
  std::string path = "/usr/share/zoneinfo/" + std::string(name);
  struct stat st {};
  bool found = false;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      char magic[4] = {};
      found = std::fread(magic, 1, 4, f) == 4 && std::string_view(magic, 4) == "TZif";
      std::fclose(f);
    }
  }
  if (!found) {
    error = fmt::format("unknown time zone '{}' (not in the IANA database; e.g. UTC, "
                        "Europe/Berlin, America/New_York)",
                        name);
    return false;
  }
  return true;
}

}  // namespace pipec
