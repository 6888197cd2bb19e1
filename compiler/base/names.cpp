#include "compiler/base/names.hpp"

namespace pipec {

std::string to_dns1123(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (c == '_' || c == '-' || c == '.' || c == ' ' || c == '/') {
      if (!out.empty() && out.back() != '-') out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  std::size_t start = 0;
  while (start < out.size() && out[start] == '-') ++start;
  return out.substr(start);
}

bool is_dns1123_label(std::string_view name, std::size_t max_length) {
  if (name.empty() || name.size() > max_length) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name)
    if (!alnum(c) && c != '-') return false;
  return true;
}

bool is_dns1123_subdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  while (true) {
    auto dot = name.find('.');
    if (!is_dns1123_label(name.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    name.remove_prefix(dot + 1);
  }
}

}  // namespace pipec
