#pragma once
// A server run's metric series in the terminal (docs/client.md "Metric series in the
// terminal"): each step's series is its output artifact `metric-series` (rules/
// metrics_cli.hpp), which a KFP v1 run's steps list in the workflow's status and the API
// server hands out through ReadArtifact (`GET /apis/v1beta1/runs/RUN/nodes/NODE/artifacts/
// NAME:read`: `{"data": BASE64}` of the object Argo stored, a gzip'd tar of the one file).
// Each answer is bounded (input/limits.hpp), unpacked with libarchive, read by the series
// reader and drawn by the renderer `run --local` uses (compiler/base/sparkline.hpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/client/kfp/api.hpp"

namespace pipec::client::kfp {

/// The Pod nodes of an Argo workflow (a v1beta1 run's workflow_manifest) whose status lists
/// the output artifact metric-series, in start order; nullopt when the text holds no
/// workflow status.
std::optional<std::vector<SeriesStep>> series_steps(std::string_view workflow_manifest);

/// The series file in a ReadArtifact answer: `{"data": BASE64}` of a gzip'd tar that holds
/// one member, a regular file named metric-series.json of at most kMaxSeriesFileBytes once
/// unpacked. False with `why` for any other shape (two members, another name such as a
/// path out of the archive, a link, a larger file, not base64, not gzip).
[[nodiscard]] bool unpack_series_answer(std::string_view answer, std::string& text, std::string& why);

/// What run --wait, runs wait and runs get print after a v1 run's metrics table:
/// "series:" and one sparkline per STEP.METRIC, read from each step's artifact (at most
/// kMaxSeriesArtifacts steps, one request each, sent once), then one note per step whose
/// series could not be read. `steps` nullopt (no workflow status in the answer): the line
/// that says the series are absent from the answer. Never a failure of the command.
std::string series_section(KfpApi& api, std::string_view run_id,
                           const std::optional<std::vector<SeriesStep>>& steps);

}  // namespace pipec::client::kfp
