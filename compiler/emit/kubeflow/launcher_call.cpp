// Lowering of the training ops (mpi_job, tf_job, pytorch_job) into a pipec-launcher call:
// a job manifest for the default values, bindings for every value known only at run
// time, and the launcher's other arguments (docs/runtime.md, docs/training-ops.md).
#include "compiler/emit/kubeflow/launcher_call.hpp"
#include "compiler/emit/shell/shell_script.hpp"
#include "runtime/job_render.hpp"
#include "rules/names.hpp"
#include "runtime/metrics.hpp"
#include "runtime/trainer_v2.hpp"

#include <algorithm>
#include <cassert>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pipec::emit::kubeflow {
namespace {

using Json = nlohmann::ordered_json;

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

constexpr std::size_t kMaxMetrics = 50;

// Whether the launcher can find and report a metric of this log name (docs/runtime.md,
// "Metrics"): it needs a letter, and none of the characters that end a name in a log line
// (runtime/metrics.cpp, kBoundary), since a name holding one could never be found.
constexpr const char* kMetricNameRule =
    "a name needs a letter and none of tab, = : , ; ( [ { \" ' |, which end a name in the "
    "log, and spaces only between words (expected NAME[:RAW|PERCENTAGE][:last|max|min])";

// Quantities and durations: the launcher's own rules (runtime/job_render.hpp).
bool is_quantity(const std::string& s) { return runtime::is_quantity(s); }


bool is_duration(const std::string& s) { return runtime::parse_duration(s).has_value(); }

/// The role of one replica type in the job.
struct Role {
  std::string type;        // replica type: Launcher, Worker, PS, Chief, Evaluator, Master
  const char* image_arg;   // argument holding its image
  bool runs_script;        // the container runs the user's command
  bool gpus;               // gets the `gpus` limit
  const char* cpu_arg;     // argument holding its CPU limit, or nullptr
  const char* memory_arg;  // argument holding its memory limit, or nullptr
  const char* count_arg;   // argument holding the replica count, or nullptr for 1
};

class Builder {
 public:
  Builder(const ir::Step& step, const JobOptions& options, LauncherCall& call,
          Diagnostics& diags)
      : step_(step), options_(options), call_(call), diags_(diags) {}

  bool run();

 private:
  // --- arguments -------------------------------------------------------------------
  const ir::Value* arg(const std::string& name) const {
    for (const auto& [n, v] : step_.args)
      if (n == name) return &v;
    return nullptr;
  }
  SourceRange where(const ir::Value& v) const { return v.range.valid() ? v.range : step_.range; }
  void error(const ir::Value& v, std::string message) {
    diags_.error(where(v), std::move(message));
    ok_ = false;
  }
  std::string op_arg(const std::string& name) const { return "'" + name + "' of " + step_.op; }

  /// The default a reference has in the manifest: the parameter's default, else nullopt.
  std::optional<ir::Literal> ref_default(const ir::Ref& ref) const {
    if (ref.kind != ir::Ref::Kind::Param || !options_.params || !ref.field.empty())
      return std::nullopt;
    for (const auto& p : *options_.params)
      if (p.name == ref.name) return p.default_value;
    return std::nullopt;
  }

  const ir::Param* param_of(const ir::Ref& ref) const {
    if (ref.kind != ir::Ref::Kind::Param || !options_.params) return nullptr;
    for (const auto& p : *options_.params)
      if (p.name == ref.name) return &p;
    return nullptr;
  }

  /// A template input carrying `value`; the same reference gets the same input.
  std::string input_for(const std::string& base, const ir::Value& value) {
    std::string key;
    if (const ir::Ref* r = ir::whole_ref(value))
      key = std::to_string(static_cast<int>(r->kind)) + "/" + r->name + "/" + r->field;
    if (!key.empty()) {
      auto it = input_by_ref_.find(key);
      if (it != input_by_ref_.end()) return it->second;
    }
    std::string name;
    for (char c : base) name.push_back(is_alnum(c) || c == '-' || c == '_' ? c : '_');
    if (used_inputs_.count(name)) {
      int n = 2;
      while (used_inputs_.count(name + "_" + std::to_string(n))) ++n;
      name += "_" + std::to_string(n);
    }
    used_inputs_.insert(name);
    if (!key.empty()) input_by_ref_[key] = name;
    if (const ir::Ref* r = ir::whole_ref(value); r && value.kind != ir::Value::Kind::Ref) {
      ir::Value plain;
      plain.kind = ir::Value::Kind::Ref;
      plain.type = r->type;
      plain.ref = *r;
      plain.range = value.range;
      call_.inputs.emplace_back(name, plain);
    } else {
      call_.inputs.emplace_back(name, value);
    }
    return name;
  }

  void bind(const std::string& pointer, const std::string& name, const char* kind) {
    binds_.push_back(pointer + "=" + name + ":" + kind);
  }

  /// A scalar argument: its manifest value, and the input that replaces it at run time.
  struct Scalar {
    ir::Literal value;
    std::string input;  // empty: a literal
  };

  /// Resolves a scalar argument; `placeholder` is its manifest value when a reference has
  /// no known default. Interpolating into it is an error (only `command` interpolates).
  std::optional<Scalar> scalar(const std::string& name, const ir::Value& v,
                               ir::Literal placeholder) {
    if (v.kind == ir::Value::Kind::Literal) return Scalar{v.literal, {}};
    if (const ir::Ref* r = ir::whole_ref(v)) {
      auto def = ref_default(*r);
      Scalar s{def ? *def : placeholder, input_for(name, v)};
      return s;
    }
    if (v.kind == ir::Value::Kind::Interpolation) {
      // A string built from values: the Argo task passes the whole string as one input.
      auto text = interpolated_default(v);
      return Scalar{text ? ir::Literal(*text) : placeholder, input_for(name, v)};
    }
    error(v, "argument " + op_arg(name) + " must be a single value");
    return std::nullopt;
  }

  /// The text of an interpolation for the parameters' defaults, if all are known.
  std::optional<std::string> interpolated_default(const ir::Value& v) const {
    std::string text;
    for (const auto& part : v.parts) {
      if (!part.ref) {
        text += part.text;
        continue;
      }
      auto def = ref_default(*part.ref);
      if (!def) return std::nullopt;
      text += ir::literal_text(*def);
    }
    return text;
  }


  // --- checks of literal values --------------------------------------------------------
  bool check_int(const std::string& name, const ir::Value& v, const Scalar& s, long min) {
    if (!s.input.empty() || !s.value.is_number_integer()) return true;
    long n = s.value.get<long>();
    if (n < min) {
      error(v, "argument " + op_arg(name) + " must be at least " + std::to_string(min) +
                   ", got " + std::to_string(n));
      return false;
    }
    if (n > 2147483647L) {
      error(v, "argument " + op_arg(name) + " is too large: " + std::to_string(n));
      return false;
    }
    return true;
  }

  bool check_quantity(const std::string& name, const ir::Value& v, const Scalar& s) {
    if (!s.input.empty()) return true;
    std::string text = ir::literal_text(s.value);
    if (text.empty() || is_quantity(text)) return true;
    error(v, "argument " + op_arg(name) + " must be a Kubernetes quantity such as '2', '500m' " +
                 "or '10Gi', got '" + text + "'");
    return false;
  }

  // --- pieces of the job ---------------------------------------------------------------
  bool read_arguments();
  bool read_data();
  bool read_env();
  bool read_metrics();
  bool read_command();
  bool read_sync();
  bool read_node_placement();
  Json container(const Role& role, const std::string& base);
  Json replica(const Role& role, const std::string& base);
  std::string replica_spec_key() const;
  const char* job_kind() const {
    return step_.kind == ir::OpKind::MpiJob ? "MPIJob"
           : step_.kind == ir::OpKind::TfJob ? "TFJob"
                                             : "PyTorchJob";
  }

  const ir::Step& step_;
  const JobOptions& options_;
  LauncherCall& call_;
  Diagnostics& diags_;
  bool ok_ = true;

  std::vector<std::string> binds_;
  std::set<std::string> used_inputs_;
  std::map<std::string, std::string> input_by_ref_;

  // Read arguments.
  std::map<std::string, Scalar> scalars_;  // the scalar arguments by name
  struct DataEntry {
    std::string claim, path;
  };
  std::vector<DataEntry> data_;  // the manifest's data volumes
  std::string data_input;        // non-empty: the data list is bound (names, comma-separated)
  std::vector<std::pair<std::string, std::string>> literal_values_;  // `--value NAME=TEXT` of literals
  std::string env_map_input_, node_selector_input_, tolerations_input_, gpu_resource_input_;
  std::string metric_list_input_;
  struct EnvVar {
    std::string name;
    Scalar value;
  };
  std::vector<EnvVar> env_;
  std::vector<EnvVar> script_env_;  // the command's references
  std::string script_;
  std::optional<Scalar> sync_;
  Json node_selector_ = Json::object();
  std::vector<std::pair<std::string, std::string>> node_selector_inputs_;  // key, input
  Json tolerations_ = Json::array();
  std::vector<std::string> metric_args_;
  std::string tensorboard_;
};

std::string Builder::replica_spec_key() const {
  switch (step_.kind) {
    case ir::OpKind::MpiJob: return "mpiReplicaSpecs";
    case ir::OpKind::TfJob: return "tfReplicaSpecs";
    case ir::OpKind::PyTorchJob: return "pytorchReplicaSpecs";
    case ir::OpKind::Container: break;
  }
  assert(false && "not a training op");
  return "";
}

bool Builder::read_arguments() {
  // Every scalar argument the three ops may have, with its placeholder.
  struct Spec {
    const char* name;
    ir::Literal placeholder;
  };
  const Spec specs[] = {
      {"image", "busybox"},       {"ps_image", ""},           {"workers", 1},
      {"ps", 1},                  {"chief", 1},               {"evaluator", 1},
      {"gpus", 0},                {"cpu_limit", "1"},         {"memory_limit", "1Gi"},
      {"ps_cpu_limit", "1"},      {"ps_memory_limit", "1Gi"}, {"launcher_cpu", "1"},
      {"launcher_memory", "1Gi"}, {"slots_per_worker", 1},    {"nproc_per_node", 1},
      {"retries", 0},             {"gpu_resource", ""},       {"clean_pod_policy", ""},
      {"success_policy", ""},     {"timeout", ""},            {"pending_timeout", ""},
      {"tensorboard", ""},        {"runtime", ""},            {"trainer_runtime", ""},
      {"chief_role", "chief"},
  };
  // Any of them may be a run-time value: the launcher applies the same rules to it
  // (runtime/job_render.hpp) and reshapes the job (a role count of 0 removes the role).
  for (const auto& spec : specs) {
    const ir::Value* v = arg(spec.name);
    if (!v) continue;
    auto s = scalar(spec.name, *v, spec.placeholder);
    if (!s) continue;
    scalars_[spec.name] = *s;
  }
  if (!ok_) return false;

  auto get = [&](const char* name) -> const Scalar* {
    auto it = scalars_.find(name);
    return it == scalars_.end() ? nullptr : &it->second;
  };
  auto check_min = [&](const char* name, long min) {
    if (const Scalar* s = get(name)) check_int(name, *arg(name), *s, min);
  };
  // Replica counts: the launcher's maximum (runtime/job_render.hpp), one rule for both.
  for (const char* count : {"workers", "ps", "evaluator"})
    if (const Scalar* s = get(count); s && s->input.empty() && s->value.is_number_integer() &&
                                      !runtime::within_max_replicas(s->value.get<long long>()))
      error(*arg(count), "argument " + op_arg(count) + " must be at most " +
                             std::to_string(runtime::kMaxReplicas) + " (replicas of one role), got " +
                             std::to_string(s->value.get<long long>()));
  check_min("workers", step_.kind == ir::OpKind::TfJob ? 0 : 1);
  check_min("ps", 0);
  check_min("chief", 0);
  check_min("evaluator", 0);
  check_min("gpus", 0);
  check_min("slots_per_worker", 1);
  check_min("nproc_per_node", 1);
  check_min("retries", 0);
  if (const Scalar* s = get("chief"); s && s->value.is_number_integer() && s->value.get<long>() > 1)
    error(*arg("chief"), "argument " + op_arg("chief") + " must be 0 or 1, got " +
                             std::to_string(s->value.get<long>()));
  // A bound worker count must be >= 1 at run time: the launcher checks it (replicas).
  for (const char* q : {"cpu_limit", "memory_limit", "ps_cpu_limit", "ps_memory_limit",
                        "launcher_cpu", "launcher_memory"})
    if (const Scalar* s = get(q)) check_quantity(q, *arg(q), *s);
  if (const Scalar* s = get("image"); s && s->input.empty() && ir::literal_text(s->value).empty())
    error(*arg("image"), "argument " + op_arg("image") + " must not be empty");
  if (const Scalar* s = get("clean_pod_policy")) {
    std::string p = ir::literal_text(s->value);
    if (!p.empty() && !runtime::is_clean_pod_policy(p))
      error(*arg("clean_pod_policy"), "argument " + op_arg("clean_pod_policy") +
                                          " must be 'None', 'Running' or 'All', got '" + p + "'");
  }
  if (const Scalar* s = get("success_policy")) {
    std::string p = ir::literal_text(s->value);
    if (!runtime::is_success_policy(p))
      error(*arg("success_policy"),
            "argument " + op_arg("success_policy") + " must be \"\" or 'AllWorkers', got '" + p +
                "'");
  }
  if (const Scalar* s = get("gpu_resource"); s && !s->input.empty()) gpu_resource_input_ = s->input;
  if (const Scalar* s = get("gpu_resource")) {
    std::string r = ir::literal_text(s->value);
    if (!r.empty() && !runtime::is_resource_name(r))
      error(*arg("gpu_resource"), "argument " + op_arg("gpu_resource") +
                                      " must be a resource name such as 'amd.com/gpu', got '" +
                                      r + "'");
  }
  // Where it runs: the launcher's rules (runtime/trainer_v2.hpp) for literals too.
  if (const Scalar* s = get("runtime")) {
    std::string r = ir::literal_text(s->value);
    if (s->input.empty() && !runtime::is_training_runtime(job_kind(), r))
      error(*arg("runtime"), "argument " + op_arg("runtime") + " must be " +
                                 (step_.kind == ir::OpKind::PyTorchJob || step_.kind == ir::OpKind::MpiJob
                                      ? std::string("'operator' or 'trainer-v2'")
                                  : step_.kind == ir::OpKind::TfJob  ? std::string("'operator' or 'pods'")
                                                                     : std::string("'operator'")) +
                                 ", got '" + r + "'");
  }
  if (const Scalar* s = get("trainer_runtime")) {
    std::string r = ir::literal_text(s->value);
    if (s->input.empty() && !r.empty() && !runtime::is_dns1123_subdomain(r))
      error(*arg("trainer_runtime"), "argument " + op_arg("trainer_runtime") +
                                         " must be the name of a ClusterTrainingRuntime "
                                         "(lower-case letters, digits, '-' and '.'), got '" + r + "'");
  }
  if (const Scalar* s = get("chief_role")) {
    std::string r = ir::literal_text(s->value);
    if (s->input.empty() && r != "chief" && r != "master")
      error(*arg("chief_role"), "argument " + op_arg("chief_role") + " must be 'chief' or 'master', got '" + r + "'");
  }
  for (const char* t : {"timeout", "pending_timeout"})
    if (const Scalar* s = get(t)) {
      std::string d = ir::literal_text(s->value);
      if (!d.empty() && !is_duration(d))
        error(*arg(t), "argument " + op_arg(t) + " must be a duration such as '90s', '30m', " +
                           "'4h' or '2d', got '" + d + "'");
    }
  return ok_;
}

bool Builder::read_data() {
  const ir::Value* v = arg("data");
  if (!v) return true;
  auto parse_entry = [&](const std::string& entry, const ir::Value& at) -> bool {
    // The launcher's rule for run-time entries (runtime::parse_data_entry).
    auto parsed = runtime::parse_data_entry(entry);
    if (!parsed) {
      error(at, "data entry '" + entry + "' of " + step_.op +
                    " must be 'pvc-name:/mount/path' (a DNS-1123 subdomain claim name and an "
                    "absolute path without ':' or '..')");
      return false;
    }
    const std::string& claim = parsed->claim;
    const std::string& path = parsed->path;
    for (const auto& d : data_)
      if (d.path == path) {
        error(at, "data entry '" + entry + "' of " + step_.op + " mounts '" + path +
                      "' a second time");
        return false;
      }
    data_.push_back({claim, path});
    return true;
  };
  if (v->kind == ir::Value::Kind::Literal) {
    for (const auto& item : v->literal)
      if (item.is_string()) parse_entry(item.get<std::string>(), *v);
    return ok_;
  }
  // Known only at run time: the manifest holds the defaults (when known), the `data`
  // binding replaces the volumes in every replica.
  if (const ir::Ref* r = ir::whole_ref(*v)) {
    if (auto def = ref_default(*r)) {
      if (def->is_array())
        for (const auto& item : *def)
          if (item.is_string()) parse_entry(item.get<std::string>(), *v);
    }
  } else if (v->kind == ir::Value::Kind::List) {
    for (const auto& item : v->items) {
      if (item.kind == ir::Value::Kind::Literal) {
        if (item.literal.is_string()) parse_entry(item.literal.get<std::string>(), item);
      } else if (const ir::Ref* r = ir::whole_ref(item)) {
        if (auto def = ref_default(*r); def && def->is_string())
          parse_entry(def->get<std::string>(), item);
      } else if (item.kind == ir::Value::Kind::Interpolation) {
        if (auto text = interpolated_default(item)) parse_entry(*text, item);
      } else {
        error(item, "a data entry of " + step_.op + " must be a string");
      }
    }
  }
  if (!ok_) return false;
  if (v->kind == ir::Value::Kind::List && v->items.size() == 1) {
    // One run-time entry: the launcher takes it as one string, nothing is built around it.
    data_input = input_for("data", v->items[0]);
    return true;
  }
  if (v->kind == ir::Value::Kind::List) {
    // Several entries, some known only at run time: each is a value of its own (a literal
    // one too), and the launcher builds the list from them, so no value can add entries.
    std::string names;
    for (const ir::Value& item : v->items) {
      std::string name;
      if (item.kind == ir::Value::Kind::Literal) {
        name = "data_entry";  // a value of its own, unique among the inputs' names
        for (int n = 2; used_inputs_.count(name); ++n) name = "data_entry_" + std::to_string(n);
        used_inputs_.insert(name);
        literal_values_.emplace_back(name, ir::literal_text(item.literal));
      } else {
        name = input_for("data", item);
      }
      names += (names.empty() ? "" : ",") + name;
    }
    data_input = names;
    return true;
  }
  data_input = input_for("data", *v);
  return true;
}

bool Builder::read_env() {
  const ir::Value* v = arg("env");
  if (!v) return true;
  auto add = [&](const std::string& key, const ir::Value& value) {
    if (!rules::is_env_name(key)) {
      error(value, "environment variable name '" + key + "' in " + step_.op +
                       " must match [A-Za-z_][A-Za-z0-9_]*");
      return;
    }
    if (const char* by = rules::env_reserved_by(key, true)) {
      error(value, "environment variable '" + key + "' in " + step_.op + " is reserved (set by " + by + ")");
      return;
    }
    if (value.kind == ir::Value::Kind::Literal) {
      env_.push_back({key, Scalar{ir::literal_text(value.literal), {}}});
      return;
    }
    auto s = scalar("env_" + key, value, "");
    if (!s) return;
    if (!s->value.is_string()) s->value = ir::literal_text(s->value);
    env_.push_back({key, *s});
  };
  if (v->kind == ir::Value::Kind::Literal) {
    if (v->literal.is_object())
      for (const auto& [k, val] : v->literal.items()) {
        ir::Value lit;
        lit.literal = val;
        lit.range = v->range;
        add(k, lit);
      }
    else if (v->literal.is_array())  // list<string> of K=V
      for (const auto& item : v->literal) {
        std::string kv = item.is_string() ? item.get<std::string>() : "";
        auto eq = kv.find('=');
        ir::Value lit;
        lit.literal = eq == std::string::npos ? "" : kv.substr(eq + 1);
        lit.range = v->range;
        if (eq == std::string::npos) {
          error(*v, "environment entry '" + kv + "' of " + step_.op + " must be 'NAME=VALUE'");
          continue;
        }
        add(kv.substr(0, eq), lit);
      }
  } else if (v->kind == ir::Value::Kind::Map) {
    for (const auto& [k, val] : v->entries) add(k, val);
  } else if (ir::whole_ref(*v) && v->type.kind == ir::TypeKind::Map) {
    // A map<string> value: the launcher adds its variables, with the same name rules.
    env_map_input_ = input_for("env", *v);
  } else {
    error(*v, "argument " + op_arg("env") + " must list its variables ({NAME: value, ...})");
  }
  return ok_;
}

// Argo reads `{{` in any string of a template as the start of a tag. In JSON text a run of
// `{` can only stand inside a string (an object's first member is a quoted key), where
// `\u007b` means the same character: the launcher reads back exactly the user's text.
std::string json_without_argo_tags(const std::string& json) {
  if (json.find("{{") == std::string::npos) return json;
  std::string out;
  for (std::size_t i = 0; i < json.size();) {
    std::size_t run = 0;
    while (i + run < json.size() && json[i + run] == '{') ++run;
    if (run >= 2) {
      for (std::size_t k = 0; k < run; ++k) out += "\\u007b";
      i += run;
    } else if (run == 1) {
      out += '{';
      ++i;
    } else {
      out += json[i++];
    }
  }
  return out;
}

bool Builder::read_command() {
  const ir::Value* v = arg("command");
  if (!v) return true;
  std::vector<ir::Part> parts;
  if (v->kind == ir::Value::Kind::Literal) {
    parts.push_back(ir::Part{ir::literal_text(v->literal), {}});
  } else if (v->kind == ir::Value::Kind::Ref) {
    parts.push_back(ir::Part{{}, v->ref});
  } else if (v->kind == ir::Value::Kind::Interpolation) {
    parts = v->parts;
  } else {
    error(*v, "argument " + op_arg("command") + " must be a string");
    return ok_;
  }
  // Each reference is an environment variable PIPEC_<name> of the main container, bound
  // at run time; emit/shell places it in the script by its quoting context.
  std::map<std::string, std::string> var_by_input;
  auto variable = [&](const ir::Ref& ref) {
    ir::Value rv;
    rv.kind = ir::Value::Kind::Ref;
    rv.type = ref.type;
    rv.ref = ref;
    rv.range = ref.range.valid() ? ref.range : v->range;
    std::string base = ref.name + (ref.field.empty() ? "" : "_" + ref.field);
    auto def = ref_default(ref);
    std::string input = input_for("cmd_" + base, rv);
    if (auto it = var_by_input.find(input); it != var_by_input.end()) return it->second;
    std::string var = "PIPEC_";
    for (char c : base) var.push_back(is_alnum(c) ? c : '_');
    std::string unique = var;
    for (int n = 2; std::any_of(script_env_.begin(), script_env_.end(),
                                [&](const EnvVar& e) { return e.name == unique; });
         ++n)
      unique = var + "_" + std::to_string(n);
    var_by_input[input] = unique;
    script_env_.push_back({unique, Scalar{def ? ir::literal_text(*def) : "", input}});
    return unique;
  };
  if (!shell::write_script(parts, variable, v->range, script_, diags_)) ok_ = false;
  return ok_;
}

bool Builder::read_sync() {
  const ir::Value* v = arg("sync_source");
  if (!v) return true;
  if (v->kind == ir::Value::Kind::Literal && ir::literal_text(v->literal).empty()) return true;
  auto s = scalar("sync_source", *v, "https://example.invalid/placeholder.git");
  if (!s) return false;
  if (s->input.empty()) {
    std::string repo = ir::literal_text(s->value);
    if (repo.find_first_of(" \t\n") != std::string::npos || repo.find('/') == std::string::npos) {
      error(*v, "argument " + op_arg("sync_source") + " must be a git repository URL, got '" +
                    repo + "'");
      return false;
    }
  }
  sync_ = *s;
  return true;
}

bool Builder::read_node_placement() {
  if (const ir::Value* v = arg("node_selector")) {
    auto add = [&](const std::string& key, const ir::Value& value) {
      if (value.kind == ir::Value::Kind::Literal) {
        node_selector_[key] = ir::literal_text(value.literal);
        return;
      }
      auto s = scalar("node_" + key, value, "placeholder");
      if (!s) return;
      node_selector_[key] = ir::literal_text(s->value);
      node_selector_inputs_.emplace_back(key, s->input);
    };
    // Node labels by the launcher's rule for run-time values (runtime::is_label_key/value).
    auto label_ok = [&](const std::string& key, const std::string* text) {
      if (runtime::is_label_key(key) && (!text || runtime::is_label_value(*text))) return true;
      error(*v, "argument " + op_arg("node_selector") + ": '" + key + "'" +
                    (text ? ": '" + *text + "'" : std::string()) +
                    " is not a node label (a key such as 'cloud.google.com/gke-nodepool', a value "
                    "of at most 63 of [A-Za-z0-9-_.])");
      return false;
    };
    if (v->kind == ir::Value::Kind::Literal && v->literal.is_object()) {
      for (const auto& [k, val] : v->literal.items()) {
        std::string text = ir::literal_text(val);
        if (label_ok(k, &text)) node_selector_[k] = text;
      }
    } else if (v->kind == ir::Value::Kind::Map) {
      for (const auto& [k, val] : v->entries) {
        std::string text = val.is_literal() ? ir::literal_text(val.literal) : "";
        if (label_ok(k, val.is_literal() ? &text : nullptr)) add(k, val);
      }
    } else if (ir::whole_ref(*v) && v->type.kind == ir::TypeKind::Map) {
      node_selector_input_ = input_for("node_selector", *v);
    } else if (v->kind != ir::Value::Kind::Literal) {
      error(*v, "argument " + op_arg("node_selector") + " must list its labels ({key: value})");
    }
  }
  if (const ir::Value* v = arg("tolerations")) {
    if (!v->is_literal()) {
      // A list<string> value: the launcher reads it with the same rule.
      if (ir::whole_ref(*v)) {
        tolerations_input_ = input_for("tolerations", *v);
        return ok_;
      }
      error(*v, "argument " + op_arg("tolerations") + " must be a list of strings or a list<string> parameter");
      return false;
    }
    for (const auto& item : v->literal) {
      std::string t = item.is_string() ? item.get<std::string>() : "";
      auto tol = runtime::toleration_json(t);
      if (!tol) {
        error(*v, "toleration '" + t + "' of " + step_.op +
                      " must be 'key[=value][:Effect]' or '*' (Effect NoSchedule, PreferNoSchedule or NoExecute)");
        continue;
      }
      tolerations_.push_back(Json::parse(*tol));
    }
  }
  return ok_;
}

bool Builder::read_metrics() {
  const ir::Value* v = arg("metrics");
  if (!v) return true;
  std::map<std::string, std::string> reported_by;  // reported name -> log name
  std::size_t count = 0;
  auto literal_spec = [&](const std::string& spec, const ir::Value& at) {
    ++count;
    if (std::string problem = runtime::metric_option_problem(spec); !problem.empty()) {
      error(at, problem);
      return;
    }
    std::string name = split_metric_spec(spec).name;
    std::string reported = sanitize_metric_name(name);
    if (!metric_name_reportable(name)) {
      error(at, "metric '" + spec + "' cannot be reported: " + kMetricNameRule);
      return;
    }
    auto [it, fresh] = reported_by.emplace(reported, name);
    if (!fresh) {
      error(at, "metrics '" + it->second + "' and '" + name + "' would both be reported as '" +
                    reported + "'");
      return;
    }
    metric_args_.push_back("--metric");
    metric_args_.push_back(spec);
  };
  auto runtime_spec = [&](const ir::Value& item) {
    ++count;
    // A run that keeps the parameter's default would stop at the launcher (exit 2).
    if (const ir::Ref* ref = ir::whole_ref(item)) {
      std::optional<ir::Literal> def = ref_default(*ref);
      if (def && def->is_string() &&
          !metric_name_reportable(split_metric_spec(def->get<std::string>()).name))
        diags_.warning(where(item), "the default '" + def->get<std::string>() + "' of '" +
                                        ref->name + "' cannot be reported as a metric: " +
                                        kMetricNameRule + "; a run that keeps it fails");
    }
    std::string input = input_for("metric_" + std::to_string(count - 1), item);
    metric_args_.push_back("--metric-value");
    metric_args_.push_back(input);
  };
  if (v->kind == ir::Value::Kind::Literal) {
    for (const auto& item : v->literal)
      if (item.is_string()) literal_spec(item.get<std::string>(), *v);
  } else if (v->kind == ir::Value::Kind::List) {
    for (const auto& item : v->items) {
      if (item.kind == ir::Value::Kind::Literal && item.literal.is_string())
        literal_spec(item.literal.get<std::string>(), item);
      else if (ir::whole_ref(item) || item.kind == ir::Value::Kind::Interpolation)
        runtime_spec(item);
      else
        error(item, "a metric of " + step_.op +
                        " cannot interpolate values into a string; pass a parameter or a "
                        "literal");
    }
  } else if (ir::whole_ref(*v)) {
    // A list<string> value: the launcher checks each spec by the same rules.
    if (auto def = ref_default(*ir::whole_ref(*v)); def && def->is_array()) {
      count += def->size();
      for (const auto& item : *def)
        if (item.is_string() && !metric_name_reportable(split_metric_spec(item.get<std::string>()).name))
          diags_.warning(where(*v), "the default '" + item.get<std::string>() + "' of '" +
                                        ir::whole_ref(*v)->name + "' cannot be reported as a metric: " +
                                        kMetricNameRule + "; a run that keeps it fails");
    }
    metric_list_input_ = input_for("metrics", *v);
    metric_args_.push_back("--metric-list-value");
    metric_args_.push_back(metric_list_input_);
    call_.writes_metrics = true;
  } else {
    error(*v, "argument " + op_arg("metrics") + " must list the metric names or be a list<string> parameter");
  }
  if (count > kMaxMetrics)
    error(*v, "a step reports at most " + std::to_string(kMaxMetrics) + " metrics, " +
                  step_.op + " lists " + std::to_string(count));
  if (count > 0) call_.writes_metrics = true;
  return ok_;
}

Json Builder::container(const Role& role, const std::string& base) {
  Json c = Json::object();
  c["name"] = step_.kind == ir::OpKind::MpiJob      ? "mpi"
              : step_.kind == ir::OpKind::TfJob     ? "tensorflow"
                                                    : "pytorch";
  // Image: the role's own if given, else `image`.
  const Scalar* image = &scalars_["image"];
  if (auto it = scalars_.find(role.image_arg);
      it != scalars_.end() &&
      !(it->second.input.empty() && ir::literal_text(it->second.value).empty()))
    image = &it->second;
  c["image"] = ir::literal_text(image->value);
  if (!image->input.empty()) bind(base + "/image", image->input, "string");

  if (role.runs_script) {
    c["command"] = Json::array({"sh", "-c", script_});
  } else if (step_.kind == ir::OpKind::MpiJob && !options_.mpi_v1) {
    // MPI workers host the ranks: mpi-operator v2's launcher reaches them over ssh. (The
    // training-operator's v1 controller gives a worker without command `sleep 365d` and
    // reaches it with kubectl exec.)
    c["command"] = Json::array({"/usr/sbin/sshd", "-De"});
  }
  if (sync_) c["workingDir"] = "/workspace";

  Json env = Json::array();
  auto push_env = [&](const std::string& name, const Scalar& s) {
    Json e = Json::object();
    e["name"] = name;
    e["value"] = ir::literal_text(s.value);
    if (!s.input.empty())
      bind(base + "/env/" + std::to_string(env.size()) + "/value", s.input, "env");
    env.push_back(e);
  };
  for (const auto& e : env_) push_env(e.name, e.value);
  if (role.runs_script)
    for (const auto& e : script_env_) push_env(e.name, e.value);
  if (!env.empty()) c["env"] = env;

  Json limits = Json::object();
  auto limit = [&](const char* arg_name, const std::string& resource, const char* kind) {
    auto it = scalars_.find(arg_name);
    if (it == scalars_.end()) return;
    const Scalar& s = it->second;
    std::string text = ir::literal_text(s.value);
    if (s.input.empty() && (text.empty() || text == "0")) return;
    limits[resource] = text.empty() ? "0" : text;
    // JSON pointer: '/' in a key is written "~1".
    std::string key;
    for (char ch : resource) key += ch == '/' ? std::string("~1") : std::string(1, ch);
    if (!s.input.empty()) bind(base + "/resources/limits/" + key, s.input, kind);
  };
  if (role.cpu_arg) limit(role.cpu_arg, "cpu", "quantity");
  if (role.memory_arg) limit(role.memory_arg, "memory", "quantity");
  if (role.gpus) {
    std::string vendor = "nvidia.com/gpu";
    if (auto it = scalars_.find("gpu_resource");
        it != scalars_.end() && it->second.input.empty() && !ir::literal_text(it->second.value).empty())
      vendor = ir::literal_text(it->second.value);
    limit("gpus", vendor, "quantity");
  }
  if (!limits.empty()) c["resources"] = Json{{"limits", limits}};

  Json mounts = Json::array();
  for (std::size_t i = 0; i < data_.size(); ++i)
    mounts.push_back(Json{{"name", "data-" + std::to_string(i)}, {"mountPath", data_[i].path}});
  if (sync_) mounts.push_back(Json{{"name", "code-sync"}, {"mountPath", "/workspace/code"}});
  if (!mounts.empty()) c["volumeMounts"] = mounts;
  return c;
}

Json Builder::replica(const Role& role, const std::string& base) {
  Json r = Json::object();
  long replicas = 1;
  if (role.count_arg) {
    const Scalar& s = scalars_[role.count_arg];
    replicas = s.value.is_number_integer() ? s.value.get<long>() : 1;
    if (replicas < 1) replicas = 1;  // a bound count: the placeholder must be valid
    // A TFJob's roles are optional: the launcher removes one whose count is 0 (and checks
    // that a chief or a worker is left). Other jobs' workers are at least 1.
    if (!s.input.empty())
      bind(step_.kind == ir::OpKind::TfJob ? base : base + "/replicas", s.input,
           step_.kind == ir::OpKind::TfJob ? "count" : "int");
  }
  r["replicas"] = replicas;
  bool retried = false;
  if (auto it = scalars_.find("retries"); it != scalars_.end())
    retried = !it->second.input.empty() ||
              (it->second.value.is_number_integer() && it->second.value.get<long>() > 0);
  r["restartPolicy"] = retried ? "OnFailure" : "Never";

  Json spec = Json::object();
  if (sync_) {
    Json init = Json::object();
    init["name"] = "git-sync";
    init["image"] = options_.git_sync_image;
    // The repository arrives as a variable; the clone goes to code/<repo-name> (without
    // `.git`), on the branch GIT_SYNC_BRANCH and at the revision GIT_SYNC_REV if set.
    init["command"] = Json::array(
        {"sh", "-c",
         "set -eu\n"
         "dest=\"/code/$(basename \"${GIT_SYNC_REPO%/}\" .git)\"\n"
         "git clone ${GIT_SYNC_BRANCH:+--branch \"$GIT_SYNC_BRANCH\"} -- \"$GIT_SYNC_REPO\" "
         "\"$dest\"\n"
         "if [ -n \"${GIT_SYNC_REV:-}\" ]; then git -C \"$dest\" checkout \"$GIT_SYNC_REV\"; "
         "fi\n"});
    Json env = Json::array();
    env.push_back(Json{{"name", "GIT_SYNC_REPO"}, {"value", ir::literal_text(sync_->value)}});
    if (!sync_->input.empty())
      bind(base + "/template/spec/initContainers/0/env/0/value", sync_->input, "env");
    for (const auto& e : env_) {
      if (!runtime::is_git_sync_setting(e.name)) continue;
      if (!e.value.input.empty())
        bind(base + "/template/spec/initContainers/0/env/" + std::to_string(env.size()) +
                 "/value",
             e.value.input, "env");
      env.push_back(Json{{"name", e.name}, {"value", ir::literal_text(e.value.value)}});
    }
    init["env"] = env;
    init["volumeMounts"] = Json::array({Json{{"name", "code-sync"}, {"mountPath", "/code"}}});
    spec["initContainers"] = Json::array({init});
  }
  spec["containers"] = Json::array({container(role, base + "/template/spec/containers/0")});
  if (!node_selector_.empty()) {
    spec["nodeSelector"] = node_selector_;
    for (const auto& [key, input] : node_selector_inputs_) {
      std::string k;
      for (char ch : key) k += ch == '/' ? std::string("~1") : ch == '~' ? std::string("~0") : std::string(1, ch);
      bind(base + "/template/spec/nodeSelector/" + k, input, "string");
    }
  }
  if (!tolerations_.empty()) spec["tolerations"] = tolerations_;
  Json volumes = Json::array();
  for (std::size_t i = 0; i < data_.size(); ++i)
    volumes.push_back(Json{{"name", "data-" + std::to_string(i)},
                           {"persistentVolumeClaim", Json{{"claimName", data_[i].claim}}}});
  if (sync_) volumes.push_back(Json{{"name", "code-sync"}, {"emptyDir", Json::object()}});
  if (!volumes.empty()) spec["volumes"] = volumes;
  r["template"] = Json{{"spec", spec}};
  return r;
}

bool Builder::run() {
  if (!read_arguments()) return false;
  read_data();
  read_env();
  read_command();
  read_sync();
  read_node_placement();
  read_metrics();
  if (const ir::Value* v = arg("tensorboard"); v && !v->is_literal()) {
    // Known at run time: the launcher checks that it lies inside a data volume ("" = none).
    call_.writes_ui_metadata = true;
  } else if (v && v->is_literal()) {
    std::string path = ir::literal_text(v->literal);
    if (!path.empty()) {
      bool inside = data_input.empty() ? false : true;  // bound data: the launcher checks
      for (const auto& d : data_)
        if (path == d.path || path.rfind(d.path == "/" ? "/" : d.path + "/", 0) == 0)
          inside = true;
      if (path[0] != '/' || !inside)
        error(*v, "tensorboard path '" + path + "' of " + step_.op +
                      " must lie inside one of the data volumes (" +
                      (data_.empty() ? std::string("none given") : "e.g. " + data_[0].path) + ")");
      tensorboard_ = path;
      call_.writes_ui_metadata = true;
    }
  }
  if (!ok_) return false;

  // The job.
  const std::string rs = replica_spec_key();
  Json job = Json::object();
  bool mpi_v2 = step_.kind == ir::OpKind::MpiJob && !options_.mpi_v1;
  job["apiVersion"] = mpi_v2 ? "kubeflow.org/v2beta1" : "kubeflow.org/v1";
  job["kind"] = job_kind();
  // The launcher replaces the name with one made from the pod name; this one is valid.
  std::string name;
  for (char c : step_.name) {
    char l = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (name.empty() && !(l >= 'a' && l <= 'z')) continue;
    name.push_back(is_alnum(l) ? l : '-');
  }
  if (name.size() > 50) name.resize(50);
  while (!name.empty() && name.back() == '-') name.pop_back();
  job["metadata"] = Json{{"name", name.empty() ? "job" : name}};

  Json spec = Json::object();
  std::string base = "/spec/" + rs + "/";
  Json replicas = Json::object();
  auto count_of = [&](const char* a) -> long {
    auto it = scalars_.find(a);
    if (it == scalars_.end()) return 0;
    if (!it->second.input.empty()) return 1;
    return it->second.value.is_number_integer() ? it->second.value.get<long>() : 0;
  };
  switch (step_.kind) {
    case ir::OpKind::MpiJob: {
      const auto slots = scalars_.find("slots_per_worker");
      if (slots != scalars_.end()) {
        spec["slotsPerWorker"] = slots->second.value.is_number_integer()
                                     ? slots->second.value.get<long>()
                                     : 1;
        if (!slots->second.input.empty())
          bind("/spec/slotsPerWorker", slots->second.input, "int");
      }
      if (mpi_v2) spec["launcherCreationPolicy"] = "WaitForWorkersReady";
      Role launcher{"Launcher", "image", true, false, "launcher_cpu", "launcher_memory", nullptr};
      Role worker{"Worker", "image", false, true, "cpu_limit", "memory_limit", "workers"};
      replicas["Launcher"] = replica(launcher, base + "Launcher");
      replicas["Worker"] = replica(worker, base + "Worker");
      break;
    }
    case ir::OpKind::TfJob: {
      if (count_of("chief") > 0)
        replicas["Chief"] = replica({"Chief", "image", true, true, "cpu_limit", "memory_limit",
                                     "chief"},
                                    base + "Chief");
      if (count_of("ps") > 0)
        replicas["PS"] = replica({"PS", "ps_image", true, false, "ps_cpu_limit",
                                  "ps_memory_limit", "ps"},
                                 base + "PS");
      if (count_of("workers") > 0)
        replicas["Worker"] = replica({"Worker", "image", true, true, "cpu_limit",
                                      "memory_limit", "workers"},
                                     base + "Worker");
      if (count_of("evaluator") > 0)
        replicas["Evaluator"] = replica({"Evaluator", "image", true, true, "cpu_limit",
                                         "memory_limit", "evaluator"},
                                        base + "Evaluator");
      if (replicas.empty()) {
        error(*arg("workers"), "tf_job needs a chief or at least one worker");
        return false;
      }
      if (auto it = scalars_.find("success_policy");
          it != scalars_.end() && !ir::literal_text(it->second.value).empty() &&
          runtime::is_success_policy(ir::literal_text(it->second.value)))
        spec["successPolicy"] = ir::literal_text(it->second.value);
      break;
    }
    case ir::OpKind::PyTorchJob: {
      if (auto it = scalars_.find("nproc_per_node"); it != scalars_.end()) {
        spec["nprocPerNode"] = ir::literal_text(it->second.value);
        if (!it->second.input.empty()) bind("/spec/nprocPerNode", it->second.input, "string");
      }
      replicas["Master"] = replica({"Master", "image", true, true, "cpu_limit", "memory_limit",
                                    nullptr},
                                   base + "Master");
      replicas["Worker"] = replica({"Worker", "image", true, true, "cpu_limit", "memory_limit",
                                    "workers"},
                                   base + "Worker");
      break;
    }
    case ir::OpKind::Container: return false;
  }
  spec[rs] = replicas;
  if (!data_input.empty()) bind("/spec/" + rs, data_input, "data");
  // Maps and lists known only at run time, applied to every replica by the launcher.
  if (!env_map_input_.empty()) bind("/spec/" + rs, env_map_input_, "env-map");
  if (!node_selector_input_.empty()) bind("/spec/" + rs, node_selector_input_, "node-selector");
  if (!tolerations_input_.empty()) bind("/spec/" + rs, tolerations_input_, "tolerations");
  if (!gpu_resource_input_.empty()) bind("/spec/" + rs, gpu_resource_input_, "gpu-resource");

  Json run_policy = Json::object();
  std::string policy = "Running";  // pods of a finished job (ps, MPI workers) are stopped
  if (auto it = scalars_.find("clean_pod_policy");
      it != scalars_.end() && !ir::literal_text(it->second.value).empty())
    policy = ir::literal_text(it->second.value);
  run_policy["cleanPodPolicy"] = policy;
  if (auto it = scalars_.find("clean_pod_policy"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec/runPolicy/cleanPodPolicy", it->second.input, "clean-pod-policy");
  if (auto it = scalars_.find("success_policy"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec", it->second.input, "success-policy");
  if (auto it = scalars_.find("retries"); it != scalars_.end()) {
    run_policy["backoffLimit"] =
        it->second.value.is_number_integer() ? it->second.value.get<long>() : 0;
    if (!it->second.input.empty()) bind("/spec/runPolicy/backoffLimit", it->second.input, "int");
  }
  spec["runPolicy"] = run_policy;
  job["spec"] = spec;

  // The launcher's arguments (docs/runtime.md).
  auto& a = call_.args;
  a.push_back("--manifest");
  a.push_back(json_without_argo_tags(job.dump()));
  for (const auto& b : binds_) {
    a.push_back("--bind");
    a.push_back(b);
  }
  for (const auto& [input, value] : call_.inputs) {
    a.push_back("--value");
    a.push_back({LauncherWord::Kind::Binding, input});
  }
  for (const auto& [name, text] : literal_values_) {
    a.push_back("--value");
    a.push_back(name + "=" + text);
  }
  a.insert(a.end(), metric_args_.begin(), metric_args_.end());
  if (!tensorboard_.empty()) {
    a.push_back("--tensorboard");
    a.push_back(tensorboard_);
  }
  // Launcher options from run-time values: one whole argv word each, checked by the
  // launcher ("" means none).
  for (auto [arg_name, flag] : {std::pair{"tensorboard", "--tensorboard"},
                                std::pair{"pending_timeout", "--pending-timeout"},
                                std::pair{"timeout", "--running-timeout"},
                                std::pair{"runtime", "--runtime"},
                                std::pair{"trainer_runtime", "--trainer-runtime"},
                                std::pair{"chief_role", "--tf-chief-role"}})
    if (auto it = scalars_.find(arg_name); it != scalars_.end()) {
      if (!it->second.input.empty()) {
        a.push_back(flag);
        a.push_back({LauncherWord::Kind::Input, it->second.input});
      } else if (std::string_view(arg_name) != "tensorboard" && !ir::literal_text(it->second.value).empty() &&
                 !(std::string_view(arg_name) == "chief_role" && ir::literal_text(it->second.value) == "chief")) {
        a.push_back(flag);
        a.push_back(ir::literal_text(it->second.value));
      }
    }
  // The build's runtime for a step that names none: the first of the list that fits.
  if (auto it = scalars_.find("runtime");
      it == scalars_.end() || (it->second.input.empty() && ir::literal_text(it->second.value).empty())) {
    std::string_view list = options_.default_runtime;
    while (!list.empty()) {
      std::string_view one = list.substr(0, list.find(','));
      list.remove_prefix(std::min(list.size(), one.size() + 1));
      if (one.empty() || one == "operator" || !runtime::is_training_runtime(job_kind(), one)) continue;
      a.push_back("--runtime");
      a.push_back(std::string(one));
      break;
    }
  }
  a.push_back("--workflow-name");
  a.push_back({LauncherWord::Kind::WorkflowName, ""});
  a.push_back("--step-name");
  a.push_back({LauncherWord::Kind::PodName, ""});
  return true;
}

}  // namespace

// The metric rules are the launcher's own (runtime/metrics.hpp): one implementation.
bool metric_name_reportable(std::string_view name) { return runtime::metric_name_reportable(name); }

MetricSpecParts split_metric_spec(std::string_view spec) {
  runtime::MetricSpec m = runtime::split_metric_spec(spec);
  MetricSpecParts parts;
  parts.name = m.name;
  parts.format = m.format;
  parts.aggregation = m.aggregation == runtime::Aggregation::Max   ? "max"
                      : m.aggregation == runtime::Aggregation::Min ? "min"
                                                                   : "last";
  return parts;
}

std::string sanitize_metric_name(std::string_view name) { return runtime::sanitize_metric_name(name); }

bool build_launcher_call(const ir::Step& step, const JobOptions& options, LauncherCall& call,
                         Diagnostics& diags) {
  assert(step.kind != ir::OpKind::Container);
  call = LauncherCall{};
  Builder builder(step, options, call, diags);
  return builder.run();
}

}  // namespace pipec::emit::kubeflow
