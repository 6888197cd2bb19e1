#include "rules/kubernetes.hpp"

#include <nlohmann/json.hpp>

#include "rules/names.hpp"

namespace pipec::rules {

std::optional<Toleration> parse_toleration(std::string_view spec) {
  Toleration tol;
  std::string t(spec);
  if (auto colon = t.rfind(':'); colon != std::string::npos) {
    tol.effect = t.substr(colon + 1);
    t.resize(colon);
    if (tol.effect != "NoSchedule" && tol.effect != "PreferNoSchedule" && tol.effect != "NoExecute")
      return std::nullopt;
  }
  if (t == "*") {
    tol.op = "Exists";
  } else if (auto eq = t.find('='); eq != std::string::npos) {
    tol.key = t.substr(0, eq);
    tol.op = "Equal";
    tol.value = t.substr(eq + 1);
  } else {
    tol.key = t;
    tol.op = "Exists";
  }
  if (t != "*" && tol.key.empty()) return std::nullopt;
  return tol;
}

std::optional<std::string> toleration_json(std::string_view spec) {
  auto tol = parse_toleration(spec);
  if (!tol) return std::nullopt;
  return toleration_object<nlohmann::json>(*tol).dump();
}

bool is_mount_path(std::string_view p) {
  if (p.empty() || p.front() != '/' || p.size() > 4096) return false;
  if (p.find(':') != std::string_view::npos) return false;  // the API server rejects ':'
  for (unsigned char c : p)
    if (c < 0x20 || c == 0x7f) return false;
  std::size_t start = 1;
  while (start <= p.size()) {
    auto slash = p.find('/', start);
    auto part = p.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (part == "..") return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

bool is_inside_mount(std::string_view path, std::string_view mount) {
  if (path == mount) return true;
  if (path.substr(0, mount.size()) != mount) return false;
  return mount == "/" || (path.size() > mount.size() && path[mount.size()] == '/');
}

std::optional<DataEntry> parse_data_entry(std::string_view entry) {
  auto colon = entry.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  DataEntry out{std::string(entry.substr(0, colon)), std::string(entry.substr(colon + 1))};
  if (!is_dns1123_subdomain(out.claim) || !is_mount_path(out.path)) return std::nullopt;
  while (out.path.size() > 1 && out.path.back() == '/') out.path.pop_back();
  return out;
}

bool is_clean_pod_policy(std::string_view text) { return text == "None" || text == "Running" || text == "All"; }

bool is_success_policy(std::string_view text) { return text.empty() || text == "AllWorkers"; }

}  // namespace pipec::rules
