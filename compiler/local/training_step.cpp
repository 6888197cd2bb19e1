// A training step's run: the lowering's launcher call (ir::Plan::launchers) read as data,
// its job rendered with this run's values by the launcher's own renderer, each replica a
// local process.
#include "compiler/local/runner.hpp"

#include "compiler/local/replicas.hpp"

namespace pipec::local::detail {

namespace {

// Where an MPI replica finds its hostfile (the mpi-operator's and Trainer's path).
constexpr const char* kHostfilePath = "/etc/mpi/hostfile";
// The name a local run gives itself where a cluster run's name makes a claim's name.
constexpr const char* kLocalRunName = "pipec-local";

// What the local run takes of a launcher call, with this run's values: the options a
// cluster alone has (the job's runtime, the run and pod names, retries, files) are not here.
struct LocalCall {
  std::string manifest;
  std::vector<std::string> binds, values, metric_specs;
  long long timeout_s = 0;      // --running-timeout; 0: none
  bool tf_master_form = false;  // --tf-chief-role master
};

// The call's options, read by option (rules/launcher_cli.def), each value with this run's
// `inputs` (the values of the call's inputs).
LocalCall read_call(const ir::LauncherCall& call, const std::map<std::string, std::string>& inputs) {
  auto input = [&](const std::string& name) {
    auto it = inputs.find(name);
    return it == inputs.end() ? std::string() : it->second;
  };
  auto text = [&](const ir::LauncherWord& w) -> std::string {
    switch (w.kind) {
      case ir::LauncherWord::Kind::Input: return input(w.text);
      case ir::LauncherWord::Kind::Binding: return rules::value_arg(w.text, input(w.text));
      case ir::LauncherWord::Kind::Workspace:
        return rules::value_arg(ir::kWorkspaceValue, ir::workspace_entry(kLocalRunName, w.text));
      default: return w.text;
    }
  };
  using Option = rules::LauncherOption;
  LocalCall out;
  for (const auto& [option, word] : call.args) {
    switch (option) {
      case Option::Manifest: out.manifest = text(word); break;
      case Option::Bind: out.binds.push_back(text(word)); break;
      case Option::Value: out.values.push_back(text(word)); break;
      case Option::Metric: out.metric_specs.push_back(text(word)); break;
      case Option::MetricValue: out.metric_specs.push_back(input(word.text)); break;
      case Option::MetricListValue: {
        Json list = Json::parse(input(word.text), nullptr, false);
        if (!list.is_array()) throw EvalError{"the metrics value is not a JSON list"};
        for (const auto& m : list) out.metric_specs.push_back(m.is_string() ? m.get<std::string>() : m.dump());
        break;
      }
      case Option::TfChiefRole: out.tf_master_form = text(word) == "master"; break;
      case Option::RunningTimeout:
        if (std::string d_text = text(word); !d_text.empty()) {
          auto d = rules::parse_duration(d_text);
          if (!d) throw EvalError{"timeout '" + d_text + "' is not a duration"};
          out.timeout_s = std::max<long long>(1, std::chrono::duration_cast<std::chrono::seconds>(*d).count());
          if (d->count() == 0) out.timeout_s = 0;
        }
        break;
      default: break;  // what a cluster alone has: the job's runtime, names, files
    }
  }
  return out;
}

}  // namespace

// The process of replica `r` of `job`: its container's command, environment and mounts
// (each claim of `data` at its --volume directory, the run's workspace), in its own root.
std::unique_ptr<Proc> Runner::replica_proc(const Json& job, const Replica& r, const ReplicaPlan& plan,
                                           const std::string& name, const std::string& dir) {
  const Json& c = replica_container(job, r.type);
  const Json& pod = replica_pod(job, r.type);
  auto p = std::make_unique<Proc>();
  p->label = name + "/" + r.label;
  p->log = r.label + ".log";
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
      if (claim == ir::workspace_claim(kLocalRunName)) {  // the run's workspace
        p->volume_binds.emplace_back(workspace_dir(), m.value("mountPath", ""));
        continue;
      }
      auto it = o_.volumes.find(claim);
      if (it == o_.volumes.end())
        throw EvalError{fmt::format("claim '{}' (mounted at {}) exists only in the cluster; map it to a "
                                    "directory with --volume {}=DIR",
                                    claim, m.value("mountPath", ""), claim)};
      p->volume_binds.emplace_back(it->second, m.value("mountPath", ""));
    }
  p->stop_when_others_end = r.stop_when_others_end;
  return p;
}

Outcome Runner::run_training(const ir::Step& step, Scope& scope, int phase, Record& rec) {
  // The lowering's call (`run --local` lowers with the default options: v2beta1 MPIJobs,
  // the operator's runtime) and the launcher's own rendering (one implementation): the job
  // the operator would get, with this run's values.
  const ir::LauncherCall* call = pipeline_of(scope).plan.launcher(step.name);
  if (!call) throw EvalError{"the training job cannot be built"};
  std::map<std::string, std::string> inputs;
  for (const auto& [name, value] : call->inputs) inputs[name] = text(value, scope);
  const LocalCall local = read_call(*call, inputs);
  runtime::RenderResult rendered = runtime::render_job_from_args(local.manifest, local.binds, local.values);
  if (!rendered.ok) throw EvalError{rendered.error};
  Json job = Json::parse(rendered.job);
  std::vector<rules::MetricSpec> specs;
  for (const auto& s : local.metric_specs) {
    std::string error;
    auto spec = rules::parse_metric_spec(s, error);
    if (!spec) throw EvalError{error};
    specs.push_back(*spec);
  }
  auto scraper = std::make_unique<runtime::MetricScraper>(specs);

  std::string name = scope.prefix + step.name + scope.suffix;
  std::string dir = o_.run_dir + "/steps/" + name;
  // Resume and the cache: the earlier result with this key, instead of a run. A claim's
  // contents are not in the key: a step that mounts one always runs.
  StepKey key = training_key(job, local.tf_master_form, local.metric_specs,
                             job.dump().find("\"persistentVolumeClaim\"") != std::string::npos);
  const bool is_forced = forced(step.name, step.depends, scope, name);
  if (std::map<std::string, std::string> none; reuse(name, dir, key, is_forced, none, rec)) return Outcome::Reused;
  if (is_forced) mark_forced(scope, step.name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ofstream(dir + "/job.json") << job.dump(2) << '\n';
  std::string kind = job["kind"].get<std::string>();
  ReplicaPlan plan;
  try {
    plan = plan_replicas(job, free_port, kHostfilePath, local.tf_master_form);
  } catch (const std::exception& e) {
    throw EvalError{e.what()};
  }
  if (!plan.hostfile.empty()) std::ofstream(dir + "/hostfile") << plan.hostfile;
  std::vector<std::unique_ptr<Proc>> procs;
  std::string image;
  for (const Replica& r : plan.replicas) {
    auto p = replica_proc(job, r, plan, name, dir);
    if (r.leader) {
      p->scraper = scraper.get();
      image = replica_container(job, r.type).value("image", "");
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
  Outcome outcome = wait_all(procs, phase, local.timeout_s, rec.message);
  {
    std::lock_guard lock(mu_);
    std::string error;
    if (!specs.empty()) {
      std::ofstream(dir + "/mlpipeline-metrics.json") << scraper->metrics_json() << '\n';
      std::ofstream(dir + "/metric-series.json") << scraper->series_json();
      for (std::size_t i = 0; i < specs.size(); ++i)
        if (auto v = scraper->value(i)) {
          if (!rec.metrics.empty()) rec.metrics += ' ';
          rec.metrics += fmt::format("{}={}", specs[i].reported, *v);
        }
    }
  }
  if (outcome == Outcome::Succeeded) keep(name, dir, key, rec);
  return outcome;
}

}  // namespace pipec::local::detail
