#pragma once
// The operating commands: `pipec runs`, `pipec experiments`, `pipec pipelines` and the
// listing and state verbs of `pipec schedule` (create is schedule_create_command in
// commands.hpp). Each prints to `out` (a table, or with `json` the records of
// resources.hpp), errors to `err` as "pipec: error: ...", and returns the exit status:
// 0, 1 (the server refused, or nothing of that name), as upload and run do.

#include <chrono>
#include <iosfwd>
#include <string>

#include "compiler/client/http.hpp"
#include "compiler/client/kfp/config.hpp"
#include "compiler/client/kfp/flows.hpp"
#include "compiler/client/kfp/resources.hpp"

namespace pipec::client::kfp {

struct OperateArgs {
  bool v2 = false;    // --target kfp-v2: the v2beta1 API
  bool json = false;  // --output json
  RetryPolicy retry;
};

struct ListArgs {
  int page_size = 20;
  std::string page_token;
  bool all = false;         // follow next_page_token to the end
  std::string experiment;   // runs, schedules: an experiment's name or id
  std::string pipeline;     // runs: a pipeline's name or id; versions: whose (required)
  std::string state;        // runs: Succeeded, Failed, RUNNING, ... (as the server spells it)
  bool archived = false;    // runs, experiments: the archived ones instead
};

/// A listing, newest first. JSON: {"items": [records], "next_page_token": "..."}; a
/// table names the next page's token on `err` when there is one.
int list_command(Kind kind, const ListArgs& list, const OperateArgs& args,
                 const Connection& connection, HttpTransport& transport, std::ostream& out,
                 std::ostream& err);

/// One thing by id (a pipeline: by name or id). A run shows state, parameters, times,
/// metrics and each step's state and duration.
int get_command(Kind kind, const std::string& id, const OperateArgs& args,
                const Connection& connection, HttpTransport& transport, std::ostream& out,
                std::ostream& err);

/// An action on one thing by id (an experiment, a pipeline: by name or id; with
/// `version`, a pipeline's version of that name).
int act_command(Kind kind, Action action, const std::string& id, const std::string& version,
                const OperateArgs& args, const Connection& connection, HttpTransport& transport,
                std::ostream& out, std::ostream& err);

/// `pipec experiments create NAME`: creates it, or says it exists (status 0 either way).
int experiment_create_command(const std::string& name, const std::string& description,
                              const OperateArgs& args, const Connection& connection,
                              HttpTransport& transport, std::ostream& out, std::ostream& err);

/// `pipec runs wait RUN`: follow_run on a run that exists.
int wait_command(const std::string& run_id, const WaitOptions& wait, const OperateArgs& args,
                 const Connection& connection, HttpTransport& transport, std::ostream& out,
                 std::ostream& err);

/// "1h02m03s" from two RFC 3339 times; "" if either is missing or unreadable.
std::string duration_between(const std::string& start, const std::string& end);

}  // namespace pipec::client::kfp
