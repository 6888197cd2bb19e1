#pragma once

// pipec-metrics's command line, once: the Argo and KFP v2 writers wrap a container's
// command with wrap_command(), pipec-metrics reads it with parse() and prints usage().
//
//   pipec-metrics --install PATH
//   pipec-metrics --metric SPEC... [--from FILE] [--metrics-file PATH]
//                 [--series-file PATH] [--visual KIND:NAME:PATH]... [--executor-input JSON]
//                 -- COMMAND...

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipec::rules::metrics_cli {

inline constexpr const char* kInstall = "--install";
inline constexpr const char* kMetric = "--metric";
inline constexpr const char* kFrom = "--from";
inline constexpr const char* kMetricsFile = "--metrics-file";
inline constexpr const char* kSeriesFile = "--series-file";
inline constexpr const char* kExecutorInput = "--executor-input";
inline constexpr const char* kVisual = "--visual";
inline constexpr const char* kEndOfOptions = "--";
inline constexpr const char* kDefaultMetricsFile = "/tmp/outputs/mlpipeline-metrics.json";
/// KFP v1's UI metadata, beside the metrics file (docs/language.md "Visual outputs").
inline constexpr const char* kUiMetadataFile = "mlpipeline-ui-metadata.json";
/// The metric series (docs/runtime.md "Metric series"): the file's name beside the metrics
/// file when no --series-file says where, and the step's output artifact that holds it on
/// Argo (`metric-series`, at /tmp/outputs/metric-series.json) and on KFP v2 (`metric_series`,
/// a system.Artifact, whose path the writers pass as --series-file).
inline constexpr const char* kSeriesFileName = "metric-series.json";
inline constexpr const char* kDefaultSeriesFile = "/tmp/outputs/metric-series.json";
inline constexpr const char* kArgoSeriesArtifact = "metric-series";
inline constexpr const char* kV2SeriesArtifact = "metric_series";

/// Where the series goes: `series_file`, else kSeriesFileName beside `metrics_file`.
std::string series_path(const std::string& metrics_file, const std::string& series_file);

/// A wrapped command, in words of the writer's kind (a YAML or JSON node).
template <typename Word>
struct Call {
  Word tool;                           // pipec-metrics as the container finds it
  std::vector<Word> specs;             // one `--metric` each
  std::optional<Word> from;            // the op's `metrics_from` file
  std::optional<Word> metrics_file;    // else kDefaultMetricsFile
  std::optional<Word> series_file;     // else beside the metrics file
  std::optional<Word> executor_input;  // KFP v2's `{{$}}`
  std::vector<Word> visuals;           // one `--visual` each: visual_word()
};

/// A visual output as `--visual` names it: `KIND:NAME:PATH` (the type name, the output's
/// name, the file the command writes).
inline std::string visual_word(std::string_view kind, std::string_view name, std::string_view path) {
  return std::string(kind) + ":" + std::string(name) + ":" + std::string(path);
}

/// `command` run by pipec-metrics as `call` says.
template <typename Word>
std::vector<Word> wrap_command(Call<Word> call, std::vector<Word> command) {
  std::vector<Word> out;
  out.reserve(command.size() + 2 * call.specs.size() + 8);
  out.push_back(std::move(call.tool));
  for (auto& spec : call.specs) {
    out.push_back(Word(kMetric));
    out.push_back(std::move(spec));
  }
  auto option = [&](const char* word, std::optional<Word>& value) {
    if (!value) return;
    out.push_back(Word(word));
    out.push_back(std::move(*value));
  };
  option(kFrom, call.from);
  option(kMetricsFile, call.metrics_file);
  option(kSeriesFile, call.series_file);
  for (auto& v : call.visuals) {
    out.push_back(Word(kVisual));
    out.push_back(std::move(v));
  }
  option(kExecutorInput, call.executor_input);
  out.push_back(Word(kEndOfOptions));
  for (auto& w : command) out.push_back(std::move(w));
  return out;
}

/// What a command line says.
struct Parsed {
  std::optional<std::string> install;  // `--install PATH`: nothing else is read
  std::vector<std::string> specs;      // unchecked: rules/metrics.hpp checks them
  std::string from;
  std::string metrics_file = kDefaultMetricsFile;
  std::string series_file;  // "" is beside metrics_file (series_path)
  std::string executor_input;
  struct Visual {
    std::string kind, name, path;  // the kind unchecked: rules/visuals.hpp reads it
  };
  std::vector<Visual> visuals;
  std::vector<std::string> command;  // after `--`; not empty
};

/// Reads `args` (argv without the program's name). False with `why` on a missing value,
/// an unknown word or no command.
bool parse(const std::vector<std::string>& args, Parsed& out, std::string& why);

/// The usage lines pipec-metrics prints after an error.
std::string usage();

}  // namespace pipec::rules::metrics_cli
