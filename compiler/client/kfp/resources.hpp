#pragma once
// The operating commands' use of the API: list, get and act on runs, experiments,
// pipelines, pipeline versions and recurring runs (schedules), through v1beta1 or v2beta1.
// Answers of both APIs are read into one record shape per kind (Record below), which is
// also what `--output json` prints: scripts see the same fields whatever the server.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/client/kfp/api.hpp"

namespace pipec::client::kfp {

using Record = nlohmann::ordered_json;

/// "runs", "experiments", ...: the collection's name in v1beta1 / v2beta1 paths.
std::string_view collection(Kind kind, ApiVersion version);

/// One predicate of KFP's filter JSON (`op` is v1beta1's spelling of v2beta1's
/// `operation`; pipec writes the one the API version takes).
struct Predicate {
  std::string key;
  std::string op = "EQUALS";  // EQUALS, NOT_EQUALS, IS_SUBSTRING, IN, ...
  std::string string_value;
  std::vector<std::string> string_values;  // for IN
};

/// The filter query value (URL-encoded JSON) of `predicates`, "" for none.
std::string filter_query(const std::vector<Predicate>& predicates, ApiVersion version);

struct ListOptions {
  int page_size = 20;
  std::string page_token;
  std::string sort_by;  // "created_at desc"; "" = the server's order
  std::vector<Predicate> filters;
  std::string experiment_id;  // runs, schedules: only those of this experiment
  std::string pipeline_id;    // versions: whose; runs: kept when they run this pipeline
};

struct ListPage {
  std::vector<Record> items;  // Records (see the record_* readers)
  std::string next_page_token;
  long long total_size = -1;  // -1 when the server did not say
};

/// One page of a listing. Runs are filtered by `pipeline_id` on the page read (the API
/// has no filter for it), so such a page may hold fewer than `page_size`.
ApiStatus list(KfpApi& api, Kind kind, const ListOptions& options, ListPage& out);

/// One thing by id (a version needs `pipeline_id` on v2beta1). `workflow_manifest`, when
/// given: a v1beta1 run's pipeline_runtime.workflow_manifest ("" when absent).
ApiStatus get(KfpApi& api, Kind kind, std::string_view id, Record& out,
              std::string_view pipeline_id = {}, std::string* workflow_manifest = nullptr);

/// What can be done to a thing: runs: terminate, retry, archive, unarchive, delete;
/// experiments: archive, unarchive, delete; pipelines, versions: delete; schedules:
/// enable, disable, delete.
enum class Action { Terminate, Retry, Archive, Unarchive, Delete, Enable, Disable };

ApiStatus act(KfpApi& api, Kind kind, Action action, std::string_view id,
              std::string_view pipeline_id = {});

/// A recurring run. Exactly one of `cron` (the 6-field form KFP takes, CronSchedule::kfp())
/// and `interval_seconds` (> 0) is set.
/// A recurring run: what a run is made of (RunRequest), and when it runs.
struct ScheduleRequest : RunRequest {
  std::string cron;
  long long interval_seconds = 0;
  std::string start_time, end_time;  // RFC 3339, "" for none
  long long max_concurrency = 1;     // 1..10 (the server's range)
  bool no_catchup = false;
  bool enabled = true;
};

ApiStatus create_schedule(KfpApi& api, const ScheduleRequest& request, Record& out);

/// The body create_schedule sends (for tests and --dry-run style checks).
std::string schedule_body(const ScheduleRequest& request, ApiVersion version,
                          const std::string& namespace_name);

/// Readers of one answer object of either API into the record shape:
///   run:        id, name, state, experiment_id, pipeline_id, pipeline_version_id,
///               created_at, scheduled_at, finished_at, error, storage_state, namespace
///               (of its pods; v1beta1 only), parameters
///               (name -> value text), metrics ([{step, name, value, format}]), steps
///               ([{id, name, state, started_at, finished_at, pod}]) when the answer has them
///   experiment: id, name, description, created_at, storage_state
///   pipeline:   id, name, description, created_at
///   version:    id, name, pipeline_id, description, created_at
///   schedule:   id, name, enabled, cron | interval_seconds, start_time, end_time,
///               max_concurrency, no_catchup, experiment_id, pipeline_id,
///               pipeline_version_id, created_at
/// A missing field is "" (or absent for parameters, metrics, steps).
Record read_record(Kind kind, const nlohmann::json& object, ApiVersion version);

/// The steps of an Argo workflow status (the v1beta1 run's workflow_manifest): one per
/// Pod node, in start order: id, name (the step's display name), state (the node
/// phase), started_at, finished_at, pod (the pod's name, as Argo names it: the node id
/// with pod-name-format v1, else WORKFLOW-TEMPLATE-HASH), reason (step_reason of the node's
/// message; empty for a node that succeeded or was skipped).
std::vector<Record> workflow_steps(std::string_view workflow_manifest);

/// Why a step waits or failed, as the server said it (an Argo node's `message`, such as
/// "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu" or "OOMKilled
/// (exit code 137)"; a v2 task's `error.message`): one line, control characters as spaces,
/// at most kMaxStepReason bytes (then "...", cut at a character's start).
inline constexpr std::size_t kMaxStepReason = 300;
[[nodiscard]] std::string step_reason(std::string_view message);

/// A listing as a table: the columns of `kind`, one row per record.
std::string table(Kind kind, const std::vector<Record>& items);

}  // namespace pipec::client::kfp
