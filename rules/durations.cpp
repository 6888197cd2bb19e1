#include "rules/durations.hpp"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

namespace pipec::rules {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  return parse_duration(text, nullptr);
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text, std::string* why) {
  // Units largest first, each at most once: "1h30m", "2d", "90s", "500ms"; bare digits are
  // seconds. Each number is at most 10^9 (kMaxDurationNumber), so the total stays far from
  // overflow.
  static constexpr std::pair<std::string_view, std::int64_t> kUnits[] = {
      {"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1000}, {"ms", 1}};
  if (text.empty()) return std::nullopt;
  std::size_t i = 0, next_unit = 0;
  std::int64_t total = 0;
  while (i < text.size()) {
    std::size_t start = i;
    std::int64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    for (std::size_t d = start; d < i; ++d) {
      n = n * 10 + (text[d] - '0');
      if (n > kMaxDurationNumber) {
        if (why)
          *why = "the number " + std::string(text.substr(start, i - start)) + " is out of range 0-" +
                 std::to_string(kMaxDurationNumber);
        return std::nullopt;
      }
    }
    if (i == start) return std::nullopt;
    std::size_t unit_start = i;
    while (i < text.size() && (text[i] < '0' || text[i] > '9')) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    if (unit.empty()) {
      if (start != 0 || i != text.size()) return std::nullopt;  // only a whole "90"
      return std::chrono::milliseconds(n * 1000);
    }
    std::size_t u = next_unit;
    while (u < std::size(kUnits) && kUnits[u].first != unit) ++u;
    if (u == std::size(kUnits)) return std::nullopt;  // unknown, repeated or out of order
    total += n * kUnits[u].second;
    next_unit = u + 1;
  }
  return std::chrono::milliseconds(total);
}

std::string iso8601_duration(std::chrono::milliseconds d) {
  long long s = d.count() / 1000;
  if (s == 0) return "P0D";
  std::string out = "P";
  if (s >= 86400) out += std::to_string(s / 86400) + "D";
  s %= 86400;
  if (s > 0) {
    out += "T";
    if (s >= 3600) out += std::to_string(s / 3600) + "H";
    s %= 3600;
    if (s >= 60) out += std::to_string(s / 60) + "M";
    s %= 60;
    if (s > 0) out += std::to_string(s) + "S";
  }
  return out;
}

}  // namespace pipec::rules
