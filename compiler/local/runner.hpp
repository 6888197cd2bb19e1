#pragma once

// The local run's parts (run_pipeline(), local_run.hpp), one concept a file: what cannot
// run locally (check.cpp), scheduling DAGs, loops and steps (local_run.cpp), running a
// step's processes (steps.cpp), processes and output (process.cpp), reusing earlier
// results (resume.cpp). Private to compiler/local.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <poll.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "rules/names.hpp"
#include "rules/retry.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "runtime/job_render.hpp"
#include "runtime/metrics.hpp"

#include "compiler/local/local_run.hpp"
#include "compiler/local/sandbox.hpp"
#include "compiler/local/spawner.hpp"
#include "compiler/local/values.hpp"

namespace pipec::local {
struct Replica;
struct ReplicaPlan;
}  // namespace pipec::local

namespace pipec::local::detail {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Reused: a step's earlier result was taken (resume, cache); to the steps after it, as
// Succeeded (only records carry it).
enum class Outcome { Pending, Running, Succeeded, Failed, Skipped, Omitted, Stopped, Reused };

inline const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pending: return "pending";
    case Outcome::Running: return "running";
    case Outcome::Succeeded: return "succeeded";
    case Outcome::Failed: return "failed";
    case Outcome::Skipped: return "skipped";
    case Outcome::Omitted: return "not run";
    case Outcome::Stopped: return "stopped";
    case Outcome::Reused: return "reused";
  }
  return "?";
}

/// The values visible to a DAG: loop variables and the outputs of its steps, then its
/// parent's.
struct Scope {
  const Scope* parent = nullptr;
  std::string suffix;  // ".0", ".0.2": the loop items this scope is in
  /// A called pipeline's DAG (a scope with no parent: it sees only its own values): the
  /// pipeline, its arguments' texts, and "CALL/" before its steps' names ("te.0/" for the
  /// call `te` in the first iteration of a loop).
  const ir::Pipeline* pipeline = nullptr;
  std::map<std::string, std::string> params;
  std::string prefix;
  std::string var;     // the loop variable this scope binds, if any
  ir::Literal item;
  std::map<std::string, std::map<std::string, std::string>> outputs;  // guarded by Runner::mu_
  /// --from: every step of this scope runs again (its loop or call depends on a step that
  /// ran again); the nodes of this DAG that ran again (guarded by Runner::mu_).
  bool all_forced = false;
  std::set<std::string> forced;
  /// Where this DAG is, for the order of the table: {phase} (0 the run, 1 `finally`), then
  /// for each loop or call it is in, that node's index in its DAG (and a loop's item's).
  std::vector<std::size_t> place;
};

/// One step's record for the table and summary.json.
struct Record {
  std::string name;  // with the loop suffix
  std::string kind;
  Outcome outcome = Outcome::Pending;
  double seconds = 0;
  std::string metrics;  // "loss=0.1 acc=0.9"
  std::string message;
  double started = 0;  // seconds from the run's start to the step's start (or its skip)
  std::vector<std::string> after;  // the records of its scope it runs after, by name
  std::string reused_from;  // the directory its earlier result was taken from (outcome reused)
  std::vector<std::size_t> place;  // its scope's place and its node's index: the table's order
};

/// One process of a step: a container, or one replica of a training job.
struct Proc {
  std::string label;  // "[step]" prefix text: "step" or "step/worker-1" ("call/step" in a called pipeline)
  std::string log = "log";  // the log's file name in `dir`: "log", or a replica's "worker-1.log"
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=VALUE
  std::string dir;                // the step's directory (host)
  std::string root;               // its root filesystem (host): dir/fs, or a replica's own
  std::vector<std::string> writable_dirs;  // directories (in the sandbox) the step may make or write in
  std::vector<std::pair<std::string, std::string>> volume_binds;  // host dir, mount path
  std::vector<std::string> read_only_mounts;  // mount paths of volume_binds bound read-only
  std::vector<std::pair<std::string, std::string>> file_binds;    // host file, path (read-only)
  std::vector<std::string> own_files;  // input files placed in the step's root before it starts
  std::string working_dir;  // the op's working_dir, if any
  bool stop_when_others_end = false;     // a TF parameter server
  runtime::MetricScraper* scraper = nullptr;  // the leader's log is scraped
  // Run-time state.
  pid_t pid = -1;
  bool done = false;
  int status = 0;
};

/// How a process ended, for the retry rule (rules::should_retry): its exit code, 128 + N
/// when signal N ended it; no reason (Kubernetes gives those); the step's failure message.
rules::Failure failure_of(int status, const std::string& message);

inline std::atomic<int> g_stop{0};  // 1: stop the main DAG; 2: stop everything (second signal)

inline std::string trim_one_newline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

/// A free TCP port on the loopback interface (0: none found).
int free_port();

/// The environment every process starts from, with HOME at `home` (process.cpp).
std::vector<std::string> base_env(const std::string& home);
/// Sets NAME=VALUE in `env`, replacing an earlier NAME.
void set_env(std::vector<std::string>& env, const std::string& name, const std::string& value);

/// What a step's result depends on (docs/local.md "What the key holds"): `keyed`, and its
/// SHA-256 over the compact JSON of it (keys sorted).
struct StepKey {
  Json keyed;
  std::string key;
  std::vector<std::pair<std::string, bool>> outputs;  // the declared outputs: name, a file
  bool cacheable = true;  // false: `cache false`, a claim mounted, an input that cannot be read
  std::optional<long long> staleness;  // `cache "7d"`: reused while at most this old (seconds)
  void seal();  // key = SHA-256 of keyed
};

/// The key of a container step (a Python op too): the op, image, argv, environment (HOME
/// as the step's own), arguments' texts, the digest of each input file's bytes, the
/// declared outputs, volumes, working_dir and metrics_from; whether and how long it may be
/// reused is the plan's `cache` (ir::Pod::Cache).
StepKey container_key(const ir::ContainerOp& op, const ir::Pod::Cache& cache, const std::string& image,
                      const Proc& proc, const std::map<std::string, std::string>& args,
                      const std::vector<std::pair<std::string, std::string>>& input_files);
/// The key of a training step: the job rendered with this run's values (image, command,
/// env, replicas), the chief's name and the metric specs.
StepKey training_key(const Json& job, bool tf_master_form, const std::vector<std::string>& metrics,
                     bool mounts_claims);
/// The SHA-256 of a file's bytes, read in pieces.
bool file_digest(const std::string& path, std::string& hex, std::string& problem);

class Runner {
 public:
  Runner(const ir::Pipeline& p, const RunOptions& o, std::ostream& out, std::ostream& err)
      : p_(p), o_(o), out_(out), err_(err) {}

  int run();
  // Wakes every waiter on the run's state (a signal came: they look at g_stop).
  void wake() {
    std::lock_guard l(mu_);
    cv_.notify_all();
  }

 private:
  // Starts the run's sandbox spawner unless PIPEC_LOCAL_SANDBOX=bwrap (docs/local.md).
  void start_spawner();

  // Values.
  std::string ref_text(const ir::Ref& r, const Scope& s);
  std::string text(const ir::Value& v, const Scope& s);
  bool condition(const ir::Condition& c, const Scope& s);

  // DAGs.
  Outcome run_dag(const std::vector<ir::Node>& nodes, Scope& scope, int phase);
  static bool runs_after(const ir::Node& node, const std::string& dep, Outcome ds, const ir::Node& dep_node);
  static bool dag_failed(const std::vector<ir::Node>& nodes, const std::map<std::string, std::size_t>& index,
                         const std::vector<Outcome>& state);
  // `at`: the node's index in its DAG (Scope::place).
  Outcome run_step(const ir::Step& step, Scope& scope, int phase, std::uint64_t ticket, std::size_t at);
  Outcome run_loop(const ir::Loop& loop, Scope& scope, int phase, std::size_t at);
  Outcome loop_outcome(const ir::Loop& loop, const std::string& label, const std::vector<Outcome>& results);
  Outcome run_call(const ir::Step& step, Scope& scope, int phase, std::size_t at);
  std::map<std::string, std::string> outputs_of(const ir::Pipeline& p, const Scope& s);
  std::string series_section() const;
  /// The records in the order of the file (Record::place), whatever order the steps ran in:
  /// a loop's iterations item by item, a call's steps after its line. Under mu_ or at the end.
  std::vector<const Record*> ordered_records() const;
  Json record_outputs(const std::map<std::string, std::string>& values);
  /// The pipeline whose DAG `s` belongs to: a called one, or the one run.
  const ir::Pipeline& pipeline_of(const Scope& s) const {
    for (const Scope* sc = &s; sc; sc = sc->parent)
      if (sc->pipeline) return *sc->pipeline;
    return p_;
  }
  Outcome run_container(const ir::Step& step, Scope& scope, int phase, Record& rec);
  /// A container step's attempts (run_attempts): its process, the files placed for it
  /// (host path, sandbox path), its metric specs and their scraper, its timeout.
  struct Attempt {
    std::unique_ptr<Proc> proc;
    std::vector<std::pair<std::string, std::string>> input_files;
    std::vector<rules::MetricSpec> specs;
    std::unique_ptr<runtime::MetricScraper> scraper;
    bool from_file = false;  // metrics from `metrics_from`, not the log
    long long timeout_s = 0;
  };
  std::unique_ptr<Proc> container_proc(const ir::ContainerOp& op, const std::string& name,
                                       const std::map<std::string, std::string>& args,
                                       const std::vector<std::pair<std::string, std::string>>& input_files);
  void bind_volumes(const ir::ContainerOp& op, Proc& proc);
  Outcome run_attempts(const ir::Pod& pod, Attempt& a, int phase, Record& rec, bool& whole);
  void write_ui_metadata(const ir::ContainerOp& op, const std::string& label, const std::string& dir);
  std::string workspace_dir();
  Outcome run_training(const ir::Step& step, Scope& scope, int phase, Record& rec);
  std::unique_ptr<Proc> replica_proc(const Json& job, const Replica& r, const ReplicaPlan& plan,
                                     const std::string& name, const std::string& dir);

  // Resume and the cache (resume.cpp).
  /// Whether --from makes this step run again: it is the step named, or depends on one that
  /// ran again.
  bool forced(const std::string& step, const std::vector<std::string>& depends, const Scope& scope,
              const std::string& name);
  void mark_forced(Scope& scope, const std::string& node);
  /// Whether a step of this scope's DAG ran again (--from).
  bool ran_again(const Scope& scope) {
    std::lock_guard lock(mu_);
    return scope.all_forced || !scope.forced.empty();
  }
  /// The step's earlier result, when one with its key is whole (--resume's run dir first,
  /// then --cache): its files placed in `dir`, its values and metrics filled; else `dir` is
  /// emptied for the step to run.
  bool reuse(const std::string& name, const std::string& dir, const StepKey& k, bool is_forced,
             std::map<std::string, std::string>& values, Record& rec);
  bool take(const std::string& from, const std::string& dir, const StepKey& k,
            std::map<std::string, std::string>& values, Record& rec);
  /// After the step succeeded: its record (cache.json, written atomically) and cache entry.
  void keep(const std::string& name, const std::string& dir, const StepKey& k, const Record& rec);

  // Processes.
  bool start(Proc& p, std::string& error);
  /// Waits for the processes; stops the others when a needed one fails, stops parameter
  /// servers when the rest have ended, and everything on a stop or a timeout.
  Outcome wait_all(std::vector<std::unique_ptr<Proc>>& procs, int phase, long long timeout_s,
                   std::string& message);
  void print_line(const std::string& label, std::string_view line);
  void progress_locked();
  void finish_record(std::size_t index, const Record& rec);
  std::size_t new_record(Record rec);

  // Job slots (-j), in the order of tickets: a step takes its ticket when its DAG finds it
  // ready (run_dag, in the DAG's order), so steps ready together start in the order of the
  // file, whichever of their threads reaches the slot first.
  std::uint64_t take_ticket() {
    std::lock_guard lock(mu_);
    queued_.insert(next_ticket_);
    return next_ticket_++;
  }
  /// A ticket that takes no slot: the step was skipped, calls a pipeline, or did not start.
  void drop_ticket(std::uint64_t ticket) {
    {
      std::lock_guard lock(mu_);
      queued_.erase(ticket);
    }
    cv_.notify_all();
  }
  void acquire(std::uint64_t ticket) {
    std::unique_lock lock(mu_);
    // The pipeline's `parallelism` setting bounds the steps at once, as Argo's does pods.
    const long long slots = effective_jobs(p_, o_.jobs);
    cv_.wait(lock, [&] { return slots_used_ < slots && *queued_.begin() == ticket; });
    queued_.erase(queued_.begin());
    ++slots_used_;
    lock.unlock();
    cv_.notify_all();  // the next ticket, if a slot is still free
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      --slots_used_;
    }
    cv_.notify_all();
  }

  const ir::Pipeline& p_;
  const RunOptions& o_;
  std::ostream& out_;
  std::ostream& err_;

  std::mutex mu_;  // records, scope outputs, slots
  std::condition_variable cv_;
  int slots_used_ = 0;
  std::uint64_t next_ticket_ = 0;
  std::set<std::uint64_t> queued_;  // tickets waiting for a slot
  std::vector<Record> records_;
  std::string run_status_, run_failures_;  // for `finally`: how the main DAG ended (ir::Ref::Kind::Run)
  int running_ = 0, done_ = 0, waiting_ = 0;  // steps; waiting: in a started DAG, not begun
  Clock::time_point start_ = Clock::now();  // for the progress line's elapsed time
  std::unique_ptr<LinkStore> links_;  // the symlinks of the steps' roots (run dir's sandbox-links/)
  std::unique_ptr<Spawner> spawner_;  // the run's sandbox spawner; none: one bwrap per step
  std::mutex out_mu_;  // the terminal
  bool progress_shown_ = false;
};

}  // namespace pipec::local::detail
