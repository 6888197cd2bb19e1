#include "rules/quantities.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>

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

std::optional<double> quantity_value(std::string_view s) {
  if (!is_quantity(s)) return std::nullopt;
  std::size_t end = 0;
  while (end < s.size() && (s[end] == '+' || s[end] == '.' || (s[end] >= '0' && s[end] <= '9'))) ++end;
  const double number = std::strtod(std::string(s.substr(0, end)).c_str(), nullptr);
  const auto suffix = s.substr(end);
  struct Scale { std::string_view suffix; double factor; };
  static constexpr std::array<Scale, 16> kScales = {{{"", 1},
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
      {"Pi", 1125899906842624.0}, {"Ei", 1152921504606846976.0}, {"n", 1e-9}, {"u", 1e-6},
      {"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}}};
  for (const auto& scale : kScales)
    if (suffix == scale.suffix) return number * scale.factor;
  if (suffix.size() > 4) return std::nullopt;  // e, a sign and at most 2 digits
  const int exponent = std::atoi(std::string(suffix.substr(1)).c_str());  // is_quantity checked the digits
  if (exponent > 30 || exponent < -30) return std::nullopt;
  return number * std::pow(10.0, exponent);
}

std::string gpu_resource_name(std::string_view vendor) {
  return vendor.find('/') == std::string_view::npos ? std::string(vendor) + ".com/gpu" : std::string(vendor);
}

}  // namespace pipec::rules
