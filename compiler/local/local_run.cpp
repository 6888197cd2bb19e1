// `pipec run --local` (local_run.hpp): the IR executed on this machine.
#include "compiler/local/local_run.hpp"
#include "compiler/local/replicas.hpp"
#include "compiler/local/sandbox.hpp"
#include "compiler/local/values.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
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
#include "compiler/emit/kubeflow/launcher_call.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "runtime/job_render.hpp"
#include "runtime/metrics.hpp"

namespace pipec::local {
namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// --- what cannot run locally ----------------------------------------------------------

const ir::Value* arg_of(const ir::Step& step, const std::string& name) {
  for (const auto& [n, v] : step.args)
    if (n == name) return &v;
  return nullptr;
}

bool empty_literal(const ir::Value& v) {
  if (!v.is_literal()) return false;
  const auto& l = v.literal;
  return l.is_null() || (l.is_string() && l.get<std::string>().empty()) ||
         (l.is_array() && l.empty()) || (l.is_object() && l.empty()) ||
         (l.is_number() && l == 0) || (l.is_boolean() && !l.get<bool>());
}

void check_nodes(const ir::Pipeline& p, const std::vector<ir::Node>& nodes,
                 const std::map<std::string, std::string>& volumes, Diagnostics& diags) {
  for (const auto& node : nodes) {
    if (const auto* loop = std::get_if<ir::Loop>(&node)) {
      check_nodes(p, loop->body, volumes, diags);
      continue;
    }
    const auto& step = std::get<ir::Step>(node);
    auto at = [&](const ir::Value& v) { return v.range.valid() ? v.range : step.range; };
    if (step.kind == ir::OpKind::Container) {
      for (const auto& op : p.ops)
        for (const auto& [key, value] : op.resources)
          if (op.name == step.op && key == "gpus" && !empty_literal(value))
            diags.note(step.range, fmt::format("step '{}': GPUs are ignored by a local run (op '{}' "
                                               "asks for some)",
                                               step.name, op.name));
      for (const auto& op : p.ops) {
        if (op.name != step.op) continue;
        // A claim may be mapped to a host directory (--volume); an emptyDir is the step's
        // own directory; ConfigMaps and Secrets exist only in the cluster.
        for (const auto& v : op.volumes) {
          if (v.kind == "pvc" && !volumes.count(v.name))
            diags.error(op.range, fmt::format("step '{}' cannot run locally: op '{}' mounts the "
                                              "PersistentVolumeClaim '{}', which exists only in the "
                                              "cluster; map it to a directory with --volume {}=DIR",
                                              step.name, op.name, v.name, v.name));
          if (v.kind == "configmap" || v.kind == "secret")
            diags.error(op.range, fmt::format("step '{}' cannot run locally: op '{}' mounts the {} "
                                              "'{}', which exists only in the cluster",
                                              step.name, op.name, v.kind == "secret" ? "Secret" : "ConfigMap",
                                              v.name));
        }
        if (op.run_as_user || op.run_as_group || op.run_as_non_root)
        diags.note(op.range, fmt::format("step '{}': run_as_user, run_as_group and run_as_non_root are "
                                         "not applied by a local run (it runs as you)",
                                         step.name));
      if (!op.secret_env.empty())
          diags.error(op.range, fmt::format("step '{}' cannot run locally: op '{}' reads '{}' from the "
                                            "Secret '{}', which exists only in the cluster",
                                            step.name, op.name, op.secret_env[0].var, op.secret_env[0].secret));
      }
      for (const auto& op : p.ops)
        if (op.name == step.op && op.command.empty())
          diags.error(step.range, fmt::format("step '{}' cannot run locally: op '{}' has no "
                                              "command and relies on its image's ENTRYPOINT, "
                                              "which a local run does not know (images are not "
                                              "pulled); give the op a command",
                                              step.name, op.name));
      continue;
    }
    if (const ir::Value* v = arg_of(step, "data"); v && !empty_literal(*v)) {
      // Claims named by literals must be mapped with --volume; those from run-time values
      // are checked when the job is rendered.
      std::vector<std::pair<std::string, const ir::Value*>> literal;
      bool runtime_entries = false;
      if (v->is_literal() && v->literal.is_array()) {
        for (const auto& e : v->literal)
          if (e.is_string()) literal.emplace_back(e.get<std::string>(), v);
      } else if (v->kind == ir::Value::Kind::List) {
        for (const auto& item : v->items) {
          if (item.is_literal() && item.literal.is_string()) literal.emplace_back(item.literal.get<std::string>(), &item);
          else runtime_entries = true;
        }
      } else {
        runtime_entries = true;
      }
      for (const auto& [entry, where] : literal) {
        auto parsed = runtime::parse_data_entry(entry);
        if (parsed && !volumes.count(parsed->claim))
          diags.error(at(*where), fmt::format("step '{}' cannot run locally: 'data' mounts "
                                              "PersistentVolumeClaims, which exist only in the "
                                              "cluster; map claim '{}' to a directory with --volume {}=DIR",
                                              step.name, parsed->claim, parsed->claim));
      }
      if (runtime_entries && volumes.empty())
        diags.error(at(*v), fmt::format("step '{}' cannot run locally: 'data' mounts "
                                        "PersistentVolumeClaims, which exist only in the cluster; map "
                                        "each claim it names to a directory with --volume CLAIM=DIR",
                                        step.name));
    }
    if (const ir::Value* v = arg_of(step, "sync_source"); v && !empty_literal(*v))
      diags.error(at(*v), fmt::format("step '{}' cannot run locally: 'sync_source' clones code "
                                      "into the pods with git-sync, which only the cluster runs",
                                      step.name));
    if (const ir::Value* v = arg_of(step, "gpus"); v && !empty_literal(*v))
      diags.note(at(*v), fmt::format("step '{}': GPUs are ignored by a local run", step.name));
    if (const ir::Value* v = arg_of(step, "tensorboard"); v && !empty_literal(*v))
      diags.note(at(*v), fmt::format("step '{}': no TensorBoard is started by a local run", step.name));
  }
}

// --- run-time values ------------------------------------------------------------------

enum class Outcome { Pending, Running, Succeeded, Failed, Skipped, Omitted, Stopped };

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pending: return "pending";
    case Outcome::Running: return "running";
    case Outcome::Succeeded: return "succeeded";
    case Outcome::Failed: return "failed";
    case Outcome::Skipped: return "skipped";
    case Outcome::Omitted: return "not run";
    case Outcome::Stopped: return "stopped";
  }
  return "?";
}

/// The values visible to a DAG: loop variables and the outputs of its steps, then its
/// parent's.
struct Scope {
  const Scope* parent = nullptr;
  std::string suffix;  // ".0", ".0.2": the loop items this scope is in
  std::string var;     // the loop variable this scope binds, if any
  ir::Literal item;
  std::map<std::string, std::map<std::string, std::string>> outputs;  // guarded by Runner::mu_
};

/// One step's record for the table and summary.json.
struct Record {
  std::string name;  // with the loop suffix
  std::string kind;
  Outcome outcome = Outcome::Pending;
  double seconds = 0;
  std::string metrics;  // "loss=0.1 acc=0.9"
  std::string message;
};

/// One process of a step: a container, or one replica of a training job.
struct Proc {
  std::string label;  // "[step]" prefix text: "step" or "step/worker-1"
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=VALUE
  std::string dir;                // the step's directory (host)
  std::string root;               // its root filesystem (host): dir/fs, or a replica's own
  std::vector<std::string> writable_dirs;  // directories (in the sandbox) the step may make or write in
  std::vector<std::pair<std::string, std::string>> volume_binds;  // host dir, mount path
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

std::atomic<int> g_stop{0};  // 1: stop the main DAG; 2: stop everything (second signal)

std::string trim_one_newline(std::string s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

class Runner {
 public:
  Runner(const ir::Pipeline& p, const RunOptions& o, std::ostream& out, std::ostream& err)
      : p_(p), o_(o), out_(out), err_(err) {}

  int run();

 private:
  // Values.
  std::string ref_text(const ir::Ref& r, const Scope& s);
  std::string text(const ir::Value& v, const Scope& s);
  bool condition(const ir::Condition& c, const Scope& s);

  // DAGs.
  Outcome run_dag(const std::vector<ir::Node>& nodes, Scope& scope, int phase);
  Outcome run_step(const ir::Step& step, Scope& scope, int phase);
  Outcome run_loop(const ir::Loop& loop, Scope& scope, int phase);
  Outcome run_container(const ir::Step& step, Scope& scope, int phase, Record& rec);
  Outcome run_training(const ir::Step& step, Scope& scope, int phase, Record& rec);

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

  // Job slots (-j).
  void acquire() {
    std::unique_lock lock(mu_);
    // The pipeline's `parallelism` setting bounds the steps at once, as Argo's does pods.
    const long long slots = effective_jobs(p_, o_.jobs);
    cv_.wait(lock, [&] { return slots_used_ < slots; });
    ++slots_used_;
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
  std::vector<Record> records_;
  int running_ = 0, done_ = 0, waiting_ = 0;  // steps; waiting: in a started DAG, not begun
  std::mutex out_mu_;  // the terminal
  bool progress_shown_ = false;
};

// --- values ----------------------------------------------------------------------------

std::string Runner::ref_text(const ir::Ref& r, const Scope& s) {
  switch (r.kind) {
    case ir::Ref::Kind::Param: {
      auto it = o_.params.find(r.name);
      if (it == o_.params.end()) throw EvalError{"parameter '" + r.name + "' has no value"};
      return it->second;
    }
    case ir::Ref::Kind::OpParam:  // only in an op's body: ir::Invocation's words (word_text)
      throw EvalError{"op parameter '" + r.name + "' has no value"};
    case ir::Ref::Kind::LoopItem:
      for (const Scope* sc = &s; sc; sc = sc->parent) {
        if (sc->var != r.name) continue;
        if (r.field.empty()) return ir::literal_text(sc->item);
        if (sc->item.is_object() && sc->item.contains(r.field)) return ir::literal_text(sc->item[r.field]);
        throw EvalError{fmt::format("item {} of '{}' has no field '{}'", ir::literal_text(sc->item),
                                    r.name, r.field)};
      }
      throw EvalError{"loop variable '" + r.name + "' is not bound"};
    case ir::Ref::Kind::StepOutput: {
      std::lock_guard lock(mu_);
      for (const Scope* sc = &s; sc; sc = sc->parent) {
        auto it = sc->outputs.find(r.name);
        if (it == sc->outputs.end()) continue;
        auto o = it->second.find(r.field);
        if (o != it->second.end()) return o->second;
      }
      throw EvalError{fmt::format("output '{}' of step '{}' is not available (the step did not run)",
                                  r.field, r.name)};
    }
  }
  return "";
}

std::string Runner::text(const ir::Value& v, const Scope& s) {
  return value_text(v, [&](const ir::Ref& r) { return ref_text(r, s); });
}

bool Runner::condition(const ir::Condition& c, const Scope& s) {
  return condition_holds(c, [&](const ir::Ref& r) { return ref_text(r, s); });
}

// --- output ----------------------------------------------------------------------------

void Runner::progress_locked() {
  if (!o_.progress) return;
  int running, done, waiting;
  {
    std::lock_guard lock(mu_);
    running = running_;
    done = done_;
    waiting = waiting_;
  }
  out_ << fmt::format("\r\033[K-- {} done, {} running, {} waiting", done, running, waiting) << std::flush;
  progress_shown_ = true;
}

void Runner::print_line(const std::string& label, std::string_view line) {
  std::lock_guard lock(out_mu_);
  if (progress_shown_) out_ << "\r\033[K";
  out_ << '[' << label << "] " << line << '\n';
  progress_locked();
  if (!o_.progress) out_.flush();
}

std::size_t Runner::new_record(Record rec) {
  std::lock_guard lock(mu_);
  records_.push_back(std::move(rec));
  return records_.size() - 1;
}

void Runner::finish_record(std::size_t index, const Record& rec) {
  std::lock_guard lock(mu_);
  records_[index] = rec;
}

// --- processes -------------------------------------------------------------------------

bool Runner::start(Proc& p, std::string& error) {
  std::error_code ec;
  // The step's root and /tmp, and its working directory; nothing else: a directory the
  // step writes into is made by the step, as in a pod.
  const std::string root = p.root.empty() ? p.dir + "/fs" : p.root;
  fs::create_directories(root + "/tmp", ec);
  fs::create_directories(p.dir + "/work", ec);
  std::vector<std::string> writable = p.writable_dirs;
  if (!p.working_dir.empty()) writable.push_back(p.working_dir);
  for (const auto& [host, mount] : p.volume_binds) writable.push_back(mount);
  for (const auto& [host, path] : p.file_binds) writable.push_back(fs::path(path).parent_path().string());
  Sandbox box{o_.bwrap, p.dir, root, writable, p.volume_binds, p.file_binds, p.own_files, o_.visible_dirs, p.working_dir};
  std::vector<std::string> argv = sandbox_argv(box, p.argv);
  std::vector<char*> cargv, cenv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  for (auto& s : p.env) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  std::string log_path = p.dir + "/" + (p.label.find('/') == std::string::npos
                                             ? std::string("log")
                                             : p.label.substr(p.label.find('/') + 1) + ".log");
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int fds[2];
  if (log_fd < 0 || pipe2(fds, O_CLOEXEC) != 0) {
    error = fmt::format("cannot create the log of {}: {}", p.label, std::strerror(errno));
    if (log_fd >= 0) close(log_fd);
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    error = fmt::format("cannot start {}: {}", p.label, std::strerror(errno));
    close(fds[0]);
    close(fds[1]);
    close(log_fd);
    return false;
  }
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execvpe(cargv[0], cargv.data(), cenv.data());
    dprintf(2, "pipec: cannot run %s: %s\n", cargv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  close(fds[1]);
  p.pid = pid;
  // The log: raw bytes to the file, lines prefixed to the terminal, the leader's to the
  // metric scraper; then the exit status.
  std::thread([this, &p, in = fds[0], log_fd] {
    std::string partial;
    char buf[16384];
    for (;;) {
      ssize_t n = read(in, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::string_view chunk(buf, static_cast<std::size_t>(n));
      for (std::size_t off = 0; off < chunk.size();) {
        ssize_t w = write(log_fd, chunk.data() + off, chunk.size() - off);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
      }
      if (p.scraper) {
        std::lock_guard lock(mu_);
        p.scraper->feed(chunk);
      }
      partial.append(chunk);
      std::size_t start = 0, nl;
      while ((nl = partial.find('\n', start)) != std::string::npos) {
        print_line(p.label, std::string_view(partial).substr(start, nl - start));
        start = nl + 1;
      }
      partial.erase(0, start);
    }
    if (!partial.empty()) print_line(p.label, partial);
    if (p.scraper) {
      std::lock_guard lock(mu_);
      p.scraper->finish();
    }
    close(in);
    close(log_fd);
    int status = 0;
    while (waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::lock_guard lock(mu_);
    p.status = status;
    p.done = true;
    cv_.notify_all();
  }).detach();
  return true;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return "ended";
}

bool exit_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

Outcome Runner::wait_all(std::vector<std::unique_ptr<Proc>>& procs, int phase, long long timeout_s,
                         std::string& message) {
  auto started = Clock::now();
  std::optional<Clock::time_point> term_sent;
  bool stopped = false, timed_out = false, failed = false;
  auto signal_all = [&](int sig, bool only_ps) {
    for (auto& p : procs)
      if (!p->done && p->pid > 0 && (!only_ps || p->stop_when_others_end)) kill(-p->pid, sig);
  };
  std::unique_lock lock(mu_);
  for (;;) {
    bool all_done = true, others_done = true;
    for (auto& p : procs) {
      if (!p->done) all_done = false;
      if (!p->done && !p->stop_when_others_end) others_done = false;
      if (p->done && !p->stop_when_others_end && !exit_ok(p->status) && !failed && !term_sent) {
        failed = true;
        message = fmt::format("{}: {}", p->label, exit_text(p->status));
      }
    }
    if (all_done) break;
    bool stop_now = g_stop.load() >= (phase == 0 ? 1 : 2);
    if (!term_sent && (stop_now || failed || others_done ||
                       (timeout_s > 0 && Clock::now() - started > std::chrono::seconds(timeout_s)))) {
      if (stop_now) stopped = true;
      else if (!failed && !others_done) timed_out = true;
      lock.unlock();
      signal_all(SIGTERM, others_done && !stop_now && !failed && !timed_out);
      lock.lock();
      term_sent = Clock::now();
    } else if (term_sent && Clock::now() - *term_sent > std::chrono::seconds(5)) {
      lock.unlock();
      signal_all(SIGKILL, false);
      lock.lock();
      term_sent = Clock::now() + std::chrono::hours(1);
    }
    cv_.wait_for(lock, std::chrono::milliseconds(100));
  }
  if (stopped) {
    message = "stopped";
    return Outcome::Stopped;
  }
  if (timed_out) {
    message = fmt::format("timed out after {} s", timeout_s);
    return Outcome::Failed;
  }
  if (failed) return Outcome::Failed;
  for (auto& p : procs)
    if (!p->stop_when_others_end && !exit_ok(p->status)) {
      message = fmt::format("{}: {}", p->label, exit_text(p->status));
      return Outcome::Failed;
    }
  return Outcome::Succeeded;
}

// The environment of a container: only what it declares, with the PATH and HOME an image
// usually has (the host's PATH, e.g. a pyenv shim, is not the container's).
std::vector<std::string> base_env(const std::string& home) {
  return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home};
}

void set_env(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  for (auto& e : env)
    if (e.compare(0, name.size() + 1, name + "=") == 0) {
      e = name + "=" + value;
      return;
    }
  env.push_back(name + "=" + value);
}

// --- steps -----------------------------------------------------------------------------

Outcome Runner::run_container(const ir::Step& step, Scope& scope, int phase, Record& rec) {
  const ir::ContainerOp* op = nullptr;
  for (const auto& o : p_.ops)
    if (o.name == step.op) op = &o;
  if (!op) throw EvalError{"op '" + step.op + "' is not known"};
  std::map<std::string, std::string> args;
  for (const auto& [name, value] : step.args) args[name] = text(value, scope);
  // A file argument is the producer's copy on this host; the step sees it at the
  // parameter's path (copied in before each attempt, as a pod gets its artifacts).
  std::vector<std::pair<std::string, std::string>> input_files;  // host path, sandbox path
  for (const auto& param : op->params)
    if (param.type.kind == ir::TypeKind::File && args.count(param.name)) {
      input_files.emplace_back(args[param.name], param.path);
      args[param.name] = param.path;
    }

  std::string name = step.name + scope.suffix;
  auto proc = std::make_unique<Proc>();
  proc->label = name;
  proc->dir = o_.run_dir + "/steps/" + name;
  proc->working_dir = op->working_dir;
  proc->env = base_env(op->working_dir.empty() ? proc->dir + "/work" : op->working_dir);
  // What the container receives (ir::Invocation), with this run's values.
  const ir::Invocation& call = p_.plan.container(op->name);
  auto word = [&](const ir::Word& w) { return word_text(w, args); };
  if (call.shell) {
    proc->argv = {"sh", "-c", call.script, call.name};
  } else {
    for (const auto& w : call.command) proc->argv.push_back(word(w));
  }
  for (const auto& w : call.args) proc->argv.push_back(word(w));
  for (const auto& [k, v] : call.env) set_env(proc->env, k, word(v));
  for (const auto& value : call.script_values)
    set_env(proc->env, ir::script_variable(value.name), args.count(value.name) ? args[value.name] : "");
  std::vector<std::string> written;  // files the step writes for pipec: outputs, metrics
  for (const auto& out : call.outputs) written.push_back(out.path);
  for (const auto& [host, path] : input_files) {
    written.push_back(path);
    proc->own_files.push_back(path);
  }
  if (!op->metrics_from.empty()) written.push_back(op->metrics_from);
  for (const auto& path : written) {
    std::string d = fs::path(path).parent_path().string();
    if (std::find(proc->writable_dirs.begin(), proc->writable_dirs.end(), d) == proc->writable_dirs.end())
      proc->writable_dirs.push_back(d);
  }
  std::sort(proc->writable_dirs.begin(), proc->writable_dirs.end());
  // `volumes`: a claim mapped with --volume is bound at its mount path (shared between
  // steps, as on a cluster); an emptyDir is a directory of the step's own.
  for (std::size_t i = 0; i < op->volumes.size(); ++i) {
    const auto& v = op->volumes[i];
    if (v.kind == "pvc")
      if (auto it = o_.volumes.find(v.name); it != o_.volumes.end())
        proc->volume_binds.emplace_back(it->second, v.path);
    if (v.kind == "empty") {
      std::string dir = proc->dir + "/empty-" + std::to_string(i);
      std::error_code made;
      fs::create_directories(dir, made);
      proc->volume_binds.emplace_back(dir, v.path);
    }
  }

  std::error_code ec;
  fs::create_directories(proc->dir, ec);
  {
    Json info = {{"step", name}, {"op", op->name}, {"image", word(call.image)},
                 {"argv", proc->argv}, {"env", proc->env}};
    std::ofstream(proc->dir + "/process.json") << info.dump(2) << '\n';
  }
  print_line(name, fmt::format("image {} (not pulled: runs on this host; the image is assumed to have the "
                               "host's programs and top-level directories)",
                               word(call.image)));
  // A program only the image has: say so instead of bwrap's execvp error.
  if (!proc->argv.empty() && proc->argv[0].find('/') == std::string::npos) {
    bool found = false;
    for (const char* d : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"})
      found = found || access((std::string(d) + "/" + proc->argv[0]).c_str(), X_OK) == 0;
    if (!found) {
      rec.message = fmt::format("'{}' is not installed on this host (it would come from the image {}, "
                                "which a local run does not pull)",
                                proc->argv[0], word(call.image));
      return Outcome::Failed;
    }
  }
  // Metrics, as pipec-metrics collects them on a cluster (the launcher's scraper): from
  // the step's log (each attempt anew), or from the op's `metrics_from` file.
  std::vector<runtime::MetricSpec> specs;
  for (const auto& m : call.metrics) {
    std::string why;
    auto spec = runtime::parse_metric_spec(word(m), why);
    if (!spec) throw EvalError{why};
    specs.push_back(std::move(*spec));
  }
  if (std::string why; !runtime::check_metric_specs(specs, why)) throw EvalError{why};
  std::unique_ptr<runtime::MetricScraper> scraper;
  int attempts = 1 + static_cast<int>(op->retries.value_or(0));
  Outcome outcome = Outcome::Failed;
  const auto first_start = std::chrono::steady_clock::now();
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) {
      // Argo's backoff: the first wait, then each the last times the factor, at most max.
      if (op->retry_backoff_seconds) {
        double wait = static_cast<double>(*op->retry_backoff_seconds) *
                      std::pow(static_cast<double>(op->retry_factor.value_or(1)), attempt - 2);
        // Argo's maxDuration: no attempt starts later than this after the first one did.
        if (op->retry_max_duration_seconds &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count() + wait >
                static_cast<double>(*op->retry_max_duration_seconds)) {
          print_line(name, fmt::format("no retry: the next would start after max_duration ({} s)",
                                       *op->retry_max_duration_seconds));
          break;
        }
        print_line(name, fmt::format("waiting {:.0f} s before the next attempt", wait));
        for (auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait);
             std::chrono::steady_clock::now() < until && g_stop.load() == 0;)
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (g_stop.load() != 0) return Outcome::Stopped;
      }
      print_line(name, fmt::format("retry {} of {}", attempt - 1, attempts - 1));
      rec.message.clear();  // the earlier attempt's failure is in the log, not this attempt's record
      proc->done = false;
      proc->pid = -1;
      // A new pod on a cluster: a fresh /tmp, output directories and working directory.
      std::error_code rm;
      fs::remove_all(proc->dir + "/fs", rm);
      fs::remove_all(proc->dir + "/work", rm);
    }
    std::string error;
    for (const auto& [host, path] : input_files) {
      std::error_code copy_error;
      fs::create_directories(fs::path(proc->dir + "/fs" + path).parent_path(), copy_error);
      fs::copy_file(host, proc->dir + "/fs" + path, fs::copy_options::overwrite_existing, copy_error);
      if (copy_error) {
        rec.message = fmt::format("cannot place the file {} at {}: {}", host, path, copy_error.message());
        return Outcome::Failed;
      }
    }
    if (!start(*proc, error)) {
      rec.message = error;
      return Outcome::Failed;
    }
    if (!specs.empty()) {
      scraper = std::make_unique<runtime::MetricScraper>(specs);
      proc->scraper = op->metrics_from.empty() ? scraper.get() : nullptr;
    }
    std::vector<std::unique_ptr<Proc>> procs;
    procs.push_back(std::move(proc));
    outcome = wait_all(procs, phase, op->timeout_seconds.value_or(0), rec.message);
    proc = std::move(procs[0]);
    if (outcome != Outcome::Failed) break;
  }
  if (scraper) {
    if (!op->metrics_from.empty()) {
      // In pieces, as pipec-metrics --from reads it: any size, the same values.
      std::string problem;
      if (input::read_file_in_pieces(proc->dir + "/fs" + op->metrics_from,
                                     [&](std::string_view piece) { scraper->feed(piece); }, problem))
        scraper->finish();
    }
    std::lock_guard lock(mu_);
    std::ofstream(proc->dir + "/mlpipeline-metrics.json") << scraper->metrics_json() << '\n';
    for (std::size_t i = 0; i < specs.size(); ++i)
      if (auto v = scraper->value(i)) {
        if (!rec.metrics.empty()) rec.metrics += ' ';
        rec.metrics += fmt::format("{}={}", specs[i].reported, *v);
      }
  }
  if (outcome != Outcome::Succeeded) return outcome;
  // Outputs: the files the op declares, one trailing newline dropped (as Argo does).
  std::map<std::string, std::string> values;
  fs::create_directories(proc->dir + "/outputs", ec);
  for (const auto& out : op->outputs) {
    std::ifstream in(proc->dir + "/fs" + out.path, std::ios::binary);
    if (!in) {
      rec.message = fmt::format("output '{}' was not written to {}", out.name, out.path);
      // As in a pod, nothing makes an output's directory: the step must.
      std::string parent = fs::path(out.path).parent_path().string();
      if (!fs::is_directory(proc->dir + "/fs" + parent, ec))
        rec.message += fmt::format(" ({} does not exist: a step makes the directories it writes into, as in a pod)",
                                   parent);
      return Outcome::Failed;
    }
    if (out.type.kind == ir::TypeKind::File) {
      // A file stays a file, byte for byte: its value is this copy's path on the host.
      in.close();
      std::string copy = fs::absolute(proc->dir + "/outputs/" + out.name).string();
      fs::copy_file(proc->dir + "/fs" + out.path, copy, fs::copy_options::overwrite_existing, ec);
      if (ec) {
        rec.message = fmt::format("output '{}' could not be kept: {}", out.name, ec.message());
        return Outcome::Failed;
      }
      values[out.name] = copy;
      continue;
    }
    in.close();
    std::string text, problem;
    if (!input::read_file(proc->dir + "/fs" + out.path, input::kMaxStepOutputBytes, text, problem)) {
      rec.message = fmt::format("output '{}' at {} cannot be read: {}", out.name, out.path, problem);
      return Outcome::Failed;
    }
    values[out.name] = trim_one_newline(text);
    std::ofstream(proc->dir + "/outputs/" + out.name, std::ios::binary) << values[out.name];
  }
  std::lock_guard lock(mu_);
  scope.outputs[step.name] = std::move(values);
  return Outcome::Succeeded;
}

// Where an MPI replica finds its hostfile (the mpi-operator's and Trainer's path).
constexpr const char* kHostfilePath = "/etc/mpi/hostfile";

Outcome Runner::run_training(const ir::Step& step, Scope& scope, int phase, Record& rec) {
  // The launcher's own call and rendering (one implementation): the job the operator
  // would get, with this run's values.
  emit::kubeflow::LauncherCall call;
  emit::kubeflow::JobOptions job_options;
  job_options.params = &p_.params;
  Diagnostics diags;
  if (!emit::kubeflow::build_launcher_call(step, job_options, call, diags))
    throw EvalError{"the training job cannot be built"};
  std::map<std::string, std::string> inputs;
  for (const auto& [name, value] : call.inputs) inputs[name] = text(value, scope);
  std::string manifest;
  std::vector<std::string> binds, values, metric_specs;
  long long timeout_s = 0;
  bool tf_master_form = false;
  // Each word with this run's values (the run and pod names are not needed here).
  auto word_at = [&](std::size_t i) {
    const emit::kubeflow::LauncherWord& w = call.args[i];
    switch (w.kind) {
      case emit::kubeflow::LauncherWord::Kind::Input: return inputs[w.text];
      case emit::kubeflow::LauncherWord::Kind::Binding: return w.text + "=" + inputs[w.text];
      default: return w.text;
    }
  };
  for (std::size_t i = 0; i + 1 < call.args.size(); ++i) {
    const std::string& flag = call.args[i].text;
    std::string word = word_at(i + 1);
    if (flag == "--manifest") manifest = word, ++i;
    else if (flag == "--bind") binds.push_back(word), ++i;
    else if (flag == "--value") values.push_back(word), ++i;
    else if (flag == "--metric") metric_specs.push_back(word), ++i;
    else if (flag == "--tf-chief-role") tf_master_form = word == "master", ++i;
    else if (flag == "--metric-value") metric_specs.push_back(inputs[word]), ++i;
    else if (flag == "--metric-list-value") {
      Json list = Json::parse(inputs[word], nullptr, false);
      if (!list.is_array()) throw EvalError{"the metrics value is not a JSON list"};
      for (const auto& m : list) metric_specs.push_back(m.is_string() ? m.get<std::string>() : m.dump());
      ++i;
    } else if (flag == "--running-timeout") {
      if (!word.empty()) {
        auto d = runtime::parse_duration(word);
        if (!d) throw EvalError{"timeout '" + word + "' is not a duration"};
        timeout_s = std::max<long long>(1, std::chrono::duration_cast<std::chrono::seconds>(*d).count());
        if (d->count() == 0) timeout_s = 0;
      }
      ++i;
    }
  }
  runtime::RenderResult rendered = runtime::render_job_from_args(manifest, binds, values);
  if (!rendered.ok) throw EvalError{rendered.error};
  Json job = Json::parse(rendered.job);
  std::vector<runtime::MetricSpec> specs;
  for (const auto& s : metric_specs) {
    std::string error;
    auto spec = runtime::parse_metric_spec(s, error);
    if (!spec) throw EvalError{error};
    specs.push_back(*spec);
  }
  auto scraper = std::make_unique<runtime::MetricScraper>(specs);

  std::string name = step.name + scope.suffix;
  std::string dir = o_.run_dir + "/steps/" + name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ofstream(dir + "/job.json") << job.dump(2) << '\n';
  std::string kind = job["kind"].get<std::string>();
  ReplicaPlan plan;
  try {
    plan = plan_replicas(job, free_port, kHostfilePath, tf_master_form);
  } catch (const std::exception& e) {
    throw EvalError{e.what()};
  }
  if (!plan.hostfile.empty()) std::ofstream(dir + "/hostfile") << plan.hostfile;
  std::vector<std::unique_ptr<Proc>> procs;
  std::string image;
  for (const Replica& r : plan.replicas) {
    const Json& c = replica_container(job, r.type);
    const Json& pod = replica_pod(job, r.type);
    auto p = std::make_unique<Proc>();
    p->label = name + "/" + r.label;
    p->dir = dir;
    p->env = base_env(dir + "/work");
    p->root = dir + "/" + r.label + "/fs";  // each replica's own, as each pod's
    // The hostfile where the mpi-operator mounts it: every replica's sandbox has its own
    // /tmp, so a run dir under /tmp would not be seen.
    if (!plan.hostfile.empty()) p->file_binds.emplace_back(dir + "/hostfile", kHostfilePath);
    if (c.contains("env"))
      for (const auto& e : c["env"]) set_env(p->env, e.value("name", ""), e.value("value", ""));
    for (const auto& [k, v] : r.env) set_env(p->env, k, v);
    for (const char* key : {"command", "args"})
      if (c.contains(key))
        for (const auto& w : c[key]) p->argv.push_back(w.get<std::string>());
    // `data`: each claim's --volume directory at its mount path.
    if (c.contains("volumeMounts"))
      for (const auto& m : c["volumeMounts"]) {
        std::string claim;
        if (pod.contains("volumes"))
          for (const auto& vol : pod["volumes"])
            if (vol.value("name", "") == m.value("name", "") && vol.contains("persistentVolumeClaim"))
              claim = vol["persistentVolumeClaim"].value("claimName", "");
        if (claim.empty()) continue;
        auto it = o_.volumes.find(claim);
        if (it == o_.volumes.end())
          throw EvalError{fmt::format("claim '{}' (mounted at {}) exists only in the cluster; map it to a "
                                      "directory with --volume {}=DIR",
                                      claim, m.value("mountPath", ""), claim)};
        p->volume_binds.emplace_back(it->second, m.value("mountPath", ""));
      }
    p->stop_when_others_end = r.stop_when_others_end;
    if (r.leader) {
      p->scraper = scraper.get();
      image = c.value("image", "");
    }
    procs.push_back(std::move(p));
  }
  {
    Json info = Json::array();
    for (auto& p : procs) info.push_back({{"process", p->label}, {"argv", p->argv}, {"env", p->env}});
    std::ofstream(dir + "/process.json") << info.dump(2) << '\n';
  }
  print_line(name, fmt::format("{} with {} local process{} (image {} not pulled)", kind, procs.size(),
                               procs.size() == 1 ? "" : "es", image));
  for (auto& p : procs) {
    std::string error;
    if (!start(*p, error)) {
      rec.message = error;
      for (auto& q : procs)
        if (q->pid > 0) kill(-q->pid, SIGKILL);
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        return std::all_of(procs.begin(), procs.end(), [](auto& q) { return q->pid <= 0 || q->done; });
      });
      return Outcome::Failed;
    }
  }
  Outcome outcome = wait_all(procs, phase, timeout_s, rec.message);
  {
    std::lock_guard lock(mu_);
    std::string error;
    if (!specs.empty()) {
      std::ofstream(dir + "/mlpipeline-metrics.json") << scraper->metrics_json() << '\n';
      for (std::size_t i = 0; i < specs.size(); ++i)
        if (auto v = scraper->value(i)) {
          if (!rec.metrics.empty()) rec.metrics += ' ';
          rec.metrics += fmt::format("{}={}", specs[i].reported, *v);
        }
    }
  }
  return outcome;
}

Outcome Runner::run_step(const ir::Step& step, Scope& scope, int phase) {
  Record rec;
  rec.name = step.name + scope.suffix;
  rec.kind = step.kind == ir::OpKind::Container ? step.op
             : step.kind == ir::OpKind::MpiJob  ? "mpi_job"
             : step.kind == ir::OpKind::TfJob   ? "tf_job"
                                                : "pytorch_job";
  std::size_t index = new_record(rec);
  try {
    if (step.when && !condition(*step.when, scope)) {
      rec.outcome = Outcome::Skipped;
      rec.message = "condition false";
      finish_record(index, rec);
      print_line(rec.name, "skipped: its condition is false");
      return Outcome::Skipped;
    }
  } catch (const EvalError& e) {
    rec.outcome = Outcome::Failed;
    rec.message = "condition: " + e.message;
    finish_record(index, rec);
    print_line(rec.name, "failed: " + rec.message);
    return Outcome::Failed;
  }
  acquire();
  if (g_stop.load() >= (phase == 0 ? 1 : 2)) {
    release();
    rec.outcome = Outcome::Omitted;
    rec.message = "stopped before it started";
    finish_record(index, rec);
    return Outcome::Omitted;
  }
  {
    std::lock_guard lock(mu_);
    ++running_;
    records_[index].outcome = Outcome::Running;
  }
  auto t0 = Clock::now();
  Outcome o;
  try {
    o = step.kind == ir::OpKind::Container ? run_container(step, scope, phase, rec)
                                           : run_training(step, scope, phase, rec);
  } catch (const EvalError& e) {
    o = Outcome::Failed;
    rec.message = e.message;
  }
  rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rec.outcome = o;
  {
    std::lock_guard lock(mu_);
    --running_;
    ++done_;
  }
  finish_record(index, rec);
  release();
  print_line(rec.name, fmt::format("{} in {:.1f} s{}{}", outcome_name(o), rec.seconds,
                                   rec.message.empty() ? "" : ": ", rec.message));
  return o;
}

Outcome Runner::run_loop(const ir::Loop& loop, Scope& scope, int phase) {
  std::string label = loop.name + scope.suffix;
  ir::Literal items;
  try {
    if (loop.when && !condition(*loop.when, scope)) {
      print_line(label, "skipped: its condition is false");
      return Outcome::Skipped;
    }
    if (loop.items->is_literal()) {
      items = loop.items->literal;
    } else {
      std::string t = text(*loop.items, scope);
      items = ir::Literal::parse(t, nullptr, false);
      if (!items.is_array()) throw EvalError{"the items of '" + loop.var + "' are not a JSON list: " + t};
    }
  } catch (const EvalError& e) {
    print_line(label, "failed: " + e.message);
    Record rec{label, "for", Outcome::Failed, 0, "", e.message};
    new_record(rec);
    return Outcome::Failed;
  }
  // Items run up to -j (and the loop's limit) at a time, each body a DAG of its own.
  const int at_once = loop.limit > 0 ? std::min(loop.limit, o_.jobs) : o_.jobs;
  std::vector<std::unique_ptr<Scope>> scopes;
  std::vector<Outcome> results(items.size(), Outcome::Pending);
  std::mutex m;
  std::condition_variable cv;
  int active = 0;
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto s = std::make_unique<Scope>();
    s->parent = &scope;
    s->suffix = scope.suffix + "." + std::to_string(i);
    s->var = loop.var;
    s->item = items[i];
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return active < at_once; });
      ++active;
    }
    Scope* sp = s.get();
    scopes.push_back(std::move(s));
    threads.emplace_back([&, sp, i] {
      results[i] = run_dag(loop.body, *sp, phase);
      {
        std::lock_guard lock(m);
        --active;
      }
      cv.notify_all();
    });
  }
  for (auto& t : threads) t.join();
  for (Outcome o : results)
    if (o != Outcome::Succeeded && o != Outcome::Skipped) return o == Outcome::Stopped ? o : Outcome::Failed;
  // Fan-in: each output the plan says the loop gives out of its body (a step's, or an
  // inner loop's list) as the list of every iteration's value, for the steps after it.
  auto exports = p_.plan.exports.find(loop.name);
  if (exports == p_.plan.exports.end()) return Outcome::Succeeded;
  std::lock_guard lock(mu_);
  for (const auto& e : exports->second) {
    std::vector<std::string> list;
    for (const auto& s : scopes)
      if (auto step = s->outputs.find(e.step); step != s->outputs.end())
        if (auto value = step->second.find(e.field); value != step->second.end()) list.push_back(value->second);
    if (!list.empty()) scope.outputs[e.step][e.field] = collected_text(list);
  }
  return Outcome::Succeeded;
}

Outcome Runner::run_dag(const std::vector<ir::Node>& nodes, Scope& scope, int phase) {
  auto name_of = [](const ir::Node& n) -> const std::string& {
    if (const auto* s = std::get_if<ir::Step>(&n)) return s->name;
    return std::get<ir::Loop>(n).name;
  };
  auto depends_of = [](const ir::Node& n) -> const std::vector<std::string>& {
    if (const auto* s = std::get_if<ir::Step>(&n)) return s->depends;
    return std::get<ir::Loop>(n).depends;
  };
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < nodes.size(); ++i) index[name_of(nodes[i])] = i;
  std::vector<Outcome> state(nodes.size(), Outcome::Pending);
  std::vector<bool> started(nodes.size(), false);
  auto is_step = [&](std::size_t i) { return std::holds_alternative<ir::Step>(nodes[i]); };
  {
    std::lock_guard l(mu_);
    for (std::size_t i = 0; i < nodes.size(); ++i) waiting_ += is_step(i);
  }
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::thread> threads;
  bool failed = false;
  std::unique_lock lock(m);
  for (;;) {
    bool progress = false, running = false;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (started[i]) {
        if (state[i] == Outcome::Running) running = true;
        continue;
      }
      bool ready = true, blocked = false;
      for (const auto& d : depends_of(nodes[i])) {
        auto it = index.find(d);
        if (it == index.end()) continue;
        Outcome ds = state[it->second];
        if (ds == Outcome::Pending || ds == Outcome::Running) ready = false;
        else if (ds != Outcome::Succeeded && ds != Outcome::Skipped) blocked = true;
      }
      if (!ready) continue;
      started[i] = true;
      progress = true;
      {
        std::lock_guard l(mu_);
        waiting_ -= is_step(i);
      }
      if (blocked || failed || g_stop.load() >= (phase == 0 ? 1 : 2)) {
        state[i] = Outcome::Omitted;
        if (const auto* s = std::get_if<ir::Step>(&nodes[i])) {
          Record rec{s->name + scope.suffix, s->kind == ir::OpKind::Container ? s->op : "training",
                     Outcome::Omitted, 0, "", blocked ? "a step it depends on did not succeed"
                                                      : "the pipeline was stopping"};
          new_record(rec);
        }
        continue;
      }
      state[i] = Outcome::Running;
      running = true;
      threads.emplace_back([&, i] {
        Outcome o;
        if (const auto* s = std::get_if<ir::Step>(&nodes[i])) o = run_step(*s, scope, phase);
        else o = run_loop(std::get<ir::Loop>(nodes[i]), scope, phase);
        {
          std::lock_guard l(m);
          state[i] = o;
          if (o == Outcome::Failed || o == Outcome::Stopped) failed = true;
        }
        cv.notify_all();
      });
    }
    if (progress) continue;
    if (!running) break;
    cv.wait(lock);
  }
  lock.unlock();
  for (auto& t : threads) t.join();
  Outcome result = Outcome::Succeeded;
  for (Outcome o : state) {
    if (o == Outcome::Stopped) return Outcome::Stopped;
    if (o == Outcome::Failed || o == Outcome::Omitted) result = Outcome::Failed;
  }
  if (result == Outcome::Failed && g_stop.load() >= (phase == 0 ? 1 : 2)) return Outcome::Stopped;
  return result;
}

// SIGINT and SIGTERM: the first stops the main DAG (finally still runs), the second stops
// everything.
void signal_thread(std::atomic<bool>& quit) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec tick{0, 200 * 1000 * 1000};
  while (!quit.load()) {
    int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig == SIGINT || sig == SIGTERM) g_stop.fetch_add(1);
  }
}

int Runner::run() {
  std::error_code ec;
  fs::remove_all(o_.run_dir + "/steps", ec);  // a run dir given again holds this run only
  fs::create_directories(o_.run_dir + "/steps", ec);
  if (ec) {
    err_ << fmt::format("pipec: error: cannot create the run dir '{}': {}\n", o_.run_dir, ec.message());
    return kLocalUsage;
  }
  {
    Json params = Json::object();
    for (const auto& [k, v] : o_.params) params[k] = v;
    std::ofstream(o_.run_dir + "/parameters.json") << params.dump(2) << '\n';
  }
  auto t0 = Clock::now();
  Scope main;
  Outcome result = run_dag(p_.dag, main, 0);
  Outcome final_result = Outcome::Succeeded;
  if (!p_.exit_handler.empty()) {
    Scope fin;
    final_result = run_dag(p_.exit_handler, fin, 1);
  }
  double total = std::chrono::duration<double>(Clock::now() - t0).count();
  bool stopped = g_stop.load() > 0;

  std::lock_guard out_lock(out_mu_);
  if (progress_shown_) out_ << "\r\033[K";
  // The table.
  std::size_t w_name = 4, w_kind = 4;
  for (const auto& r : records_) w_name = std::max(w_name, r.name.size()), w_kind = std::max(w_kind, r.kind.size());
  out_ << fmt::format("\n{:<{}}  {:<{}}  {:<9}  {:>8}  {}\n", "STEP", w_name, "KIND", w_kind, "OUTCOME", "TIME", "METRICS / MESSAGE");
  Json summary = Json::array();
  int failures = 0;
  for (const auto& r : records_) {
    std::string tail = r.metrics;
    if (!r.message.empty() && r.outcome != Outcome::Skipped) tail += (tail.empty() ? "" : "  ") + r.message;
    out_ << fmt::format("{:<{}}  {:<{}}  {:<9}  {:>7.1f}s  {}\n", r.name, w_name, r.kind, w_kind,
                        outcome_name(r.outcome), r.seconds, tail);
    if (r.outcome != Outcome::Succeeded && r.outcome != Outcome::Skipped) ++failures;
    summary.push_back({{"step", r.name}, {"kind", r.kind}, {"outcome", outcome_name(r.outcome)},
                       {"seconds", r.seconds}, {"metrics", r.metrics}, {"message", r.message}});
  }
  bool ok = result == Outcome::Succeeded && final_result == Outcome::Succeeded && failures == 0 && !stopped;
  std::string verdict = stopped ? "stopped" : ok ? "succeeded" : "failed";
  out_ << fmt::format("\npipeline {} {} in {:.1f} s; logs, outputs and metrics in {}\n", p_.name, verdict,
                      total, o_.run_dir);
  out_.flush();
  Json doc = {{"pipeline", p_.name}, {"outcome", verdict}, {"seconds", total}, {"steps", summary}};
  std::ofstream(o_.run_dir + "/summary.json") << doc.dump(2) << '\n';
  if (stopped) return kLocalInterrupted;
  return ok ? kLocalOk : kLocalFailed;
}

}  // namespace

long long effective_jobs(const ir::Pipeline& pipeline, int jobs) {
  return pipeline.settings.parallelism ? std::min<long long>(jobs, *pipeline.settings.parallelism) : jobs;
}

bool check_local(const ir::Pipeline& pipeline, const std::map<std::string, std::string>& volumes,
                 Diagnostics& diags) {
  check_nodes(pipeline, pipeline.dag, volumes, diags);
  check_nodes(pipeline, pipeline.exit_handler, volumes, diags);
  // The pipeline's settings that concern a cluster only (parallelism bounds -j).
  for (const char* name : {"timeout", "ttl", "pod_gc", "service_account", "image_pull_secrets"})
    if (auto it = pipeline.settings.ranges.find(name); it != pipeline.settings.ranges.end())
      diags.note(it->second, fmt::format("setting '{}' is not applied by a local run", name));
  return !diags.has_errors();
}

int run_pipeline(const ir::Pipeline& pipeline, const RunOptions& options, std::ostream& out,
                 std::ostream& err) {
  // Signals go to one thread only; children get an empty mask back.
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, &old);
  signal(SIGPIPE, SIG_IGN);
  g_stop = 0;
  std::atomic<bool> quit{false};
  std::thread signals([&] { signal_thread(quit); });
  int code = Runner(pipeline, options, out, err).run();
  quit = true;
  signals.join();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return code;
}

}  // namespace pipec::local
