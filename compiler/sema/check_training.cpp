// The arguments of the training ops (mpi_job, tf_job, pytorch_job, train_job), each literal
// checked at its place by the rule the launcher applies to a run-time value (rules/,
// runtime/job_render.hpp, docs/training-ops.md); a reference to a pipeline parameter is
// checked through its default. The training lowering (compiler/training) reads the same
// arguments and reports nothing: every verdict on them is made here.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/defaults.hpp"
#include "compiler/sema/checker.hpp"
#include "rules/durations.hpp"
#include "rules/kubernetes.hpp"
#include "rules/metrics.hpp"
#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "runtime/trainer_v2.hpp"

namespace pipec::sema::detail {

namespace {

// Every scalar argument the training ops may have (a run-time value included).
constexpr const char* kScalars[] = {
    "image",           "ps_image",         "workers",          "ps",               "chief",
    "evaluator",       "gpus",             "cpu_limit",        "memory_limit",     "ps_cpu_limit",
    "ps_memory_limit", "launcher_cpu",     "launcher_memory",  "slots_per_worker", "nproc_per_node",
    "retries",         "gpu_resource",     "clean_pod_policy", "success_policy",   "timeout",
    "pending_timeout", "tensorboard",      "runtime",          "trainer_runtime",  "chief_role",
    "queue",           "priority_class",   "scheduler",        "min_available",    "gang_queue",
    "shm_size",        "trainer_runtime_kind", "num_nodes",    "num_proc_per_node", "dataset_uri",
    "dataset_secret",  "model_uri",        "model_secret",
};

// A scalar argument: its value when known (a literal, or the default of the parameter or
// parameters it is built from), and whether it comes at run time.
struct Scalar {
  std::optional<ir::Literal> value;
  bool runtime = false;
  std::string text() const { return value ? ir::literal_text(*value) : std::string(); }
  bool is_int() const { return value && value->is_number_integer(); }
};

class TrainingArgs {
 public:
  TrainingArgs(Diagnostics& diags, const OpInfo& op, SourceRange step,
               const std::vector<std::pair<std::string, Value>>& given, const std::vector<ir::Param>& params)
      : diags_(diags), op_(op), step_(step), params_(params) {
    // The arguments with the op's defaults, as the lowering gives them.
    for (const auto& [name, v] : given) args_.emplace_back(name, &v);
    for (const auto& p : op.params) {
      if (!p.default_value || arg(p.name)) continue;
      Value d;
      d.kind = Value::Kind::Literal;
      d.type = p.type;
      d.literal = *p.default_value;
      defaults_.push_back(std::move(d));
    }
    std::size_t i = 0;
    for (const auto& p : op.params)
      if (p.default_value && !arg(p.name)) args_.emplace_back(p.name, &defaults_[i++]);
  }

  void run();

 private:
  const Value* arg(const std::string& name) const {
    for (const auto& [n, v] : args_)
      if (n == name) return v;
    return nullptr;
  }
  SourceRange where(const Value& v) const { return v.range.valid() ? v.range : step_; }
  void error(const Value& v, const std::string& message) {
    diags_.error(where(v), message);
    ok_ = false;
  }
  std::string op_arg(const std::string& name) const { return "'" + name + "' of " + op_.name; }
  bool is(ir::OpKind k) const { return op_.kind == k; }

  std::optional<ir::Literal> ref_default(const ir::Ref& ref) const { return ir::param_default(ref, params_); }
  std::optional<std::string> interpolated_default(const Value& v) const {
    return ir::interpolated_default(v, params_);
  }
  std::optional<Scalar> scalar(const std::string& name, const Value& v) {
    if (v.kind == Value::Kind::Literal) return Scalar{v.literal, false};
    if (const ir::Ref* r = ir::whole_ref(v)) return Scalar{ref_default(*r), true};
    if (v.kind == Value::Kind::Interpolation) {
      auto text = interpolated_default(v);
      return Scalar{text ? std::optional<ir::Literal>(*text) : std::nullopt, true};
    }
    error(v, "argument " + op_arg(name) + " must be a single value");
    return std::nullopt;
  }
  const Scalar* get(const char* name) const {
    auto it = scalars_.find(name);
    return it == scalars_.end() ? nullptr : &it->second;
  }
  // The literal text of a scalar, none for a run-time value.
  std::optional<std::string> literal_of(const char* name) const {
    const Scalar* s = get(name);
    if (!s || s->runtime) return std::nullopt;
    return s->text();
  }
  template <class Add>
  static bool each_entry(const Value& v, Add add) {
    if (v.kind == Value::Kind::Literal && v.literal.is_object()) {
      for (const auto& [k, val] : v.literal.items()) {
        Value lit;
        lit.literal = val;
        lit.range = v.range;
        add(k, lit);
      }
      return true;
    }
    if (v.kind != Value::Kind::Map) return false;
    for (const auto& [k, val] : v.entries) add(k, val);
    return true;
  }

  bool arguments();
  void counts();
  void choices();
  void scheduling();
  void data();
  void workspace();
  void env();
  void command();
  void sync();
  void placement();
  void metadata();
  void metrics();
  void tensorboard();
  void tf_replicas();
  void trainjob_lists();

  Diagnostics& diags_;
  const OpInfo& op_;
  SourceRange step_;
  const std::vector<ir::Param>& params_;
  std::vector<Value> defaults_;
  std::vector<std::pair<std::string, const Value*>> args_;
  std::map<std::string, Scalar, std::less<>> scalars_;
  std::vector<std::string> data_paths_;
  bool data_from_values_ = false;
  bool ok_ = true;
};

bool TrainingArgs::arguments() {
  for (const char* name : kScalars)
    if (const Value* v = arg(name))
      if (auto s = scalar(name, *v)) scalars_[name] = std::move(*s);
  if (!ok_) return false;
  counts();
  choices();
  scheduling();
  for (const char* t : {"timeout", "pending_timeout"})
    if (const Scalar* s = get(t)) {
      std::string d = s->text();
      if (!d.empty() && !rules::parse_duration(d))
        error(*arg(t), "argument " + op_arg(t) + " must be a duration such as '90s', '30m', " +
                           "'4h' or '2d', got '" + d + "'");
    }
  return ok_;
}

// Replica counts and limits: the launcher's maximum and minimums (runtime/job_render.hpp).
void TrainingArgs::counts() {
  for (const char* count : {"workers", "ps", "evaluator"})
    if (const Scalar* s = get(count); s && !s->runtime && s->is_int() &&
                                      !rules::within_max_replicas(s->value->get<long long>()))
      error(*arg(count), "argument " + op_arg(count) + " must be at most " + std::to_string(rules::kMaxReplicas) +
                             " (replicas of one role), got " + std::to_string(s->value->get<long long>()));
  auto check_min = [&](const char* name, long min) {
    const Scalar* s = get(name);
    if (!s || s->runtime || !s->is_int()) return;
    long n = s->value->get<long>();
    if (n < min)
      error(*arg(name), "argument " + op_arg(name) + " must be at least " + std::to_string(min) + ", got " +
                            std::to_string(n));
    else if (n > 2147483647L)
      error(*arg(name), "argument " + op_arg(name) + " is too large: " + std::to_string(n));
  };
  check_min("workers", is(ir::OpKind::TfJob) ? 0 : 1);
  for (const char* name : {"ps", "chief", "evaluator", "gpus"}) check_min(name, 0);
  check_min("slots_per_worker", 1);
  check_min("nproc_per_node", 1);
  check_min("retries", 0);
  check_min("min_available", 0);
  if (const Scalar* s = get("chief"); s && s->is_int() && s->value->get<long>() > 1)
    error(*arg("chief"), "argument " + op_arg("chief") + " must be 0 or 1, got " +
                             std::to_string(s->value->get<long>()));
  for (const char* q : {"cpu_limit", "memory_limit", "ps_cpu_limit", "ps_memory_limit", "launcher_cpu",
                        "launcher_memory"})
    if (auto t = literal_of(q); t && !t->empty() && !rules::is_quantity(*t))
      error(*arg(q), "argument " + op_arg(q) + " must be a Kubernetes quantity such as '2', '500m' " +
                         "or '10Gi', got '" + *t + "'");
  // A TrainJob's image may be "" (the runtime's).
  if (auto t = literal_of("image"); t && t->empty() && !is(ir::OpKind::TrainJob))
    error(*arg("image"), "argument " + op_arg("image") + " must not be empty");
}

// The arguments that name one of a few choices, a resource or a runtime.
void TrainingArgs::choices() {
  if (const Scalar* s = get("clean_pod_policy"); s && !s->text().empty() && !rules::is_clean_pod_policy(s->text()))
    error(*arg("clean_pod_policy"), "argument " + op_arg("clean_pod_policy") +
                                        " must be 'None', 'Running' or 'All', got '" + s->text() + "'");
  if (const Scalar* s = get("success_policy"); s && !rules::is_success_policy(s->text()))
    error(*arg("success_policy"),
          "argument " + op_arg("success_policy") + " must be \"\" or 'AllWorkers', got '" + s->text() + "'");
  if (const Scalar* s = get("gpu_resource"); s && !s->text().empty() && !rules::is_resource_name(s->text()))
    error(*arg("gpu_resource"), "argument " + op_arg("gpu_resource") +
                                    " must be a resource name such as 'amd.com/gpu', got '" + s->text() + "'");
  const char* kind = is(ir::OpKind::MpiJob) ? "MPIJob" : is(ir::OpKind::TfJob) ? "TFJob"
                     : is(ir::OpKind::TrainJob)                               ? "TrainJob"
                                                                              : "PyTorchJob";
  if (auto r = literal_of("runtime"); r && !runtime::is_training_runtime(kind, *r))
    error(*arg("runtime"), "argument " + op_arg("runtime") + " must be " +
                               (is(ir::OpKind::PyTorchJob) || is(ir::OpKind::MpiJob) ? std::string("'operator' or 'trainer-v2'")
                                : is(ir::OpKind::TfJob) ? std::string("'operator' or 'pods'")
                                                        : std::string("'operator'")) +
                               ", got '" + *r + "'");
  if (auto r = literal_of("trainer_runtime"); r && !r->empty() && !rules::is_dns1123_subdomain(*r))
    error(*arg("trainer_runtime"), "argument " + op_arg("trainer_runtime") +
                                       " must be the name of a training runtime "
                                       "(lower-case letters, digits, '-' and '.'), got '" + *r + "'");
  if (auto r = literal_of("trainer_runtime_kind"); r && !runtime::is_trainer_runtime_kind(*r))
    error(*arg("trainer_runtime_kind"), "argument " + op_arg("trainer_runtime_kind") +
                                            " must be 'ClusterTrainingRuntime' or 'TrainingRuntime', got '" + *r + "'");
}

// The scheduling arguments (docs/training-ops.md, "Scheduling").
void TrainingArgs::scheduling() {
  auto refuse = [&](const char* name, const std::string& what) {
    error(*arg(name), "argument " + op_arg(name) + " must be " + what + ", got '" + *literal_of(name) + "'");
  };
  for (const char* name : {"queue", "gang_queue"})
    if (auto t = literal_of(name); t && !t->empty() && !rules::is_label_value(*t))
      refuse(name, "a queue name (at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends)");
  for (const char* name : {"priority_class", "scheduler"})
    if (auto t = literal_of(name); t && !t->empty() && !rules::is_dns1123_subdomain(*t))
      refuse(name, "a Kubernetes name (lower-case letters, digits, '-' and '.')");
  if (auto t = literal_of("shm_size"); t && !t->empty() && !rules::is_quantity(*t))
    refuse("shm_size", "a Kubernetes quantity such as '8Gi'");
  // Trainer v2.3's TrainJob patches no pod's priority class or scheduler: the runtime's
  // pod template and podGroupPolicy say them.
  if (auto r = literal_of("runtime"); r && *r == "trainer-v2")
    for (std::string_view field : rules::kNotInTrainJob) {
      const std::string name(field);
      if (auto t = literal_of(name.c_str()); arg(name) && (!t || (!t->empty() && *t != "0")))
        error(*arg(name), "argument " + op_arg(name) + " cannot be given with runtime 'trainer-v2': " +
                                      std::string(rules::kNotInTrainJobWhy));
    }
}

void TrainingArgs::data() {
  const Value* v = arg("data");
  if (!v) return;
  auto entry = [&](const std::string& text, const Value& at) {
    auto parsed = rules::parse_data_entry(text);  // the launcher's rule for run-time entries
    if (!parsed) {
      error(at, "data entry '" + text + "' of " + op_.name +
                    " must be 'pvc-name:/mount/path' (a DNS-1123 subdomain claim name and an "
                    "absolute path without ':' or '..')");
      return;
    }
    for (const auto& path : data_paths_)
      if (path == parsed->path) {
        error(at, "data entry '" + text + "' of " + op_.name + " mounts '" + parsed->path + "' a second time");
        return;
      }
    data_paths_.push_back(parsed->path);
  };
  if (v->kind == Value::Kind::Literal) {
    for (const auto& item : v->literal)
      if (item.is_string()) entry(item.get<std::string>(), *v);
    return;
  }
  data_from_values_ = true;
  if (const ir::Ref* r = ir::whole_ref(*v)) {
    if (auto def = ref_default(*r); def && def->is_array())
      for (const auto& item : *def)
        if (item.is_string()) entry(item.get<std::string>(), *v);
  } else if (v->kind == Value::Kind::List) {
    for (const auto& item : v->items) {
      if (item.kind == Value::Kind::Literal) {
        if (item.literal.is_string()) entry(item.literal.get<std::string>(), item);
      } else if (const ir::Ref* r = ir::whole_ref(item)) {
        if (auto def = ref_default(*r); def && def->is_string()) entry(def->get<std::string>(), item);
      } else if (item.kind == Value::Kind::Interpolation) {
        if (auto text = interpolated_default(item)) entry(*text, item);
      } else {
        error(item, "a data entry of " + op_.name + " must be a string");
      }
    }
  }
}

// `workspace: "/ws"`: the run's claim as one more data entry.
void TrainingArgs::workspace() {
  const Value* v = arg("workspace");
  if (!v || !v->is_literal() || ir::literal_text(v->literal).empty()) return;
  std::string path = ir::literal_text(v->literal);
  auto parsed = rules::parse_data_entry(std::string(ir::kWorkspaceVolume) + ":" + path);
  if (!parsed || path.find("{{") != std::string::npos) {  // a target's tag beside the claim's
    error(*v, "workspace path '" + path + "' of " + op_.name +
                  " must be an absolute path without ':', '..', '{{' or control characters");
    return;
  }
  for (const auto& p : data_paths_)
    if (p == parsed->path) {
      error(*v, "workspace path '" + path + "' of " + op_.name + " is a data entry's mount path too");
      return;
    }
  data_paths_.push_back(parsed->path);
}

void TrainingArgs::env() {
  const Value* v = arg("env");
  if (!v) return;
  auto add = [&](const std::string& key, const Value& value) {
    if (!rules::is_env_name(key)) {
      error(value, "environment variable name '" + key + "' in " + op_.name + " must match [A-Za-z_][A-Za-z0-9_]*");
      return;
    }
    if (const char* by = rules::env_reserved_by(key, true)) {
      error(value, "environment variable '" + key + "' in " + op_.name + " is reserved (set by " + by + ")");
      return;
    }
    if (value.kind != Value::Kind::Literal) (void)scalar("env_" + key, value);
  };
  if (v->kind == Value::Kind::Literal && v->literal.is_array()) {  // list<string> of K=V
    for (const auto& item : v->literal) {
      std::string kv = item.is_string() ? item.get<std::string>() : "";
      auto eq = kv.find('=');
      if (eq == std::string::npos) {
        error(*v, "environment entry '" + kv + "' of " + op_.name + " must be 'NAME=VALUE'");
        continue;
      }
      Value lit;
      lit.literal = kv.substr(eq + 1);
      lit.range = v->range;
      add(kv.substr(0, eq), lit);
    }
  } else if (v->kind == Value::Kind::Literal && !v->literal.is_object()) {
  } else if (each_entry(*v, add)) {
  } else if (!(ir::whole_ref(*v) && v->type.kind == TypeKind::Map)) {
    error(*v, "argument " + op_arg("env") + " must list its variables ({NAME: value, ...})");
  }
}

void TrainingArgs::command() {
  const Value* v = arg("command");
  if (v && v->kind != Value::Kind::Literal && v->kind != Value::Kind::Ref && v->kind != Value::Kind::Interpolation)
    error(*v, "argument " + op_arg("command") + " must be a string");
}

void TrainingArgs::sync() {
  const Value* v = arg("sync_source");
  if (!v || (v->kind == Value::Kind::Literal && ir::literal_text(v->literal).empty())) return;
  auto s = scalar("sync_source", *v);
  if (!s || s->runtime) return;
  std::string repo = s->text();
  if (repo.find_first_of(" \t\n") != std::string::npos || repo.find('/') == std::string::npos)
    error(*v, "argument " + op_arg("sync_source") + " must be a git repository URL, got '" + repo + "'");
}

// `node_selector` and `tolerations`: the rules a container op's fields follow (one checker).
void TrainingArgs::placement() {
  if (const Value* v = arg("node_selector")) {
    auto add = [&](const std::string& key, const Value& value) {
      if (!label_key_ok(diags_, key, where(value), "node_selector")) {
        ok_ = false;
        return;
      }
      if (value.kind == Value::Kind::Literal) {
        if (!label_value_ok(diags_, ir::literal_text(value.literal), where(value))) ok_ = false;
        return;
      }
      (void)scalar("node_" + key, value);
    };
    if (!each_entry(*v, add) && v->kind != Value::Kind::Literal && !(ir::whole_ref(*v) && v->type.kind == TypeKind::Map))
      error(*v, "argument " + op_arg("node_selector") + " must list its labels ({key: value})");
  }
  if (const Value* v = arg("tolerations")) {
    if (ir::whole_ref(*v)) return;  // a list<string> value: the launcher reads it with the same rule
    if (v->is_literal()) {
      for (const auto& item : v->literal) {
        Value lit;
        lit.literal = item;
        lit.type = Type::scalar(item.is_string() ? TypeKind::String : TypeKind::Int);
        lit.range = where(*v);
        if (!toleration_of(diags_, lit)) ok_ = false;
      }
    } else if (v->kind == Value::Kind::List) {
      for (const auto& item : v->items)
        if (!toleration_of(diags_, item)) ok_ = false;
    } else {
      error(*v, "'tolerations' must be a list of strings such as \"gpu=true:NoSchedule\"");
    }
  }
}

// `labels` and `annotations`: a literal entry is checked here, an entry from a value by
// the launcher (a label by the `label` binding).
void TrainingArgs::metadata() {
  for (const char* field : {"labels", "annotations"}) {
    const Value* v = arg(field);
    if (!v) continue;
    bool label = std::string_view(field) == "labels";
    auto add = [&](const std::string& key, const Value& value) {
      if (!label_key_ok(diags_, key, where(value), field)) {
        ok_ = false;
        return;
      }
      if (value.kind == Value::Kind::Literal) {
        if (label && !label_value_ok(diags_, ir::literal_text(value.literal), where(value))) ok_ = false;
        return;
      }
      (void)scalar(std::string(label ? "label_" : "annotation_") + key, value);
    };
    if (!each_entry(*v, add))
      error(*v, "argument " + op_arg(field) + " must list its entries ({key: value}); each value may be a "
                "run-time value");
  }
}

void TrainingArgs::metrics() {
  const Value* v = arg("metrics");
  if (!v) return;
  rules::MetricSet set;
  std::size_t count = 0;
  auto literal_spec = [&](const std::string& spec, const Value& at) {
    ++count;
    std::string problem;
    auto parsed = rules::parse_metric_spec(spec, problem);
    if (parsed) problem = set.add(*parsed);
    if (!problem.empty()) error(at, problem);
  };
  // A run that keeps a parameter's default would stop at the launcher (exit 2).
  auto warn_default = [&](const std::string& spec, const std::string& param, const Value& at) {
    if (!rules::metric_name_reportable(rules::split_metric_spec(spec).name))
      diags_.warning(where(at), "the default '" + spec + "' of '" + param + "' cannot be reported as a metric: " +
                                    rules::kMetricNameRule + "; a run that keeps it fails");
  };
  if (v->kind == Value::Kind::Literal) {
    for (const auto& item : v->literal)
      if (item.is_string()) literal_spec(item.get<std::string>(), *v);
  } else if (v->kind == Value::Kind::List) {
    for (const auto& item : v->items) {
      if (item.kind == Value::Kind::Literal && item.literal.is_string()) {
        literal_spec(item.literal.get<std::string>(), item);
      } else if (ir::whole_ref(item) || item.kind == Value::Kind::Interpolation) {
        ++count;
        if (const ir::Ref* ref = ir::whole_ref(item))
          if (auto def = ref_default(*ref); def && def->is_string()) warn_default(def->get<std::string>(), ref->name, item);
      } else {
        error(item, "a metric of " + op_.name + " cannot interpolate values into a string; pass a parameter or a "
                                                "literal");
      }
    }
  } else if (const ir::Ref* ref = ir::whole_ref(*v)) {
    if (auto def = ref_default(*ref); def && def->is_array()) {
      count += def->size();
      for (const auto& item : *def)
        if (item.is_string()) warn_default(item.get<std::string>(), ref->name, *v);
    }
  } else {
    error(*v, "argument " + op_arg("metrics") + " must list the metric names or be a list<string> parameter");
  }
  if (std::string problem = rules::MetricSet::count_problem(count); !problem.empty()) error(*v, problem);
}

// A TensorBoard path lies inside a data volume (the launcher checks a run-time one).
void TrainingArgs::tensorboard() {
  const Value* v = arg("tensorboard");
  if (!v || !v->is_literal()) return;
  std::string path = ir::literal_text(v->literal);
  if (path.empty()) return;
  bool inside = data_from_values_;
  for (const auto& p : data_paths_)
    if (rules::is_inside_mount(path, p)) inside = true;
  if (path[0] != '/' || !inside)
    error(*v, "tensorboard path '" + path + "' of " + op_.name + " must lie inside one of the data volumes (" +
                  (data_paths_.empty() ? std::string("none given") : "e.g. " + data_paths_[0]) + ")");
}

// A tf_job runs a chief or a worker at least (a run-time count may be any).
void TrainingArgs::tf_replicas() {
  for (const char* role : {"chief", "ps", "workers", "evaluator"}) {
    const Scalar* s = get(role);
    if (s && (s->runtime || (s->is_int() && s->value->get<long>() > 0))) return;
  }
  const Value* workers = arg("workers");
  diags_.error(workers ? where(*workers) : step_, "tf_job needs a chief or at least one worker");
  ok_ = false;
}

// train_job's word lists and environment maps: each item a single value.
void TrainingArgs::trainjob_lists() {
  for (const char* name : {"command", "args"})
    if (const Value* v = arg(name); v && !v->is_literal())
      for (const Value& item : v->items)
        if (!item.is_literal()) (void)scalar(std::string(name) + "_item", item);
  for (const char* name : {"env", "dataset_env", "model_env"}) {
    const Value* v = arg(name);
    if (!v) continue;
    auto add = [&](const std::string& key, const Value& value) {
      if (!value.is_literal()) (void)scalar(std::string(name) + "_" + key, value);
    };
    if (!each_entry(*v, add) && !(ir::whole_ref(*v) && v->type.kind == TypeKind::Map))
      error(*v, "argument " + op_arg(name) + " must list its variables ({NAME: value, ...})");
  }
}

// In the order the lowering read them: the scalars first, which stop the rest.
void TrainingArgs::run() {
  if (!arguments()) return;
  data();
  if (is(ir::OpKind::TrainJob)) {
    placement();
    metadata();
    metrics();
    if (ok_) trainjob_lists();
    return;
  }
  workspace();
  env();
  command();
  sync();
  placement();
  metadata();
  metrics();
  tensorboard();
  if (ok_ && is(ir::OpKind::TfJob)) tf_replicas();
}

}  // namespace

void Checker::check_training(const OpInfo& op, const std::vector<std::pair<std::string, Value>>& args,
                             SourceRange step) {
  TrainingArgs(diags_, op, step, args, program_.params).run();
}

}  // namespace pipec::sema::detail
