// The literal arguments of `train_job` (a Kubeflow Trainer v2 TrainJob on any runtime,
// docs/training-ops.md "train_job"), each checked at its place by the rule the launcher
// applies to a run-time value (runtime/trainer_v2.hpp, rules/). The arguments train_job
// shares with the other training ops (data, node placement, metadata, the queue, /dev/shm,
// metrics, timeouts) are read and checked once for all of them by their lowering
// (compiler/training).
#include <fmt/format.h>

#include <string>

#include "compiler/sema/checker.hpp"
#include "rules/kubernetes.hpp"
#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "runtime/trainer_v2.hpp"

namespace pipec::sema::detail {

namespace {

// One row per argument: what a literal must be, and the rule.
struct TextRule {
  const char* name;
  const char* what;
  bool (*ok)(std::string_view);
};

bool is_runtime_name(std::string_view t) { return rules::is_dns1123_subdomain(t); }
bool is_name_or_empty(std::string_view t) { return t.empty() || rules::is_dns1123_subdomain(t); }
bool is_quantity_or_empty(std::string_view t) { return t.empty() || rules::is_quantity(t); }
bool is_resource_or_empty(std::string_view t) { return t.empty() || rules::is_resource_name(t); }

constexpr TextRule kTextRules[] = {
    {"trainer_runtime", "the name of a training runtime (lower-case letters, digits, '-' and '.')",
     is_runtime_name},
    {"trainer_runtime_kind", "'ClusterTrainingRuntime' or 'TrainingRuntime'", runtime::is_trainer_runtime_kind},
    {"cpu_limit", "a Kubernetes quantity such as '2' or '500m'", is_quantity_or_empty},
    {"memory_limit", "a Kubernetes quantity such as '10Gi'", is_quantity_or_empty},
    {"gpu_resource", "a resource name such as 'amd.com/gpu'", is_resource_or_empty},
    {"dataset_uri", "a storage URI scheme://... (e.g. 'hf://tatsu-lab/alpaca', 's3://bucket/path')",
     runtime::is_storage_uri},
    {"model_uri", "a storage URI scheme://... (e.g. 'hf://meta-llama/Llama-3.2-1B-Instruct')",
     runtime::is_storage_uri},
    {"dataset_secret", "the name of a Secret (lower-case letters, digits, '-' and '.')", is_name_or_empty},
    {"model_secret", "the name of a Secret (lower-case letters, digits, '-' and '.')", is_name_or_empty},
};

struct IntRule {
  const char* name;
  long min;
  long max;
};
constexpr IntRule kIntRules[] = {
    {"num_nodes", 1, rules::kMaxReplicas},
    {"num_proc_per_node", 0, 2147483647L},
    {"gpus", 0, 2147483647L},
};

}  // namespace

void Checker::check_train_job(const std::vector<std::pair<std::string, Value>>& args) {
  for (const auto& [name, v] : args) {
    if (!v.is_literal()) continue;  // a run-time value: the launcher applies the same rule
    for (const TextRule& rule : kTextRules)
      if (name == rule.name && v.literal.is_string() && !rule.ok(v.literal.get<std::string>()))
        diags_.error(v.range, fmt::format("argument '{}' of train_job must be {}, got '{}'", name, rule.what,
                                          v.literal.get<std::string>()));
    for (const IntRule& rule : kIntRules)
      if (name == rule.name && v.literal.is_number_integer() &&
          (v.literal.get<long long>() < rule.min || v.literal.get<long long>() > rule.max))
        diags_.error(v.range, fmt::format("argument '{}' of train_job must be {} to {}, got {}", name, rule.min,
                                          rule.max, v.literal.get<long long>()));
  }
  // Environment variables: names a container may have, none that Trainer sets itself.
  for (const auto& [arg_name, v] : args) {
    if (arg_name != "env" && arg_name != "dataset_env" && arg_name != "model_env") continue;
    const std::string& name = arg_name;  // a lambda may not take a structured binding (clang 14)
    auto check = [&](const std::string& key, SourceRange at) {
      if (!rules::is_env_name(key))
        diags_.error(at, fmt::format("environment variable name '{}' in '{}' of train_job must match "
                                     "[A-Za-z_][A-Za-z0-9_]*", key, name));
      else if (const char* by = rules::env_reserved_by(key, true))
        diags_.error(at, fmt::format("environment variable '{}' in '{}' of train_job is reserved (set by {})",
                                     key, name, by));
      else if (runtime::is_trainer_reserved_env(key))
        diags_.error(at, fmt::format("environment variable '{}' in '{}' of train_job is set by Trainer "
                                     "(its webhook refuses a TrainJob that sets it)", key, name));
    };
    if (v.is_literal() && v.literal.is_object())
      for (const auto& [key, item] : v.literal.items()) check(key, v.range);
    for (const auto& [key, item] : v.entries) check(key, item.range.valid() ? item.range : v.range);
  }
  // The command and its arguments are words of the TrainJob: a literal list, each item
  // a literal or a run-time value (never a list given whole).
  for (const auto& [name, v] : args)
    if ((name == "command" || name == "args") && !v.is_literal() && v.kind != Value::Kind::List)
      diags_.error(v.range, fmt::format("argument '{}' of train_job must list its words ([\"python\", "
                                        "\"train.py\"]); each word may be a run-time value", name));
}

}  // namespace pipec::sema::detail
