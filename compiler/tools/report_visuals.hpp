#pragma once
// The report's pieces that draw the steps' visual outputs (docs/report.md "Visual outputs"):
// what `pipec run --local` keeps of them, KFP v1's UI metadata in each step's directory.

#include <cstddef>
#include <string>
#include <string_view>

#include "compiler/tools/report.hpp"

namespace pipec::tools::detail {

/// Text for XHTML: the five special characters as entities, control characters other than
/// tab and newline (which XML refuses) as U+FFFD, and the `:` of `://` as `&#58;` (the page
/// shows the text, but holds no `http://` or `https://` reference).
std::string esc(std::string_view text);

/// At most `bytes` bytes of `text`, cut before a UTF-8 continuation byte, with "..." when cut.
std::string clip(const std::string& text, std::size_t bytes);

/// Reads RUN_DIR/steps/STEP/mlpipeline-ui-metadata.json of each step of `run.summary` that
/// has one into `run.visuals`; false with `error` on a file that is not UI metadata.
bool read_report_visuals(const std::string& dir, ReportRun& run, std::string& error);

/// The run's visual outputs, a figure each: HTML in a sandboxed frame that runs no script
/// and fetches nothing, Markdown as its text, a table as a table, a confusion matrix as a
/// heat map and an ROC curve as a chart (SVG). Nothing when the run has none.
void write_visuals(std::string& out, const ReportRun& run);

}  // namespace pipec::tools::detail
