#pragma once
// A metric's series in the terminal: one fixed-width sparkline per metric, with its first
// and last value and its least and greatest (docs/client.md "Metric series in the
// terminal"). `run --local`, `run --wait` and `runs get` print it with this one renderer,
// from the series file the scraper writes (`metric-series.json`, format
// pipec-metric-series/1, docs/runtime.md "Metric series").

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pipec {

/// One metric's series as the file holds it: its points' `order` and `value` (and `step`
/// and `epoch`, -1 where a point has none), and how many values were read (`count`; more
/// than the points when the series was thinned).
struct SeriesLine {
  std::string name;
  std::vector<std::size_t> orders;
  std::vector<double> values;
  std::vector<long long> steps, epochs;
  std::size_t count = 0;
};

/// Reads a series file's text. False with `why` when it is not JSON, not of the format
/// pipec-metric-series/1, or a point is malformed (its `step` or `epoch`, when present, not
/// an unsigned integer); points are kept in the file's order.
[[nodiscard]] bool read_series(std::string_view text, std::vector<SeriesLine>& out, std::string& why);

/// How the bars are drawn: Unicode blocks (▁▂▃▄▅▆▇█) or ASCII (`_.-~=+*#`).
enum class SparkGlyphs { Unicode, Ascii };

/// Unicode when the locale's character set is UTF-8 (the first of LC_ALL, LC_CTYPE, LANG
/// that is set names `UTF-8` or `utf8`, in any case), else ASCII; `ascii` forces ASCII.
[[nodiscard]] SparkGlyphs spark_glyphs(bool ascii);

/// Columns of a sparkline.
inline constexpr std::size_t kSparkWidth = 24;

/// The sparkline of a series: kSparkWidth bars, a point in the column of its `order` among
/// `count` values (a column with several points shows their mean, one with none its left
/// neighbour's), its height from the least (lowest bar) to the greatest value (highest); a
/// series of one value, or of equal values, is the lowest bar throughout.
[[nodiscard]] std::string sparkline(const SeriesLine& series, SparkGlyphs glyphs);

/// One line per series: `INDENT NAME  SPARKLINE  FIRST → LAST  min MIN  max MAX  (N values)`
/// (`->` in ASCII), names padded to the longest, numbers in their shortest form that reads
/// back the same.
[[nodiscard]] std::string series_lines(const std::vector<SeriesLine>& series, SparkGlyphs glyphs,
                                       std::string_view indent);

}  // namespace pipec
