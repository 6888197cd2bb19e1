#include "compiler/driver/summary.hpp"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rules/metrics.hpp"

namespace pipec::driver {

namespace {

// A literal metric spec as the run will show it: the reported name (with the log name
// when KFP's rule changes it), and max/min when not the last value.
std::string describe_metric(const std::string& spec) {
  auto parts = rules::split_metric_spec(spec);
  if (!rules::metric_name_reportable(parts.name)) return parts.name + " (cannot be reported)";
  const std::string& reported = parts.reported;
  std::string text = reported == parts.name ? reported : parts.name + " -> " + reported;
  if (parts.aggregation != rules::Aggregation::Last) text += std::string(" (") + rules::aggregation_word(parts.aggregation) + ")";
  return text;
}

// What a training step reports to KFP's metrics, as the run will show it: each literal
// spec (describe_metric), and a metric chosen at run time by the parameter it comes from,
// with that parameter's default. "" for none.
std::string metrics_of(const ir::Step& step, const std::vector<ir::Param>& params) {
  if (step.kind == ir::OpKind::Container || step.kind == ir::OpKind::Pipeline) return "";
  auto arg = std::find_if(step.args.begin(), step.args.end(),
                          [](const auto& a) { return a.first == "metrics"; });
  if (arg == step.args.end()) return "";
  std::vector<std::string> shown;
  const ir::Value& v = arg->second;
  if (v.kind == ir::Value::Kind::Literal && v.literal.is_array()) {
    for (const auto& item : v.literal)
      if (item.is_string()) shown.push_back(describe_metric(item.get<std::string>()));
  } else if (v.kind == ir::Value::Kind::List) {
    for (const auto& item : v.items) {
      const ir::Ref* ref = ir::whole_ref(item);
      if (item.kind == ir::Value::Kind::Literal && item.literal.is_string()) {
        shown.push_back(describe_metric(item.literal.get<std::string>()));
      } else if (!ref) {
        shown.push_back("set at run time");
      } else {
        std::string text = "from '" + ref->name + (ref->field.empty() ? "" : "." + ref->field) + "'";
        auto param = std::find_if(params.begin(), params.end(),
                                  [&](const ir::Param& p) { return p.name == ref->name; });
        if (ref->kind == ir::Ref::Kind::Param && param != params.end() && param->default_value &&
            param->default_value->is_string())
          text += " = " + describe_metric(param->default_value->get<std::string>());
        shown.push_back(std::move(text));
      }
    }
  }
  if (shown.empty()) return "";
  std::string text = "metrics: ";
  for (std::size_t i = 0; i < shown.size(); ++i) text += (i ? ", " : "") + shown[i];
  if (text.size() > 120) text = text.substr(0, 117) + "...";
  return text;
}

// Steps of a DAG, depth first, with the loop they sit in.
void collect_steps(const std::vector<ir::Node>& nodes, const std::string& scope,
                   const std::vector<ir::Param>& params,
                   std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& node : nodes) {
    if (const auto* step = std::get_if<ir::Step>(&node)) {
      std::string where = step->kind == ir::OpKind::Pipeline ? "pipeline " + step->op : step->op;
      if (!scope.empty()) where += fmt::format("  (in {})", scope);
      if (step->when) where += "  (conditional)";
      out.emplace_back(step->name, where);
      // On a line of its own under the op: what the run's metrics will be called.
      if (std::string metrics = metrics_of(*step, params); !metrics.empty()) out.emplace_back("", metrics);
    } else {
      const auto& loop = std::get<ir::Loop>(node);
      collect_steps(loop.body, fmt::format("for {}", loop.var), params, out);
    }
  }
}

// A default on one row: a string as the language writes it, quoted with its newlines,
// tabs, quotes and control characters escaped, so that it cannot break the table.
std::string short_value(const ir::Literal& value) {
  std::string text = value.dump(-1, ' ', false, ir::Literal::error_handler_t::replace);
  if (text.size() > 48) text = text.substr(0, 45) + "...";
  return text;
}

std::string human_size(std::size_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
}

}  // namespace

void print_summary(const ir::Pipeline& pipeline, const std::string& output, std::size_t bytes,
                   std::ostream& out) {
  std::vector<std::pair<std::string, std::string>> steps, exit_steps;
  collect_steps(pipeline.dag, "", pipeline.params, steps);
  collect_steps(pipeline.exit_handler, "", pipeline.params, exit_steps);
  auto step_count = static_cast<std::size_t>(
      std::count_if(steps.begin(), steps.end(), [](const auto& row) { return !row.first.empty(); }));
  out << fmt::format("pipeline {}: {} step{}, {} parameter{}\n", pipeline.name, step_count,
                     step_count == 1 ? "" : "s", pipeline.params.size(),
                     pipeline.params.size() == 1 ? "" : "s");

  // A one-screen report: long lists are cut with a count of what was left out.
  constexpr std::size_t kMaxRows = 12;
  auto print_rows = [&](const char* title, const std::vector<std::pair<std::string, std::string>>& rows) {
    if (rows.empty()) return;
    std::size_t width = 0;
    for (std::size_t i = 0; i < rows.size() && i < kMaxRows; ++i) width = std::max(width, rows[i].first.size());
    out << "  " << title << ":\n";
    for (std::size_t i = 0; i < rows.size() && i < kMaxRows; ++i)
      out << fmt::format("    {:<{}}  {}\n", rows[i].first, width, rows[i].second);
    if (rows.size() > kMaxRows) {
      // Rows with no name continue the row above (a step's metrics) and are not counted.
      auto more = std::count_if(rows.begin() + kMaxRows, rows.end(),
                                [](const auto& row) { return !row.first.empty(); });
      if (more > 0) out << fmt::format("    ... and {} more\n", more);
    }
  };
  print_rows("steps", steps);
  print_rows("finally", exit_steps);

  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& p : pipeline.params) {
    std::string text = p.type.str();
    if (p.default_value) text += " = " + short_value(*p.default_value);
    else text += " (required)";
    params.emplace_back(p.name, text);
  }
  print_rows("parameters", params);
  // The run's outputs (`pipeline NAME -> (...)`) and the step output each one is.
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& o : pipeline.outputs)
    outputs.emplace_back(o.name, fmt::format("{} = {}.{}", o.type.str(), o.ref.name, o.ref.field));
  print_rows("outputs", outputs);
  out << fmt::format("  wrote {} ({})\n", output, human_size(bytes));
}

}  // namespace pipec::driver
