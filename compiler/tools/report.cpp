#include "compiler/tools/report.hpp"
#include "compiler/tools/report_charts.hpp"
#include "compiler/tools/report_visuals.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "input/json.hpp"
#include "input/read.hpp"

namespace pipec::tools {

namespace {

using Json = nlohmann::json;
using detail::clip;
using detail::esc;
using detail::fixed;
using detail::run_color;

constexpr std::uint64_t kMaxRunFile = 64ull << 20;  // summary.json, parameters.json

// A number of summary.json as summary.json writes it.
std::string num(const Json& j) { return j.is_number() ? j.dump() : std::string(); }
double value(const Json& j) { return j.is_number() ? j.get<double>() : 0.0; }
std::string str(const Json& j, const char* key) {
  const Json& m = input::member(j, key);
  return m.is_string() ? m.get<std::string>() : std::string();
}

const char* outcome_color(const std::string& outcome) {
  if (outcome == "succeeded") return "#2e7d32";
  if (outcome == "reused") return "#66bb6a";  // an earlier run's result (run --local --resume, --cache)
  if (outcome == "failed") return "#c62828";
  if (outcome == "skipped") return "#9e9e9e";
  if (outcome == "stopped") return "#ef6c00";
  return "#616161";  // not run, running, anything else
}

const Json& steps_of(const ReportRun& run) {
  static const Json kNone = Json::array();
  const Json& s = input::member(run.summary, "steps");
  return s.is_array() ? s : kNone;
}

// The DAG: a column per depth (one more than the deepest step it runs after), a box per
// step colored by its outcome, an arrow per dependency.
void write_dag(std::string& out, const ReportRun& run) {
  const Json& steps = steps_of(run);
  std::map<std::string, std::size_t> index;
  std::vector<int> depth(steps.size(), 0), row(steps.size(), 0);
  std::map<int, int> rows;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (const Json& dep : input::member(steps[i], "after"))
      if (dep.is_string())
        if (auto it = index.find(dep.get<std::string>()); it != index.end())
          depth[i] = std::max(depth[i], depth[it->second] + 1);
    index.emplace(str(steps[i], "step"), i);
    row[i] = rows[depth[i]]++;
  }
  int columns = 0, most_rows = 0;
  for (const auto& [d, n] : rows) columns = std::max(columns, d + 1), most_rows = std::max(most_rows, n);
  const int w = 40 + columns * 200, h = 20 + std::max(most_rows, 1) * 56;
  out += fmt::format("<svg class=\"dag\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">\n", w, h,
                     w, h);
  auto x_of = [&](std::size_t i) { return 20 + depth[i] * 200; };
  auto y_of = [&](std::size_t i) { return 10 + row[i] * 56; };
  // An arrow to the next column is straight; one past a column bends below the boxes.
  for (std::size_t i = 0; i < steps.size(); ++i)
    for (const Json& dep : input::member(steps[i], "after"))
      if (dep.is_string())
        if (auto it = index.find(dep.get<std::string>()); it != index.end() && it->second < i) {
          const int x1 = x_of(it->second) + 160, y1 = y_of(it->second) + 20, x2 = x_of(i), y2 = y_of(i) + 20;
          const int low = std::max(y1, y2) + 45;
          out += depth[i] - depth[it->second] > 1
                     ? fmt::format("<path d=\"M {} {} C {} {} {} {} {} {}\" fill=\"none\" stroke=\"#555\" "
                                   "stroke-width=\"1.5\"/>\n",
                                   x1, y1, x1 + 60, low, x2 - 60, low, x2 - 6, y2)
                     : fmt::format("<path d=\"M {} {} L {} {}\" stroke=\"#555\" stroke-width=\"1.5\"/>\n", x1, y1,
                                   x2 - 6, y2);
          out += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"#555\"/>\n", x2, y2, x2 - 8, y2 - 5,
                             x2 - 8, y2 + 5);
        }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::string outcome = str(steps[i], "outcome");
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"160\" height=\"40\" rx=\"6\" fill=\"{}\"/>\n"
        "<text x=\"{}\" y=\"{}\" fill=\"#fff\" font-size=\"12\">{}</text>\n"
        "<text x=\"{}\" y=\"{}\" fill=\"#fff\" font-size=\"10\">{}</text>\n",
        x_of(i), y_of(i), outcome_color(outcome), x_of(i) + 8, y_of(i) + 17, esc(clip(str(steps[i], "step"), 22)),
        x_of(i) + 8, y_of(i) + 32, esc(outcome));
  }
  out += "</svg>\n";
}

// The timeline: a row per step, its bar from its start to its end on the run's time axis.
void write_timeline(std::string& out, const ReportRun& run) {
  const Json& steps = steps_of(run);
  double span = value(input::member(run.summary, "seconds"));
  for (const Json& s : steps)
    span = std::max(span, value(input::member(s, "started")) + value(input::member(s, "seconds")));
  if (span <= 0) span = 1;
  const int label_w = 180, bar_w = 560, w = label_w + bar_w + 100;
  const int h = 30 + static_cast<int>(steps.size()) * 22;
  out += fmt::format("<svg class=\"timeline\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">\n", w,
                     h, w, h);
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999\"/>\n", label_w, h - 20,
                     label_w + bar_w, h - 20);
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\">start</text>\n", label_w, h - 6);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Json& s = steps[i];
    double x = label_w + value(input::member(s, "started")) / span * bar_w;
    double bw = std::max(2.0, value(input::member(s, "seconds")) / span * bar_w);
    int y = 6 + static_cast<int>(i) * 22;
    out += fmt::format(
        "<text x=\"4\" y=\"{}\" font-size=\"12\">{}</text>\n"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" fill=\"{}\"/>\n"
        "<text class=\"num\" x=\"{}\" y=\"{}\" font-size=\"10\">{}</text>\n",
        y + 12, esc(clip(str(s, "step"), 26)), fixed(x), y, fixed(bw), outcome_color(str(s, "outcome")),
        fixed(x + bw + 4), y + 12, esc(num(input::member(s, "seconds"))));
  }
  out += "</svg>\n";
}

// The step table of a run: every number as summary.json has it.
void write_steps_table(std::string& out, const ReportRun& run) {
  out += "<table>\n<tr><th>step</th><th>kind</th><th>outcome</th><th>started (s)</th><th>time (s)</th>"
         "<th>metrics</th><th>message</th></tr>\n";
  for (const Json& s : steps_of(run)) {
    std::string metrics;
    for (const auto& [name, text] : report_metrics(str(s, "metrics")))
      metrics += fmt::format("{}{}=<span class=\"num\">{}</span>", metrics.empty() ? "" : " ", esc(name), esc(text));
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        esc(str(s, "step")), esc(str(s, "kind")), esc(str(s, "outcome") == "succeeded" || str(s, "outcome") == "reused" ? "ok" : "bad"),
        esc(str(s, "outcome")), esc(num(input::member(s, "started"))), esc(num(input::member(s, "seconds"))),
        metrics, esc(str(s, "message")));
  }
  out += "</table>\n";
}

// "STEP.METRIC" -> the value text of each run ("" where a run has none), in name order.
std::map<std::string, std::vector<std::string>> metric_rows(const std::vector<ReportRun>& runs) {
  std::map<std::string, std::vector<std::string>> rows;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (const Json& s : steps_of(runs[r]))
      for (const auto& [name, text] : report_metrics(str(s, "metrics"))) {
        auto& row = rows[str(s, "step") + "." + name];
        row.resize(runs.size());
        row[r] = text;
      }
  for (auto& [key, row] : rows) row.resize(runs.size());
  return rows;
}

// A table of rows by runs, a row whose runs differ marked.
void write_compare_table(std::string& out, const std::vector<ReportRun>& runs, const char* what,
                         const std::map<std::string, std::vector<std::string>>& rows, bool numbers) {
  out += fmt::format("<table>\n<tr><th>{}</th>", what);
  for (const auto& run : runs) out += fmt::format("<th>{}</th>", esc(run.label));
  out += runs.size() > 1 ? "<th></th></tr>\n" : "</tr>\n";
  for (const auto& [key, row] : rows) {
    // Named outside the lambda: clang before 16 takes no structured binding into one.
    const std::vector<std::string>& cells = row;
    bool differs = std::any_of(cells.begin(), cells.end(), [&](const std::string& v) { return v != cells.front(); });
    out += fmt::format("<tr{}><td>{}</td>", differs ? " class=\"differs\"" : "", esc(key));
    for (const auto& v : row) out += fmt::format("<td{}>{}</td>", numbers && !v.empty() ? " class=\"num\"" : "", esc(v));
    if (runs.size() > 1) out += differs ? "<td>differs</td>" : "<td></td>";
    out += "</tr>\n";
  }
  out += "</table>\n";
}

// Each run's DAG, timeline and step table.
void write_run_sections(std::string& out, const std::vector<ReportRun>& runs) {
  for (const auto& run : runs) {
    out += fmt::format("<h2>Run {}</h2>\n<h3>Steps</h3>\n", esc(run.label));
    write_dag(out, run);
    out += "<h3>Timeline</h3>\n";
    write_timeline(out, run);
    write_steps_table(out, run);
    detail::write_visuals(out, run);
  }
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse;margin:8px 0 16px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}"
    "tr.differs td{background:#fff3cd}td.ok{color:#2e7d32}td.bad{color:#c62828}"
    "figure{display:inline-block;margin:8px}figcaption{font-weight:bold;font-size:13px}"
    "svg text{font-family:sans-serif}";

}  // namespace

std::vector<std::pair<std::string, std::string>> report_metrics(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    std::string_view token(text.data() + i, end - i);
    if (std::size_t eq = token.rfind('='); eq != std::string_view::npos && eq > 0)
      out.emplace_back(std::string(token.substr(0, eq)), std::string(token.substr(eq + 1)));
    i = end + 1;
  }
  return out;
}

bool read_report_run(const std::string& dir, ReportRun& run, std::string& error) {
  std::string text, why;
  std::string path = dir + "/summary.json";
  if (!input::read_file(path, kMaxRunFile, text, why)) {
    error = fmt::format("cannot read '{}': {} (is '{}' a run directory of pipec run --local?)", path, why, dir);
    return false;
  }
  if (!input::parse_json(text, run.summary, why)) {
    error = fmt::format("'{}': {}", path, why);
    return false;
  }
  if (!run.summary.is_object() || !input::member(run.summary, "steps").is_array()) {
    error = fmt::format("'{}': not a run summary (no \"steps\" list)", path);
    return false;
  }
  run.parameters = Json::object();
  path = dir + "/parameters.json";
  if (input::read_file(path, kMaxRunFile, text, why)) {
    if (!input::parse_json(text, run.parameters, why) || !run.parameters.is_object()) {
      error = fmt::format("'{}': {}", path, why.empty() ? "not a JSON object" : why);
      return false;
    }
  }
  if (!detail::read_report_visuals(dir, run, error) || !detail::read_report_series(dir, run, error)) return false;
  std::string name = dir;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  run.label = name.substr(name.find_last_of('/') + 1);
  return true;
}

std::string report_html(const std::vector<ReportRun>& runs) {
  std::string pipeline = runs.empty() ? "" : str(runs.front().summary, "pipeline");
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  out += fmt::format("<title>pipec report: {}</title>\n<style>{}</style>\n</head>\n<body>\n", esc(pipeline), kStyle);
  out += fmt::format("<h1>pipeline {}: {} run{}</h1>\n", esc(pipeline), runs.size(), runs.size() == 1 ? "" : "s");
  // The runs side by side: parameters and metrics, then one chart per metric.
  std::map<std::string, std::vector<std::string>> params;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (const auto& [name, v] : runs[r].parameters.items()) {
      auto& row = params[name];
      row.resize(runs.size());
      row[r] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  for (auto& [name, row] : params) row.resize(runs.size());
  out += "<h2>Runs</h2>\n<table>\n<tr><th>run</th><th>pipeline</th><th>outcome</th><th>time (s)</th></tr>\n";
  for (std::size_t r = 0; r < runs.size(); ++r)
    out += fmt::format("<tr><td><span style=\"color:{}\">&#9632;</span> {}</td><td>{}</td><td>{}</td>"
                       "<td class=\"num\">{}</td></tr>\n",
                       run_color(r), esc(runs[r].label), esc(str(runs[r].summary, "pipeline")),
                       esc(str(runs[r].summary, "outcome")), esc(num(input::member(runs[r].summary, "seconds"))));
  out += "</table>\n";
  // One run: its steps first; several: their comparison first.
  if (runs.size() == 1) write_run_sections(out, runs);
  auto metrics = metric_rows(runs);
  out += "<h2>Charts</h2>\n<div class=\"charts\">\n";
  for (const auto& [key, row] : metrics) detail::write_chart(out, key, row, runs);
  out += "</div>\n<h2>Parameters</h2>\n";
  write_compare_table(out, runs, "parameter", params, false);
  out += "<h2>Metrics</h2>\n";
  write_compare_table(out, runs, "metric", metrics, true);
  if (runs.size() > 1) write_run_sections(out, runs);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace pipec::tools
