// train_job's lowering: a Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1,
// Trainer v2.3) in its own terms, on any runtime by name, with a binding for every value
// known only at run time, and the launcher's argv (docs/training-ops.md "train_job").
// sema has checked its arguments (check_train_job.cpp, check_training.cpp); the arguments
// it shares with the other training ops are read by launcher_arguments.cpp.
#include "compiler/training/launcher_builder.hpp"
#include "rules/kubernetes.hpp"
#include "runtime/trainer_v2.hpp"

namespace pipec::training::detail {

namespace {
// Where the one runtime patch's pod template stands in the TrainJob.
constexpr const char* kPatchSpec = "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec";
}  // namespace

// A list of words (command, args): each a literal or a run-time value bound where it stands.
Json Builder::trainjob_words(const char* name, const std::string& base) {
  Json out = Json::array();
  const ir::Value* v = arg(name);
  if (!v) return out;
  if (v->is_literal()) {
    for (const auto& item : v->literal) out.push_back(ir::literal_text(item));
    return out;
  }
  for (const ir::Value& item : v->items) {
    if (item.is_literal()) {
      out.push_back(ir::literal_text(item.literal));
      continue;
    }
    auto s = scalar(std::string(name) + "_" + std::to_string(out.size()), item, "");
    if (!s) continue;
    bind(base + "/" + std::to_string(out.size()), s->input, Kind::String);
    out.push_back(ir::literal_text(s->value));
  }
  return out;
}

// An env map (env, dataset_env, model_env) as a list of variables under `base` (the
// object holding `env`): literal entries, entries from values, or a whole map<string>
// value the launcher adds (env-map binding, Trainer's reserved names refused).
Json Builder::trainjob_env(const char* name, const std::string& base) {
  Json env = Json::array();
  const ir::Value* v = arg(name);
  if (!v) return env;
  auto add = [&](const std::string& key, const ir::Value& value) {
    if (value.is_literal()) {
      env.push_back(Json{{"name", key}, {"value", ir::literal_text(value.literal)}});
      return;
    }
    auto s = scalar(std::string(name) + "_" + key, value, "");
    if (!s) return;
    bind(base + "/env/" + std::to_string(env.size()) + "/value", s->input, Kind::Env);
    env.push_back(Json{{"name", key}, {"value", ir::literal_text(s->value)}});
  };
  if (each_entry(*v, add)) return env;
  if (ir::whole_ref(*v) && v->type.kind == ir::TypeKind::Map) bind(base, input_for(name, *v), Kind::EnvMap);
  return env;
}

// spec.initializer.dataset or .model: storageUri, env, secretRef; null when none is given.
Json Builder::trainjob_initializer(const char* what) {
  const std::string w = what;
  const std::string base = "/spec/initializer/" + w;
  Json init = Json::object();
  auto text = [&](const char* key, const std::string& arg_name, const char* field) {
    auto it = scalars_.find(arg_name);
    if (it == scalars_.end()) return;
    if (it->second.input.empty() && ir::literal_text(it->second.value).empty()) return;
    std::string pointer = base + "/" + field;
    if (std::string_view(key) == "secret") {
      init["secretRef"] = Json{{"name", ir::literal_text(it->second.value)}};
      pointer += "/name";
    } else {
      init[field] = ir::literal_text(it->second.value);
    }
    if (!it->second.input.empty()) bind(pointer, it->second.input, Kind::String);
  };
  text("uri", w + "_uri", "storageUri");
  text("secret", w + "_secret", "secretRef");
  // The env's bindings need the initializer in the manifest: it is there whenever any
  // entry or a whole map is given.
  const ir::Value* env_arg = arg(w + "_env");
  bool env_given = env_arg && !(env_arg->is_literal() && env_arg->literal.empty());
  if (env_given) {
    Json env = trainjob_env((w + "_env").c_str(), base);
    if (!env.empty()) init["env"] = env;
  }
  if (init.empty() && !env_given) return nullptr;
  return init;
}

// spec.trainer: image, numNodes, numProcPerNode, command, args, env, resourcesPerNode.
Json Builder::trainjob_trainer() {
  Json trainer = Json::object();
  auto scalar_field = [&](const char* arg_name, const char* field, Kind kind, bool omit_empty) {
    auto it = scalars_.find(arg_name);
    if (it == scalars_.end()) return;
    const Scalar& s = it->second;
    std::string text = ir::literal_text(s.value);
    if (s.input.empty() && omit_empty && (text.empty() || text == "0")) return;
    if (s.value.is_number_integer()) trainer[field] = s.value.get<long>() < 1 ? 1 : s.value.get<long>();
    else trainer[field] = text;
    if (!s.input.empty()) bind(std::string("/spec/trainer/") + field, s.input, kind);
  };
  scalar_field("image", "image", Kind::String, true);
  scalar_field("num_nodes", "numNodes", Kind::Int, false);
  scalar_field("num_proc_per_node", "numProcPerNode", Kind::Int, true);
  for (const char* words : {"command", "args"})
    if (Json list = trainjob_words(words, std::string("/spec/trainer/") + words); !list.empty())
      trainer[words] = list;
  if (const ir::Value* v = arg("env"); v && !(v->is_literal() && v->literal.empty()))
    if (Json env = trainjob_env("env", "/spec/trainer"); !env.empty()) trainer["env"] = env;
  Json limits = Json::object();
  const std::string limit_at = "/spec/trainer/resourcesPerNode/limits/";
  limit(limits, "cpu_limit", "cpu", limit_at, Kind::Quantity);
  limit(limits, "memory_limit", "memory", limit_at, Kind::Quantity);
  gpu_limit(limits, limit_at);
  if (!limits.empty()) trainer["resourcesPerNode"] = Json{{"limits", limits}};
  if (auto it = scalars_.find("gpu_resource"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec/trainer", it->second.input, Kind::GpuResource);
  return trainer;
}

// The runtime patch of the `node` job's pod template (`base` its pointer): data volumes,
// node selector, tolerations, /dev/shm, the pods' labels and annotations. Null when
// nothing is patched, literal or bound.
Json Builder::trainjob_patch(const std::string& base) {
  const std::string node(runtime::kTrainerNodeJob);
  Json spec = Json::object();
  Json volumes = Json::array(), mounts = Json::array();
  for (std::size_t i = 0; i < data_.size(); ++i) {
    volumes.push_back(Json{{"name", "data-" + std::to_string(i)},
                           {"persistentVolumeClaim", Json{{"claimName", data_[i].claim}}}});
    mounts.push_back(Json{{"name", "data-" + std::to_string(i)}, {"mountPath", data_[i].path}});
  }
  if (!volumes.empty()) spec["volumes"] = volumes;
  Json container = Json{{"name", node}};
  if (!mounts.empty()) container["volumeMounts"] = mounts;
  spec["containers"] = Json::array({container});
  if (!node_selector_.empty()) spec["nodeSelector"] = node_selector_;
  for (const auto& [key, input] : node_selector_inputs_) {
    std::string k;
    for (char ch : key) k += ch == '/' ? std::string("~1") : ch == '~' ? std::string("~0") : std::string(1, ch);
    bind(base + "/spec/nodeSelector/" + k, input, Kind::String);
  }
  if (!tolerations_.empty()) spec["tolerations"] = tolerations_;
  scheduling(spec, base + "/spec");
  // The pods' labels and annotations; the queue's label stays on the TrainJob (a queue
  // label on the pods would make Kueue's pod integration take them as pods of their own).
  Json meta = metadata(base + "/metadata", false);
  if (meta.contains("labels")) {
    meta["labels"].erase(std::string(rules::kKueueQueueLabel));
    if (meta["labels"].empty()) meta.erase("labels");
  }
  bool bound_whole = !data_input.empty() || !node_selector_input_.empty() || !tolerations_input_.empty();
  bool any = spec.size() > 1 || spec["containers"][0].size() > 1 || !meta.empty() || bound_whole;
  if (!any) return nullptr;
  if (!bound_whole && spec["containers"][0].size() == 1) spec.erase("containers");
  Json pod = Json{{"spec", spec}};
  if (!meta.empty()) pod["metadata"] = meta;
  return Json{{"manager", std::string(runtime::kTrainerPatchManager)},
              {"trainingRuntimeSpec",
               {{"template",
                 {{"spec", {{"replicatedJobs", Json::array({{{"name", node},
                                                             {"template", {{"spec", {{"template", pod}}}}}}})}}}}}}}};
}

// The launcher's argv words after the manifest and bindings.
void Builder::add_launcher_options() {
  auto& a = call_.args;
  a.insert(a.end(), metric_args_.begin(), metric_args_.end());
  for (auto [arg_name, option] : {std::pair{"pending_timeout", Option::PendingTimeout},
                                  std::pair{"timeout", Option::RunningTimeout},
                                  std::pair{"trainer_runtime", Option::TrainerRuntime},
                                  std::pair{"trainer_runtime_kind", Option::TrainerRuntimeKind}})
    if (auto it = scalars_.find(arg_name); it != scalars_.end()) {
      // The runtime's name and kind are in the manifest when literal; a run-time value
      // is an option the launcher checks and puts in.
      bool runtime_ref = std::string_view(arg_name).substr(0, 7) == "trainer";
      if (!it->second.input.empty())
        add_arg(a, option, {ir::LauncherWord::Kind::Input, it->second.input});
      else if (!runtime_ref && !ir::literal_text(it->second.value).empty())
        add_arg(a, option, ir::literal_text(it->second.value));
    }
  add_arg(a, Option::WorkflowName, {ir::LauncherWord::Kind::WorkflowName, ""});
  add_arg(a, Option::StepName, {ir::LauncherWord::Kind::PodName, ""});
}

bool Builder::run_trainjob() {
  if (!read_arguments()) return false;
  read_data();
  read_node_placement();
  read_metadata();
  read_metrics();
  if (!ok_) return false;

  Json job = Json::object();
  job["apiVersion"] = "trainer.kubeflow.org/v1alpha1";
  job["kind"] = "TrainJob";
  job["metadata"] = metadata("/metadata", true);
  auto text_of = [&](const char* name, const char* placeholder) {
    auto it = scalars_.find(name);
    std::string t = it == scalars_.end() ? "" : ir::literal_text(it->second.value);
    return t.empty() ? std::string(placeholder) : t;
  };
  Json spec = Json::object();
  spec["runtimeRef"] = Json{{"apiGroup", "trainer.kubeflow.org"},
                            {"kind", text_of("trainer_runtime_kind", "ClusterTrainingRuntime")},
                            {"name", text_of("trainer_runtime", "torch-distributed")}};
  // A job in a Kueue queue waits suspended until Kueue admits it.
  if (auto it = scalars_.find("queue");
      it != scalars_.end() && it->second.input.empty() && !ir::literal_text(it->second.value).empty())
    spec["suspend"] = true;
  Json initializer = Json::object();
  for (const char* what : {"dataset", "model"})
    if (Json init = trainjob_initializer(what); !init.is_null()) initializer[what] = init;
  if (!initializer.empty()) spec["initializer"] = initializer;
  spec["trainer"] = trainjob_trainer();
  if (Json patch = trainjob_patch(std::string(kPatchSpec) + "/replicatedJobs/0/template/spec/template");
      !patch.is_null())
    spec["runtimePatches"] = Json::array({patch});
  job["spec"] = spec;
  if (!ok_) return false;
  // Whole lists and maps known only at run time, applied to the patched pod template.
  if (!data_input.empty()) bind(kPatchSpec, data_input, Kind::Data);
  if (!node_selector_input_.empty()) bind(kPatchSpec, node_selector_input_, Kind::NodeSelector);
  if (!tolerations_input_.empty()) bind(kPatchSpec, tolerations_input_, Kind::Tolerations);
  if (auto it = scalars_.find("queue"); it != scalars_.end() && !it->second.input.empty())
    bind("/spec", it->second.input, Kind::Queue);

  auto& a = call_.args;
  add_arg(a, Option::Manifest, json_without_argo_tags(job.dump()));
  for (const auto& b : binds_) add_arg(a, Option::Bind, b);
  for (const auto& [input, value] : call_.inputs) add_arg(a, Option::Value, {ir::LauncherWord::Kind::Binding, input});
  for (const auto& [name, text] : literal_values_) add_arg(a, Option::Value, rules::value_arg(name, text));
  add_launcher_options();
  return true;
}

}  // namespace pipec::training::detail
