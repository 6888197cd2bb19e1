#pragma once
// `pipec report`: one self-contained XHTML page of one or more local runs (the run
// directories of `pipec run --local`): the DAG with each step's outcome, a timeline of the
// steps, one chart per metric with the runs on shared axes, the parameter and metric
// tables, and the steps' visual outputs. No script and nothing fetched: inline SVG and one <style>. Every number it shows
// of a run is the text summary.json holds (docs/report.md).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/base/sparkline.hpp"

namespace pipec::tools {

/// One run as the report reads it.
struct ReportRun {
  std::string label;           // the run directory's last name
  nlohmann::json summary;      // summary.json
  nlohmann::json parameters;   // parameters.json (an object of texts), or an empty object
  /// Each step's visual outputs (steps/STEP/mlpipeline-ui-metadata.json's "outputs"), in
  /// the order of summary.json's steps.
  std::vector<std::pair<std::string, nlohmann::json>> visuals;
  /// Each metric's series ("STEP.METRIC"), from steps/STEP/metric-series.json.
  std::map<std::string, SeriesLine> series;
};

/// Reads RUN_DIR/summary.json (required), RUN_DIR/parameters.json (if present), each
/// step's visual outputs (steps/STEP/mlpipeline-ui-metadata.json) and metric series
/// (steps/STEP/metric-series.json), each bounded and checked for the members the report reads. On failure returns false
/// and sets `error` ("'DIR/summary.json': ...").
[[nodiscard]] bool read_report_run(const std::string& dir, ReportRun& run, std::string& error);

/// The page: the same bytes for the same runs.
std::string report_html(const std::vector<ReportRun>& runs);

/// A step's metrics text ("accuracy=0.93 loss=0.3") as (name, value text) pairs, in order.
std::vector<std::pair<std::string, std::string>> report_metrics(const std::string& text);

}  // namespace pipec::tools
