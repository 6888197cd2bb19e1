#pragma once
// Metric specs and a step's metric set: what the compiler checks on a literal, the launcher
// and pipec-metrics on a run-time value, and the scraper looks for (docs/runtime.md,
// "Metrics"). No I/O.

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipec::rules {

enum class Aggregation { Last, Max, Min };

/// "last", "max" or "min".
[[nodiscard]] const char* aggregation_word(Aggregation a);

/// One metric spec `NAME[:FORMAT][:last|max|min]`.
struct MetricSpec {
  std::string name;      ///< as it appears in the log, e.g. `images/sec`
  std::string reported;  ///< sanitised to KFP's rule, e.g. `images-sec`
  std::string format = "RAW";  ///< RAW or PERCENTAGE
  Aggregation aggregation = Aggregation::Last;
};

/// The bytes that end a metric name on its left in a log line (space, tab, newline, `\r`,
/// `, ; ( [ { " ' | : =`): a name holds none of them but single spaces between words.
inline constexpr std::array<bool, 256> kMetricNameBoundary = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : std::string_view(" \t\n\r,;([{\"'|:=")) t[c] = true;
  return t;
}();

/// KFP's metric-name rule `^[a-zA-Z]([-_a-zA-Z0-9]{0,62}[a-zA-Z0-9])?$` applied to a log
/// name: every run of other characters becomes one `-`, leading characters up to the
/// first letter and trailing `-`/`_` are dropped, and the result is cut to 64 characters.
/// Returns "" when no letter is left.
[[nodiscard]] std::string sanitize_metric_name(std::string_view name);

/// Splits a spec `NAME[:RAW|PERCENTAGE][:last|max|min]` without checking the name: the
/// options are the trailing known words, so the name may hold spaces (`Final Cost:min`)
/// and even ':' (which then makes it unreportable).
[[nodiscard]] MetricSpec split_metric_spec(std::string_view spec);

/// Whether a log name can be found and reported: it has a letter, holds none of the
/// characters that end a name in a log line (kMetricNameBoundary), and a space only
/// between words (`Final Cost`; not leading, trailing or doubled).
[[nodiscard]] bool metric_name_reportable(std::string_view name);

/// Why a name is not reportable, with the spec's form, for messages: "a name needs a
/// letter and none of ... (expected NAME[:RAW|PERCENTAGE][:last|max|min], e.g. ...)".
extern const char* const kMetricNameRule;

/// "" unless the spec ends in a misspelt format or aggregation (`acc:PERCENT`,
/// `loss:minimum`): then the error naming it, with the spec meant ("did you mean
/// 'acc:PERCENTAGE'?"). parse_metric_spec() checks it first.
[[nodiscard]] std::string metric_option_problem(std::string_view spec);

/// Parses a metric spec. Returns nullopt and sets `error` when malformed.
[[nodiscard]] std::optional<MetricSpec> parse_metric_spec(std::string_view spec, std::string& error);

/// The most metrics one step reports (what KFP shows for a step).
inline constexpr std::size_t kMaxMetrics = 50;

/// A step's metric set, built one spec at a time: no two specs reported under the same
/// name, at most kMaxMetrics.
class MetricSet {
 public:
  /// Adds `spec`; "" or the problem when its reported name is taken ("metrics 'a/b' and
  /// 'a b' would both be reported as 'a-b'"), and then it is not added.
  [[nodiscard]] std::string add(const MetricSpec& spec);
  /// "" or the problem when a step lists `count` metrics, more than kMaxMetrics.
  [[nodiscard]] static std::string count_problem(std::size_t count);

 private:
  std::map<std::string, std::string> name_of_;  // reported name -> log name
};

/// The metric-set rules for a whole list: returns false and sets `error` to the first problem.
[[nodiscard]] bool check_metric_specs(const std::vector<MetricSpec>& specs, std::string& error);

}  // namespace pipec::rules
