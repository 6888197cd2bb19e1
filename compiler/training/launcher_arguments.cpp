// Reading a training op's arguments for its launcher call: each literal as sema checked it
// (compiler/sema/check_training.cpp, by the rules the launcher applies to a run-time value),
// each value known only at run time given a template input (docs/training-ops.md).
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
  if (auto it = scalars_.find("gpu_resource"); it != scalars_.end() && !it->second.input.empty())
    gpu_resource_input_ = it->second.input;
  return ok_;
}

// `labels` and `annotations`: on the job and every pod template (sema has checked a literal
// entry; the launcher checks an entry from a value, a label by the `label` binding).
bool Builder::read_metadata() {
  for (const char* field : {"labels", "annotations"}) {
    const ir::Value* v = arg(field);
    if (!v) continue;
    bool label = std::string_view(field) == "labels";
    Json& out = label ? labels_ : annotations_;
    auto add = [&](const std::string& key, const ir::Value& value) {
      if (value.kind == ir::Value::Kind::Literal) {
        out[key] = ir::literal_text(value.literal);
        return;
      }
      auto s = scalar(std::string(label ? "label_" : "annotation_") + key, value, label ? "placeholder" : "");
      if (!s) return;
      out[key] = ir::literal_text(s->value);
      (label ? label_inputs_ : annotation_inputs_).emplace_back(key, s->input);
    };
    (void)each_entry(*v, add);
  }
  return ok_;
}

bool Builder::read_data() {
  const ir::Value* v = arg("data");
  if (!v) return true;
  auto parse_entry = [&](const std::string& entry) {
    // The launcher's rule for run-time entries (rules::parse_data_entry), which sema has
    // applied to the literals and the parameters' defaults.
    auto parsed = rules::parse_data_entry(entry);
    if (!parsed) return;
    for (const auto& d : data_)
      if (d.path == parsed->path) return;
    data_.push_back({parsed->claim, parsed->path});
  };
  if (v->kind == ir::Value::Kind::Literal) {
    for (const auto& item : v->literal)
      if (item.is_string()) parse_entry(item.get<std::string>());
    return ok_;
  }
  // Known only at run time: the manifest holds the defaults (when known), the `data`
  // binding replaces the volumes in every replica.
  if (const ir::Ref* r = ir::whole_ref(*v)) {
    if (auto def = ref_default(*r)) {
      if (def->is_array())
        for (const auto& item : *def)
          if (item.is_string()) parse_entry(item.get<std::string>());
    }
  } else if (v->kind == ir::Value::Kind::List) {
    for (const auto& item : v->items) {
      if (item.kind == ir::Value::Kind::Literal) {
        if (item.literal.is_string()) parse_entry(item.literal.get<std::string>());
      } else if (const ir::Ref* r = ir::whole_ref(item)) {
        if (auto def = ref_default(*r); def && def->is_string())
          parse_entry(def->get<std::string>());
      } else if (item.kind == ir::Value::Kind::Interpolation) {
        if (auto text = interpolated_default(item)) parse_entry(*text);
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
  if (!parsed) return ok_;  // sema: a path the launcher takes, no data entry's
  if (data_input.empty()) {
    for (const auto& d : data_) {  // literal entries: each a value of its own
      std::string name = "data_entry";
      for (int n = 2; used_inputs_.count(name); ++n) name = "data_entry_" + std::to_string(n);
      used_inputs_.insert(name);
      literal_values_.emplace_back(name, d.claim + ":" + d.path);
      data_input += (data_input.empty() ? "" : ",") + name;
    }
  }
  data_input += (data_input.empty() ? "" : ",") + std::string(ir::kWorkspaceValue);
  data_.push_back({ir::kWorkspaceVolume, parsed->path});
  workspace_path_ = parsed->path;
  return ok_;
}

bool Builder::read_env() {
  const ir::Value* v = arg("env");
  if (!v) return true;
  auto add = [&](const std::string& key, const ir::Value& value) {
    if (!rules::is_env_name(key) || rules::env_reserved_by(key, true)) return;  // sema refused it
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
        if (eq == std::string::npos) continue;  // sema refused it
        add(kv.substr(0, eq), lit);
      }
  } else if (v->kind == ir::Value::Kind::Map) {
    for (const auto& [k, val] : v->entries) add(k, val);
  } else if (ir::whole_ref(*v) && v->type.kind == ir::TypeKind::Map) {
    // A map<string> value: the launcher adds its variables, with the same name rules.
    env_map_input_ = input_for("env", *v);
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
    return ok_;  // sema: a string
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
    // Node labels, literal ones checked by sema (the container ops' rule), run-time ones
    // by the launcher (rules::is_label_key/value).
    if (!each_entry(*v, add) && ir::whole_ref(*v) && v->type.kind == ir::TypeKind::Map)
      node_selector_input_ = input_for("node_selector", *v);
  }
  if (const ir::Value* v = arg("tolerations")) {
    // A list<string> value: the launcher reads it with the same rule as sema a literal.
    if (ir::whole_ref(*v)) {
      tolerations_input_ = input_for("tolerations", *v);
      return ok_;
    }
    if (v->is_literal())
      for (const auto& item : v->literal)
        if (auto tol = rules::toleration_json(item.is_string() ? item.get<std::string>() : ""))
          tolerations_.push_back(Json::parse(*tol));
  }
  return ok_;
}

bool Builder::read_metrics() {
  const ir::Value* v = arg("metrics");
  if (!v) return true;
  rules::MetricSet set;
  std::size_t count = 0;
  auto literal_spec = [&](const std::string& spec) {
    ++count;
    std::string problem;
    auto parsed = rules::parse_metric_spec(spec, problem);
    if (parsed) problem = set.add(*parsed);
    if (!problem.empty()) return;  // sema refused it
    add_arg(metric_args_, Option::Metric, spec);
  };
  auto runtime_spec = [&](const ir::Value& item) {
    ++count;
    std::string input = input_for("metric_" + std::to_string(count - 1), item);
    add_arg(metric_args_, Option::MetricValue, input);
  };
  if (v->kind == ir::Value::Kind::Literal) {
    for (const auto& item : v->literal)
      if (item.is_string()) literal_spec(item.get<std::string>());
  } else if (v->kind == ir::Value::Kind::List) {
    for (const auto& item : v->items) {
      if (item.kind == ir::Value::Kind::Literal && item.literal.is_string())
        literal_spec(item.literal.get<std::string>());
      else if (ir::whole_ref(item) || item.kind == ir::Value::Kind::Interpolation)
        runtime_spec(item);
    }
  } else if (ir::whole_ref(*v)) {
    // A list<string> value: the launcher checks each spec by the same rules (sema warns
    // about a default it would refuse).
    if (auto def = ref_default(*ir::whole_ref(*v)); def && def->is_array()) count += def->size();
    metric_list_input_ = input_for("metrics", *v);
    add_arg(metric_args_, Option::MetricListValue, metric_list_input_);
    call_.writes_metrics = true;
  }
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
