#pragma once
// What a Kubeflow Trainer v2 TrainJob says of its own progress (status.trainerStatus, v2.3.0:
// progressPercentage, estimatedRemainingSeconds, metrics [{name, value}] and
// lastUpdatedTime): read bounded, as data. Pure: no I/O. The launcher prints a progress line
// each time it changes and merges the metrics into the step's (docs/runtime.md).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipec::runtime {

struct TrainerProgress {
  std::optional<long long> percent;            ///< progressPercentage, 0..100
  std::optional<long long> remaining_seconds;  ///< estimatedRemainingSeconds, >= 0
  /// The metrics whose value is a finite number, named by the metric rules
  /// (rules::sanitize_metric_name); a name met again keeps its last value; at most
  /// kMaxTrainerMetrics (the CRD's maxItems), in the order first met.
  std::vector<std::pair<std::string, double>> metrics;

  bool empty() const { return !percent && !remaining_seconds && metrics.empty(); }
  bool operator==(const TrainerProgress&) const = default;
};

inline constexpr std::size_t kMaxTrainerMetrics = 256;

/// The progress of a TrainJob object (`job`), or nullopt when it has no trainerStatus. Values
/// outside the CRD's ranges and metrics whose value is not a number are left out.
[[nodiscard]] std::optional<TrainerProgress> trainer_progress(const nlohmann::json& job);

/// The progress line: "progress: 40%, about 2m30s left, accuracy=0.8 loss=0.52", at most
/// 8 metrics then "(+N more)".
[[nodiscard]] std::string progress_line(const TrainerProgress& p);

}  // namespace pipec::runtime
