#include "compiler/tools/report_charts.hpp"
#include "compiler/tools/report_visuals.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "input/json.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"

namespace pipec::tools::detail {

std::string fixed(double v) { return fmt::format("{:.1f}", v); }

namespace {

using Json = nlohmann::json;

// A number as the series file has it (its writer's shortest form that reads back the same).
std::string series_text(double v) { return Json(v).dump(); }

// A metric's chart of final values: a bar per run on one value axis (shared by every run),
// each labeled with its value as summary.json has it; the axis marks the least and the
// greatest value.
void write_bars(std::string& out, const std::vector<std::string>& row, const std::vector<ReportRun>& runs) {
  double lo = 0, hi = 0;
  std::string lo_text, hi_text;
  for (const auto& v : row) {
    if (v.empty()) continue;
    double d = std::strtod(v.c_str(), nullptr);
    if (lo_text.empty() || d < lo) lo = d, lo_text = v;
    if (hi_text.empty() || d > hi) hi = d, hi_text = v;
  }
  const double base = std::min(0.0, lo), top = std::max(0.0, hi) == base ? base + 1 : std::max(0.0, hi);
  const int left = 70, plot_w = 300, plot_h = 120, top_y = 24;
  auto y_of = [&](double v) { return top_y + plot_h - (v - base) / (top - base) * plot_h; };
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n", left,
                     top_y, plot_w, plot_h);
  for (const auto& [v, text] : {std::pair{hi, hi_text}, std::pair{lo, lo_text}}) {
    if (text.empty()) continue;
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>\n"
                       "<text class=\"num\" x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{}</text>\n",
                       left, fixed(y_of(v)), left + plot_w, fixed(y_of(v)), left - 4, fixed(y_of(v) + 3), esc(text));
    if (lo_text == hi_text || y_of(lo) - y_of(hi) < 12) break;  // one value, or labels that would overlap
  }
  const double slot = static_cast<double>(plot_w) / static_cast<double>(std::max<std::size_t>(row.size(), 1));
  for (std::size_t r = 0; r < row.size(); ++r) {
    if (row[r].empty()) continue;
    double v = std::strtod(row[r].c_str(), nullptr);
    double x = left + slot * static_cast<double>(r) + slot * 0.2, y0 = y_of(std::max(v, base)), y1 = y_of(std::max(0.0, base));
    double y = std::min(y0, y1), bh = std::max(1.0, std::abs(y1 - y0));
    out += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n"
                       "<text class=\"num\" x=\"{}\" y=\"{}\" font-size=\"10\">{}</text>\n"
                       "<text x=\"{}\" y=\"{}\" font-size=\"10\">{}</text>\n",
                       fixed(x), fixed(y), fixed(slot * 0.6), fixed(bh), run_color(r), fixed(x), fixed(y - 3),
                       esc(row[r]), fixed(x), top_y + plot_h + 14, esc(clip(runs[r].label, 14)));
  }
}

// What the x axis of a chart of series counts: the step where every point of every run's
// series says one, else the epoch where every point says one, else the value's order.
enum class Axis { Step, Epoch, Order };

Axis x_axis(const std::vector<const SeriesLine*>& lines) {
  auto all = [&](auto member) {
    for (const SeriesLine* s : lines)
      if (s && std::any_of((s->*member).begin(), (s->*member).end(), [](long long n) { return n < 0; })) return false;
    return true;
  };
  return all(&SeriesLine::steps) ? Axis::Step : all(&SeriesLine::epochs) ? Axis::Epoch : Axis::Order;
}

double x_at(const SeriesLine& s, std::size_t i, Axis axis) {
  return static_cast<double>(axis == Axis::Step    ? s.steps[i]
                             : axis == Axis::Epoch ? s.epochs[i]
                                                   : static_cast<long long>(s.orders[i]));
}

// A value range and the texts of its ends.
struct Range {
  double lo = 0, hi = 0;
  std::string lo_text, hi_text;
  void add(double v, const std::string& text) {
    if (lo_text.empty() || v < lo) lo = v, lo_text = text;
    if (hi_text.empty() || v > hi) hi = v, hi_text = text;
  }
};

// A metric's chart of series: a line per run through its points (x: `axis`, y: the value)
// on axes all runs share, a dot at its last point; a run without a series of the metric a
// ring at its final value on the right edge; a legend of the runs with their final values.
void write_lines(std::string& out, const std::vector<std::string>& row, const std::vector<ReportRun>& runs,
                 const std::vector<const SeriesLine*>& lines, Axis axis) {
  Range xs, ys;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (const SeriesLine* s = lines[r]) {
      for (std::size_t i = 0; i < s->values.size(); ++i) {
        xs.add(x_at(*s, i, axis), fmt::format("{}", static_cast<long long>(x_at(*s, i, axis))));
        ys.add(s->values[i], series_text(s->values[i]));
      }
    } else if (!row[r].empty()) {
      ys.add(std::strtod(row[r].c_str(), nullptr), row[r]);
    }
  }
  const int left = 64, plot_w = 340, plot_h = 140, top_y = 12, pad = 8;
  auto x_of = [&](double x) {
    return xs.hi == xs.lo ? left + plot_w / 2.0 : left + pad + (x - xs.lo) / (xs.hi - xs.lo) * (plot_w - 2 * pad);
  };
  auto y_of = [&](double v) {
    return ys.hi == ys.lo ? top_y + plot_h / 2.0
                          : top_y + plot_h - pad - (v - ys.lo) / (ys.hi - ys.lo) * (plot_h - 2 * pad);
  };
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n", left,
                     top_y, plot_w, plot_h);
  for (const auto& [v, text] : {std::pair{ys.hi, ys.hi_text}, std::pair{ys.lo, ys.lo_text}}) {
    out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>\n"
                       "<text class=\"axis\" x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{}</text>\n",
                       left, fixed(y_of(v)), left + plot_w, fixed(y_of(v)), left - 4, fixed(y_of(v) + 3), esc(text));
    if (ys.lo == ys.hi) break;  // one value
  }
  const int below = top_y + plot_h + 13;
  static constexpr const char* kAxisNames[] = {"step", "epoch", "value #"};
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\" fill=\"#555\">{}</text>\n",
                     left - 4, below, kAxisNames[static_cast<int>(axis)]);
  if (!xs.lo_text.empty())
    out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"{}\">{}</text>\n",
                       fixed(x_of(xs.lo)), below, xs.lo == xs.hi ? "middle" : "start", xs.lo_text);
  if (xs.lo != xs.hi)
    out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{}</text>\n",
                       fixed(x_of(xs.hi)), below, xs.hi_text);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const std::string run = esc(runs[r].label);
    if (const SeriesLine* s = lines[r]) {
      std::string points;
      for (std::size_t i = 0; i < s->values.size(); ++i)
        points += fmt::format("{}{},{}", i ? " " : "", fixed(x_of(x_at(*s, i, axis))), fixed(y_of(s->values[i])));
      if (s->values.size() > 1)
        out += fmt::format("<polyline class=\"series\" data-run=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
                           "stroke-width=\"1.5\"/>\n",
                           run, points, run_color(r));
      std::size_t last = s->values.size() - 1;
      out += fmt::format("<circle class=\"last\" data-run=\"{}\" cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n", run,
                         fixed(x_of(x_at(*s, last, axis))), fixed(y_of(s->values[last])), run_color(r));
    } else if (!row[r].empty()) {
      out += fmt::format("<circle class=\"final\" data-run=\"{}\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#fff\" "
                         "stroke=\"{}\" stroke-width=\"2\"/>\n",
                         run, fixed(x_of(xs.lo_text.empty() ? 0 : xs.hi)),
                         fixed(y_of(std::strtod(row[r].c_str(), nullptr))), run_color(r));
    }
  }
  // The legend: each run's colour, name and final value (summary.json's text).
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const int y = below + 18 + static_cast<int>(r) * 16;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>\n"
                       "<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n",
                       left, y - 9, run_color(r), left + 14, y, esc(clip(runs[r].label, 28)));
    out += row[r].empty()
               ? fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#777\">none</text>\n", left + 210, y)
               : fmt::format("<text class=\"num\" x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n", left + 210, y,
                             esc(row[r]));
  }
}

}  // namespace

const char* run_color(std::size_t i) {
  static const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                  "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  return kColors[i % (sizeof kColors / sizeof *kColors)];
}

bool read_report_series(const std::string& dir, ReportRun& run, std::string& error) {
  run.series.clear();
  for (const auto& step : input::member(run.summary, "steps")) {
    std::string name = input::member_text(step, "step");
    // A step's directory is its name (a called pipeline's step: CALL/STEP): nothing outside
    // the run directory is read.
    if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos) continue;
    std::string path = dir + "/steps/" + name + "/metric-series.json", text, why;
    if (!input::read_file(path, input::kMaxSeriesFileBytes, text, why)) continue;  // a step without a series
    std::vector<SeriesLine> lines;
    if (!read_series(text, lines, why)) {
      error = fmt::format("'{}': {}", path, why);
      return false;
    }
    for (auto& line : lines) run.series[name + "." + line.name] = std::move(line);
  }
  return true;
}

void write_chart(std::string& out, const std::string& key, const std::vector<std::string>& row,
                 const std::vector<ReportRun>& runs) {
  std::vector<const SeriesLine*> lines(runs.size(), nullptr);
  bool any = false;
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (auto it = runs[r].series.find(key); it != runs[r].series.end() && !it->second.values.empty())
      lines[r] = &it->second, any = true;
  const int w = any ? 420 : 390, h = any ? 12 + 140 + 13 + 18 + static_cast<int>(runs.size()) * 16 : 184;
  const Axis axis = x_axis(lines);
  static constexpr const char* kAxisKeys[] = {"step", "epoch", "order"};
  out += fmt::format("<figure><figcaption>{}</figcaption>\n", esc(key));
  out += fmt::format("<svg class=\"chart\" data-metric=\"{}\"{} width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
                     "role=\"img\">\n",
                     esc(key), any ? fmt::format(" data-x=\"{}\"", kAxisKeys[static_cast<int>(axis)]) : "", w, h, w,
                     h);
  if (any) write_lines(out, row, runs, lines, axis);
  else write_bars(out, row, runs);
  out += "</svg>\n</figure>\n";
}

}  // namespace pipec::tools::detail
