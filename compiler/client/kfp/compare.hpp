#pragma once
// `pipec runs compare RUN...`: the parameters and metrics of several runs side by side,
// server runs (v1beta1 or v2beta1, read with `runs get`'s record) and local run
// directories alike (docs/client.md "Comparing runs"). The driver reads a local run
// directory (summary.json, parameters.json) and hands it here as a ComparedRun.

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "compiler/client/http.hpp"
#include "compiler/client/kfp/config.hpp"
#include "compiler/client/kfp/operate.hpp"
#include "compiler/client/kfp/resources.hpp"

namespace pipec::client::kfp {

/// One metric value of a run: STEP.METRIC, the number, its KFP format ("PERCENTAGE" is shown
/// as a percentage; "RAW" or "" as the number).
struct ComparedMetric {
  std::string key;
  double value = 0;
  std::string format;
};

/// One run as compared.
struct ComparedRun {
  std::string run;     // the argument as given: an id or a directory
  std::string source;  // "local", "v1beta1" or "v2beta1"
  std::string id;      // the server's id; for a local run the directory
  std::string name;    // the run's name; for a local run the directory's last name
  std::string state;   // as the server spells it; a local run's outcome
  std::vector<std::pair<std::string, std::string>> parameters;  // name -> text
  std::vector<ComparedMetric> metrics;
};

/// A server run's record (read_record) as compared: a metric's step is the step's name
/// (its node or task looked up in the record's steps), not the node id.
ComparedRun compared_run(const Record& run, ApiVersion version);

/// What to compare: a run already read (a local run directory), or a server run's id.
struct CompareInput {
  std::string id;           // a server run's id when `local` is false
  bool local = false;
  ComparedRun run;          // the local run, when `local`
};

/// The table: a header row of the runs' names, the state, the parameters (by name) and the
/// metrics (by STEP.METRIC), a value per run (`-` where a run has none); a row whose values
/// are not all the same starts with `*`. `metric`: only the metrics of that name (METRIC or
/// STEP.METRIC).
std::string compare_table(const std::vector<ComparedRun>& runs, const std::string& metric);

/// The same as JSON (format pipec-runs-compare/1, docs/client.md).
Record compare_json(const std::vector<ComparedRun>& runs, const std::string& metric);

/// `pipec runs compare`: reads the server runs (`transport` may be null when every input is
/// local), prints the table (or with args.json the JSON) on `out`. 0, or 1 when a run
/// cannot be read.
int compare_command(const std::vector<CompareInput>& inputs, const std::string& metric,
                    const OperateArgs& args, const Connection& connection, HttpTransport* transport,
                    std::ostream& out, std::ostream& err);

}  // namespace pipec::client::kfp
