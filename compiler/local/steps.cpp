// A step's run: a container op's process, or a training job's replicas, with this run's
// values; its outputs and metrics read back.
#include "compiler/local/runner.hpp"

#include "compiler/shell/shell_script.hpp"
#include "compiler/base/atomic_file.hpp"
#include "runtime/visual_outputs.hpp"

namespace pipec::local::detail {

// --- steps -----------------------------------------------------------------------------

namespace {

// A container step's outputs: the files the op declares, one trailing newline dropped (as
// Argo does), kept in dir/outputs/NAME (a file byte for byte, its value that copy's path).
// False with the reason in `message` when one is missing or cannot be read.
bool read_outputs(const ir::ContainerOp& op, const std::string& dir, std::map<std::string, std::string>& values,
                  std::string& message) {
  std::error_code ec;
  fs::create_directories(dir + "/outputs", ec);
  for (const auto& out : op.outputs) {
    std::ifstream in(dir + "/fs" + out.path, std::ios::binary);
    if (!in) {
      message = fmt::format("output '{}' was not written to {}", out.name, out.path);
      // As in a pod, nothing makes an output's directory: the step must.
      std::string parent = fs::path(out.path).parent_path().string();
      if (!fs::is_directory(dir + "/fs" + parent, ec))
        message += fmt::format(" ({} does not exist: a step makes the directories it writes into, as in a pod)",
                               parent);
      return false;
    }
    if (out.type.kind == ir::TypeKind::File) {
      // A file stays a file, byte for byte: its value is this copy's path on the host.
      in.close();
      std::string copy = fs::absolute(dir + "/outputs/" + out.name).string();
      fs::copy_file(dir + "/fs" + out.path, copy, fs::copy_options::overwrite_existing, ec);
      if (ec) {
        message = fmt::format("output '{}' could not be kept: {}", out.name, ec.message());
        return false;
      }
      values[out.name] = copy;
      continue;
    }
    in.close();
    std::string text, problem;
    if (!input::read_file(dir + "/fs" + out.path, input::kMaxStepOutputBytes, text, problem)) {
      message = fmt::format("output '{}' at {} cannot be read: {}", out.name, out.path, problem);
      return false;
    }
    values[out.name] = trim_one_newline(text);
    std::ofstream(dir + "/outputs/" + out.name, std::ios::binary) << values[out.name];
  }
  return true;
}

}  // namespace

// A step's visual outputs as KFP v1's UI shows them (pipec-metrics's rule and format,
// runtime/visual_outputs): mlpipeline-ui-metadata.json in the step's directory, from the
// copies kept in dir/outputs, which `pipec report` reads.
void Runner::write_ui_metadata(const ir::ContainerOp& op, const std::string& label, const std::string& dir) {
  std::vector<runtime::VisualFile> files;
  for (const auto& out : op.outputs)
    if (out.type.visual != rules::visuals::Kind::None) files.push_back({out.type.visual, out.name, dir + "/outputs/" + out.name});
  std::vector<std::string> warnings;
  std::string text = runtime::ui_metadata(files, warnings).dump() + "\n";
  for (const auto& w : warnings) print_line(label, "warning: " + w);
  if (Status written = write_file_atomically(dir + "/mlpipeline-ui-metadata.json", text); !written)
    print_line(label, "warning: mlpipeline-ui-metadata.json: " + written.message());
}

// The run's workspace (settings { workspace ... }): RUN_DIR/workspace, shared by every step
// that mounts it, made when the first one does.
std::string Runner::workspace_dir() {
  std::string dir = o_.run_dir + "/workspace";
  std::error_code made;
  fs::create_directories(dir, made);
  return dir;
}

// The process of a container step: what its container receives (ir::Invocation) with this
// run's values `args`, and the directories it may write in (its outputs, the files placed
// for it, metrics_from).
std::unique_ptr<Proc> Runner::container_proc(const ir::ContainerOp& op, const std::string& name,
                                             const std::map<std::string, std::string>& args,
                                             const std::vector<std::pair<std::string, std::string>>& input_files) {
  auto proc = std::make_unique<Proc>();
  proc->label = name;
  proc->dir = o_.run_dir + "/steps/" + name;
  proc->working_dir = op.working_dir;
  proc->env = base_env(op.working_dir.empty() ? proc->dir + "/work" : op.working_dir);
  const ir::Invocation& call = p_.plan.container(op.name);
  auto word = [&](const ir::Word& w) { return word_text(w, args); };
  if (call.shell) {
    proc->argv = {"sh", "-c", call.script, call.name};
  } else {
    for (const auto& w : call.command) proc->argv.push_back(word(w));
  }
  for (const auto& w : call.args) proc->argv.push_back(word(w));
  for (const auto& [k, v] : call.env) set_env(proc->env, k, word(v));
  for (const auto& value : call.script_values) {
    auto it = args.find(value.name);
    set_env(proc->env, shell::script_variable(value.name), it != args.end() ? it->second : "");
  }
  // A Python op runs on this host's Python, into which a local run installs nothing: its
  // wrapper checks `packages` and names a missing one (docs/local.md).
  if (op.python && !proc->argv.empty()) {
    proc->argv[0] = "/usr/bin/python3";
    set_env(proc->env, "PIPEC_PYTHON_INSTALL", "0");
  }
  std::vector<std::string> written;  // files the step writes for pipec: outputs, metrics
  for (const auto& out : call.outputs) written.push_back(out.path);
  for (const auto& [host, path] : input_files) {
    written.push_back(path);
    proc->own_files.push_back(path);
  }
  if (!op.metrics_from.empty()) written.push_back(op.metrics_from);
  for (const auto& path : written) {
    std::string d = fs::path(path).parent_path().string();
    if (std::find(proc->writable_dirs.begin(), proc->writable_dirs.end(), d) == proc->writable_dirs.end())
      proc->writable_dirs.push_back(d);
  }
  std::sort(proc->writable_dirs.begin(), proc->writable_dirs.end());
  return proc;
}

// `volumes`: a claim mapped with --volume is bound at its mount path (shared between
// steps, as on a cluster); an emptyDir is a directory of the step's own.
void Runner::bind_volumes(const ir::ContainerOp& op, Proc& proc) {
  for (std::size_t i = 0; i < op.volumes.size(); ++i) {
    const auto& v = op.volumes[i];
    // A claim's sub_path is that directory of the mapped one (made if missing, as the
    // kubelet makes it); an ephemeral claim is the step's own directory, as an emptyDir.
    using Kind = ir::ContainerOp::Volume::Kind;
    if (v.kind == Kind::Pvc)
      if (auto it = o_.volumes.find(v.name); it != o_.volumes.end()) {
        std::string host = v.sub_path.empty() ? it->second : it->second + "/" + v.sub_path;
        std::error_code made;
        if (!v.sub_path.empty()) fs::create_directories(host, made);
        proc.volume_binds.emplace_back(host, v.path);
      }
    if (v.kind == Kind::Workspace) proc.volume_binds.emplace_back(workspace_dir(), v.path);
    if (v.kind == Kind::Empty || v.kind == Kind::Ephemeral) {
      std::string dir = proc.dir + "/empty-" + std::to_string(i);
      std::error_code made;
      fs::create_directories(dir, made);
      proc.volume_binds.emplace_back(dir, v.path);
    }
    if (v.read_only) proc.read_only_mounts.push_back(v.path);
  }
}

// The attempts of a container step: the first, then the plan's `retries` (ir::Pod::Retry)
// with Argo's backoff and the retry rule. `whole` is false when an attempt could not
// start (or a signal came): the step ends there, its metrics unread.
Outcome Runner::run_attempts(const ir::Pod& pod, Attempt& a, int phase, Record& rec, bool& whole) {
  whole = false;
  const ir::Pod::Retry* retry = pod.retry ? &*pod.retry : nullptr;
  const std::string& name = a.proc->label;
  int attempts = 1 + static_cast<int>(retry ? retry->limit : 0);
  Outcome outcome = Outcome::Failed;
  const auto first_start = std::chrono::steady_clock::now();
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    if (attempt > 1) {
      // Argo's backoff: the first wait, then each the last times the factor, at most max.
      if (retry->backoff_seconds) {
        double wait = static_cast<double>(*retry->backoff_seconds) *
                      std::pow(static_cast<double>(retry->factor.value_or(1)), attempt - 2);
        // Argo's maxDuration: no attempt starts later than this after the first one did.
        if (retry->max_duration_seconds &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count() + wait >
                static_cast<double>(*retry->max_duration_seconds)) {
          print_line(name, fmt::format("no retry: the next would start after max_duration ({} s)",
                                       *retry->max_duration_seconds));
          break;
        }
        print_line(name, fmt::format("waiting {:.0f} s before the next attempt", wait));
        {  // the backoff: ends early when a signal comes (wake)
          auto until = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(wait));
          std::unique_lock lock(mu_);
          cv_.wait_until(lock, until, [] { return g_stop.load() != 0; });
        }
        if (g_stop.load() != 0) return Outcome::Stopped;
      }
      // Memory that grows per attempt: no limit is set locally; the line says what a pod gets.
      print_line(name, static_cast<std::size_t>(attempt - 1) < retry->memory.size()
                           ? fmt::format("retry {} of {} (memory {})", attempt - 1, attempts - 1,
                                         retry->memory[static_cast<std::size_t>(attempt - 1)])
                           : fmt::format("retry {} of {}", attempt - 1, attempts - 1));
      rec.message.clear();  // the earlier attempt's failure is in the log, not this attempt's record
      a.proc->done = false;
      a.proc->pid = -1;
      // A new pod on a cluster: a fresh /tmp, output directories and working directory.
      std::error_code rm;
      fs::remove_all(a.proc->dir + "/fs", rm);
      fs::remove_all(a.proc->dir + "/work", rm);
    }
    std::string error;
    for (const auto& [host, path] : a.input_files) {
      std::error_code copy_error;
      fs::create_directories(fs::path(a.proc->dir + "/fs" + path).parent_path(), copy_error);
      fs::copy_file(host, a.proc->dir + "/fs" + path, fs::copy_options::overwrite_existing, copy_error);
      if (copy_error) {
        rec.message = fmt::format("cannot place the file {} at {}: {}", host, path, copy_error.message());
        return Outcome::Failed;
      }
    }
    // The scraper is in place before the process starts: the log's reader feeds it from
    // the first byte, and a command that prints its metric and ends at once loses nothing.
    if (!a.specs.empty()) {
      a.scraper = std::make_unique<runtime::MetricScraper>(a.specs);
      a.proc->scraper = a.from_file ? nullptr : a.scraper.get();
    }
    if (!start(*a.proc, error)) {
      rec.message = error;
      return Outcome::Failed;
    }
    std::vector<std::unique_ptr<Proc>> procs;
    procs.push_back(std::move(a.proc));
    outcome = wait_all(procs, phase, a.timeout_s, rec.message);
    a.proc = std::move(procs[0]);
    if (outcome != Outcome::Failed) break;
    // `retries {on: [...]}`: only a failure the rule accepts is run again (rules/retry.hpp).
    if (attempt < attempts && !rules::should_retry(retry->on, failure_of(a.proc->status, rec.message))) {
      std::string reasons;
      for (const auto& on : retry->on) reasons += (reasons.empty() ? "" : ", ") + rules::retry_on_text(on);
      print_line(name, fmt::format("no retry: the failure is none of the retry reasons ({})", reasons));
      break;
    }
  }
  whole = true;
  return outcome;
}

Outcome Runner::run_container(const ir::Step& step, Scope& scope, int phase, Record& rec) {
  const ir::ContainerOp* op = nullptr;
  for (const auto& o : p_.ops)
    if (o.name == step.op) op = &o;
  if (!op) throw EvalError{"op '" + step.op + "' is not known"};
  std::map<std::string, std::string> args;
  for (const auto& [name, value] : step.args) args[name] = text(value, scope);
  // A file argument is the producer's copy on this host; the step sees it at the
  // parameter's path (copied in before each attempt, as a pod gets its artifacts).
  Attempt a;
  for (const auto& param : op->params)
    if (param.type.kind == ir::TypeKind::File && args.count(param.name)) {
      a.input_files.emplace_back(args[param.name], param.path);
      args[param.name] = param.path;
    }

  std::string name = scope.prefix + step.name + scope.suffix;
  // What the container receives (ir::Invocation) and its pod is given (ir::Pod), with this
  // run's values.
  a.proc = container_proc(*op, name, args, a.input_files);
  const ir::Invocation& call = p_.plan.container(op->name);
  const ir::Pod& pod = p_.plan.pod(op->name);
  auto word = [&](const ir::Word& w) { return word_text(w, args); };
  // Resume and the cache: the earlier result with this key, instead of a run.
  StepKey key = container_key(*op, pod.cache, word(call.image), *a.proc, args, a.input_files);
  const bool is_forced = forced(step.name, step.depends, scope, name);
  if (std::map<std::string, std::string> earlier; reuse(name, a.proc->dir, key, is_forced, earlier, rec)) {
    std::lock_guard lock(mu_);
    scope.outputs[step.name] = std::move(earlier);
    return Outcome::Reused;
  }
  if (is_forced) mark_forced(scope, step.name);
  bind_volumes(*op, *a.proc);

  std::error_code ec;
  fs::create_directories(a.proc->dir, ec);
  {
    Json info = {{"step", name}, {"op", op->name}, {"image", word(call.image)},
                 {"argv", a.proc->argv}, {"env", a.proc->env}};
    std::ofstream(a.proc->dir + "/process.json") << info.dump(2) << '\n';
  }
  print_line(name, fmt::format("image {} (not pulled: runs on this host; the image is assumed to have the "
                               "host's programs and top-level directories)",
                               word(call.image)));
  // A program only the image has: say so instead of bwrap's execvp error.
  if (!a.proc->argv.empty() && a.proc->argv[0].find('/') == std::string::npos) {
    bool found = false;
    for (const char* d : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"})
      found = found || access((std::string(d) + "/" + a.proc->argv[0]).c_str(), X_OK) == 0;
    if (!found) {
      rec.message = fmt::format("'{}' is not installed on this host (it would come from the image {}, "
                                "which a local run does not pull)",
                                a.proc->argv[0], word(call.image));
      return Outcome::Failed;
    }
  }
  // Metrics, as pipec-metrics collects them on a cluster (the launcher's scraper): from
  // the step's log (each attempt anew), or from the op's `metrics_from` file.
  for (const auto& m : call.metrics) {
    std::string why;
    auto spec = rules::parse_metric_spec(word(m), why);
    if (!spec) throw EvalError{why};
    a.specs.push_back(std::move(*spec));
  }
  if (std::string why; !rules::check_metric_specs(a.specs, why)) throw EvalError{why};
  a.from_file = !op->metrics_from.empty();
  a.timeout_s = op->timeout_seconds.value_or(0);
  bool whole = false;
  Outcome outcome = run_attempts(pod, a, phase, rec, whole);
  if (!whole) return outcome;
  Proc& proc = *a.proc;
  if (a.scraper) {
    if (!op->metrics_from.empty()) {
      // In pieces, as pipec-metrics --from reads it: any size, the same values.
      std::string problem;
      if (input::read_file_in_pieces(proc.dir + "/fs" + op->metrics_from,
                                     [&](std::string_view piece) { a.scraper->feed(piece); }, problem))
        a.scraper->finish();
    }
    std::lock_guard lock(mu_);
    std::ofstream(proc.dir + "/mlpipeline-metrics.json") << a.scraper->metrics_json() << '\n';
    std::ofstream(proc.dir + "/metric-series.json") << a.scraper->series_json();
    for (std::size_t i = 0; i < a.specs.size(); ++i)
      if (auto v = a.scraper->value(i)) {
        if (!rec.metrics.empty()) rec.metrics += ' ';
        rec.metrics += fmt::format("{}={}", a.specs[i].reported, *v);
      }
  }
  if (outcome != Outcome::Succeeded) return outcome;
  std::map<std::string, std::string> values;
  if (!read_outputs(*op, proc.dir, values, rec.message)) return Outcome::Failed;
  if (op->has_visual_outputs()) write_ui_metadata(*op, name, proc.dir);
  keep(name, proc.dir, key, rec);
  std::lock_guard lock(mu_);
  scope.outputs[step.name] = std::move(values);
  return Outcome::Succeeded;
}

}  // namespace pipec::local::detail
