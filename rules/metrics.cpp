#include "rules/metrics.hpp"

#include <algorithm>

namespace pipec::rules {
namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_alpha(c) || (c >= '0' && c <= '9'); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// The known option word `word` was meant as (`PERCENT`, `Percentage` -> PERCENTAGE;
// `minimum` -> min): one is a prefix of the other, ignoring case. "" when none is.
std::string_view near_metric_option(std::string_view word) {
  static constexpr std::array<std::string_view, 5> kOptions = {"PERCENTAGE", "RAW", "last", "max", "min"};
  if (word.empty()) return {};
  for (std::string_view option : kOptions) {
    std::size_t n = std::min(word.size(), option.size());
    bool same = true;
    for (std::size_t i = 0; i < n && same; ++i) same = lower(word[i]) == lower(option[i]);
    if (same && n >= std::min<std::size_t>(3, option.size())) return option;
  }
  return {};
}

}  // namespace

const char* const kMetricNameRule =
    "a name needs a letter and none of tab, = : , ; ( [ { \" ' |, which end a name in the "
    "log, and spaces only between words (expected NAME[:RAW|PERCENTAGE][:last|max|min], e.g. "
    "images/sec:RAW:max)";

const char* aggregation_word(Aggregation a) {
  return a == Aggregation::Max ? "max" : a == Aggregation::Min ? "min" : "last";
}

std::string sanitize_metric_name(std::string_view name) {
  std::string out;
  bool in_run = false;
  for (char c : name) {
    if (out.empty() && !is_alpha(c)) continue;
    if (is_alnum(c) || c == '-' || c == '_') {
      out.push_back(c);
      in_run = false;
    } else if (!in_run) {
      out.push_back('-');
      in_run = true;
    }
  }
  if (out.size() > 64) out.resize(64);
  while (!out.empty() && !is_alnum(out.back())) out.pop_back();
  return out;
}

MetricSpec split_metric_spec(std::string_view spec) {
  MetricSpec m;
  std::string_view rest = spec;
  for (int i = 0; i < 2; ++i) {
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) break;
    auto word = rest.substr(colon + 1);
    if (word == "RAW" || word == "PERCENTAGE") {
      m.format = std::string(word);
    } else if (word == "last" || word == "max" || word == "min") {
      m.aggregation = word == "max" ? Aggregation::Max
                      : word == "min" ? Aggregation::Min
                                      : Aggregation::Last;
    } else {
      break;
    }
    rest = rest.substr(0, colon);
  }
  m.name = std::string(rest);
  m.reported = sanitize_metric_name(m.name);
  return m;
}

bool metric_name_reportable(std::string_view name) {
  // A character that ends a name in the log can never be inside a name the scraper
  // finds, so such a name is an error rather than a metric that never appears; single
  // spaces between words are matched as a whole (runtime's MetricScraper::candidate).
  if (name.empty() || name.front() == ' ' || name.back() == ' ' || name.find("  ") != std::string_view::npos)
    return false;
  bool has_boundary = std::any_of(name.begin(), name.end(), [](char c) {
    return c != ' ' && kMetricNameBoundary[static_cast<unsigned char>(c)];
  });
  return !has_boundary && !sanitize_metric_name(name).empty();
}

std::string metric_option_problem(std::string_view spec) {
  MetricSpec m = split_metric_spec(spec);
  // `acc:PERCENT`, `loss:minimum`: a ':' is never in a reportable name, so a word after
  // the last one is a misspelt option, not part of the name.
  if (auto colon = m.name.rfind(':'); colon != std::string::npos && !metric_name_reportable(m.name)) {
    std::string_view word = std::string_view(m.name).substr(colon + 1);
    std::string_view near = near_metric_option(word);
    std::string_view head = std::string_view(m.name).substr(0, colon);
    // Only a word close to an option: `val:acc` stays a name that cannot be reported.
    if (!near.empty()) {
      bool format = near == "RAW" || near == "PERCENTAGE";
      return "metric '" + std::string(spec) + "': unknown " + (format ? "format" : "aggregation") + " '" +
             std::string(word) + "'; did you mean '" + std::string(head) + ":" + std::string(near) +
             std::string(spec.substr(m.name.size())) + "'? (expected NAME[:RAW|PERCENTAGE][:last|max|min], "
             "e.g. images/sec:RAW:max)";
    }
  }
  return {};
}

std::optional<MetricSpec> parse_metric_spec(std::string_view spec, std::string& error) {
  if (std::string problem = metric_option_problem(spec); !problem.empty()) {
    error = std::move(problem);
    return std::nullopt;
  }
  MetricSpec m = split_metric_spec(spec);
  if (!metric_name_reportable(m.name)) {
    error = "metric '" + std::string(spec) + "' cannot be reported: " + kMetricNameRule;
    return std::nullopt;
  }
  return m;
}

std::string MetricSet::add(const MetricSpec& spec) {
  auto [it, fresh] = name_of_.emplace(spec.reported, spec.name);
  if (fresh) return {};
  return "metrics '" + it->second + "' and '" + spec.name + "' would both be reported as '" + spec.reported + "'";
}

std::string MetricSet::count_problem(std::size_t count) {
  if (count <= kMaxMetrics) return {};
  return "a step reports at most " + std::to_string(kMaxMetrics) + " metrics (what KFP shows), got " +
         std::to_string(count);
}

bool check_metric_specs(const std::vector<MetricSpec>& specs, std::string& error) {
  MetricSet set;
  for (const auto& spec : specs)
    if (std::string problem = set.add(spec); !problem.empty()) {
      error = std::move(problem);
      return false;
    }
  error = MetricSet::count_problem(specs.size());
  return error.empty();
}

}  // namespace pipec::rules
