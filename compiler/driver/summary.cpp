#include "compiler/driver/summary.hpp"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

namespace pipec::driver {

namespace {

// Steps of a DAG, depth first, with the loop they sit in.
void collect_steps(const std::vector<ir::Node>& nodes, const std::string& scope,
                   std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& node : nodes) {
    if (const auto* step = std::get_if<ir::Step>(&node)) {
      std::string where = step->op;
      if (!scope.empty()) where += fmt::format("  (in {})", scope);
      if (step->when) where += "  (conditional)";
      out.emplace_back(step->name, where);
    } else {
      const auto& loop = std::get<ir::Loop>(node);
      collect_steps(loop.body, fmt::format("for {}", loop.var), out);
    }
  }
}

std::string short_value(const ir::Literal& value) {
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  if (value.is_string()) text = "\"" + text + "\"";
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
  collect_steps(pipeline.dag, "", steps);
  collect_steps(pipeline.exit_handler, "", exit_steps);
  out << fmt::format("pipeline {}: {} step{}, {} parameter{}\n", pipeline.name, steps.size(),
                     steps.size() == 1 ? "" : "s", pipeline.params.size(),
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
    if (rows.size() > kMaxRows) out << fmt::format("    ... and {} more\n", rows.size() - kMaxRows);
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
  out << fmt::format("  wrote {} ({})\n", output, human_size(bytes));
}

}  // namespace pipec::driver
