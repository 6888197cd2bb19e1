#include "rules/names.hpp"

#include <cstdint>

namespace pipec::rules {

namespace {
bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
}  // namespace

std::string to_dns1123(std::string_view name) {
  // Written in place: no separator is written first or twice, and trailing ones are cut.
  std::string out(name.size(), '\0');
  std::size_t n = 0;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') {
      out[n++] = static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out[n++] = c;
    } else if (c == '_' || c == '-' || c == '.' || c == ' ' || c == '/') {
      if (n > 0 && out[n - 1] != '-') out[n++] = '-';
    }
  }
  while (n > 0 && out[n - 1] == '-') --n;
  out.resize(n);
  return out;
}

bool is_dns1123_label(std::string_view name, std::size_t max_length) {
  if (name.empty() || name.size() > max_length) return false;
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_alnum(name.front()) || !lower_alnum(name.back())) return false;
  for (char c : name)
    if (!lower_alnum(c) && c != '-') return false;
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

bool is_resource_name(std::string_view text) {
  auto slash = text.find('/');
  std::string_view name = slash == std::string_view::npos ? text : text.substr(slash + 1);
  if (slash != std::string_view::npos && !is_dns1123_subdomain(text.substr(0, slash))) return false;
  if (name.empty() || name.size() > 63) return false;
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool is_label_key(std::string_view text) { return is_resource_name(text); }

bool is_label_value(std::string_view text) {
  if (text.empty()) return true;
  if (text.size() > 63) return false;
  if (!alnum(text.front()) || !alnum(text.back())) return false;
  for (char c : text)
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!alnum(c) && c != '_') return false;
  return true;
}

const char* env_reserved_by(std::string_view name, bool training) {
  if (name.substr(0, 6) == "PIPEC_") return "pipec";
  if (training && name == "TF_CONFIG") return "the operator";
  return nullptr;
}

std::string hash_suffix(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : text) h = (h ^ c) * 16777619u;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "-";
  for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kHex[(h >> shift) & 0xf]);
  return out;
}

std::string job_name_for_step(std::string_view step_name, std::size_t max) {
  std::string out;
  for (char c : step_name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (out.empty() && !(c >= 'a' && c <= 'z')) continue;  // DNS-1035 starts with a letter
    out.push_back(ok ? c : '-');
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty()) out = "job";
  if (out.size() > max) {
    out.resize(max - 9);
    while (!out.empty() && out.back() == '-') out.pop_back();
    out += hash_suffix(step_name);
  }
  return out;
}

}  // namespace pipec::rules
