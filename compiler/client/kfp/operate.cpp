// Names are resolved the way users type them: an experiment or pipeline by its name
// first (a filtered listing), else the text is taken as an id. Listings are newest first
// (`sort_by=created_at desc`) and, as the KFP UI shows them, leave archived runs and
// experiments out unless --archived asks for them.

#include "compiler/client/kfp/operate.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <ctime>
#include <ostream>

#include <fmt/format.h>

#include "compiler/client/kfp/commands.hpp"
#include "compiler/client/kfp/series.hpp"

namespace pipec::client::kfp {

namespace {

std::string field(const Record& record, const char* key) {
  auto it = record.find(key);
  if (it == record.end() || !it->is_string()) return {};
  std::string out = it->get<std::string>();
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

KfpApi make_api(HttpTransport& transport, const Connection& connection, const OperateArgs& args) {
  KfpApi api(transport, connection, args.retry);
  if (args.v2) api.set_api_version(ApiVersion::V2beta1);
  return api;
}

// An experiment's id from its name, else the text itself as an id.
ApiStatus experiment_id(KfpApi& api, const std::string& name_or_id, std::string& id) {
  std::optional<ExperimentInfo> found;
  if (ApiStatus status = api.find_experiment(name_or_id, found); !status) return status;
  id = found ? found->id : name_or_id;
  return ApiStatus::success();
}

// A pipeline from its name, else by id.
ApiStatus find_pipeline(KfpApi& api, const std::string& name_or_id, PipelineInfo& out) {
  std::optional<PipelineInfo> found;
  if (ApiStatus status = api.find_pipeline(name_or_id, found); !status) return status;
  if (found) {
    out = *found;
    return ApiStatus::success();
  }
  ApiStatus status = api.get_pipeline(name_or_id, out);
  if (!status && status.http_status == 404)
    status.message = fmt::format("no pipeline is named '{}', and none has that id ({})", name_or_id,
                                 status.message);
  return status;
}

// The server's spelling of a run state: v1beta1 has Argo's phases (Succeeded), v2beta1
// KFP's states (SUCCEEDED).
std::string state_value(const std::string& state, bool v2) {
  std::string out = state;
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto c = static_cast<unsigned char>(out[i]);
    out[i] = static_cast<char>(v2 ? std::toupper(c) : i == 0 ? std::toupper(c) : std::tolower(c));
  }
  return out;
}

void print_json(std::ostream& out, const Record& record) {
  out << record.dump(2, ' ', false, Record::error_handler_t::replace) << '\n';
}

bool parse_time(const std::string& text, std::time_t& out) {
  std::tm tm{};
  const char* rest = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return false;
  out = ::timegm(&tm);
  return true;
}

// `series`: what series_section() says after the metrics table.
void print_run(const Record& run, const std::string& series, std::ostream& out) {
  out << fmt::format("run '{}' (id {})\n", field(run, "name"), field(run, "id"));
  auto line = [&](const char* label, const std::string& value) {
    if (!value.empty()) out << fmt::format("  {:<12}{}\n", label, value);
  };
  line("state:", field(run, "state").empty() ? "-" : field(run, "state"));
  line("experiment:", field(run, "experiment_id"));
  line("pipeline:", field(run, "pipeline_id") + (field(run, "pipeline_version_id").empty()
                                                     ? ""
                                                     : " (version " + field(run, "pipeline_version_id") + ")"));
  line("created:", field(run, "created_at"));
  line("started:", field(run, "scheduled_at"));
  line("finished:", field(run, "finished_at"));
  std::string took = duration_between(field(run, "scheduled_at"), field(run, "finished_at"));
  line("duration:", took);
  line("error:", field(run, "error"));
  if (const Record& params = run["parameters"]; params.is_object() && !params.empty()) {
    out << "parameters:\n";
    for (const auto& [name, value] : params.items())
      out << fmt::format("  {} = {}\n", name, value.is_string() ? value.get<std::string>() : value.dump());
  }
  if (const Record& metrics = run["metrics"]; metrics.is_array() && !metrics.empty()) {
    std::vector<RunMetric> list;
    for (const Record& m : metrics)
      list.push_back({m.value("step", std::string()), m.value("name", std::string()),
                      m.value("value", 0.0), m.value("format", std::string())});
    out << "metrics:\n" << metrics_table(list) << series;
  }
  if (const Record& steps = run["steps"]; steps.is_array() && !steps.empty()) {
    // A reason column (why a step waits or failed) when the server gave one.
    std::vector<std::array<std::string, 4>> rows{{"step", "state", "duration", "reason"}};
    bool reasons = false;
    for (const Record& s : steps) {
      std::string took_step = duration_between(field(s, "started_at"), field(s, "finished_at"));
      rows.push_back({field(s, "name"), field(s, "state").empty() ? "-" : field(s, "state"),
                      took_step.empty() ? "-" : took_step, field(s, "reason")});
      reasons = reasons || !field(s, "reason").empty();
    }
    std::size_t w0 = 0, w1 = 0, w2 = 0;
    for (const auto& r : rows) {
      w0 = std::max(w0, r[0].size());
      w1 = std::max(w1, r[1].size());
      w2 = std::max(w2, r[2].size());
    }
    out << "steps:\n";
    for (const auto& r : rows) {
      if (reasons && !r[3].empty())
        out << fmt::format("  {:<{}}  {:<{}}  {:<{}}  {}\n", r[0], w0, r[1], w1, r[2], w2, r[3]);
      else
        out << fmt::format("  {:<{}}  {:<{}}  {}\n", r[0], w0, r[1], w1, r[2]);
    }
  }
}

// Any record but a run (print_run): one `key: value` line per field.
void print_record(const Record& record, std::ostream& out) {
  // The labels in one column, at least one space after the longest
  // ("pipeline_version_id:" has 20 characters).
  std::size_t width = 20;
  for (const auto& [key, value] : record.items()) width = std::max(width, key.size() + 2);
  for (const auto& [key, value] : record.items()) {
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    for (char& c : text)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    out << fmt::format("{:<{}}{}\n", key + ":", width, text.empty() ? "-" : text);
  }
}

}  // namespace

std::string duration_between(const std::string& start, const std::string& end) {
  std::time_t a = 0, b = 0;
  if (start.empty() || end.empty() || !parse_time(start, a) || !parse_time(end, b) || b < a ||
      start.rfind("1970-01-01", 0) == 0 || end.rfind("1970-01-01", 0) == 0)
    return {};
  long long s = static_cast<long long>(b - a);
  if (s >= 3600) return fmt::format("{}h{:02}m{:02}s", s / 3600, s % 3600 / 60, s % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

int list_command(Kind kind, const ListArgs& list, const OperateArgs& args,
                 const Connection& connection, HttpTransport& transport, std::ostream& shown_out,
                 std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api = make_api(transport, connection, args);
  ListOptions options;
  options.page_size = list.page_size;
  options.page_token = list.page_token;
  options.sort_by = "created_at desc";
  if (!list.experiment.empty()) {
    if (ApiStatus status = experiment_id(api, list.experiment, options.experiment_id); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
  }
  if (!list.pipeline.empty()) {
    PipelineInfo pipeline;
    if (ApiStatus status = find_pipeline(api, list.pipeline, pipeline); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    options.pipeline_id = pipeline.id;
  }
  if (!list.state.empty())
    options.filters.push_back({args.v2 ? "state" : "status", "EQUALS", state_value(list.state, args.v2), {}});
  // As the KFP UI asks (frontend/src/pages/RunList.tsx): NOT_EQUALS archived, so that a
  // run without the field counts as available. The v1beta1 API's value is 1.8's
  // STORAGESTATE_ARCHIVED; a 2.x server keeps ARCHIVED in its database (model/run.go), so
  // v1beta1 asks for both.
  if (kind == Kind::Run || kind == Kind::Experiment) {
    if (args.v2) {
      options.filters.push_back({"storage_state", list.archived ? "EQUALS" : "NOT_EQUALS", "ARCHIVED", {}});
    } else if (list.archived) {
      options.filters.push_back({"storage_state", "IN", "", {"STORAGESTATE_ARCHIVED", "ARCHIVED"}});
    } else {
      options.filters.push_back({"storage_state", "NOT_EQUALS", "STORAGESTATE_ARCHIVED", {}});
      options.filters.push_back({"storage_state", "NOT_EQUALS", "ARCHIVED", {}});
    }
  }
  std::vector<Record> items;
  std::string next;
  while (true) {
    ListPage page;
    if (ApiStatus status = kfp::list(api, kind, options, page); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    for (Record& item : page.items) items.push_back(std::move(item));
    next = page.next_page_token;
    if (!list.all || next.empty() || next == options.page_token) break;
    options.page_token = next;
  }
  if (args.json) {
    Record answer = {{"items", Record::array()}, {"next_page_token", list.all ? "" : next}};
    for (Record& item : items) answer["items"].push_back(std::move(item));
    print_json(out, answer);
    return kExitOk;
  }
  out << table(kind, items);
  if (!next.empty() && !list.all)
    err << fmt::format("more: --page-token '{}' (or --all)\n", next);
  return kExitOk;
}

int get_command(Kind kind, const std::string& id, const OperateArgs& args,
                const Connection& connection, HttpTransport& transport, std::ostream& shown_out,
                std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api = make_api(transport, connection, args);
  std::string resolved = id;
  if (kind == Kind::Pipeline) {
    PipelineInfo pipeline;
    if (ApiStatus status = find_pipeline(api, id, pipeline); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    resolved = pipeline.id;
  } else if (kind == Kind::Experiment) {
    if (ApiStatus status = experiment_id(api, id, resolved); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
  }
  Record record;
  std::string manifest;
  if (ApiStatus status = kfp::get(api, kind, resolved, record, {}, &manifest); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  if (args.json) {
    print_json(out, record);
  } else if (kind == Kind::Run) {
    // A v1 run's series, after its metrics (v2beta1 runs report no metrics).
    const Record& metrics = record["metrics"];
    bool series = !args.v2 && metrics.is_array() && !metrics.empty();
    print_run(record, series ? series_section(api, resolved, series_steps(manifest)) : "", out);
  } else {
    print_record(record, out);
  }
  return kExitOk;
}

int act_command(Kind kind, Action action, const std::string& id, const std::string& version,
                const OperateArgs& args, const Connection& connection, HttpTransport& transport,
                std::ostream& shown_out, std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api = make_api(transport, connection, args);
  std::string resolved = id;
  std::string pipeline_id;
  std::string shown = fmt::format("'{}'", id);
  if (kind == Kind::Pipeline || kind == Kind::Version) {
    PipelineInfo pipeline;
    if (ApiStatus status = find_pipeline(api, id, pipeline); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    resolved = pipeline.id;
    shown = fmt::format("'{}' (id {})", pipeline.name.empty() ? id : pipeline.name, pipeline.id);
    if (!version.empty()) {
      std::optional<VersionInfo> found;
      if (ApiStatus status = api.find_version(pipeline.id, version, found); !status) {
        print_error(err, status.message);
        return kExitErrors;
      }
      if (!found) {
        print_error(err, fmt::format("pipeline {} has no version '{}'", shown, version));
        return kExitErrors;
      }
      kind = Kind::Version;
      pipeline_id = pipeline.id;
      resolved = found->id;
      shown = fmt::format("'{}' (id {}) of pipeline '{}'", version, found->id, pipeline.name);
    }
  } else if (kind == Kind::Experiment) {
    if (ApiStatus status = experiment_id(api, id, resolved); !status) {
      print_error(err, status.message);
      return kExitErrors;
    }
    if (resolved != id) shown = fmt::format("'{}' (id {})", id, resolved);
  }
  if (ApiStatus status = kfp::act(api, kind, action, resolved, pipeline_id); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  const char* done = "";
  switch (action) {
    case Action::Terminate: done = "stopping"; break;
    case Action::Retry: done = "retrying"; break;
    case Action::Archive: done = "archived"; break;
    case Action::Unarchive: done = "unarchived"; break;
    case Action::Delete: done = "deleted"; break;
    case Action::Enable: done = "enabled"; break;
    case Action::Disable: done = "disabled"; break;
  }
  const char* noun = kind == Kind::Run          ? "run"
                     : kind == Kind::Experiment ? "experiment"
                     : kind == Kind::Pipeline   ? "pipeline"
                     : kind == Kind::Version    ? "version"
                                                : "schedule";
  out << fmt::format("{} {} {}\n", done, noun, shown);
  return kExitOk;
}

int experiment_create_command(const std::string& name, const std::string& description,
                              const OperateArgs& args, const Connection& connection,
                              HttpTransport& transport, std::ostream& shown_out, std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api = make_api(transport, connection, args);
  std::optional<ExperimentInfo> found;
  if (ApiStatus status = api.find_experiment(name, found); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  if (found) {
    out << fmt::format("experiment '{}' exists (id {})\n", name, found->id);
    return kExitOk;
  }
  ExperimentInfo created;
  if (ApiStatus status = api.create_experiment(name, created, description); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  out << fmt::format("created experiment '{}' (id {})\n", name, created.id);
  return kExitOk;
}

int wait_command(const std::string& run_id, const WaitOptions& wait, const OperateArgs& args,
                 const Connection& connection, HttpTransport& transport, std::ostream& shown_out,
                 std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api = make_api(transport, connection, args);
  return follow_run(api, run_id, "", wait, connection, out, err);
}

}  // namespace pipec::client::kfp
