// Reading a training op's arguments for its launcher call: each literal checked by the
// rule the launcher applies to a run-time value (rules/, runtime/job_render.hpp), each
// value known only at run time given a template input (docs/training-ops.md).
#include "compiler/training/launcher_builder.hpp"
#include "compiler/shell/shell_script.hpp"
#include "rules/kubernetes.hpp"
#include "rules/metrics.hpp"
#include "rules/names.hpp"
#include "runtime/trainer_v2.hpp"

#include <algorithm>

namespace pipec::training::detail {

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
      {"chief_role", "chief"},   {"queue", ""},              {"priority_class", ""},
      {"scheduler", ""},          {"min_available", 0},       {"gang_queue", ""},
      {"shm_size", ""},           {"trainer_runtime_kind", ""},
      // train_job's own (the TrainJob's terms; sema checks their literals).
      {"num_nodes", 1},           {"num_proc_per_node", 1},   {"dataset_uri", ""},
      {"dataset_secret", ""},     {"model_uri", ""},          {"model_secret", ""},
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
                                      !rules::within_max_replicas(s->value.get<long long>()))
      error(*arg(count), "argument " + op_arg(count) + " must be at most " +
                             std::to_string(rules::kMaxReplicas) + " (replicas of one role), got " +
                             std::to_string(s->value.get<long long>()));
  check_min("workers", step_.kind == ir::OpKind::TfJob ? 0 : 1);
  check_min("ps", 0);
  check_min("chief", 0);
  check_min("evaluator", 0);
  check_min("gpus", 0);
  check_min("slots_per_worker", 1);
  check_min("nproc_per_node", 1);
  check_min("retries", 0);
  check_min("min_available", 0);
  if (const Scalar* s = get("chief"); s && s->value.is_number_integer() && s->value.get<long>() > 1)
    error(*arg("chief"), "argument " + op_arg("chief") + " must be 0 or 1, got " +
                             std::to_string(s->value.get<long>()));
  // A bound worker count must be >= 1 at run time: the launcher checks it (replicas).
  for (const char* q : {"cpu_limit", "memory_limit", "ps_cpu_limit", "ps_memory_limit",
                        "launcher_cpu", "launcher_memory"})
    if (const Scalar* s = get(q)) check_quantity(q, *arg(q), *s);
  // A TrainJob's image may be "" (the runtime's).
  if (const Scalar* s = get("image");
      s && s->input.empty() && ir::literal_text(s->value).empty() && step_.kind != ir::OpKind::TrainJob)
    error(*arg("image"), "argument " + op_arg("image") + " must not be empty");
  if (const Scalar* s = get("clean_pod_policy")) {
    std::string p = ir::literal_text(s->value);
    if (!p.empty() && !rules::is_clean_pod_policy(p))
      error(*arg("clean_pod_policy"), "argument " + op_arg("clean_pod_policy") +
                                          " must be 'None', 'Running' or 'All', got '" + p + "'");
  }
  if (const Scalar* s = get("success_policy")) {
    std::string p = ir::literal_text(s->value);
    if (!rules::is_success_policy(p))
      error(*arg("success_policy"),
            "argument " + op_arg("success_policy") + " must be \"\" or 'AllWorkers', got '" + p +
                "'");
  }
  if (const Scalar* s = get("gpu_resource"); s && !s->input.empty()) gpu_resource_input_ = s->input;
  if (const Scalar* s = get("gpu_resource")) {
    std::string r = ir::literal_text(s->value);
    if (!r.empty() && !rules::is_resource_name(r))
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
    if (s->input.empty() && !r.empty() && !rules::is_dns1123_subdomain(r))
      error(*arg("trainer_runtime"), "argument " + op_arg("trainer_runtime") +
                                         " must be the name of a training runtime "
                                         "(lower-case letters, digits, '-' and '.'), got '" + r + "'");
  }
  if (const Scalar* s = get("trainer_runtime_kind")) {
    std::string r = ir::literal_text(s->value);
    if (s->input.empty() && !runtime::is_trainer_runtime_kind(r))
      error(*arg("trainer_runtime_kind"), "argument " + op_arg("trainer_runtime_kind") +
                                              " must be 'ClusterTrainingRuntime' or 'TrainingRuntime', got '" + r + "'");
  }
  if (!read_scheduling()) return false;
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

// The scheduling arguments' literals, by the rules the launcher applies to run-time values
// (docs/training-ops.md, "Scheduling").
bool Builder::read_scheduling() {
  auto text_of = [&](const char* name) -> std::optional<std::string> {
    auto it = scalars_.find(name);
    if (it == scalars_.end() || !it->second.input.empty()) return std::nullopt;
    return ir::literal_text(it->second.value);
  };
  auto refuse = [&](const char* name, const std::string& what) {
    error(*arg(name), "argument " + op_arg(name) + " must be " + what + ", got '" + *text_of(name) + "'");
  };
  for (const char* name : {"queue", "gang_queue"})
    if (auto t = text_of(name); t && !t->empty() && !rules::is_label_value(*t))
      refuse(name, "a queue name (at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends)");
  for (const char* name : {"priority_class", "scheduler"})
    if (auto t = text_of(name); t && !t->empty() && !rules::is_dns1123_subdomain(*t))
      refuse(name, "a Kubernetes name (lower-case letters, digits, '-' and '.')");
  if (auto t = text_of("shm_size"); t && !t->empty() && !is_quantity(*t))
    refuse("shm_size", "a Kubernetes quantity such as '8Gi'");
  // Trainer v2.3's TrainJob patches no pod's priority class or scheduler: the runtime's
  // pod template and podGroupPolicy say them.
  if (auto r = text_of("runtime"); r && *r == "trainer-v2")
    for (std::string_view field : rules::kNotInTrainJob) {
      const std::string name(field);
      if (auto t = text_of(name.c_str()); arg(name) && (!t || (!t->empty() && *t != "0")))
        error(*arg(name), "argument " + op_arg(name) + " cannot be given with runtime 'trainer-v2': " +
                              std::string(rules::kNotInTrainJobWhy));
    }
  return ok_;
}

// `labels` and `annotations`: on the job and every pod template. A literal entry is
// checked here, an entry from a value by the launcher (a label by the `label` binding).
bool Builder::read_metadata() {
  for (const char* field : {"labels", "annotations"}) {
    const ir::Value* v = arg(field);
    if (!v) continue;
    bool label = std::string_view(field) == "labels";
    Json& out = label ? labels_ : annotations_;
    auto add = [&](const std::string& key, const ir::Value& value) {
      if (!rules::is_label_key(key)) {
        error(value, "argument " + op_arg(field) + ": '" + key + "' is not a Kubernetes " +
                         (label ? "label" : "annotation") + " key ([prefix/]name, name at most 63 of [A-Za-z0-9-_.])");
        return;
      }
      if (value.kind == ir::Value::Kind::Literal) {
        std::string text = ir::literal_text(value.literal);
        if (label && !rules::is_label_value(text)) {
          error(value, "argument " + op_arg(field) + ": '" + text + "' is not a label value (at most 63 of "
                       "[A-Za-z0-9-_.], alphanumeric at both ends)");
          return;
        }
        out[key] = text;
        return;
      }
      auto s = scalar(std::string(label ? "label_" : "annotation_") + key, value, label ? "placeholder" : "");
      if (!s) return;
      out[key] = ir::literal_text(s->value);
      (label ? label_inputs_ : annotation_inputs_).emplace_back(key, s->input);
    };
    if (!each_entry(*v, add)) {
      error(*v, "argument " + op_arg(field) + " must list its entries ({key: value}); each value may be a "
                "run-time value");
    }
  }
  return ok_;
}

bool Builder::read_data() {
  const ir::Value* v = arg("data");
  if (!v) return true;
  auto parse_entry = [&](const std::string& entry, const ir::Value& at) -> bool {
    // The launcher's rule for run-time entries (rules::parse_data_entry).
    auto parsed = rules::parse_data_entry(entry);
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

// `workspace: "/ws"`: the run's claim as one more data entry, the value kWorkspaceValue
// that each target fills with its run's claim name; so the data are always bound, a
// literal entry as a value of its own (sema: a literal path, and a pipeline that has one).
bool Builder::read_workspace() {
  const ir::Value* v = arg("workspace");
  if (!v || !v->is_literal() || ir::literal_text(v->literal).empty()) return ok_;
  std::string path = ir::literal_text(v->literal);
  auto parsed = rules::parse_data_entry(std::string(ir::kWorkspaceVolume) + ":" + path);
  if (!parsed || path.find("{{") != std::string::npos) {  // a target's tag beside the claim's
    error(*v, "workspace path '" + path + "' of " + step_.op +
                  " must be an absolute path without ':', '..', '{{' or control characters");
    return false;
  }
  for (const auto& d : data_)
    if (d.path == parsed->path) {
      error(*v, "workspace path '" + path + "' of " + step_.op + " is a data entry's mount path too");
      return false;
    }
  if (data_input.empty()) {
    for (const auto& d : data_) {  // literal entries: each a value of its own
      std::string name = "data_entry";
      for (int n = 2; used_inputs_.count(name); ++n) name = "data_entry_" + std::to_string(n);
      used_inputs_.insert(name);
      literal_values_.emplace_back(name, d.claim + ":" + d.path);
      data_input += (data_input.empty() ? "" : ",") + name;
    }
  }
  data_input += (data_input.empty() ? "" : ",") + std::string(kWorkspaceValue);
  data_.push_back({ir::kWorkspaceVolume, parsed->path});
  workspace_path_ = parsed->path;
  return ok_;
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
  // at run time; compiler/shell places it in the script by its quoting context.
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
    // Node labels by the launcher's rule for run-time values (rules::is_label_key/value).
    auto label_ok = [&](const std::string& key, const std::string* text) {
      if (rules::is_label_key(key) && (!text || rules::is_label_value(*text))) return true;
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
      auto tol = rules::toleration_json(t);
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
  rules::MetricSet set;
  std::size_t count = 0;
  auto literal_spec = [&](const std::string& spec, const ir::Value& at) {
    ++count;
    std::string problem;
    auto parsed = rules::parse_metric_spec(spec, problem);
    if (parsed) problem = set.add(*parsed);
    if (!problem.empty()) {
      error(at, problem);
      return;
    }
    rules::add_launcher_arg(metric_args_, Option::Metric, spec);
  };
  auto runtime_spec = [&](const ir::Value& item) {
    ++count;
    // A run that keeps the parameter's default would stop at the launcher (exit 2).
    if (const ir::Ref* ref = ir::whole_ref(item)) {
      std::optional<ir::Literal> def = ref_default(*ref);
      if (def && def->is_string() &&
          !rules::metric_name_reportable(rules::split_metric_spec(def->get<std::string>()).name))
        diags_.warning(where(item), "the default '" + def->get<std::string>() + "' of '" +
                                        ref->name + "' cannot be reported as a metric: " +
                                        rules::kMetricNameRule + "; a run that keeps it fails");
    }
    std::string input = input_for("metric_" + std::to_string(count - 1), item);
    rules::add_launcher_arg(metric_args_, Option::MetricValue, input);
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
        if (item.is_string() && !rules::metric_name_reportable(rules::split_metric_spec(item.get<std::string>()).name))
          diags_.warning(where(*v), "the default '" + item.get<std::string>() + "' of '" +
                                        ir::whole_ref(*v)->name + "' cannot be reported as a metric: " +
                                        rules::kMetricNameRule + "; a run that keeps it fails");
    }
    metric_list_input_ = input_for("metrics", *v);
    rules::add_launcher_arg(metric_args_, Option::MetricListValue, metric_list_input_);
    call_.writes_metrics = true;
  } else {
    error(*v, "argument " + op_arg("metrics") + " must list the metric names or be a list<string> parameter");
  }
  if (std::string problem = rules::MetricSet::count_problem(count); !problem.empty()) error(*v, problem);
  if (count > 0) call_.writes_metrics = true;
  return ok_;
}

// `retry_limit`, `retry_on`, `memory_factor`, `memory_max`: the launcher creates a failed
// job again (docs/runtime.md "Retries"). Literals, checked by sema with the rules of a
// container op's `retries {limit, on, memory_factor, memory_max}`.
void Builder::add_retry_options() {
  auto text = [&](const char* name) -> std::string {
    const ir::Value* v = arg(name);
    return v && v->is_literal() ? ir::literal_text(v->literal) : "";
  };
  std::string limit = text("retry_limit");
  if (limit.empty() || limit == "0") return;
  auto& a = call_.args;
  add_arg(a, Option::RetryLimit, limit);
  std::string on;
  if (const ir::Value* v = arg("retry_on")) {
    auto add = [&](const ir::Literal& item) {
      if (item.is_string()) on += (on.empty() ? "" : ",") + item.get<std::string>();
    };
    if (v->is_literal() && v->literal.is_array())
      for (const auto& item : v->literal) add(item);
    else if (v->kind == ir::Value::Kind::List)
      for (const auto& item : v->items)
        if (item.is_literal()) add(item.literal);
  }
  if (!on.empty()) add_arg(a, Option::RetryOn, on);
  const ir::Value* factor = arg("memory_factor");
  if (factor && factor->is_literal() && factor->literal.is_number() && factor->literal.get<double>() > 0) {
    add_arg(a, Option::MemoryFactor, text("memory_factor"));
    if (std::string q = text("memory_max"); !q.empty()) add_arg(a, Option::MemoryMax, q);
  }
}

}  // namespace pipec::training::detail
