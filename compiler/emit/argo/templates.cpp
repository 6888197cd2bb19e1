// The templates of steps: a container op's (one per step, printed once per op) and a
// training step's, which runs pipec-launcher.
#include "compiler/emit/argo/writer.hpp"

#include <algorithm>
#include <chrono>
#include "compiler/shell/shell_script.hpp"
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "rules/kubernetes.hpp"
#include "rules/launcher_cli.hpp"
#include "rules/metrics_cli.hpp"
#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "runtime/job_render.hpp"

namespace pipec::emit::argo::detail {

using namespace yaml;  // the shared YAML writer (compiler/emit/yaml)

namespace {

// `retries {on: [...]}` as Argo's retryStrategy.expression over lastRetry (exitCode and
// message are strings; Argo's node message of an OOM-killed pod is "OOMKilled (exit code
// 137)"), the same rule as rules::retry_matches. Message texts hold no quote or backslash
// (rules::parse_retry_on), so they sit in '...' as they are.
std::string retry_expression(const std::vector<rules::RetryOn>& on) {
  std::string out;
  for (const auto& item : on) {
    std::string e;
    switch (item.kind) {
      case rules::RetryOn::Kind::Oom:
        e = "lastRetry.exitCode == '137' || lastRetry.message contains 'OOMKilled'";
        break;
      case rules::RetryOn::Kind::Evicted:
        e = "lastRetry.message contains 'Evicted' || lastRetry.message contains 'evicted' || "
            "lastRetry.message contains 'The node was low on resource'";
        break;
      case rules::RetryOn::Kind::Exit: e = "lastRetry.exitCode == '" + std::to_string(item.exit_code) + "'"; break;
      case rules::RetryOn::Kind::Message: e = "lastRetry.message contains '" + item.text + "'"; break;
    }
    out += (out.empty() ? "(" : " || (") + e + ")";
  }
  return out;
}

}  // namespace

// --- container ops ----------------------------------------------------------------------

// A word of the container as the plan gives it: an op parameter as the template's input,
// a `file` parameter as its path.
std::string WorkflowWriter::argo_word(const ir::Word& w) {
  // sema lets run-time values into lists and maps only where an op takes them apart
  // (training ops' env and data): a container's word is never one.
  if (w.invalid) throw std::logic_error("a container word from a list or map of run-time values");
  std::string s;
  for (std::size_t i = 0; i < w.pieces.size(); ++i) {
    const ir::Piece& piece = w.pieces[i];
    switch (piece.kind) {
      case ir::Piece::Kind::Text:
        s += argo_text(piece.text, i + 1 < w.pieces.size() && w.pieces[i + 1].kind != ir::Piece::Kind::Text);
        break;
      case ir::Piece::Kind::Param: s += "{{inputs.parameters." + piece.name + "}}"; break;
      case ir::Piece::Kind::File: s += piece.text; break;
    }
  }
  return s;
}

Json WorkflowWriter::container_body(const ir::ContainerOp& op, Json& inputs, Json& pod_spec_patch) {
  const ir::Invocation& call = p_.plan.container(op.name);
  Json c = Json::object();
  c["image"] = argo_word(call.image);
  Json command = Json::array();
  Json args = Json::array();
  if (call.shell) {
    // Shell form: each `${p}` of the script is an environment variable (ir::Invocation);
    // `args` become the script's "$1", "$2", ...: whole words either way.
    command = Json::array({"sh", "-c", argo_text(call.script), call.name});
    for (const auto& a : call.args) command.push_back(argo_word(a));
  } else {
    // Exec form: no shell. A word that mixes text and values is one argv word that Argo
    // fills in; an op with only `args` keeps the image's ENTRYPOINT.
    for (const auto& w : call.command) command.push_back(argo_word(w));
    for (const auto& w : call.args) args.push_back(argo_word(w));
  }
  // Metrics: pipec-metrics (copied into the pod by an init container, container_template)
  // runs the command and writes KFP's metrics file from its output, with the launcher's
  // scraper; a spec from a parameter is one whole argv word it checks at run time.
  // Visual outputs: it reads each file when the command ends into KFP's UI metadata.
  if (op.runs_under_pipec_metrics() && !command.empty()) {
    rules::metrics_cli::Call<Json> wrap{Json(kMetricsTool)};
    for (const auto& m : call.metrics) wrap.specs.push_back(argo_word(m));
    if (!op.metrics_from.empty()) wrap.from = Json(op.metrics_from);
    for (const auto& out : op.outputs)
      if (out.type.visual != rules::visuals::Kind::None)
        wrap.visuals.push_back(
            Json(rules::metrics_cli::visual_word(rules::visuals::type_name(out.type.visual), out.name, out.path)));
    command = Json(rules::metrics_cli::wrap_command(std::move(wrap), std::vector<Json>(command.begin(), command.end())));
  }
  if (!command.empty()) c["command"] = std::move(command);
  if (!args.empty()) c["args"] = std::move(args);

  Json env = Json::array();
  for (const auto& [name, value] : call.env) env.push_back({{"name", name}, {"value", argo_word(value)}});
  for (const auto& value : call.script_values)
    env.push_back({{"name", shell::script_variable(value.name)},
                   {"value", argo_word(ir::Word{{value}, {}, false})}});
  // A Secret's key: only the names reach the workflow, never the value.
  for (const auto& s : op.secret_env)
    env.push_back({{"name", s.var}, {"valueFrom", {{"secretKeyRef", {{"name", s.secret}, {"key", s.key}}}}}});
  if (!env.empty()) c["env"] = std::move(env);
  if (!op.volumes.empty() || op.runs_under_pipec_metrics() || !op.shm_size.empty()) {
    Json mounts = Json::array();
    for (std::size_t i = 0; i < op.volumes.size(); ++i) {
      // The run's workspace is the workflow's claim (volumeClaimTemplates), mounted by name.
      Json mount = {{"name", op.volumes[i].kind == ir::ContainerOp::Volume::Kind::Workspace
                                ? std::string(ir::kWorkspaceVolume)
                                : "vol-" + std::to_string(i)},
                    {"mountPath", op.volumes[i].path}};
      if (!op.volumes[i].sub_path.empty()) mount["subPath"] = op.volumes[i].sub_path;
      if (op.volumes[i].read_only) mount["readOnly"] = true;
      mounts.push_back(std::move(mount));
    }
    if (op.runs_under_pipec_metrics()) mounts.push_back({{"name", kMetricsVolume}, {"mountPath", kMetricsDir}});
    if (!op.shm_size.empty()) mounts.push_back({{"name", std::string(rules::kShmVolume)}, {"mountPath", "/dev/shm"}});
    c["volumeMounts"] = std::move(mounts);
  }
  if (!op.image_pull_policy.empty()) c["imagePullPolicy"] = op.image_pull_policy;
  if (!op.working_dir.empty()) c["workingDir"] = op.working_dir;
  const ir::Pod& pod = p_.plan.pod(op.name);
  if (!pod.security.empty()) {
    Json security = Json::object();
    if (pod.security.user) security["runAsUser"] = *pod.security.user;
    if (pod.security.group) security["runAsGroup"] = *pod.security.group;
    if (pod.security.non_root) security["runAsNonRoot"] = *pod.security.non_root;
    c["securityContext"] = std::move(security);
  }
  container_resources(op, pod, c, pod_spec_patch);
  for (const auto& param : op.params)
    if (param.type.kind != ir::TypeKind::File) inputs.push_back({{"name", param.name}});
  return c;
}

// Resources: requests = limits, as the plan names them (ir::Pod::resources). Literal
// quantities go into the container `c`; values known only at run time go through
// podSpecPatch, built as JSON by Argo's toJson.
void WorkflowWriter::container_resources(const ir::ContainerOp& op, const ir::Pod& pod, Json& c,
                                         Json& pod_spec_patch) {
  using Kind = ir::Pod::Resource::Kind;
  Scope op_scope;  // refs here are the op's own parameters
  Json limits = Json::object();
  // podSpecPatch fields: (the key as JSON text, the value as a toJson tag).
  std::vector<std::pair<std::string, std::string>> patch_limits;
  // A GPU resource named at run time: Argo computes it as rules::gpu_resource_name does
  // ("nvidia" or "amd" mean <vendor>.com/gpu; a name with '/' is the resource itself).
  std::string vendor_key;  // a toJson tag
  for (const auto& r : pod.resources) {
    if (r.kind != Kind::GpuVendor) continue;
    std::string v = expr_value(op.resources[r.value].second, op_scope, nullptr);
    vendor_key = "{{=toJson(sprig.ternary(" + v + ", " + v + " + '.com/gpu', sprig.contains('/', " + v + ")))}}";
  }
  for (const auto& r : pod.resources) {
    if (r.kind == Kind::GpuVendor) continue;
    const ir::Value& value = op.resources[r.value].second;
    bool runtime_key = r.kind == Kind::Gpus && !vendor_key.empty();
    if (r.kind == Kind::Memory && pod.retry && !pod.retry->memory.empty()) {
      // Memory that grows per attempt (sema wrote each attempt's): indexed by Argo's retry count.
      std::string list;
      for (const auto& m : pod.retry->memory) list += (list.empty() ? "'" : ", '") + m + "'";
      patch_limits.emplace_back(Json(r.name).dump(), "{{=toJson([" + list + "][asInt(retries)])}}");
      continue;
    }
    if (value.is_literal() && !runtime_key) {
      limits[r.name] = ir::literal_text(value.literal);  // a quantity: sema checked it
    } else {
      std::string v = value.is_literal() ? Json(ir::literal_text(value.literal)).dump()
                                         : "{{=toJson(" + expr_value(value, op_scope, nullptr) + ")}}";
      patch_limits.emplace_back(runtime_key ? vendor_key : Json(r.name).dump(), v);
    }
  }
  if (!limits.empty()) {
    Json requests = limits;
    c["resources"] = {{"limits", limits}, {"requests", requests}};
  }
  if (!patch_limits.empty()) {
    // {"containers":[{"name":"main","resources":{"limits":{..},"requests":{..}}}]}, with each
    // value a whole toJson(...) tag: the JSON around the values is fixed text.
    std::string fields;
    for (const auto& [k, v] : patch_limits) {
      if (!fields.empty()) fields += ",";
      fields += k + ":" + v;
    }
    // A key that is a tag must not follow the object's `{` directly: `{{{` is no tag.
    if (fields.compare(0, 2, "{{") == 0) fields.insert(fields.begin(), ' ');
    pod_spec_patch = R"({"containers":[{"name":"main","resources":{"limits":{)" + fields +
                     R"(},"requests":{)" + fields + "}}}]}";
  }
}

// Every step's template carries the step's name as `pipelines.kubeflow.org/task_display_name`:
// the Pipelines UI labels a DAG task with that annotation of its template (else the
// template's name), so steps sharing an op would all read as the op. An op used by one
// step keeps one template named after the op; the second and later steps of a shared op
// get a copy named `<op>-2`, `<op>-3`, ... (skipping every name another template takes).
std::string WorkflowWriter::container_template(const ir::Step& step) {
  auto found = ops_by_name_.find(step.op);
  const ir::ContainerOp* op = found == ops_by_name_.end() ? nullptr : found->second;
  int& made = op_template_count_[step.op];
  std::string base = k8s_name(step.op, op ? op->range : step.range, "op");
  std::string name = base;
  if (made == 0) {
    claim_template(name, op ? op->range : step.range, "op '" + step.op + "'");
  } else {
    for (int k = made + 1;; ++k) {
      std::string suffix = std::to_string(k);
      suffix.insert(suffix.begin(), '-');  // not "-" + std::string&&: GCC 12's -Wrestrict at -O3 (bug 105651)
      name = base.substr(0, kMaxK8sNameLength - suffix.size()) + suffix;
      if (!reserved_names_.count(name) && !template_owner_.count(name)) break;
    }
    template_owner_.emplace(name, std::make_pair("step '" + step.name + "'", step.range));
  }
  ++made;
  std::string display = argo_text(step.name);
  // The op's own template (its first step's, named after the op) carries the op's doc
  // comment; the copies for its other steps leave it out rather than repeat it per step.
  if (!op || made == 1 || scalar_style(name) == ScalarStyle::Literal ||
      scalar_style(display) == ScalarStyle::Literal) {
    add_template(name, container_template_json(op, name, display, made == 1));
    return name;
  }
  // Every step of an op has the same template but for its name and display name (kept
  // for the KFP UI): the op's is printed once, with markers where those two go.
  static constexpr std::string_view kNameMark = "pipec-template-name-mark";
  static constexpr std::string_view kDisplayMark = "pipec-display-name-mark";
  auto [it, fresh] = op_text_.try_emplace(op->name);
  OpText& cut = it->second;
  if (fresh) {
    std::string text;
    append_item(text, container_template_json(op, std::string(kNameMark), std::string(kDisplayMark), false), 2);
    std::size_t at_name = text.find(kNameMark);
    std::size_t at_display = text.find(kDisplayMark);
    cut.whole = at_name != std::string::npos && at_display != std::string::npos && at_name < at_display &&
                text.find(kNameMark, at_name + 1) == std::string::npos &&
                text.find(kDisplayMark, at_display + 1) == std::string::npos;
    if (cut.whole) {
      cut.head = text.substr(0, at_name);
      cut.middle = text.substr(at_name + kNameMark.size(), at_display - at_name - kNameMark.size());
      cut.tail = text.substr(at_display + kDisplayMark.size());
    }
  }
  if (!cut.whole) {
    add_template(name, container_template_json(op, name, display, false));
    return name;
  }
  TemplateText& copy = templates_[name];
  copy.op = &cut;
  append_scalar(copy.name, name, 4);
  append_scalar(copy.display, display, 8);
  return name;
}

// The metric series of a step with metrics, beside its metrics file (docs/runtime.md
// "Metric series"): an output the UIs list, optional as the metrics file is.
namespace {
Json series_artifact() {
  return {{"name", rules::metrics_cli::kArgoSeriesArtifact},
          {"path", rules::metrics_cli::kDefaultSeriesFile},
          {"optional", true}};
}
}  // namespace

// The template of a container step: `name`, and `display` as the KFP UI's task name;
// `with_doc`: with the op's doc comment (`pipec.dev/doc`).
Json WorkflowWriter::container_template_json(const ir::ContainerOp* op, const std::string& name,
                                             const std::string& display, bool with_doc) {
  Json t = Json::object();
  t["name"] = name;
  Json annotations = {{"pipelines.kubeflow.org/task_display_name", display}};
  if (op) {
    Json inputs = Json::array();
    Json patch = nullptr;
    Json container = container_body(*op, inputs, patch);
    if (!inputs.empty()) t["inputs"] = {{"parameters", std::move(inputs)}};
    // A file parameter is an input artifact placed at its path.
    for (const auto& param : op->params)
      if (param.type.kind == ir::TypeKind::File)
        t["inputs"]["artifacts"].push_back({{"name", param.name}, {"path", param.path}});
    if (!op->outputs.empty()) {
      Json params = Json::array();
      Json artifacts = Json::array();
      for (const auto& out : op->outputs) {
        // A file is an artifact only: no parameter holds binary data or a large file.
        if (out.type.kind != ir::TypeKind::File)
          params.push_back({{"name", out.name}, {"valueFrom", {{"path", out.path}}}});
        Json artifact = {{"name", out.name}, {"path", out.path}};
        // A visual output is stored as the file itself, not a tarball: Argo's UI shows it.
        if (out.type.visual != rules::visuals::Kind::None) artifact["archive"] = {{"none", Json::object()}};
        artifacts.push_back(std::move(artifact));
      }
      if (!params.empty()) t["outputs"]["parameters"] = std::move(params);
      t["outputs"]["artifacts"] = std::move(artifacts);
    }
    if (!op->metrics.empty()) {
      t["outputs"]["artifacts"].push_back({{"name", "mlpipeline-metrics"},
                                           {"path", "/tmp/outputs/mlpipeline-metrics.json"},
                                           {"optional", true}});
      t["outputs"]["artifacts"].push_back(series_artifact());
    }
    // Visual outputs: the UI metadata pipec-metrics writes from them (KFP v1's UI reads
    // it); each file is an artifact of its own too, which Argo's UI shows.
    if (op->has_visual_outputs())
      t["outputs"]["artifacts"].push_back({{"name", "mlpipeline-ui-metadata"},
                                           {"path", "/tmp/outputs/mlpipeline-ui-metadata.json"},
                                           {"optional", true}});
    if (op->runs_under_pipec_metrics()) {
      // pipec-metrics is static: the launcher image's copy runs in any image.
      t["initContainers"] = Json::array(
          {{{"name", "pipec-metrics"},
            {"image", options_.launcher_image},
            {"command", Json::array({"/usr/local/bin/pipec-metrics", "--install", std::string(kMetricsTool)})},
            {"volumeMounts", Json::array({{{"name", kMetricsVolume}, {"mountPath", kMetricsDir}}})}}});
    }
    t["container"] = std::move(container);
    if (!patch.is_null()) t["podSpecPatch"] = std::move(patch);
    const ir::Pod& pod = p_.plan.pod(op->name);
    if (const auto& r = pod.retry) {
      Json retry = {{"limit", r->limit}, {"retryPolicy", r->policy}};
      if (r->backoff_seconds) {
        Json backoff = {{"duration", fmt::format("{}s", *r->backoff_seconds)}};
        if (r->factor) backoff["factor"] = *r->factor;
        if (r->max_duration_seconds) backoff["maxDuration"] = fmt::format("{}s", *r->max_duration_seconds);
        retry["backoff"] = std::move(backoff);
      }
      if (!r->on.empty()) retry["expression"] = retry_expression(r->on);
      t["retryStrategy"] = std::move(retry);
    }
    if (op->timeout_seconds) t["activeDeadlineSeconds"] = *op->timeout_seconds;
    if (with_doc && !op->doc.empty()) annotations["pipec.dev/doc"] = argo_text(op->doc);
  }
  Json labels = Json::object();
  if (op) pod_fields(*op, t, labels, annotations);
  t["metadata"] = {{"annotations", std::move(annotations)}};
  if (!labels.empty()) t["metadata"]["labels"] = std::move(labels);
  return t;
}

// A container template's pod fields (the plan's ir::Pod, and the op's volumes and
// scheduling), into the template `t` and its metadata's `labels` and `annotations`.
void WorkflowWriter::pod_fields(const ir::ContainerOp& op, Json& t, Json& labels, Json& annotations) {
  const ir::Pod& pod = p_.plan.pod(op.name);
  if (!pod.node_selector.empty()) {
    Json selector = Json::object();
    for (const auto& [k, v] : pod.node_selector) selector[k] = v;
    t["nodeSelector"] = std::move(selector);
  }
  if (!op.volumes.empty() || op.runs_under_pipec_metrics() || !op.shm_size.empty()) {
    Json volumes = Json::array();
    for (std::size_t i = 0; i < op.volumes.size(); ++i) {
      const auto& v = op.volumes[i];
      using Kind = ir::ContainerOp::Volume::Kind;
      if (v.kind == Kind::Workspace) continue;  // the workflow's volumeClaimTemplates has it
      Json vol = {{"name", "vol-" + std::to_string(i)}};
      switch (v.kind) {
        case Kind::Pvc: vol["persistentVolumeClaim"] = {{"claimName", v.name}}; break;
        case Kind::Empty:
          vol["emptyDir"] = Json::object();
          if (v.memory) vol["emptyDir"]["medium"] = "Memory";
          if (!v.size.empty()) vol["emptyDir"]["sizeLimit"] = v.size;
          break;
        case Kind::Ephemeral:
          vol["ephemeral"] = {{"volumeClaimTemplate",
                               {{"spec", {{"accessModes", Json::array({"ReadWriteOnce"})},
                                          {"resources", {{"requests", {{"storage", v.size}}}}}}}}}};
          break;
        case Kind::ConfigMap: vol["configMap"] = {{"name", v.name}}; break;
        case Kind::Secret: vol["secret"] = {{"secretName", v.name}}; break;
        case Kind::Workspace: break;
      }
      volumes.push_back(std::move(vol));
    }
    if (op.runs_under_pipec_metrics()) volumes.push_back({{"name", kMetricsVolume}, {"emptyDir", Json::object()}});
    if (!op.shm_size.empty())
      volumes.push_back({{"name", std::string(rules::kShmVolume)},
                         {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", op.shm_size}}}});
    if (!volumes.empty()) t["volumes"] = std::move(volumes);
  }
  // Scheduling (docs/language.md, "Scheduling"): the pod's own fields (Kueue's queue label
  // is one of the plan's labels).
  if (!op.priority_class.empty()) t["priorityClassName"] = op.priority_class;
  if (!op.scheduler.empty()) t["schedulerName"] = op.scheduler;
  if (!pod.tolerations.empty()) {
    Json tolerations = Json::array();
    for (const auto& tol : pod.tolerations) tolerations.push_back(rules::toleration_object<Json>(tol));
    t["tolerations"] = std::move(tolerations);
  }
  for (const auto& [k, v] : pod.labels) labels[k] = v;
  for (const auto& [k, v] : pod.annotations) annotations[k] = argo_text(v);
  // KFP v1's cache server: a label turns caching off, max_cache_staleness bounds reuse.
  if (!pod.cache.reuse) {
    labels["pipelines.kubeflow.org/enable_caching"] = "false";
    annotations["pipelines.kubeflow.org/max_cache_staleness"] = "P0D";
  } else if (pod.cache.staleness_seconds) {
    annotations["pipelines.kubeflow.org/max_cache_staleness"] =
        rules::iso8601_duration(std::chrono::seconds(*pod.cache.staleness_seconds));
  }
}

std::string WorkflowWriter::launcher_template(const ir::Step& step, const ir::LauncherCall& call) {
  std::string name = k8s_name(step.name, step.range, "step");
  claim_template(name, step.range, "training step '" + step.name + "'");
  Json t = Json::object();
  t["name"] = name;
  if (!call.inputs.empty()) {
    Json params = Json::array();
    for (const auto& [input, value] : call.inputs) params.push_back({{"name", input}});
    t["inputs"] = {{"parameters", std::move(params)}};
  }
  Json artifacts = Json::array();
  if (call.writes_metrics) {
    artifacts.push_back({{"name", "mlpipeline-metrics"},
                         {"path", "/tmp/outputs/mlpipeline-metrics.json"},
                         {"optional", true}});
    artifacts.push_back(series_artifact());
  }
  if (call.writes_ui_metadata)
    artifacts.push_back({{"name", "mlpipeline-ui-metadata"},
                         {"path", "/tmp/outputs/mlpipeline-ui-metadata.json"},
                         {"optional", true}});
  if (!artifacts.empty()) t["outputs"] = {{"artifacts", std::move(artifacts)}};
  // The launcher's words (the lowering's call, ir::Plan::launchers), its values as the
  // template's inputs.
  Json args = Json::array();
  for (const auto& [option, w] : call.args) {
    args.push_back(rules::launcher_flag(option));
    switch (w.kind) {
      case ir::LauncherWord::Kind::Text: args.push_back(w.text); break;
      case ir::LauncherWord::Kind::Input: args.push_back("{{inputs.parameters." + w.text + "}}"); break;
      case ir::LauncherWord::Kind::Binding:
        args.push_back(rules::value_arg(w.text, "{{inputs.parameters." + w.text + "}}"));
        break;
      case ir::LauncherWord::Kind::WorkflowName: args.push_back("{{workflow.name}}"); break;
      case ir::LauncherWord::Kind::PodName: args.push_back("{{pod.name}}"); break;
      case ir::LauncherWord::Kind::Workspace:
        args.push_back(rules::value_arg(ir::kWorkspaceValue, ir::workspace_entry("{{workflow.name}}", w.text)));
        break;
    }
  }
  t["container"] = {
      {"image", options_.launcher_image},
      {"command", Json::array({"pipec-launcher"})},
      {"args", std::move(args)},
      {"env", Json::array({{{"name", "POD_UID"},
                            {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.uid"}}}}}}})}};
  t["metadata"] = {{"annotations", {{"pipelines.kubeflow.org/task_display_name", argo_text(step.name)}}},
                   {"labels", {{"pipelines.kubeflow.org/pipeline-sdk-type", "pipec"}}}};
  add_template(name, t);
  return name;
}

namespace {

// The program of kLoopCheck, run by awk (the launcher image has it) with the loop's items
// (their number, or their JSON list), the JSON list of its succeeded iterations' outputs,
// `max_failures` (-1: none) and `min_success` (0: none) as its arguments (never as its
// text). count() is the number of items of a JSON list (-1: no list), skipping strings.
// Over no items the loop holds: Argo has no outputs of a loop that ran none. The rule is
// local::Runner::loop_outcome's, and prints its line.
constexpr const char* kLoopCheckProgram = R"(function count(s,    i, n, c, depth, str, esc, items, any) {
  if (s !~ /^[ \t\r\n]*\[/) return -1
  n = length(s)
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1)
    if (str) { if (esc) esc = 0; else if (c == "\\") esc = 1; else if (c == "\"") str = 0; continue }
    if (c == "]" || c == "}") { depth--; continue }
    if (c ~ /[ \t\r\n]/) continue
    if (c == "," && depth == 1) { items++; continue }
    if (depth > 0) any = 1
    if (c == "\"") str = 1
    else if (c == "[" || c == "{") depth++
  }
  return any ? items + 1 : 0
}
BEGIN {
  total = ARGV[1] ~ /^[0-9]+$/ ? ARGV[1] + 0 : count(ARGV[1])
  ok = total > 0 ? count(ARGV[2]) : 0
  if (total < 0 || ok < 0) { print "pipec-loop-check: the loop's items or outputs are no JSON list" > "/dev/stderr"; exit 2 }
  failed = total - ok
  holds = (ARGV[3] + 0 < 0 || failed <= ARGV[3] + 0) && (ARGV[4] + 0 <= 0 || ok >= ARGV[4] * total - 1e-9)
  if (failed > 0) printf "%d of %d items failed: %s\n", failed, total, holds ? "the loop tolerates it" : "more than the loop tolerates"
  exit holds ? 0 : 1
}
)";

}  // namespace

Json WorkflowWriter::loop_check_template() const {
  Json inputs = Json::array();
  Json args = Json::array({"awk", kLoopCheckProgram});
  for (const char* name : {"items", "succeeded", "max-failures", "min-success"}) {
    inputs.push_back({{"name", name}});
    args.push_back(fmt::format("{{{{inputs.parameters.{}}}}}", name));
  }
  return {{"name", kLoopCheck},
          {"inputs", {{"parameters", std::move(inputs)}}},
          {"container", {{"image", options_.launcher_image}, {"command", std::move(args)}}},
          {"metadata", {{"labels", {{"pipelines.kubeflow.org/pipeline-sdk-type", "pipec"}}}}}};
}

}  // namespace pipec::emit::argo::detail
