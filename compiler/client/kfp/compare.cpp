#include "compiler/client/kfp/compare.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "compiler/client/kfp/commands.hpp"

namespace pipec::client::kfp {

namespace {

std::string text_of(const Record& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  std::string out = it->get<std::string>();
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';  // one row, one line
  return out;
}

std::string shown_metric(const ComparedMetric& m) {
  return m.format == "PERCENTAGE" ? fmt::format("{:.6g}%", m.value * 100) : fmt::format("{}", m.value);
}

// A row of the comparison: a value per run (none where the run has none).
struct Row {
  std::string name;
  std::vector<std::optional<std::string>> shown;
  std::vector<const ComparedMetric*> metrics;  // metric rows: the values
  bool differs() const {
    return std::any_of(shown.begin(), shown.end(), [&](const auto& v) { return v != shown.front(); });
  }
};

bool metric_wanted(const std::string& key, const std::string& metric) {
  if (metric.empty() || key == metric) return true;
  return key.size() > metric.size() && key.compare(key.size() - metric.size(), metric.size(), metric) == 0 &&
         key[key.size() - metric.size() - 1] == '.';
}

std::vector<Row> parameter_rows(const std::vector<ComparedRun>& runs) {
  std::map<std::string, Row> rows;  // by name
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const auto& [name, value] : runs[i].parameters) {
      Row& row = rows[name];
      row.name = name;
      row.shown.resize(runs.size());
      row.shown[i] = value;
    }
  std::vector<Row> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  return out;
}

std::vector<Row> metric_rows(const std::vector<ComparedRun>& runs, const std::string& metric) {
  std::map<std::string, Row> rows;  // by STEP.METRIC
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const auto& m : runs[i].metrics) {
      if (!metric_wanted(m.key, metric)) continue;
      Row& row = rows[m.key];
      row.name = m.key;
      row.shown.resize(runs.size());
      row.metrics.resize(runs.size(), nullptr);
      row.shown[i] = shown_metric(m);
      row.metrics[i] = &m;
    }
  std::vector<Row> out;
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace

ComparedRun compared_run(const Record& run, ApiVersion version) {
  ComparedRun out;
  out.source = version == ApiVersion::V2beta1 ? "v2beta1" : "v1beta1";
  out.id = text_of(run, "id");
  out.name = text_of(run, "name");
  out.state = text_of(run, "state");
  if (auto it = run.find("parameters"); it != run.end() && it->is_object())
    for (const auto& [name, value] : it->items())
      out.parameters.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
  std::map<std::string, std::string> step_names;  // node or task id -> the step's name
  if (auto it = run.find("steps"); it != run.end() && it->is_array())
    for (const Record& s : *it) step_names[text_of(s, "id")] = text_of(s, "name");
  if (auto it = run.find("metrics"); it != run.end() && it->is_array())
    for (const Record& m : *it) {
      std::string step = text_of(m, "step");
      if (auto name = step_names.find(step); name != step_names.end() && !name->second.empty()) step = name->second;
      auto value = m.find("value");
      out.metrics.push_back({step + "." + text_of(m, "name"),
                             value != m.end() && value->is_number() ? value->get<double>() : 0.0,
                             text_of(m, "format")});
    }
  return out;
}

std::string compare_table(const std::vector<ComparedRun>& runs, const std::string& metric) {
  std::vector<Row> params = parameter_rows(runs), metrics = metric_rows(runs, metric);
  Row head{"run", {}, {}}, state{"state", {}, {}};
  for (const auto& r : runs) {
    head.shown.emplace_back(r.name.empty() ? r.id : r.name);
    state.shown.emplace_back(r.state.empty() ? "-" : r.state);
  }
  std::size_t w0 = head.name.size();
  std::vector<std::size_t> width(runs.size(), 1);
  for (const auto* rows : {&params, &metrics})
    for (const auto& row : *rows) w0 = std::max(w0, row.name.size());
  auto widen = [&](const Row& row) {
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (row.shown[i]) width[i] = std::max(width[i], row.shown[i]->size());
  };
  widen(head);
  widen(state);
  for (const auto* rows : {&params, &metrics})
    for (const auto& row : *rows) widen(row);
  auto line = [&](const Row& row, bool marked) {
    std::string text = fmt::format("{} {:<{}}", marked && row.differs() ? "*" : " ", row.name, w0);
    for (std::size_t i = 0; i < runs.size(); ++i)
      text += fmt::format("  {:<{}}", row.shown[i] ? *row.shown[i] : "-", width[i]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + "\n";
  };
  std::string out = line(head, false) + line(state, true);
  out += params.empty() ? "parameters: none\n" : "parameters:\n";
  for (const auto& row : params) out += line(row, true);
  out += metrics.empty() ? (metric.empty() ? "metrics: none\n" : fmt::format("metrics: none named '{}'\n", metric))
                         : "metrics:\n";
  for (const auto& row : metrics) out += line(row, true);
  for (const auto& r : runs)
    if (r.source == "v2beta1")
      out += fmt::format("note: run '{}' is a v2beta1 run, whose API gives no metrics (KFP v2 keeps them as "
                         "artifacts)\n", r.name.empty() ? r.id : r.name);
  bool any = state.differs() || std::any_of(params.begin(), params.end(), [](const Row& r) { return r.differs(); }) ||
             std::any_of(metrics.begin(), metrics.end(), [](const Row& r) { return r.differs(); });
  if (any) out += "(* the runs differ in this row)\n";
  return out;
}

Record compare_json(const std::vector<ComparedRun>& runs, const std::string& metric) {
  Record out = {{"format", "pipec-runs-compare/1"}, {"runs", Record::array()}};
  for (const auto& r : runs)
    out["runs"].push_back({{"run", r.run}, {"source", r.source}, {"id", r.id}, {"name", r.name}, {"state", r.state}});
  out["parameters"] = Record::array();
  for (const auto& row : parameter_rows(runs)) {
    Record values = Record::array();
    for (const auto& v : row.shown) values.push_back(v ? Record(*v) : Record());
    out["parameters"].push_back({{"name", row.name}, {"values", std::move(values)}, {"differs", row.differs()}});
  }
  out["metrics"] = Record::array();
  for (const auto& row : metric_rows(runs, metric)) {
    Record values = Record::array(), formats = Record::array();
    for (const ComparedMetric* m : row.metrics) {
      values.push_back(m ? Record(m->value) : Record());
      formats.push_back(m ? Record(m->format.empty() ? "RAW" : m->format) : Record());
    }
    out["metrics"].push_back({{"name", row.name}, {"values", std::move(values)}, {"formats", std::move(formats)},
                              {"differs", row.differs()}});
  }
  return out;
}

int compare_command(const std::vector<CompareInput>& inputs, const std::string& metric,
                    const OperateArgs& args, const Connection& connection, HttpTransport* transport,
                    std::ostream& shown_out, std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  std::vector<ComparedRun> runs;
  for (const auto& input : inputs) {
    if (input.local) {
      runs.push_back(input.run);
      continue;
    }
    if (!transport) {
      print_error(err, fmt::format("'{}' is not a run directory, and no server was given to ask for a run of "
                                   "that id (--host or KF_PIPELINES_ENDPOINT)", input.id));
      return kExitErrors;
    }
    KfpApi api(*transport, connection, args.retry);
    if (args.v2) api.set_api_version(ApiVersion::V2beta1);
    Record record;
    if (ApiStatus status = kfp::get(api, Kind::Run, input.id, record); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    runs.push_back(compared_run(record, args.v2 ? ApiVersion::V2beta1 : ApiVersion::V1beta1));
    runs.back().run = input.id;
  }
  if (args.json) out << compare_json(runs, metric).dump(2, ' ', false, Record::error_handler_t::replace) << '\n';
  else out << compare_table(runs, metric);
  return kExitOk;
}

}  // namespace pipec::client::kfp
