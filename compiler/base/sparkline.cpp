#include "compiler/base/sparkline.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/json.hpp"

namespace pipec {

namespace {

constexpr const char* kUnicodeBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
constexpr char kAsciiBars[] = "_.-~=+*#";
constexpr std::size_t kLevels = 8;

bool names_utf8(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text.find("utf-8") != std::string::npos || text.find("utf8") != std::string::npos;
}

}  // namespace

bool read_series(std::string_view text, std::vector<SeriesLine>& out, std::string& why) {
  nlohmann::json doc;
  if (!input::parse_json(text, doc, why)) return false;
  if (input::member_text(doc, "format") != "pipec-metric-series/1") {
    why = "not a metric series file (format pipec-metric-series/1)";
    return false;
  }
  const nlohmann::json& metrics = input::member(doc, "metrics");
  if (!metrics.is_array()) {
    why = "'metrics' is not a list";
    return false;
  }
  out.clear();
  for (const auto& m : metrics) {
    SeriesLine line;
    line.name = input::member_text(m, "name");
    const nlohmann::json& count = input::member(m, "count");
    const nlohmann::json& points = input::member(m, "points");
    if (line.name.empty() || !count.is_number_unsigned() || !points.is_array()) {
      why = "a metric without a name, a count or points";
      return false;
    }
    line.count = count.get<std::size_t>();
    for (const auto& p : points) {
      const nlohmann::json& order = input::member(p, "order");
      const nlohmann::json& value = input::member(p, "value");
      if (!order.is_number_unsigned() || !value.is_number() || order.get<std::size_t>() >= line.count) {
        why = fmt::format("metric '{}': a point without an order below its count, or without a value", line.name);
        return false;
      }
      long long at[2] = {-1, -1};  // step, epoch
      for (int k = 0; k < 2; ++k) {
        const nlohmann::json& n = input::member(p, k == 0 ? "step" : "epoch");
        if (n.is_null()) continue;
        if (!n.is_number_unsigned() || n.get<std::uint64_t>() > 999999999999999999ull) {
          why = fmt::format("metric '{}': a point's {} is not an unsigned integer of at most 18 digits", line.name,
                            k == 0 ? "step" : "epoch");
          return false;
        }
        at[k] = static_cast<long long>(n.get<std::uint64_t>());
      }
      line.orders.push_back(order.get<std::size_t>());
      line.values.push_back(value.get<double>());
      line.steps.push_back(at[0]);
      line.epochs.push_back(at[1]);
    }
    if (!line.values.empty()) out.push_back(std::move(line));
  }
  return true;
}

SparkGlyphs spark_glyphs(bool ascii) {
  if (ascii) return SparkGlyphs::Ascii;
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* value = std::getenv(name);
    if (value && *value) return names_utf8(value) ? SparkGlyphs::Unicode : SparkGlyphs::Ascii;
  }
  return SparkGlyphs::Ascii;
}

std::string sparkline(const SeriesLine& series, SparkGlyphs glyphs) {
  std::vector<double> sum(kSparkWidth, 0.0);
  std::vector<std::size_t> seen(kSparkWidth, 0);
  std::size_t count = std::max<std::size_t>(series.count, 1);
  for (std::size_t i = 0; i < series.values.size(); ++i) {
    std::size_t column = std::min(kSparkWidth - 1, series.orders[i] * kSparkWidth / count);
    sum[column] += series.values[i];
    ++seen[column];
  }
  auto [lo, hi] = std::minmax_element(series.values.begin(), series.values.end());
  double least = lo == series.values.end() ? 0.0 : *lo;
  double span = lo == series.values.end() ? 0.0 : *hi - *lo;
  std::string out;
  double previous = least;
  for (std::size_t c = 0; c < kSparkWidth; ++c) {
    double v = seen[c] ? sum[c] / static_cast<double>(seen[c]) : previous;
    previous = v;
    std::size_t level = 0;
    if (span > 0)
      level = std::min(kLevels - 1, static_cast<std::size_t>((v - least) / span * (kLevels - 1) + 0.5));
    if (glyphs == SparkGlyphs::Unicode) out += kUnicodeBars[level];
    else out += kAsciiBars[level];
  }
  return out;
}

std::string series_lines(const std::vector<SeriesLine>& series, SparkGlyphs glyphs, std::string_view indent) {
  std::size_t width = 0;
  for (const auto& s : series) width = std::max(width, s.name.size());
  std::string out;
  for (const auto& s : series) {
    auto [lo, hi] = std::minmax_element(s.values.begin(), s.values.end());
    out += fmt::format("{}{:<{}}  {}  {} {} {}  min {}  max {}  ({} value{})\n", indent, s.name, width,
                       sparkline(s, glyphs), s.values.front(), glyphs == SparkGlyphs::Unicode ? "→" : "->",
                       s.values.back(), *lo, *hi, s.count, s.count == 1 ? "" : "s");
  }
  return out;
}

}  // namespace pipec
