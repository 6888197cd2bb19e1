#pragma once
// Metric scraping from the training log as it flows, and KFP's metrics file.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/metrics.hpp"
#include "runtime/metric_series.hpp"

namespace pipec::runtime {

/// Finds `name=value` and `name: value` (also `name = value`, `name:value`) for the given
/// names in a log. A name is a whole token: it starts after a space, tab, `,;([{"'|`, `:` or
/// `=`, a `\r` or the start of the line, so `train_loss=1` is not `loss`. A value is a
/// decimal number with optional sign and exponent (`-0.5`, `+3`, `1e-3`, `.5`) followed by
/// the end of the line, a `\r`, a space or `,;)]}"'%|`: a `\r` separates like a newline, so
/// each redraw of a progress bar is read as a line. NaN and infinities are dropped with a
/// warning.
class MetricScraper {
 public:
  explicit MetricScraper(std::vector<rules::MetricSpec> specs);

  /// Feeds the next bytes of the log. Lines may be split anywhere between calls: the values
  /// found are those of one scan of the whole log (a "line" over 1 MiB is scanned in pieces
  /// cut after a '\r', '\n' or another byte no name or value holds).
  void feed(std::string_view bytes);
  /// Feeds one whole line (without its newline).
  void feed_line(std::string_view line) { scan(line); }
  /// Feeds whole lines, each ended by '\n' (the last one may lack it): one scan for many
  /// lines, since neither a name nor a value crosses a '\n'.
  void feed_lines(std::string_view lines) { scan(lines); }
  /// Scans what is left of an unterminated last line.
  void finish();

  const std::vector<rules::MetricSpec>& specs() const { return specs_; }
  /// The collected value of specs()[i], if any was seen.
  std::optional<double> value(std::size_t i) const { return values_[i]; }
  /// Warnings since the last call (non-finite values), each once per metric.
  std::vector<std::string> take_warnings();

  /// KFP's metrics document: `{"metrics":[{"name":..,"numberValue":..,"format":..}]}` with
  /// the metrics that have a value, in spec order.
  std::string metrics_json() const;

  /// Metrics the job reports itself (a TrainJob's status.trainerStatus, named by the
  /// metric rules): metrics_json() and executor_output() hold them after the scraped ones,
  /// format RAW; where a spec reports the same name and has a value, the scraped value wins.
  /// Each call replaces the previous set, and adds each of its values as a point of that
  /// name's reported series (series_json()). Not to be called while another thread feeds.
  void set_reported(std::vector<std::pair<std::string, double>> metrics);

  /// Every value read of specs()[i], bounded (docs/runtime.md "Metric series").
  const MetricSeries& series(std::size_t i) const { return series_[i]; }
  /// The series file `metric-series.json` (format `pipec-metric-series/1`): the series of
  /// the metrics that have a value, in spec order, under their reported names.
  std::string series_json() const;

  /// KFP v2: the ExecutorOutput JSON for `executor_input` (the task's `{{$}}`): its output
  /// artifact `metrics` (system.Metrics) with the collected values as its metadata,
  /// `{"artifacts":{"metrics":{"artifacts":[{...,"metadata":{"acc":0.9}}]}}}`, or `{}`
  /// when the task has no such artifact. Sets `output_file` to where KFP reads it
  /// (`outputs.outputFile`). Returns false with `error` set for an input of another shape.
  bool executor_output(std::string_view executor_input, std::string& output_file,
                       std::string& json, std::string& error) const;

 private:
  void scan(std::string_view region);
  bool worth_a_look(const char* begin, const char* sep) const;
  void candidate(const char* begin, const char* sep, const char* end);
  void record(std::size_t index, double v, const char* begin, const char* at, const char* end);
  LineSteps line_steps(const char* begin, const char* at, const char* end);

  bool scraped(const std::string& reported_name) const;

  std::vector<rules::MetricSpec> specs_;
  std::vector<std::optional<double>> values_;
  std::vector<std::pair<std::string, double>> reported_;
  std::vector<std::pair<std::string, MetricSeries>> reported_series_;  // in the order first met
  std::vector<MetricSeries> series_;
  // The line of the last value recorded in the current scan and the steps it says.
  const char* line_begin_ = nullptr;
  const char* line_end_ = nullptr;
  LineSteps line_steps_;
  // Per metric: where its last value lies when its line's steps are still to be read.
  std::vector<const char*> last_at_;
  std::vector<bool> warned_;
  std::vector<std::string> warnings_;
  std::uint64_t length_mask_ = 0;  // bit n set: some name has length n (n < 64)
  std::size_t max_length_ = 0;     // of the names
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::size_t> spaced_;  // specs whose name holds a space, in spec order
  std::vector<std::size_t> first_;  // [min(length, 63) * 256 + first byte] -> spec index
  std::vector<std::size_t> next_;   // the next spec with the same key
  std::array<bool, 256> last_char_{};  // bytes that end some name
  std::array<std::uint64_t, 1024> tail_pairs_{};  // bit (a << 8 | b): some name ends "ab"
  void hold(std::string_view bytes);
  std::string carry_;              // an incomplete line between feed() calls
  std::size_t carry_cut_ = std::string::npos;  // where carry_ may be cut (see hold())
};

}  // namespace pipec::runtime
