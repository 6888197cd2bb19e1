#include "runtime/trainer_status.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "input/json.hpp"
#include "rules/metrics.hpp"

namespace pipec::runtime {

namespace {

using nlohmann::json;
using input::member;

constexpr std::size_t kMetricsInLine = 8;

std::optional<long long> bounded(const json& v, long long low, long long high) {
  if (!v.is_number_integer()) return std::nullopt;
  auto n = v.get<long long>();
  if (n < low || n > high) return std::nullopt;
  return n;
}

// A whole decimal number (the CRD's value is a string of at most 64 bytes).
std::optional<double> number(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const auto& text = v.get_ref<const std::string&>();
  if (text.empty() || text.size() > 64) return std::nullopt;
  double out = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(out)) return std::nullopt;
  return out;
}

std::string remaining(long long s) {
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

std::optional<TrainerProgress> trainer_progress(const json& job) {
  const json& status = member(member(job, "status"), "trainerStatus");
  if (!status.is_object()) return std::nullopt;
  TrainerProgress p;
  p.percent = bounded(member(status, "progressPercentage"), 0, 100);
  p.remaining_seconds = bounded(member(status, "estimatedRemainingSeconds"), 0, 2147483647);
  const json& metrics = member(status, "metrics");
  if (!metrics.is_array()) return p;
  std::size_t seen = 0;
  for (const auto& m : metrics) {
    if (++seen > kMaxTrainerMetrics) break;
    auto value = number(member(m, "name").is_string() ? member(m, "value") : json());
    if (!value) continue;
    auto name = rules::sanitize_metric_name(member(m, "name").get<std::string>());
    if (name.empty()) continue;
    bool again = false;
    for (auto& [n, v] : p.metrics)
      if (n == name) again = true, v = *value;
    if (!again) p.metrics.emplace_back(std::move(name), *value);
  }
  return p;
}

std::string progress_line(const TrainerProgress& p) {
  std::string line = "progress:";
  std::string sep = " ";
  if (p.percent) line += fmt::format("{}{}%", sep, *p.percent), sep = ", ";
  if (p.remaining_seconds) line += fmt::format("{}about {} left", sep, remaining(*p.remaining_seconds)), sep = ", ";
  for (std::size_t i = 0; i < p.metrics.size() && i < kMetricsInLine; ++i) {
    line += fmt::format("{}{}={}", sep, p.metrics[i].first, p.metrics[i].second);
    sep = " ";
  }
  if (p.metrics.size() > kMetricsInLine) line += fmt::format(" (+{} more)", p.metrics.size() - kMetricsInLine);
  if (p.empty()) line += " (no progress reported yet)";
  return line;
}

}  // namespace pipec::runtime
