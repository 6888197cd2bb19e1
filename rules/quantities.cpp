#include "rules/quantities.hpp"

#include <array>

namespace pipec::rules {

bool is_quantity(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '+') ++i;
  std::size_t digits = 0, dots = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
    if (s[i] == '.') ++dots; else ++digits;
    ++i;
  }
  if (digits == 0 || dots > 1) return false;
  auto suffix = s.substr(i);
  static constexpr std::array<std::string_view, 16> kSuffixes = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                                                 "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
  for (auto known : kSuffixes)
    if (suffix == known) return true;
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  std::size_t j = 1;
  if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) ++j;
  if (j == suffix.size()) return false;
  for (; j < suffix.size(); ++j)
    if (suffix[j] < '0' || suffix[j] > '9') return false;
  return true;
}

std::string gpu_resource_name(std::string_view vendor) {
  return vendor.find('/') == std::string_view::npos ? std::string(vendor) + ".com/gpu" : std::string(vendor);
}

}  // namespace pipec::rules
