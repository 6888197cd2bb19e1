// Paths and bodies follow the specs in shared/kfp-api (v1beta1 and v2beta1 swagger);
// tests/client/kfp_mock_test.cpp sends every one of them to Prism serving those specs.
// List filters are KFP's filter JSON (filter.proto): v1beta1 spells the predicate's
// operator `op`, v2beta1 `operation`; a run's state is the filter key `status` in
// v1beta1 and `state` in v2beta1 (backend/src/apiserver/model/run.go).

#include "compiler/client/kfp/resources.hpp"
#include "input/json.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace pipec::client::kfp {

namespace {

using json = nlohmann::json;

using input::member;  // safe reads of the server's answers (input/json.hpp)

std::string text(const json& object, std::string_view key) {
  const json& value = member(object, key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<long long>());
  return {};
}

long long number(const json& object, std::string_view key) {
  const json& value = member(object, key);
  if (value.is_number_integer()) return value.get<long long>();
  if (value.is_string()) {
    try {
      return std::stoll(value.get<std::string>());
    } catch (...) {
      return 0;
    }
  }
  return 0;
}

bool flag(const json& object, std::string_view key) {
  const json& value = member(object, key);
  return value.is_boolean() && value.get<bool>();
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The id of the v1beta1 resource reference of `type` (EXPERIMENT, PIPELINE_VERSION, ...).
std::string reference(const json& object, std::string_view type) {
  const json& refs = member(object, "resource_references");
  if (!refs.is_array()) return {};
  for (const json& ref : refs)
    if (text(member(ref, "key"), "type") == type) return text(member(ref, "key"), "id");
  return {};
}

bool v2(ApiVersion version) { return version == ApiVersion::V2beta1; }

// KFP answers "RUNTIME_STATE_UNSPECIFIED" / "STORAGE_STATE_UNSPECIFIED" for nothing said.
std::string state_text(std::string value) {
  if (value.size() > 12 && value.compare(value.size() - 12, 12, "_UNSPECIFIED") == 0) value.clear();
  return value;
}

Record read_run(const json& answer, ApiVersion version) {
  Record r;
  if (!v2(version)) {
    const json& run = member(answer, "run").is_object() ? member(answer, "run") : answer;
    r["id"] = text(run, "id");
    r["name"] = text(run, "name");
    r["state"] = text(run, "status");
    r["experiment_id"] = reference(run, "EXPERIMENT");
    std::string pipeline = text(member(run, "pipeline_spec"), "pipeline_id");
    r["pipeline_id"] = pipeline.empty() ? reference(run, "PIPELINE") : pipeline;
    r["pipeline_version_id"] = reference(run, "PIPELINE_VERSION");
    r["created_at"] = text(run, "created_at");
    r["scheduled_at"] = text(run, "scheduled_at");
    r["finished_at"] = text(run, "finished_at");
    r["error"] = text(run, "error");
    r["storage_state"] = state_text(text(run, "storage_state"));
    std::string manifest = text(member(answer, "pipeline_runtime"), "workflow_manifest");
    r["namespace"] = manifest.empty()
                         ? std::string()
                         : text(member(input::parse_json(manifest), "metadata"), "namespace");
    Record parameters = Record::object();
    if (const json& list = member(member(run, "pipeline_spec"), "parameters"); list.is_array())
      for (const json& p : list) parameters[text(p, "name")] = text(p, "value");
    r["parameters"] = parameters;
    Record metrics = Record::array();
    if (const json& list = member(run, "metrics"); list.is_array()) {
      for (const json& m : list) {
        const json& value = member(m, "number_value");
        metrics.push_back({{"step", text(m, "node_id")},
                           {"name", text(m, "name")},
                           {"value", value.is_number() ? value.get<double>() : 0.0},
                           {"format", text(m, "format")}});
      }
    }
    r["metrics"] = metrics;
    Record steps = Record::array();
    for (Record& step : workflow_steps(text(member(answer, "pipeline_runtime"), "workflow_manifest")))
      steps.push_back(std::move(step));
    r["steps"] = steps;
    return r;
  }
  r["id"] = text(answer, "run_id");
  r["name"] = text(answer, "display_name");
  r["state"] = state_text(text(answer, "state"));
  r["experiment_id"] = text(answer, "experiment_id");
  const json& ref = member(answer, "pipeline_version_reference");
  r["pipeline_id"] = text(ref, "pipeline_id");
  std::string version_id = text(ref, "pipeline_version_id");
  r["pipeline_version_id"] = version_id.empty() ? text(answer, "pipeline_version_id") : version_id;
  r["created_at"] = text(answer, "created_at");
  r["scheduled_at"] = text(answer, "scheduled_at");
  r["finished_at"] = text(answer, "finished_at");
  r["error"] = text(member(answer, "error"), "message");
  r["storage_state"] = state_text(text(answer, "storage_state"));
  r["namespace"] = "";  // a v2beta1Run does not say
  Record parameters = Record::object();
  if (const json& map = member(member(answer, "runtime_config"), "parameters"); map.is_object())
    for (const auto& [name, value] : map.items())
      parameters[name] = value.is_string() ? value.get<std::string>() : dump(value);
  r["parameters"] = parameters;
  r["metrics"] = Record::array();  // v2 keeps metrics as artifacts, not in the run
  Record steps = Record::array();
  if (const json& tasks = member(member(answer, "run_details"), "task_details"); tasks.is_array()) {
    for (const json& t : tasks) {
      steps.push_back({{"id", text(t, "task_id")},
                       {"name", text(t, "display_name")},
                       {"state", state_text(text(t, "state"))},
                       {"started_at", text(t, "start_time")},
                       {"finished_at", text(t, "end_time")},
                       {"pod", text(t, "pod_name")},
                       {"reason", step_reason(text(member(t, "error"), "message"))}});
    }
  }
  r["steps"] = steps;
  return r;
}

Record read_schedule(const json& job, ApiVersion version) {
  Record r;
  r["id"] = text(job, v2(version) ? "recurring_run_id" : "id");
  r["name"] = text(job, v2(version) ? "display_name" : "name");
  if (v2(version)) {
    std::string status = text(job, "status"), mode = text(job, "mode");
    r["enabled"] = status.empty() || status == "STATUS_UNSPECIFIED" ? mode == "ENABLE" : status == "ENABLED";
  } else {
    r["enabled"] = flag(job, "enabled");
  }
  const json& trigger = member(job, "trigger");
  const json& cron = member(trigger, "cron_schedule");
  const json& periodic = member(trigger, "periodic_schedule");
  const json& active = cron.is_object() ? cron : periodic;
  r["cron"] = text(cron, "cron");
  r["interval_seconds"] = number(periodic, "interval_second");
  r["start_time"] = text(active, "start_time");
  r["end_time"] = text(active, "end_time");
  r["max_concurrency"] = number(job, "max_concurrency");
  r["no_catchup"] = flag(job, "no_catchup");
  if (v2(version)) {
    const json& ref = member(job, "pipeline_version_reference");
    r["experiment_id"] = text(job, "experiment_id");
    r["pipeline_id"] = text(ref, "pipeline_id");
    std::string version_id = text(ref, "pipeline_version_id");
    r["pipeline_version_id"] = version_id.empty() ? text(job, "pipeline_version_id") : version_id;
  } else {
    r["experiment_id"] = reference(job, "EXPERIMENT");
    r["pipeline_id"] = text(member(job, "pipeline_spec"), "pipeline_id");
    r["pipeline_version_id"] = reference(job, "PIPELINE_VERSION");
  }
  r["created_at"] = text(job, "created_at");
  return r;
}

std::string_view list_key(Kind kind, ApiVersion version) {
  switch (kind) {
    case Kind::Run: return "runs";
    case Kind::Experiment: return "experiments";
    case Kind::Pipeline: return "pipelines";
    case Kind::Version: return v2(version) ? "pipeline_versions" : "versions";
    case Kind::Schedule: return v2(version) ? "recurringRuns" : "jobs";
  }
  return {};
}

std::string noun(Kind kind) {
  switch (kind) {
    case Kind::Run: return "run";
    case Kind::Experiment: return "experiment";
    case Kind::Pipeline: return "pipeline";
    case Kind::Version: return "pipeline version";
    case Kind::Schedule: return "schedule";
  }
  return {};
}

std::string prefix(ApiVersion version) { return v2(version) ? "/apis/v2beta1/" : "/apis/v1beta1/"; }

// The path of one thing.
std::string item_path(Kind kind, ApiVersion version, std::string_view id, std::string_view pipeline_id) {
  if (kind == Kind::Version && v2(version))
    return prefix(version) + "pipelines/" + url_encode(pipeline_id) + "/versions/" + url_encode(id);
  return prefix(version) + std::string(collection(kind, version)) + "/" + url_encode(id);
}

// A cell of a table: one line, control characters shown as spaces.
std::string cell(const Record& value) {
  std::string out = value.is_string() ? value.get<std::string>()
                    : value.is_boolean() ? (value.get<bool>() ? "yes" : "no")
                    : value.is_null()    ? std::string()
                                         : value.dump();
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out.empty() ? "-" : out;
}

// The pod of an Argo node. Argo 3.4+ names pods WORKFLOW-TEMPLATE-HASH (POD_NAMES=v2),
// where HASH ends the node id; the prefix is cut to 242 characters (a pod name has at
// most 253, the hash and its '-' take 11). The KFP UI computes the same
// (frontend/src/lib/Utils.tsx, getNodeNameFromNodeId); with the annotation
// workflows.argoproj.io/pod-name-format: v1 the pod is named like the node id.
std::string pod_name(const std::string& workflow_name, const json& node, const std::string& id) {
  std::string node_name = text(node, "name");
  if (node_name == workflow_name) return workflow_name;
  std::string hash = id.substr(id.rfind('-') + 1);
  std::string prefix = workflow_name;
  if (node_name.find(".inline") == std::string::npos) prefix += "-" + text(node, "templateName");
  if (prefix.size() > 242) prefix.resize(242);
  return prefix + "-" + hash;
}

}  // namespace

std::string_view collection(Kind kind, ApiVersion version) {
  switch (kind) {
    case Kind::Run: return "runs";
    case Kind::Experiment: return "experiments";
    case Kind::Pipeline: return "pipelines";
    case Kind::Version: return v2(version) ? "versions" : "pipeline_versions";
    case Kind::Schedule: return v2(version) ? "recurringruns" : "jobs";
  }
  return {};
}

std::string filter_query(const std::vector<Predicate>& predicates, ApiVersion version) {
  if (predicates.empty()) return {};
  json list = json::array();
  for (const Predicate& p : predicates) {
    json predicate = {{v2(version) ? "operation" : "op", p.op}, {"key", p.key}};
    if (p.op == "IN") predicate["string_values"] = {{"values", p.string_values}};
    else predicate["string_value"] = p.string_value;
    list.push_back(std::move(predicate));
  }
  return url_encode(dump(json{{"predicates", list}}));
}

Record read_record(Kind kind, const json& object, ApiVersion version) {
  Record r;
  switch (kind) {
    case Kind::Run: return read_run(object, version);
    case Kind::Schedule: return read_schedule(object, version);
    case Kind::Experiment:
      r["id"] = text(object, v2(version) ? "experiment_id" : "id");
      r["name"] = text(object, v2(version) ? "display_name" : "name");
      r["description"] = text(object, "description");
      r["created_at"] = text(object, "created_at");
      r["storage_state"] = state_text(text(object, "storage_state"));
      return r;
    case Kind::Pipeline:
      r["id"] = text(object, v2(version) ? "pipeline_id" : "id");
      r["name"] = v2(version) && text(object, "name").empty() ? text(object, "display_name")
                                                                : text(object, "name");
      r["description"] = text(object, "description");
      r["created_at"] = text(object, "created_at");
      return r;
    case Kind::Version:
      r["id"] = text(object, v2(version) ? "pipeline_version_id" : "id");
      r["name"] = v2(version) && text(object, "name").empty() ? text(object, "display_name")
                                                                : text(object, "name");
      r["pipeline_id"] = v2(version) ? text(object, "pipeline_id") : reference(object, "PIPELINE");
      r["description"] = text(object, "description");
      r["created_at"] = text(object, "created_at");
      return r;
  }
  return r;
}

std::string step_reason(std::string_view message) {
  std::string out(message.substr(0, kMaxStepReason + 4));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() <= kMaxStepReason) return out;
  std::size_t cut = kMaxStepReason;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // a character's start
  return out.substr(0, cut) + "...";
}

std::vector<Record> workflow_steps(std::string_view workflow_manifest) {
  std::vector<Record> steps;
  if (workflow_manifest.empty()) return steps;
  json workflow = input::parse_json(workflow_manifest);
  const json& nodes = member(member(workflow, "status"), "nodes");
  if (!nodes.is_object()) return steps;
  const json& metadata = member(workflow, "metadata");
  const std::string workflow_name = text(metadata, "name");
  const bool v1_names = text(member(metadata, "annotations"), "workflows.argoproj.io/pod-name-format") == "v1";
  for (const auto& [key, node] : nodes.items()) {
    if (text(node, "type") != "Pod") continue;
    std::string name = text(node, "displayName");
    std::string id = text(node, "id").empty() ? key : text(node, "id");
    // Argo's node message: why a pod waits (its condition, its container's waiting reason) or
    // how it ended ("OOMKilled (exit code 137)"); a succeeded node's says nothing new.
    std::string phase = text(node, "phase");
    std::string reason = phase == "Succeeded" || phase == "Skipped" || phase == "Omitted"
                             ? std::string()
                             : step_reason(text(node, "message"));
    steps.push_back({{"id", id},
                     {"name", name.empty() ? text(node, "name") : name},
                     {"state", text(node, "phase")},
                     {"started_at", text(node, "startedAt")},
                     {"finished_at", text(node, "finishedAt")},
                     {"pod", v1_names ? id : pod_name(workflow_name, node, id)},
                     {"reason", reason}});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Record& a, const Record& b) {
    return std::make_pair(a["started_at"].get<std::string>(), a["id"].get<std::string>()) <
           std::make_pair(b["started_at"].get<std::string>(), b["id"].get<std::string>());
  });
  return steps;
}

ApiStatus list(KfpApi& api, Kind kind, const ListOptions& options, ListPage& out) {
  out = ListPage{};
  const ApiVersion version = api.api_version();
  const std::string& ns = api.connection().namespace_name;
  std::string path;
  if (kind == Kind::Version && v2(version)) {
    path = prefix(version) + "pipelines/" + url_encode(options.pipeline_id) + "/versions?";
  } else if (kind == Kind::Version) {
    path = prefix(version) + "pipeline_versions?resource_key.type=PIPELINE&resource_key.id=" +
           url_encode(options.pipeline_id) + "&";
  } else {
    path = prefix(version) + std::string(collection(kind, version)) + "?";
  }
  path += fmt::format("page_size={}", options.page_size);
  if (!options.page_token.empty()) path += "&page_token=" + url_encode(options.page_token);
  if (!options.sort_by.empty()) path += "&sort_by=" + url_encode(options.sort_by);
  if (std::string filter = filter_query(options.filters, version); !filter.empty())
    path += "&filter=" + filter;
  bool scoped = kind == Kind::Run || kind == Kind::Schedule;
  if (v2(version)) {
    if (!ns.empty() && kind != Kind::Version) path += "&namespace=" + url_encode(ns);
    if (scoped && !options.experiment_id.empty())
      path += "&experiment_id=" + url_encode(options.experiment_id);
  } else if (scoped && !options.experiment_id.empty()) {
    path += "&resource_reference_key.type=EXPERIMENT&resource_reference_key.id=" +
            url_encode(options.experiment_id);
  } else if (!ns.empty() && kind != Kind::Version) {
    path += "&resource_reference_key.type=NAMESPACE&resource_reference_key.id=" + url_encode(ns);
  }
  json answer;
  std::string what = fmt::format("cannot list {}s", noun(kind));
  if (kind == Kind::Version) what = fmt::format("cannot list the versions of pipeline '{}'", options.pipeline_id);
  if (ApiStatus status = api.call("GET", what, path, "", list_shape(kind, version), answer);
      !status)
    return status;
  const json& items = member(answer, list_key(kind, version));
  if (items.is_array()) {
    for (const json& item : items) {
      Record r = read_record(kind, item, version);
      if (kind == Kind::Run && !options.pipeline_id.empty() && r["pipeline_id"] != options.pipeline_id)
        continue;
      out.items.push_back(std::move(r));
    }
  }
  out.next_page_token = text(answer, "next_page_token");
  if (member(answer, "total_size").is_number_integer()) out.total_size = number(answer, "total_size");
  return ApiStatus::success();
}

ApiStatus get(KfpApi& api, Kind kind, std::string_view id, Record& out, std::string_view pipeline_id,
              std::string* workflow_manifest) {
  json answer;
  if (ApiStatus status = api.call("GET", fmt::format("cannot get {} '{}'", noun(kind), id),
                                  item_path(kind, api.api_version(), id, pipeline_id), "",
                                  item_shape(kind, api.api_version(), true), answer);
      !status)
    return status;
  out = read_record(kind, answer, api.api_version());
  if (workflow_manifest) *workflow_manifest = text(member(answer, "pipeline_runtime"), "workflow_manifest");
  return ApiStatus::success();
}

ApiStatus act(KfpApi& api, Kind kind, Action action, std::string_view id, std::string_view pipeline_id) {
  const ApiVersion version = api.api_version();
  std::string path = item_path(kind, version, id, pipeline_id);
  std::string method = "POST";
  std::string verb;
  switch (action) {
    case Action::Terminate:
      path += v2(version) ? ":terminate" : "/terminate";
      verb = "stop";
      break;
    case Action::Retry:
      path += v2(version) ? ":retry" : "/retry";
      verb = "retry";
      break;
    case Action::Archive:
      path += ":archive";
      verb = "archive";
      break;
    case Action::Unarchive:
      path += ":unarchive";
      verb = "unarchive";
      break;
    case Action::Enable:
      path += v2(version) ? ":enable" : "/enable";
      verb = "enable";
      break;
    case Action::Disable:
      path += v2(version) ? ":disable" : "/disable";
      verb = "disable";
      break;
    case Action::Delete:
      method = "DELETE";
      verb = "delete";
      break;
  }
  json answer;
  return api.call(method, fmt::format("cannot {} {} '{}'", verb, noun(kind), id), path, "",
                  action_shape(), answer);
}

std::string schedule_body(const ScheduleRequest& request, ApiVersion version,
                          const std::string& namespace_name) {
  json when = json::object();
  if (!request.cron.empty()) when["cron"] = request.cron;
  else when["interval_second"] = std::to_string(request.interval_seconds);
  if (!request.start_time.empty()) when["start_time"] = request.start_time;
  if (!request.end_time.empty()) when["end_time"] = request.end_time;
  json trigger = {{request.cron.empty() ? "periodic_schedule" : "cron_schedule", when}};
  json body = run_body(request, version);
  body["trigger"] = trigger;
  body["max_concurrency"] = std::to_string(request.max_concurrency);
  body["no_catchup"] = request.no_catchup;
  if (v2(version)) {
    body["mode"] = request.enabled ? "ENABLE" : "DISABLE";
    if (!namespace_name.empty()) body["namespace"] = namespace_name;
  } else {
    body["enabled"] = request.enabled;
  }
  return dump(body);
}

ApiStatus create_schedule(KfpApi& api, const ScheduleRequest& request, Record& out) {
  const ApiVersion version = api.api_version();
  json answer;
  if (ApiStatus status =
          api.call("POST", fmt::format("cannot create schedule '{}'", request.name),
                   prefix(version) + std::string(collection(Kind::Schedule, version)),
                   schedule_body(request, version, api.connection().namespace_name),
                   item_shape(Kind::Schedule, version), answer);
      !status)
    return status;
  out = read_record(Kind::Schedule, answer, version);
  return ApiStatus::success();
}

std::string table(Kind kind, const std::vector<Record>& items) {
  std::vector<std::pair<const char*, const char*>> columns;  // header, field
  switch (kind) {
    case Kind::Run:
      columns = {{"ID", "id"}, {"NAME", "name"}, {"STATE", "state"}, {"CREATED", "created_at"},
                 {"FINISHED", "finished_at"}};
      break;
    case Kind::Experiment:
      columns = {{"ID", "id"}, {"NAME", "name"}, {"STATE", "storage_state"}, {"CREATED", "created_at"}};
      break;
    case Kind::Pipeline:
    case Kind::Version:
      columns = {{"ID", "id"}, {"NAME", "name"}, {"CREATED", "created_at"}};
      break;
    case Kind::Schedule:
      columns = {{"ID", "id"}, {"NAME", "name"}, {"ENABLED", "enabled"}, {"SCHEDULE", "cron"},
                 {"CREATED", "created_at"}};
      break;
  }
  std::vector<std::vector<std::string>> rows;
  rows.emplace_back();
  for (const auto& [header, field] : columns) rows.back().push_back(header);
  for (const Record& item : items) {
    rows.emplace_back();
    for (const auto& [header, field] : columns) {
      std::string value = cell(item.value(field, Record()));
      if (kind == Kind::Schedule && std::string_view(field) == "cron" && value == "-")
        value = fmt::format("every {}s", item.value("interval_seconds", 0LL));
      rows.back().push_back(std::move(value));
    }
  }
  std::vector<std::size_t> width(columns.size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    out += line + '\n';
  }
  return out;
}

}  // namespace pipec::client::kfp
