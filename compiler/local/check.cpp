// What a local run cannot do, found before anything starts (check_local()).
#include "compiler/local/runner.hpp"

#include <set>

#include "compiler/sema/op_body.hpp"

namespace pipec::local::detail {

// --- what cannot run locally ----------------------------------------------------------

const ir::Value* arg_of(const ir::Step& step, const std::string& name) {
  for (const auto& [n, v] : step.args)
    if (n == name) return &v;
  return nullptr;
}

bool empty_literal(const ir::Value& v) {
  if (!v.is_literal()) return false;
  const auto& l = v.literal;
  return l.is_null() || (l.is_string() && l.get<std::string>().empty()) ||
         (l.is_array() && l.empty()) || (l.is_object() && l.empty()) ||
         (l.is_number() && l == 0) || (l.is_boolean() && !l.get<bool>());
}

void check_nodes(const ir::Pipeline& p, const std::vector<ir::Node>& nodes,
                 const std::map<std::string, std::string>& volumes, Diagnostics& diags,
                 std::set<std::string>& noted) {
  for (const auto& node : nodes) {
    if (const auto* loop = std::get_if<ir::Loop>(&node)) {
      check_nodes(p, loop->body, volumes, diags, noted);
      continue;
    }
    const auto& step = std::get<ir::Step>(node);
    if (step.kind == ir::OpKind::Pipeline) continue;  // its steps: with the callee's DAG
    auto at = [&](const ir::Value& v) { return v.range.valid() ? v.range : step.range; };
    if (step.kind == ir::OpKind::Container) {
      for (const auto& op : p.ops)
        for (const auto& r : p.plan.pod(op.name).resources)
          if (op.name == step.op && r.kind == ir::Pod::Resource::Kind::Gpus &&
              !empty_literal(op.resources[r.value].second))
            diags.note(step.range, fmt::format("step '{}': GPUs are ignored by a local run (op '{}' "
                                               "asks for some)",
                                               step.name, op.name));
      for (const auto& op : p.ops) {
        if (op.name != step.op) continue;
        // A claim may be mapped to a host directory (--volume); an emptyDir is the step's
        // own directory; ConfigMaps and Secrets exist only in the cluster.
        using Kind = ir::ContainerOp::Volume::Kind;
        for (const auto& v : op.volumes) {
          if (v.kind == Kind::Pvc && !volumes.count(v.name))
            diags.error(op.range, fmt::format("step '{}' cannot run locally: op '{}' mounts the "
                                              "PersistentVolumeClaim '{}', which exists only in the "
                                              "cluster; map it to a directory with --volume {}=DIR",
                                              step.name, op.name, v.name, v.name));
          if (v.kind == Kind::ConfigMap || v.kind == Kind::Secret)
            diags.error(op.range, fmt::format("step '{}' cannot run locally: op '{}' mounts the {} "
                                              "'{}', which exists only in the cluster",
                                              step.name, op.name, v.kind == Kind::Secret ? "Secret" : "ConfigMap",
                                              v.name));
        }
        // Fields a local run does not apply: said once a run each, at the first op that
        // sets it (the body table says which, sema/op_body.hpp).
        for (const auto& f : sema::op_body_fields())
          if (!f.not_applied_locally.empty() && f.is_set(op) && noted.insert(std::string(f.name)).second)
            diags.note(op.range, fmt::format("'{}' is not applied by a local run ({})", f.name,
                                             f.not_applied_locally));
        // What a volume's size or medium is: said once a run.
        for (const auto& v : op.volumes)
          if ((v.kind == Kind::Empty || v.kind == Kind::Ephemeral) && (v.memory || !v.size.empty()) &&
              noted.insert("volume size").second)
            diags.note(op.range, fmt::format("a local run makes op '{}''s {} volume at '{}' a directory of the step's "
                                             "own: its size{} not applied",
                                             op.name, v.memory ? "memory" : ir::volume_kind_word(v.kind), v.path,
                                             v.memory ? " and its medium (a tmpfs) are" : " is"));
      if (!op.secret_env.empty())
          diags.error(op.range, fmt::format("step '{}' cannot run locally: op '{}' reads '{}' from the "
                                            "Secret '{}', which exists only in the cluster",
                                            step.name, op.name, op.secret_env[0].var, op.secret_env[0].secret));
      }
      for (const auto& op : p.ops)
        if (op.name == step.op && op.command.empty())
          diags.error(step.range, fmt::format("step '{}' cannot run locally: op '{}' has no "
                                              "command and relies on its image's ENTRYPOINT, "
                                              "which a local run does not know (images are not "
                                              "pulled); give the op a command",
                                              step.name, op.name));
      continue;
    }
    if (step.kind == ir::OpKind::TrainJob) {
      // The runtime's image, entrypoint and initializers are the cluster's.
      const ir::Value* runtime = arg_of(step, "trainer_runtime");
      diags.error(runtime ? at(*runtime) : step.range,
                  fmt::format("step '{}' cannot run locally: train_job runs a Kubeflow Trainer runtime, whose "
                              "image, entrypoint and initializers exist only in the cluster",
                              step.name));
      continue;
    }
    if (const ir::Value* v = arg_of(step, "data"); v && !empty_literal(*v)) {
      // Claims named by literals must be mapped with --volume; those from run-time values
      // are checked when the job is rendered.
      std::vector<std::pair<std::string, const ir::Value*>> literal;
      bool runtime_entries = false;
      if (v->is_literal() && v->literal.is_array()) {
        for (const auto& e : v->literal)
          if (e.is_string()) literal.emplace_back(e.get<std::string>(), v);
      } else if (v->kind == ir::Value::Kind::List) {
        for (const auto& item : v->items) {
          if (item.is_literal() && item.literal.is_string()) literal.emplace_back(item.literal.get<std::string>(), &item);
          else runtime_entries = true;
        }
      } else {
        runtime_entries = true;
      }
      for (const auto& [entry, where] : literal) {
        auto parsed = rules::parse_data_entry(entry);
        if (parsed && !volumes.count(parsed->claim))
          diags.error(at(*where), fmt::format("step '{}' cannot run locally: 'data' mounts "
                                              "PersistentVolumeClaims, which exist only in the "
                                              "cluster; map claim '{}' to a directory with --volume {}=DIR",
                                              step.name, parsed->claim, parsed->claim));
      }
      if (runtime_entries && volumes.empty())
        diags.error(at(*v), fmt::format("step '{}' cannot run locally: 'data' mounts "
                                        "PersistentVolumeClaims, which exist only in the cluster; map "
                                        "each claim it names to a directory with --volume CLAIM=DIR",
                                        step.name));
    }
    if (const ir::Value* v = arg_of(step, "sync_source"); v && !empty_literal(*v))
      diags.error(at(*v), fmt::format("step '{}' cannot run locally: 'sync_source' clones code "
                                      "into the pods with git-sync, which only the cluster runs",
                                      step.name));
    if (const ir::Value* v = arg_of(step, "gpus"); v && !empty_literal(*v))
      diags.note(at(*v), fmt::format("step '{}': GPUs are ignored by a local run", step.name));
    if (const ir::Value* v = arg_of(step, "tensorboard"); v && !empty_literal(*v))
      diags.note(at(*v), fmt::format("step '{}': no TensorBoard is started by a local run", step.name));
    for (const char* name : {"queue", "priority_class", "scheduler", "min_available", "gang_queue", "labels",
                             "annotations", "shm_size"})
      if (const ir::Value* v = arg_of(step, name); v && !empty_literal(*v) && noted.insert(name).second)
        diags.note(at(*v), fmt::format("'{}' is not applied by a local run (no cluster scheduler; /dev/shm is "
                                       "this machine's)",
                                       name));
  }
}

}  // namespace pipec::local::detail

namespace pipec::local {

long long effective_jobs(const ir::Pipeline& pipeline, int jobs) {
  return pipeline.settings.parallelism ? std::min<long long>(jobs, *pipeline.settings.parallelism) : jobs;
}

bool check_local(const ir::Pipeline& pipeline, const std::map<std::string, std::string>& volumes,
                 Diagnostics& diags) {
  std::set<std::string> noted;  // each field not applied is said once
  detail::check_nodes(pipeline, pipeline.dag, volumes, diags, noted);
  detail::check_nodes(pipeline, pipeline.exit_handler, volumes, diags, noted);
  for (const auto& callee : pipeline.callees) detail::check_nodes(pipeline, callee.dag, volumes, diags, noted);
  // The pipeline's settings that concern a cluster only (parallelism bounds -j).
  for (const char* name : {"timeout", "ttl", "pod_gc", "service_account", "image_pull_secrets"})
    if (auto it = pipeline.settings.ranges.find(name); it != pipeline.settings.ranges.end())
      diags.note(it->second, fmt::format("setting '{}' is not applied by a local run", name));
  if (auto it = pipeline.settings.ranges.find("workspace"); it != pipeline.settings.ranges.end())
    diags.note(it->second, "the run's workspace is the folder RUN_DIR/workspace in a local run (its size, storage "
                           "class and access mode are not applied)");
  return !diags.has_errors();
}

}  // namespace pipec::local
