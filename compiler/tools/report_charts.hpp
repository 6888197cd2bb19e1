#pragma once
// The report's metric charts (docs/report.md "Charts"): each metric's series (the steps'
// metric-series.json, which `pipec run --local` writes) as a line per run on axes the runs
// share, or, where no run has a series of the metric, each run's final value as a bar.

#include <cstddef>
#include <string>
#include <vector>

#include "compiler/tools/report.hpp"

namespace pipec::tools::detail {

/// `v` with one decimal, as the report's SVG writes coordinates and sizes.
std::string fixed(double v);

/// The colour of the `i`th run (the runs table and the charts).
const char* run_color(std::size_t i);

/// Reads RUN_DIR/steps/STEP/metric-series.json of each step of `run.summary` that has one
/// into `run.series` ("STEP.METRIC"); false with `error` on a file that is not a series file.
bool read_report_series(const std::string& dir, ReportRun& run, std::string& error);

/// The chart of the metric `key` ("STEP.METRIC"), `row` holding each run's final value as
/// summary.json has it ("" where a run has none).
void write_chart(std::string& out, const std::string& key, const std::vector<std::string>& row,
                 const std::vector<ReportRun>& runs);

}  // namespace pipec::tools::detail
