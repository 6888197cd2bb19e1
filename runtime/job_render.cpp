// render_job(): bindings -> rendered job.
// Expects the manifest the compiler wrote (the job for the default values). Guarantees that
// a run-time text reaches the job only as a typed JSON value at its bound pointer (never
// as structure), and that every problem is reported before anything talks to the API.
#include "runtime/job_render.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/json.hpp"
#include "input/utf8.hpp"
#include "runtime/trainer_v2.hpp"

namespace pipec::runtime {

using rules::BindingKind;
using rules::DataEntry;
using rules::is_clean_pod_policy;
using rules::is_label_key;
using rules::is_label_value;
using rules::is_quantity;
using rules::is_resource_name;
using rules::is_success_policy;
using rules::kMaxReplicas;
using rules::parse_data_entry;
using rules::toleration_json;
using rules::within_max_replicas;
namespace {

using nlohmann::json;

// The options' words, for messages (rules/launcher_cli.def).
const std::string_view kBind = rules::launcher_option(rules::LauncherOption::Bind).word;
const std::string_view kValue = rules::launcher_option(rules::LauncherOption::Value).word;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// The smallest value an int binding may take, from the field it replaces.
std::int64_t int_minimum(std::string_view pointer) {
  auto last = pointer.substr(pointer.rfind('/') + 1);
  if (last == "replicas" || last == "slotsPerWorker" || last == "nprocPerNode" ||
      last == "minReplicas" || last == "maxReplicas" || last == "numNodes" || last == "numProcPerNode")
    return 1;
  if (last == "backoffLimit" || last == "activeDeadlineSeconds" ||
      last == "ttlSecondsAfterFinished" || last == "minAvailable" ||
      last == "scheduleTimeoutSeconds")
    return 0;
  return std::numeric_limits<std::int64_t>::min();
}

}  // namespace

bool is_git_sync_setting(std::string_view name) { return name == "GIT_SYNC_BRANCH" || name == "GIT_SYNC_REV"; }

namespace {

// Text in a message: quoted as JSON, a byte that is not UTF-8 as U+FFFD (never a throw).
std::string json_quote(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
}

// "" when `text` is UTF-8, else where it is not: "byte 0xFF at byte 3 of it".
std::string utf8_problem(std::string_view text) {
  std::size_t bad = first_invalid_utf8(text);
  if (bad == std::string_view::npos) return {};
  return fmt::format("byte 0x{:02X} at byte {} of it is not UTF-8", static_cast<unsigned char>(text[bad]),
                     bad + 1);
}

std::optional<std::vector<DataEntry>> parse_data(const std::string& name, std::string_view text,
                                                 std::string& error) {
  std::vector<std::string> items;
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {
    json list = input::parse_json(text);
    if (list.is_discarded() || !list.is_array()) {
      error = fmt::format("value '{}' must be a JSON list of strings, got {}", name, json_quote(text));
      return std::nullopt;
    }
    for (const auto& item : list) {
      if (!item.is_string()) {
        error = fmt::format("value '{}' must be a JSON list of strings, got {}", name,
                            json_quote(text));
        return std::nullopt;
      }
      items.push_back(item.get<std::string>());
    }
  } else {
    items.emplace_back(text);
  }
  std::vector<DataEntry> entries;
  std::set<std::string> paths;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    auto parsed = parse_data_entry(item);
    if (!parsed) {
      error = fmt::format(
          "value '{}' entry {} must be pvc-name:/mount/path (a lower-case claim name and an "
          "absolute path without ':' or '..'), got {}",
          name, i + 1, json_quote(item));
      return std::nullopt;
    }
    if (!paths.insert(parsed->path).second) {
      error = fmt::format("value '{}' entry {} mounts '{}' a second time", name, i + 1,
                          parsed->path);
      return std::nullopt;
    }
    entries.push_back(std::move(*parsed));
  }
  return entries;
}

bool is_data_name(const json& item) {
  if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) return false;
  const auto& n = item["name"].get_ref<const std::string&>();
  if (n.size() < 6 || n.compare(0, 5, "data-") != 0) return false;
  for (std::size_t i = 5; i < n.size(); ++i)
    if (n[i] < '0' || n[i] > '9') return false;
  return true;
}

void remove_data_items(json& list) {
  if (!list.is_array()) return;
  json kept = json::array();
  for (auto& item : list)
    if (!is_data_name(item)) kept.push_back(std::move(item));
  list = std::move(kept);
}

// The pod templates at a binding's pointer: each replica's of a replica-spec map, or each
// replicated job's of a TrainJob's runtime patch (an object with `replicatedJobs`, whose
// items hold their pod template at template.spec.template). Nullopt, with `error`, when
// the pointer holds neither.
std::optional<std::vector<json*>> pod_templates(json& slot, const Binding& b, std::string& error) {
  std::vector<json*> out;
  if (slot.is_object() && slot.contains("replicatedJobs") && slot["replicatedJobs"].is_array()) {
    for (auto& job : slot["replicatedJobs"]) {
      json* pod = job.is_object() ? &job["template"]["spec"]["template"] : nullptr;
      if (!pod || !pod->is_object()) {
        error = fmt::format("binding for '{}': a replicated job of '{}' has no pod template", b.name, b.pointer);
        return std::nullopt;
      }
      out.push_back(pod);
    }
    return out;
  }
  if (!slot.is_object()) {
    error = fmt::format("binding for '{}': '{}' is not a replica-spec map", b.name, b.pointer);
    return std::nullopt;
  }
  for (auto& [type, replica] : slot.items()) {
    if (!replica.is_object() || !replica.contains("template") || !replica["template"].is_object()) {
      error = fmt::format("binding for '{}': replica '{}' has no pod template", b.name, type);
      return std::nullopt;
    }
    out.push_back(&replica["template"]);
  }
  return out;
}

// Replaces the data-N volumes and mounts of every replica's pod template.
bool apply_data(json& replicas, const std::vector<DataEntry>& entries, const Binding& b,
                std::string& error) {
  auto templates = pod_templates(replicas, b, error);
  if (!templates) return false;
  for (json* pod : *templates) {
    json& spec = (*pod)["spec"];
    if (!spec.is_object()) spec = json::object();
    json& volumes = spec["volumes"];
    if (!volumes.is_array()) volumes = json::array();
    remove_data_items(volumes);
    for (std::size_t i = 0; i < entries.size(); ++i)
      volumes.push_back({{"name", fmt::format("data-{}", i)},
                         {"persistentVolumeClaim", {{"claimName", entries[i].claim}}}});
    if (volumes.empty()) spec.erase("volumes");
    for (const char* key : {"containers", "initContainers"}) {
      if (!spec.contains(key) || !spec[key].is_array()) continue;
      bool is_init = std::string_view(key) == "initContainers";
      for (auto& container : spec[key]) {
        if (!container.is_object()) continue;
        json& mounts = container["volumeMounts"];
        if (!mounts.is_array()) mounts = json::array();
        bool had_data = false;
        for (const auto& m : mounts) had_data = had_data || is_data_name(m);
        remove_data_items(mounts);
        // Init containers (git sync, ...) get the data only if the compiler mounted it.
        if (!is_init || had_data)
          for (std::size_t i = 0; i < entries.size(); ++i)
            mounts.push_back({{"name", fmt::format("data-{}", i)}, {"mountPath", entries[i].path}});
        if (mounts.empty()) container.erase("volumeMounts");
      }
    }
  }
  return true;
}

// Calls `f` with every pod template at the binding's pointer (pod_templates).
template <typename F>
bool for_each_template(json& replicas, const Binding& b, std::string& error, F f) {
  auto templates = pod_templates(replicas, b, error);
  if (!templates) return false;
  for (json* pod : *templates) f(*pod);
  return true;
}

// Calls `f` with the pod spec of every replica of the replica-spec map `replicas`.
template <typename F>
bool for_each_pod(json& replicas, const Binding& b, std::string& error, F f) {
  return for_each_template(replicas, b, error, [&](json& pod) {
    json& spec = pod["spec"];
    if (!spec.is_object()) spec = json::object();
    f(spec);
  });
}

// Sets the label `key` of an object's metadata to `value`, or removes it when `value` is "".
void set_label(json& metadata, std::string_view key, const std::string& value) {
  if (!metadata.is_object()) metadata = json::object();
  json& labels = metadata["labels"];
  if (!labels.is_object()) labels = json::object();
  if (value.empty()) labels.erase(std::string(key));
  else labels[std::string(key)] = value;
  if (labels.empty()) metadata.erase("labels");
}

// A Kueue queue: the queue label on the job and every pod template, and the job suspended
// until Kueue admits it; "" takes all of it away (rules/kubernetes.hpp).
bool apply_queue(json& job, json& replicas, const Binding& b, const std::string& text, std::string& error) {
  if (!text.empty() && !is_label_value(text)) {
    error = fmt::format("value '{}' must be a Kueue queue name (a label value: at most 63 of "
                        "[A-Za-z0-9-_.], alphanumeric at both ends), got {}",
                        b.name, json_quote(text));
    return false;
  }
  // A TrainJob: the label on the TrainJob (Kueue's TrainJob integration reads it there)
  // and spec.suspend.
  if (job["kind"] == "TrainJob") {
    set_label(job["metadata"], rules::kKueueQueueLabel, text);
    if (text.empty()) job["spec"].erase("suspend");
    else job["spec"]["suspend"] = true;
    return true;
  }
  if (!for_each_template(replicas, b, error, [&](json& pod) { set_label(pod["metadata"], rules::kKueueQueueLabel, text); }))
    return false;
  set_label(job["metadata"], rules::kKueueQueueLabel, text);
  json& run_policy = job["spec"]["runPolicy"];
  if (!run_policy.is_object()) run_policy = json::object();
  if (text.empty()) run_policy.erase("suspend");
  else run_policy["suspend"] = true;
  return true;
}

// Every pod's PriorityClass, and the gang's (runPolicy.schedulingPolicy) when it has one.
bool apply_priority_class(json& job, json& replicas, const Binding& b, const std::string& text, std::string& error) {
  if (!text.empty() && !is_dns1123_subdomain(text)) {
    error = fmt::format("value '{}' must be a PriorityClass name (lower-case letters, digits, '-' and '.'), got {}",
                        b.name, json_quote(text));
    return false;
  }
  if (!for_each_pod(replicas, b, error, [&](json& spec) {
        if (text.empty()) spec.erase("priorityClassName");
        else spec["priorityClassName"] = text;
      }))
    return false;
  json& spec = job["spec"];
  if (spec.contains("runPolicy") && spec["runPolicy"].is_object() && spec["runPolicy"].contains("schedulingPolicy") &&
      spec["runPolicy"]["schedulingPolicy"].is_object()) {
    json& policy = spec["runPolicy"]["schedulingPolicy"];
    if (text.empty()) policy.erase("priorityClass");
    else policy["priorityClass"] = text;
  }
  return true;
}

// A TrainJob's trainer or initializer (spec.trainer, spec.initializer.dataset or .model):
// the variables of an env-map value added to its own env list, none that Trainer sets.
bool add_trainjob_env(json& slot, const json& map, const Binding& b, std::string& error) {
  json& env = slot["env"];
  if (!env.is_array()) env = json::array();
  for (const auto& [k, v] : map.items()) {
    if (is_trainer_reserved_env(k)) {
      error = fmt::format("value '{}': {} is set by Trainer and cannot be set by the step", b.name, json_quote(k));
      return false;
    }
    env.push_back({{"name", k}, {"value", v}});
  }
  if (env.empty()) slot.erase("env");
  return true;
}

// A TrainJob's GPUs (the gpu-resource binding at spec.trainer): resourcesPerNode's limit
// under the resource `name`.
void rename_trainjob_gpu(json& trainer, const std::string& name) {
  if (!trainer.contains("resourcesPerNode")) return;
  json& limits = trainer["resourcesPerNode"]["limits"];
  if (!limits.is_object() || !limits.contains("nvidia.com/gpu") || name == "nvidia.com/gpu") return;
  limits[name] = limits["nvidia.com/gpu"];
  limits.erase("nvidia.com/gpu");
}

// An integer field (replicas, a count of processes, a timeout): bounded below by the
// field's minimum and above by int32 and, for replicas, kMaxReplicas.
bool apply_int(json& slot, const Binding& b, const std::string& text, std::string& error) {
  std::int64_t v = 0;
  auto min = int_minimum(b.pointer);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  bool parsed = !text.empty() && ec == std::errc() && end == text.data() + text.size();
  if (parsed && ((b.pointer.size() >= 9 && b.pointer.substr(b.pointer.size() - 9) == "/replicas") ||
                 b.pointer == "/spec/trainer/numNodes") &&
      !within_max_replicas(v)) {
    error = fmt::format("value '{}' must be at most {} (replicas of one role), got {}", b.name,
                        kMaxReplicas, json_quote(text));
    return false;
  }
  if (!parsed || v < min || v > std::numeric_limits<std::int32_t>::max()) {
    error = min == std::numeric_limits<std::int64_t>::min()
                ? fmt::format("value '{}' must be an integer, got {}", b.name, json_quote(text))
                : fmt::format("value '{}' must be an integer >= {}, got {}", b.name, min,
                              json_quote(text));
    return false;
  }
  slot = v;
  return true;
}

// The role itself: 0 removes it from the job, n >= 1 sets its replicas. A chief or master
// is one pod or none.
bool apply_count(json& job, const json::json_pointer& ptr, json& slot, const Binding& b, const std::string& text,
                 std::string& error) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  bool parsed = !text.empty() && ec == std::errc() && end == text.data() + text.size();
  std::string role = b.pointer.substr(b.pointer.rfind('/') + 1);
  std::int64_t max = role == "Chief" || role == "Master" ? 1 : std::numeric_limits<std::int32_t>::max();
  if (!parsed || v < 0 || v > max) {
    error = max == 1 ? fmt::format("value '{}' must be 0 or 1 (replicas of {}), got {}", b.name, role,
                                   json_quote(text))
                     : fmt::format("value '{}' must be an integer >= 0 (replicas of {}), got {}",
                                   b.name, role, json_quote(text));
    return false;
  }
  if (!within_max_replicas(v)) {
    error = fmt::format("value '{}' must be at most {} (replicas of {}), got {}", b.name, kMaxReplicas,
                        role, json_quote(text));
    return false;
  }
  if (v == 0) {
    job[ptr.parent_pointer()].erase(role);
  } else {
    slot["replicas"] = v;
  }
  return true;
}

// Every pod's tolerations, from a JSON list of 'key[=value][:Effect]' texts.
bool apply_tolerations(json& slot, const Binding& b, const std::string& text, std::string& error) {
  json list = input::parse_json(text);
  if (list.is_discarded() || !list.is_array()) {
    error = fmt::format("value '{}' must be a JSON list of tolerations, got {}", b.name, json_quote(text));
    return false;
  }
  json tolerations = json::array();
  for (const auto& item : list) {
    auto t = item.is_string() ? toleration_json(item.get<std::string>()) : std::nullopt;
    if (!t) {
      error = fmt::format("value '{}': toleration {} must be 'key[=value][:Effect]' or '*' "
                          "(Effect NoSchedule, PreferNoSchedule or NoExecute)",
                          b.name, item.dump());
      return false;
    }
    tolerations.push_back(json::parse(*t));
  }
  return for_each_pod(slot, b, error, [&](json& spec) {
    if (tolerations.empty()) spec.erase("tolerations");
    else spec["tolerations"] = tolerations;
  });
}

// A JSON object of strings: every pod's node selector, or environment variables of every
// main container (and the git-sync settings among them, of its init container).
bool apply_map(json& job, json& slot, const Binding& b, const std::string& text, std::string& error) {
  json map = input::parse_json(text);
  bool ok = !map.is_discarded() && map.is_object();
  for (auto it = ok ? map.begin() : map.end(); ok && it != map.end(); ++it) ok = it->is_string();
  if (!ok) {
    error = fmt::format("value '{}' must be a JSON object of strings, got {}", b.name, json_quote(text));
    return false;
  }
  if (b.kind == BindingKind::NodeSelector) {
    for (const auto& [k, v] : map.items())
      if (!is_label_key(k) || !is_label_value(v.get<std::string>())) {
        error = fmt::format("value '{}': {}: {} is not a node label (a key such as "
                            "'cloud.google.com/gke-nodepool', a value of at most 63 of "
                            "[A-Za-z0-9-_.])",
                            b.name, json_quote(k), json_quote(v.get<std::string>()));
        return false;
      }
    return for_each_pod(slot, b, error, [&](json& spec) {
      json& selector = spec["nodeSelector"];
      if (!selector.is_object()) selector = json::object();
      for (const auto& [k, v] : map.items()) selector[k] = v;
      if (selector.empty()) spec.erase("nodeSelector");
    });
  }
  for (const auto& [k, v] : map.items()) {
    if (!rules::is_env_name(k) || rules::env_reserved_by(k, true)) {
      error = fmt::format("value '{}': {} is not an environment variable name a step may set "
                          "([A-Za-z_][A-Za-z0-9_]*, not PIPEC_* or TF_CONFIG)",
                          b.name, json_quote(k));
      return false;
    }
  }
  if (job["kind"] == "TrainJob") return add_trainjob_env(slot, map, b, error);
  return for_each_pod(slot, b, error, [&](json& spec) {
    if (!spec.contains("containers") || !spec["containers"].is_array() || spec["containers"].empty()) return;
    json& env = spec["containers"][0]["env"];
    if (!env.is_array()) env = json::array();
    for (const auto& [k, v] : map.items()) env.push_back({{"name", k}, {"value", v}});
    if (env.empty()) spec["containers"][0].erase("env");
    // The clone's settings reach the git-sync init container as well.
    if (!spec.contains("initContainers") || !spec["initContainers"].is_array()) return;
    for (auto& init : spec["initContainers"]) {
      if (!init.is_object() || init.value("name", "") != "git-sync") continue;
      json& init_env = init["env"];
      if (!init_env.is_array()) init_env = json::array();
      for (const auto& [k, v] : map.items()) {
        if (!is_git_sync_setting(k)) continue;
        bool replaced = false;
        for (auto& e : init_env)
          if (e.is_object() && e.value("name", "") == k) e["value"] = v, replaced = true;
        if (!replaced) init_env.push_back({{"name", k}, {"value", v}});
      }
    }
  });
}

// The resource the GPUs are counted under (amd.com/gpu ...), in every container's limits.
bool apply_gpu_resource(json& job, json& slot, const Binding& b, const std::string& text, std::string& error) {
  std::string name = text.empty() ? "nvidia.com/gpu" : text;
  if (!is_resource_name(name)) {
    error = fmt::format("value '{}' must be a resource name such as amd.com/gpu, got {}", b.name,
                        json_quote(text));
    return false;
  }
  if (job["kind"] == "TrainJob") return rename_trainjob_gpu(slot, name), true;
  return for_each_pod(slot, b, error, [&](json& spec) {
    if (!spec.contains("containers") || !spec["containers"].is_array()) return;
    for (auto& c : spec["containers"]) {
      if (!c.is_object() || !c.contains("resources") || !c["resources"].contains("limits")) continue;
      json& limits = c["resources"]["limits"];
      if (!limits.contains("nvidia.com/gpu") || name == "nvidia.com/gpu") continue;
      limits[name] = limits["nvidia.com/gpu"];
      limits.erase("nvidia.com/gpu");
    }
  });
}

bool apply_binding(json& job, const Binding& b, const std::string& text, std::string& error) {
  json::json_pointer ptr;
  try {
    ptr = json::json_pointer(b.pointer);
  } catch (const json::exception&) {
    error = fmt::format("binding for '{}': '{}' is not a JSON pointer", b.name, b.pointer);
    return false;
  }
  bool present = false;
  try {
    present = !b.pointer.empty() && job.contains(ptr);
  } catch (const json::exception&) {  // a token that is no array index, on an array
  }
  if (!present) {
    error = fmt::format("binding for '{}': '{}' is not in the manifest", b.name, b.pointer);
    return false;
  }
  json& slot = job[ptr];
  // A value replaces one field; the kinds that edit a replica spec need an object there.
  bool one_value = b.kind == BindingKind::String || b.kind == BindingKind::Env || b.kind == BindingKind::Int ||
                   b.kind == BindingKind::Quantity || b.kind == BindingKind::Bool ||
                   b.kind == BindingKind::CleanPodPolicy || b.kind == BindingKind::Label;
  if (one_value ? slot.is_structured() : !slot.is_object()) {
    error = fmt::format("binding for '{}': '{}' is {} in the manifest, not {}", b.name, b.pointer,
                        slot.is_object() ? "an object" : slot.is_array() ? "a list" : "a single value",
                        one_value ? "a single value" : "an object");
    return false;
  }
  switch (b.kind) {
    case BindingKind::String:
    case BindingKind::Env:
      slot = text;
      return true;
    case BindingKind::Int: return apply_int(slot, b, text, error);
    case BindingKind::Quantity:
      if (!is_quantity(text)) {
        error = fmt::format(
            "value '{}' must be a Kubernetes quantity (e.g. 2, 500m, 10Gi), got {}", b.name,
            json_quote(text));
        return false;
      }
      slot = text;
      return true;
    case BindingKind::Bool:
      if (text != "true" && text != "false") {
        error = fmt::format("value '{}' must be true or false, got {}", b.name, json_quote(text));
        return false;
      }
      slot = text == "true";
      return true;
    case BindingKind::Data: {
      auto entries = parse_data(b.name, text, error);
      return entries && apply_data(slot, *entries, b, error);
    }
    case BindingKind::Count: return apply_count(job, ptr, slot, b, text, error);
    case BindingKind::Tolerations: return apply_tolerations(slot, b, text, error);
    case BindingKind::NodeSelector:
    case BindingKind::EnvMap: return apply_map(job, slot, b, text, error);
    case BindingKind::GpuResource: return apply_gpu_resource(job, slot, b, text, error);
    case BindingKind::CleanPodPolicy:
      if (!is_clean_pod_policy(text)) {
        error = fmt::format("value '{}' must be None, Running or All, got {}", b.name, json_quote(text));
        return false;
      }
      slot = text;
      return true;
    case BindingKind::Label:
      if (!is_label_value(text)) {
        error = fmt::format("value '{}' must be a Kubernetes label value (at most 63 of [A-Za-z0-9-_.], "
                            "alphanumeric at both ends), got {}",
                            b.name, json_quote(text));
        return false;
      }
      slot = text;
      return true;
    case BindingKind::Queue: return apply_queue(job, slot, b, text, error);
    case BindingKind::PriorityClass: return apply_priority_class(job, slot, b, text, error);
    case BindingKind::SuccessPolicy:
      if (!is_success_policy(text)) {
        error = fmt::format("value '{}' must be \"\" or AllWorkers, got {}", b.name, json_quote(text));
        return false;
      }
      if (text.empty()) slot.erase("successPolicy");
      else slot["successPolicy"] = text;
      return true;
  }
  return false;
}

bool check_job(const json& job, std::string& error) {
  if (!job.is_object() || !job.contains("kind") || !job["kind"].is_string()) {
    error = "the manifest is not a Kubernetes object (no kind)";
    return false;
  }
  auto kind = job["kind"].get<std::string>();
  auto api = job.value("apiVersion", std::string());
  if (kind == "TrainJob" && api == "trainer.kubeflow.org/v1alpha1") {
    if (!input::member(input::member(job, "spec"), "runtimeRef").is_object()) {
      error = "the manifest has no spec.runtimeRef";
      return false;
    }
    return true;
  }
  const char* map = nullptr;
  if (kind == "MPIJob" && (api == "kubeflow.org/v2beta1" || api == "kubeflow.org/v1"))
    map = "mpiReplicaSpecs";
  else if (kind == "TFJob" && api == "kubeflow.org/v1")
    map = "tfReplicaSpecs";
  else if (kind == "PyTorchJob" && api == "kubeflow.org/v1")
    map = "pytorchReplicaSpecs";
  if (!map) {
    error = fmt::format("the manifest is a {} {}, not an MPIJob, TFJob, PyTorchJob or TrainJob", api, kind);
    return false;
  }
  if (!job.contains("spec") || !job["spec"].contains(map) || !job["spec"][map].is_object()) {
    error = fmt::format("the manifest has no spec.{}", map);
    return false;
  }
  return true;
}

}  // namespace

std::optional<Binding> parse_binding(std::string_view spec, std::string& error) {
  auto colon = spec.rfind(':');
  auto eq = colon == std::string_view::npos ? std::string_view::npos : spec.rfind('=', colon);
  if (colon == std::string_view::npos || eq == std::string_view::npos) {
    error = fmt::format("{} expects POINTER=NAME:KIND, got {}", kBind, json_quote(spec));
    return std::nullopt;
  }
  Binding b;
  b.pointer = std::string(spec.substr(0, eq));
  b.name = std::string(spec.substr(eq + 1, colon - eq - 1));
  auto kind = rules::binding_kind_named(spec.substr(colon + 1));
  if (!kind) {
    error = fmt::format("{} {}: unknown kind '{}' (expected {})", kBind, json_quote(spec), spec.substr(colon + 1),
                        rules::binding_kind_list());
    return std::nullopt;
  }
  b.kind = *kind;
  if (auto problem = utf8_problem(spec); !problem.empty()) {
    error = fmt::format("{} {}: {}", kBind, json_quote(spec), problem);
    return std::nullopt;
  }
  // Manifests have no empty keys: an empty token ("a//b", a trailing '/') is a mistake.
  if (b.pointer.find("//") != std::string::npos || (b.pointer.size() > 1 && b.pointer.back() == '/')) {
    error = fmt::format("{} {}: the pointer '{}' has an empty token", kBind, json_quote(spec), b.pointer);
    return std::nullopt;
  }
  bool name_ok = !b.name.empty();
  // A data binding may name several values, one entry (or list of entries) each.
  for (char c : b.name) name_ok = name_ok && (is_name_char(c) || (c == ',' && b.kind == BindingKind::Data));
  if (!name_ok || (!b.pointer.empty() && b.pointer.front() != '/')) {
    error = fmt::format("{} expects POINTER=NAME:KIND, got {}", kBind, json_quote(spec));
    return std::nullopt;
  }
  return b;
}

bool parse_value(std::string_view spec, std::string& name, std::string& text, std::string& error) {
  auto eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    error = fmt::format("{} expects NAME=TEXT, got {}", kValue, json_quote(spec));
    return false;
  }
  name = std::string(spec.substr(0, eq));
  text = std::string(spec.substr(eq + 1));
  // A value reaches the job as JSON text: it is UTF-8, or refused here with its place.
  if (auto problem = utf8_problem(spec.substr(0, eq)); !problem.empty()) {
    error = fmt::format("{} {}: the name: {}", kValue, json_quote(spec), problem);
    return false;
  }
  if (auto problem = utf8_problem(text); !problem.empty()) {
    error = fmt::format("value '{}': {}", name, problem);
    return false;
  }
  return true;
}

RenderResult render_job(std::string_view manifest, std::span<const Binding> bindings,
                        const std::map<std::string, std::string>& values) {
  RenderResult result;
  json job = input::parse_json(manifest);
  if (job.is_discarded()) {
    result.error = "the manifest is not valid JSON";
    return result;
  }
  if (!check_job(job, result.error)) return result;
  // Every binding in the order given, stopping at the first error; the role counts last,
  // since a role they remove may hold the pointers of other bindings.
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& b : bindings) {
      if ((b.kind == BindingKind::Count) != (pass == 1)) continue;
      std::string text;
      if (b.kind == BindingKind::Data && b.name.find(',') != std::string::npos) {
        // Several values: each one entry, or a JSON list of entries.
        json all = json::array();
        std::string_view names = b.name;
        while (!names.empty()) {
          auto comma = names.find(',');
          std::string name(names.substr(0, comma));
          names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
          auto it = values.find(name);
          if (it == values.end()) {
            result.error = fmt::format("no --value for '{}' (bound at '{}')", name, b.pointer);
            return result;
          }
          if (auto problem = utf8_problem(it->second); !problem.empty()) {
            result.error = fmt::format("value '{}': {}", name, problem);
            return result;
          }
          auto first = it->second.find_first_not_of(" \t\r\n");
          json list = first != std::string::npos && it->second[first] == '['
                          ? input::parse_json(it->second)
                          : json::array({it->second});
          if (list.is_discarded() || !list.is_array()) {
            result.error = fmt::format("value '{}' must be a JSON list of strings, got {}", name,
                                       json_quote(it->second));
            return result;
          }
          for (auto& item : list) all.push_back(std::move(item));
        }
        text = all.dump();
      } else {
        auto it = values.find(b.name);
        if (it == values.end()) {
          result.error = fmt::format("no --value for '{}' (bound at '{}')", b.name, b.pointer);
          return result;
        }
        text = it->second;
        if (auto problem = utf8_problem(text); !problem.empty()) {
          result.error = fmt::format("value '{}': {}", b.name, problem);
          return result;
        }
      }
      if (!apply_binding(job, b, text, result.error)) return result;
    }
  // The counts the manifest itself holds meet the same maximum as bound ones.
  for (const char* map : {"mpiReplicaSpecs", "tfReplicaSpecs", "pytorchReplicaSpecs"}) {
    auto spec_it = job.find("spec");
    if (spec_it == job.end() || !spec_it->is_object() || !spec_it->contains(map) || !(*spec_it)[map].is_object())
      continue;
    for (const auto& [role, spec] : (*spec_it)[map].items())
      if (spec.is_object() && spec.contains("replicas") && spec["replicas"].is_number_integer() &&
          !within_max_replicas(spec["replicas"].get<long long>())) {
        result.error = fmt::format("the manifest's {} has {} replicas; one role has at most {}", role,
                                   spec["replicas"].dump(), kMaxReplicas);
        return result;
      }
  }
  // What the operators require of the shape, now that the counts are known.
  if (job["kind"] == "TrainJob") {
    if (std::string problem = trainjob_problem(job.dump()); !problem.empty()) {
      result.error = problem;
      return result;
    }
  }
  if (job["kind"] == "TFJob") {
    const json& r = job["spec"]["tfReplicaSpecs"];
    if (!r.contains("Chief") && !r.contains("Worker")) {
      result.error = "the TFJob has neither a chief nor a worker (chief and workers are both 0)";
      return result;
    }
  }
  result.ok = true;
  result.job = job.dump();
  return result;
}

RenderResult render_job_from_args(std::string_view manifest,
                                  std::span<const std::string> bind_args,
                                  std::span<const std::string> value_args) {
  RenderResult result;
  std::vector<Binding> bindings;
  for (const auto& arg : bind_args) {
    auto b = parse_binding(arg, result.error);
    if (!b) return result;
    bindings.push_back(std::move(*b));
  }
  std::map<std::string, std::string> values;
  for (const auto& arg : value_args) {
    std::string name, text;
    if (!parse_value(arg, name, text, result.error)) return result;
    if (!values.emplace(name, text).second) {
      result.error = fmt::format("{} '{}' given twice", kValue, name);
      return result;
    }
  }
  return render_job(manifest, bindings, values);
}

}  // namespace pipec::runtime
