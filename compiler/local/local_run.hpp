#pragma once
// `pipec run --local`: executes a checked pipeline's IR on this machine (docs/local.md).
//
// The semantics are the Argo lowering's (compiler/emit/argo/workflow_writer.cpp): a step
// runs when the steps it depends on have succeeded or were skipped, `if` conditions are
// evaluated over run-time texts as the Argo expressions are, `for` runs its body once
// per item (up to `jobs` items at a time), the `finally` steps run whatever the outcome,
// and step outputs are read from the files the op declares (one trailing newline
// dropped, as Argo does). After a failure no new step of that DAG starts (Argo's
// failFast); running ones finish.
//
// Container ops run as host processes under bubblewrap: the host's root is read-only,
// the top level and /tmp are writable but private to the step, the op's output
// directories and the working directory are the step's own directories under the run
// dir. Training ops run their replicas as processes with the environment the operators
// give them (TF_CONFIG on loopback ports; MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK; an
// Open MPI hostfile of `workers` slots on localhost).

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::local {

/// What a local run cannot do, found before anything starts: an error at the argument
/// for each cluster-only feature (a data claim not mapped by `volumes`, sync_source, an
/// op without a command), a note for what is ignored (GPUs, TensorBoard). Returns false
/// on error.
[[nodiscard]] bool check_local(const ir::Pipeline& pipeline,
                               const std::map<std::string, std::string>& volumes, Diagnostics& diags);

struct RunOptions {
  std::string run_dir;                        // created; everything of the run goes here
  int jobs = 2;                               // steps (and loop items) running at once
  std::map<std::string, std::string> params;  // every parameter's run-time text
  std::string bwrap = "bwrap";                // the sandbox program
  bool progress = false;                      // a live progress line (on a terminal)
  bool ascii = false;                         // sparklines in ASCII whatever the locale
  std::vector<std::string> visible_dirs;      // kept visible in the sandbox under /tmp
  std::map<std::string, std::string> volumes; // claim -> host directory (--volume)
  /// Resume and the cache (docs/local.md): an earlier run dir whose steps' results are
  /// reused when their key is the same; a directory of results kept across runs; a step
  /// that runs again with every step after it.
  std::string resume_dir;
  std::string cache_dir;
  std::string from;
};

/// Whether the pipeline (its main DAG, loops, `finally` and the pipelines it calls) has a
/// step of this name (--from).
[[nodiscard]] bool has_step(const ir::Pipeline& pipeline, const std::string& name);

/// Exit statuses of `pipec run --local` (docs/local.md).
enum LocalExit : int {
  kLocalOk = 0,           // every step succeeded or was skipped by its condition
  kLocalFailed = 1,       // a step (or a finally step) failed or did not run
  kLocalUsage = 2,        // bad options, parameters, or a feature that needs a cluster
  kLocalInterrupted = 130 // stopped by SIGINT/SIGTERM (finally still ran)
};

/// How many steps run at once: `jobs` (-j), bounded by the pipeline's `parallelism` setting
/// as Argo bounds pods. The banner and the scheduler both say this number.
[[nodiscard]] long long effective_jobs(const ir::Pipeline& pipeline, int jobs);

/// Runs the pipeline. Logs and the table go to `out`, problems of the runner to `err`.
int run_pipeline(const ir::Pipeline& pipeline, const RunOptions& options, std::ostream& out,
                 std::ostream& err);

}  // namespace pipec::local
