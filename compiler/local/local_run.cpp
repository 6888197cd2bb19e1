// `pipec run --local` (local_run.hpp): the IR executed on this machine. This file: the
// run's values, and scheduling DAGs, loops and steps (runner.hpp names the other parts).
#include "compiler/local/local_run.hpp"

#include "compiler/local/runner.hpp"

#include "compiler/base/atomic_file.hpp"
#include "compiler/base/progress.hpp"
#include "compiler/base/sparkline.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"

namespace pipec::local::detail {

// --- the order of the table ------------------------------------------------------------

namespace {

// A node's place: its scope's, then `more` (its index; a loop's item's).
std::vector<std::size_t> place_in(const Scope& scope, std::initializer_list<std::size_t> more) {
  std::vector<std::size_t> place = scope.place;
  place.insert(place.end(), more);
  return place;
}

}  // namespace

std::vector<const Record*> Runner::ordered_records() const {
  std::vector<const Record*> out;
  out.reserve(records_.size());
  for (const auto& r : records_) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const Record* a, const Record* b) { return a->place < b->place; });
  return out;
}

// --- the metric series in the terminal --------------------------------------------------

// Each step's metric series (steps/STEP/metric-series.json) as sparklines, one line per
// STEP.METRIC after the table; "" when no step has one. A file that cannot be read says so.
std::string Runner::series_section() const {
  std::vector<SeriesLine> lines;
  std::string notes;
  for (const Record* each : ordered_records()) {
    const Record& r = *each;
    std::string path = o_.run_dir + "/steps/" + r.name + "/metric-series.json";
    std::string text, why;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    std::vector<SeriesLine> series;
    if (!input::read_file(path, input::kMaxSeriesFileBytes, text, why) || !read_series(text, series, why)) {
      notes += fmt::format("  {}: {}\n", path, why);
      continue;
    }
    for (auto& line : series) {
      line.name = r.name + "." + line.name;
      lines.push_back(std::move(line));
    }
  }
  if (lines.empty() && notes.empty()) return "";
  return "\nSERIES\n" + series_lines(lines, spark_glyphs(o_.ascii), "") + notes;
}

// --- values ----------------------------------------------------------------------------

std::string Runner::ref_text(const ir::Ref& r, const Scope& s) {
  switch (r.kind) {
    case ir::Ref::Kind::Param: {
      for (const Scope* sc = &s; sc; sc = sc->parent) {
        if (!sc->pipeline) continue;  // a called pipeline's own parameters
        auto it = sc->params.find(r.name);
        if (it == sc->params.end()) throw EvalError{"parameter '" + r.name + "' has no value"};
        return it->second;
      }
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
    case ir::Ref::Kind::Run: {  // in `finally`: how the main DAG ended
      std::lock_guard lock(mu_);
      return r.field == "status" ? run_status_ : run_failures_;
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

// The outputs a pipeline declares, read from the scope its DAG ran in: a called pipeline's
// (they become its call's) and the one run's (the run's outputs). Throws EvalError when one
// is not available.
std::map<std::string, std::string> Runner::outputs_of(const ir::Pipeline& p, const Scope& s) {
  std::map<std::string, std::string> values;
  for (const auto& out : p.outputs) values[out.name] = ref_text(out.ref, s);
  return values;
}

// A step that calls a pipeline: its DAG runs with the arguments as its parameters, in a
// scope of its own, and its outputs become the step's. It takes no job slot itself.
Outcome Runner::run_call(const ir::Step& step, Scope& scope, int phase, std::size_t at) {
  const ir::Pipeline* callee = p_.callee(step.op);
  std::string label = scope.prefix + step.name + scope.suffix;
  Record rec{label, "pipeline " + step.op, Outcome::Running, 0, "", ""};
  rec.place = place_in(scope, {at});
  for (const auto& dep : step.depends) rec.after.push_back(scope.prefix + dep + scope.suffix);
  std::size_t index = new_record(rec);
  Scope inner;
  inner.place = rec.place;
  inner.pipeline = callee;
  inner.prefix = label + "/";
  inner.all_forced = forced(step.name, step.depends, scope, label);
  try {
    if (!callee) throw EvalError{"pipeline '" + step.op + "' is not known"};
    if (step.when && !condition(*step.when, scope)) {
      rec.outcome = Outcome::Skipped;
      rec.message = "condition false";
      finish_record(index, rec);
      print_line(label, "skipped: its condition is false");
      return Outcome::Skipped;
    }
    for (const auto& [name, value] : step.args) inner.params[name] = text(value, scope);
  } catch (const EvalError& e) {
    rec.outcome = Outcome::Failed;
    rec.message = e.message;
    finish_record(index, rec);
    print_line(label, "failed: " + rec.message);
    return Outcome::Failed;
  }
  auto t0 = Clock::now();
  Outcome o = run_dag(callee->dag, inner, phase);
  if (ran_again(inner)) mark_forced(scope, step.name);
  if (o == Outcome::Succeeded) {
    try {
      std::map<std::string, std::string> values = outputs_of(*callee, inner);
      std::lock_guard lock(mu_);
      scope.outputs[step.name] = std::move(values);
    } catch (const EvalError& e) {
      o = Outcome::Failed;
      rec.message = e.message;
    }
  }
  rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rec.outcome = o;
  finish_record(index, rec);
  return o;
}

Outcome Runner::run_step(const ir::Step& step, Scope& scope, int phase, std::uint64_t ticket, std::size_t at) {
  if (step.kind == ir::OpKind::Pipeline) {
    drop_ticket(ticket);  // its steps take their own
    return run_call(step, scope, phase, at);
  }
  Record rec;
  rec.name = scope.prefix + step.name + scope.suffix;
  rec.place = place_in(scope, {at});
  rec.kind = step.kind == ir::OpKind::Container ? step.op
             : step.kind == ir::OpKind::MpiJob  ? "mpi_job"
             : step.kind == ir::OpKind::TfJob   ? "tf_job"
             : step.kind == ir::OpKind::TrainJob ? "train_job"
                                                : "pytorch_job";
  for (const auto& dep : step.depends) rec.after.push_back(scope.prefix + dep + scope.suffix);
  std::size_t index = new_record(rec);
  try {
    if (step.when && !condition(*step.when, scope)) {
      drop_ticket(ticket);
      rec.outcome = Outcome::Skipped;
      rec.message = "condition false";
      finish_record(index, rec);
      print_line(rec.name, "skipped: its condition is false");
      return Outcome::Skipped;
    }
  } catch (const EvalError& e) {
    drop_ticket(ticket);
    rec.outcome = Outcome::Failed;
    rec.message = "condition: " + e.message;
    finish_record(index, rec);
    print_line(rec.name, "failed: " + rec.message);
    return Outcome::Failed;
  }
  acquire(ticket);
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
    records_[index].started = std::chrono::duration<double>(Clock::now() - start_).count();
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
  if (o == Outcome::Reused) {
    print_line(rec.name, "reused: not run, the result with the same key is taken from " + rec.reused_from);
    return Outcome::Succeeded;  // to the steps after it, as one that ran
  }
  print_line(rec.name, fmt::format("{} in {:.1f} s{}{}", outcome_name(o), rec.seconds,
                                   rec.message.empty() ? "" : ": ", rec.message));
  return o;
}

// A loop's outcome from its items': failed when an item failed, unless the loop tolerates it
// (`max_failures`, `min_success`), which prints how many failed and that the loop holds.
Outcome Runner::loop_outcome(const ir::Loop& loop, const std::string& label, const std::vector<Outcome>& results) {
  std::size_t failed = 0;
  for (Outcome o : results) failed += o != Outcome::Succeeded && o != Outcome::Skipped;
  if (failed == 0) return Outcome::Succeeded;
  if (loop.max_failures < 0 && loop.min_success <= 0) return Outcome::Failed;
  const std::size_t total = results.size(), succeeded = total - failed;
  bool holds = loop.max_failures < 0 || failed <= static_cast<std::size_t>(loop.max_failures);
  // At least the share: succeeded / total >= min_success, as Flyte's min_success_ratio.
  if (loop.min_success > 0 && static_cast<double>(succeeded) < loop.min_success * static_cast<double>(total) - 1e-9)
    holds = false;
  print_line(label, fmt::format("{} of {} items failed: {}", failed, total,
                                holds ? "the loop tolerates it" : "more than the loop tolerates"));
  return holds ? Outcome::Succeeded : Outcome::Failed;
}

Outcome Runner::run_loop(const ir::Loop& loop, Scope& scope, int phase, std::size_t at) {
  std::string label = scope.prefix + loop.name + scope.suffix;
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
    rec.place = place_in(scope, {at});
    new_record(rec);
    return Outcome::Failed;
  }
  // Items run up to -j (and the loop's limit) at a time, each body a DAG of its own.
  const int at_once = loop.limit > 0 ? std::min(loop.limit, o_.jobs) : o_.jobs;
  // --from: a loop after a step that ran again runs its body again; one whose body ran a
  // step again counts as run again for the steps after it.
  const bool all_forced = forced(loop.name, loop.depends, scope, label);
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
    s->prefix = scope.prefix;
    s->var = loop.var;
    s->item = items[i];
    s->all_forced = all_forced;
    s->place = place_in(scope, {at, i});
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
  if (std::any_of(scopes.begin(), scopes.end(), [&](const auto& s) { return ran_again(*s); }))
    mark_forced(scope, loop.name);
  for (Outcome o : results)
    if (o == Outcome::Stopped) return o;
  if (Outcome o = loop_outcome(loop, label, results); o != Outcome::Succeeded) return o;
  // Fan-in: each output the plan says the loop gives out of its body (a step's, or an
  // inner loop's list) as the list of every iteration's value, for the steps after it.
  const ir::Plan& plan = pipeline_of(scope).plan;
  auto exports = plan.exports.find(loop.name);
  if (exports == plan.exports.end()) return Outcome::Succeeded;
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
        else if (!runs_after(nodes[i], d, ds, nodes[it->second])) blocked = true;
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
        // An omitted end of a branch that failed fails the DAG: fail-fast stops it now.
        if (p_.settings.fail_fast && dag_failed(nodes, index, state)) failed = true;
        if (const auto* s = std::get_if<ir::Step>(&nodes[i])) {
          Record rec{scope.prefix + s->name + scope.suffix,
                     s->kind == ir::OpKind::Container  ? s->op
                     : s->kind == ir::OpKind::Pipeline ? "pipeline " + s->op
                                                       : "training",
                     Outcome::Omitted, 0, "", blocked ? "a step it runs after did not end as it needs"
                                                      : "the pipeline was stopping"};
          rec.place = place_in(scope, {i});
          new_record(rec);
        }
        continue;
      }
      state[i] = Outcome::Running;
      running = true;
      const std::uint64_t ticket = is_step(i) ? take_ticket() : 0;  // a loop takes none
      threads.emplace_back([&, i, ticket] {
        Outcome o;
        if (const auto* s = std::get_if<ir::Step>(&nodes[i])) o = run_step(*s, scope, phase, ticket, i);
        else o = run_loop(std::get<ir::Loop>(nodes[i]), scope, phase, i);
        {
          std::lock_guard l(m);
          state[i] = o;
          // Fail-fast: once the DAG has failed (a failure that nothing handles), nothing more
          // starts; with `fail_fast false` a failure stops only what runs after it (blocked).
          if (o == Outcome::Stopped ||
              (o == Outcome::Failed && p_.settings.fail_fast && dag_failed(nodes, index, state)))
            failed = true;
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
  Outcome result = dag_failed(nodes, index, state) ? Outcome::Failed : Outcome::Succeeded;
  for (Outcome o : state)
    if (o == Outcome::Stopped) return Outcome::Stopped;
  if (result == Outcome::Failed && g_stop.load() >= (phase == 0 ? 1 : 2)) return Outcome::Stopped;
  return result;
}

// Whether `node` runs after its dependency `dep` (a node of the same DAG) ended `ds`: after a
// success or a skip, or a failure of an `allow_failure` step (Argo's continueOn); with
// `after dep.failed` after a failure; with `after dep.done` after any of these.
bool Runner::runs_after(const ir::Node& node, const std::string& dep, Outcome ds, const ir::Node& dep_node) {
  ir::Upon upon = ir::Upon::Succeeded;
  if (const auto* s = std::get_if<ir::Step>(&node))
    if (auto it = s->upon.find(dep); it != s->upon.end()) upon = it->second;
  switch (upon) {
    case ir::Upon::Failed: return ds == Outcome::Failed;
    case ir::Upon::Done: return ds == Outcome::Succeeded || ds == Outcome::Skipped || ds == Outcome::Failed;
    case ir::Upon::Succeeded: break;
  }
  if (ds == Outcome::Failed)
    if (const auto* d = std::get_if<ir::Step>(&dep_node)) return d->allow_failure;
  return ds == Outcome::Succeeded || ds == Outcome::Skipped;
}

// Whether a DAG has failed, as Argo decides it (its assessDAGPhase): each end of the DAG (a
// node no other runs after) that has ended failed it, unless it is an `allow_failure` step;
// a node that did not run (skipped, not run) takes the outcome of the branch before it,
// failed when any node it runs after failed. So a failure handled by a step that runs
// after it (`after a.failed`, `after a.done`, the next of an `allow_failure` step) does not.
bool Runner::dag_failed(const std::vector<ir::Node>& nodes, const std::map<std::string, std::size_t>& index,
                        const std::vector<Outcome>& state) {
  auto depends_of = [&](std::size_t i) -> const std::vector<std::string>& {
    if (const auto* s = std::get_if<ir::Step>(&nodes[i])) return s->depends;
    return std::get<ir::Loop>(nodes[i]).depends;
  };
  std::vector<bool> has_next(nodes.size(), false);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const auto& d : depends_of(i))
      if (auto it = index.find(d); it != index.end()) has_next[it->second] = true;
  std::vector<int> branch(nodes.size(), -1);  // -1: not known yet; 0: succeeded; 1: failed
  std::function<bool(std::size_t)> failed_branch = [&](std::size_t i) {
    if (branch[i] >= 0) return branch[i] == 1;
    bool f = state[i] == Outcome::Failed || state[i] == Outcome::Stopped;
    if (state[i] == Outcome::Skipped || state[i] == Outcome::Omitted)
      for (const auto& d : depends_of(i))
        if (auto it = index.find(d); it != index.end() && failed_branch(it->second)) f = true;
    branch[i] = f ? 1 : 0;
    return f;
  };
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (has_next[i] || state[i] == Outcome::Pending || state[i] == Outcome::Running) continue;
    const auto* s = std::get_if<ir::Step>(&nodes[i]);
    if (failed_branch(i) && !(s && s->allow_failure)) return true;
  }
  return false;
}

// SIGINT and SIGTERM: the first stops the main DAG (finally still runs), the second stops
// everything. The thread sleeps in poll() on a signalfd and on `quit` (an eventfd the run
// writes as it ends): no timed wake-ups, and the run's end is not delayed. A signal wakes
// the waiters at once (`wake`), which then see g_stop.
void signal_thread(int quit, const std::function<void()>& wake) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sfd = signalfd(-1, &set, SFD_CLOEXEC);
  pollfd fds[2] = {{sfd, POLLIN, 0}, {quit, POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);  // a failed signalfd (-1) is left out by poll
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN)) break;
    signalfd_siginfo info;
    if (read(sfd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      g_stop.fetch_add(1);
      wake();
    }
  }
  if (sfd >= 0) close(sfd);
}

// Keeps the pipeline's outputs in the run dir as steps keep theirs: outputs/NAME holds each
// value (a file output byte for byte). Returns them for summary.json: each value's text, a
// file output's path in outputs/.
Json Runner::record_outputs(const std::map<std::string, std::string>& values) {
  Json recorded = Json::object();
  std::error_code ec;
  fs::create_directories(o_.run_dir + "/outputs", ec);
  for (const auto& out : p_.outputs) {
    const std::string& value = values.at(out.name);
    std::string path = fs::absolute(o_.run_dir + "/outputs/" + out.name).string();
    if (out.type.kind == ir::TypeKind::File) {
      fs::copy_file(value, path, fs::copy_options::overwrite_existing, ec);
      if (ec) throw EvalError{fmt::format("output '{}' could not be kept: {}", out.name, ec.message())};
      recorded[out.name] = path;
      continue;
    }
    std::ofstream(path, std::ios::binary) << value;
    recorded[out.name] = value;
  }
  return recorded;
}

namespace {

// A value as the end of a run shows it: on one line (a control character or a backslash
// written as a C escape: `\n`, `\x1b`, `\\`), at most 120 bytes of it; the whole value
// is in outputs/NAME.
std::string shown_value(const std::string& value) {
  constexpr std::size_t kShown = 120;
  std::string text;
  std::size_t i = 0;
  for (; i < value.size() && text.size() < kShown; ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '\\') text += "\\\\";
    else if (c == '\n') text += "\\n";
    else if (c == '\t') text += "\\t";
    else if (c == '\r') text += "\\r";
    else if (c < 0x20 || c == 0x7f) text += fmt::format("\\x{:02x}", c);
    else text += static_cast<char>(c);
  }
  while (i < value.size() && (static_cast<unsigned char>(value[i]) & 0xC0) == 0x80) text += value[i++];  // whole characters
  if (i < value.size()) text += fmt::format("... ({} bytes)", value.size());
  return text;
}

}  // namespace

int Runner::run() {
  std::error_code ec;
  // A run dir given again holds this run only; one resumed in place keeps its steps until
  // each step is reused or runs again (resume.cpp).
  if (o_.resume_dir.empty() || !fs::equivalent(o_.resume_dir, o_.run_dir, ec))
    fs::remove_all(o_.run_dir + "/steps", ec);
  fs::remove_all(o_.run_dir + "/outputs", ec);
  fs::remove_all(o_.run_dir + "/sandbox-links", ec);
  start_spawner();
  if (!spawner_) {  // the spawner makes the steps' entries itself (spawner_helper.cpp)
    fs::create_directories(o_.run_dir + "/sandbox-links", ec);
    links_ = std::make_unique<LinkStore>(fs::absolute(o_.run_dir + "/sandbox-links", ec).string());
  }
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
  main.place = {0};
  Outcome result = run_dag(p_.dag, main, 0);
  // The pipeline's own outputs, as its main DAG ends (Argo's entry template's outputs).
  Json outputs = Json::object();
  std::string outputs_error;
  if (result == Outcome::Succeeded && !p_.outputs.empty()) {
    try {
      outputs = record_outputs(outputs_of(p_, main));
    } catch (const EvalError& e) {
      outputs_error = e.message;
    }
  }
  Outcome final_result = Outcome::Succeeded;
  if (!p_.exit_handler.empty()) {
    // `run.status` and `run.failures`, as Argo gives an exit handler `{{workflow.status}}`
    // and `{{workflow.failures}}`: Succeeded or Failed, and the failed steps (Argo's keys).
    std::lock_guard lock(mu_);
    run_status_ = result == Outcome::Succeeded && outputs_error.empty() ? "Succeeded" : "Failed";
    Json failures = Json::array();
    for (const Record* r : ordered_records())
      if (r->outcome == Outcome::Failed)
        failures.push_back({{"displayName", r->name}, {"message", r->message}, {"phase", "Failed"},
                            {"templateName", r->kind}});
    run_failures_ = failures.dump();
  }
  if (!p_.exit_handler.empty()) {
    Scope fin;
    fin.place = {1};
    final_result = run_dag(p_.exit_handler, fin, 1);
  }
  double total = std::chrono::duration<double>(Clock::now() - t0).count();
  bool stopped = g_stop.load() > 0;

  std::lock_guard out_lock(out_mu_);
  if (progress_shown_) out_ << kProgressErase;
  // The table.
  std::size_t w_name = 4, w_kind = 4;
  const std::vector<const Record*> ordered = ordered_records();
  for (const auto& r : records_) w_name = std::max(w_name, r.name.size()), w_kind = std::max(w_kind, r.kind.size());
  out_ << fmt::format("\n{:<{}}  {:<{}}  {:<9}  {:>8}  {}\n", "STEP", w_name, "KIND", w_kind, "OUTCOME", "TIME", "METRICS / MESSAGE");
  Json summary = Json::array();
  for (const Record* each : ordered) {
    const Record& r = *each;
    std::string tail = r.metrics;
    if (!r.message.empty() && r.outcome != Outcome::Skipped) tail += (tail.empty() ? "" : "  ") + r.message;
    out_ << fmt::format("{:<{}}  {:<{}}  {:<9}  {:>7.1f}s  {}\n", r.name, w_name, r.kind, w_kind,
                        outcome_name(r.outcome), r.seconds, tail);
    summary.push_back({{"step", r.name}, {"kind", r.kind}, {"outcome", outcome_name(r.outcome)},
                       {"seconds", r.seconds}, {"started", r.started}, {"after", r.after},
                       {"metrics", r.metrics}, {"message", r.message}});
    if (r.outcome == Outcome::Reused) summary.back()["reused_from"] = r.reused_from;
  }
  if (!outputs.empty()) {
    // The pipeline's outputs, one line each (the whole values are in outputs/NAME).
    std::size_t w_out = 6;
    for (const auto& out : p_.outputs) w_out = std::max(w_out, out.name.size());
    out_ << fmt::format("\n{:<{}}  {}\n", "OUTPUT", w_out, "VALUE");
    for (const auto& out : p_.outputs)
      out_ << fmt::format("{:<{}}  {}\n", out.name, w_out, shown_value(outputs[out.name].get<std::string>()));
  }
  out_ << series_section();
  if (!outputs_error.empty()) out_ << fmt::format("\npipeline {}: {}\n", p_.name, outputs_error);
  // The run's status is its DAGs' (dag_failed): a failure that a step handles, or of an
  // `allow_failure` step, leaves it succeeded.
  bool ok = result == Outcome::Succeeded && final_result == Outcome::Succeeded && !stopped && outputs_error.empty();
  std::string verdict = stopped ? "stopped" : ok ? "succeeded" : "failed";
  out_ << fmt::format("\npipeline {} {} in {:.1f} s; logs, outputs and metrics in {}\n", p_.name, verdict,
                      total, o_.run_dir);
  out_.flush();
  Json doc = {{"pipeline", p_.name}, {"outcome", verdict}, {"seconds", total}, {"steps", summary}};
  if (!outputs.empty()) doc["outputs"] = outputs;
  if (Status written = write_file_atomically(o_.run_dir + "/summary.json", doc.dump(2) + "\n"); !written)
    err_ << fmt::format("pipec: error: summary.json: {}\n", written.message());
  if (stopped) return kLocalInterrupted;
  return ok ? kLocalOk : kLocalFailed;
}

}  // namespace pipec::local::detail

namespace pipec::local {

namespace {

bool has_step_in(const ir::Pipeline& root, const std::vector<ir::Node>& nodes, const std::string& name,
                 int depth) {
  for (const auto& n : nodes) {
    if (const auto* loop = std::get_if<ir::Loop>(&n)) {
      if (has_step_in(root, loop->body, name, depth)) return true;
      continue;
    }
    const auto& step = std::get<ir::Step>(n);
    if (step.name == name) return true;
    if (step.kind != ir::OpKind::Pipeline || depth > 64) continue;  // calls do not recurse (sema)
    if (const ir::Pipeline* callee = root.callee(step.op); callee && has_step_in(root, callee->dag, name, depth + 1))
      return true;
  }
  return false;
}

}  // namespace

bool has_step(const ir::Pipeline& pipeline, const std::string& name) {
  return has_step_in(pipeline, pipeline.dag, name, 0) || has_step_in(pipeline, pipeline.exit_handler, name, 0);
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
  // The steps' PID-namespace inits, orphaned when bwrap returns, become the run's children
  // to reap (process.cpp): their CPU time is then the run's.
  int subreaper = 0;
  prctl(PR_GET_CHILD_SUBREAPER, &subreaper);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  detail::g_stop = 0;
  int quit = eventfd(0, EFD_CLOEXEC);
  detail::Runner runner(pipeline, options, out, err);
  std::thread signals([&] { detail::signal_thread(quit, [&] { runner.wake(); }); });
  int code = runner.run();
  std::uint64_t one = 1;
  if (write(quit, &one, sizeof one) < 0) {
  }
  signals.join();
  close(quit);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  prctl(PR_SET_CHILD_SUBREAPER, subreaper);
  return code;
}

}  // namespace pipec::local
