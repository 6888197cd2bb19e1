// write_workflow(): the IR as an Argo Workflow in the shape Kubeflow Pipelines v1
// expects (docs/language.md, "What `pipec build` writes").
//
// Expects a lowered pipeline (lower::lower) whose names, types and graph were checked.
// Guarantees:
//  - template and task names are DNS-1123 names derived from the source names; two
//    sources that give one name are an error at the later one, never a silent rename;
//  - a run-time value reaches a process only as a whole argv word, a whole environment
//    variable, or through an environment variable that a shell script quotes: it never
//    becomes script text, and embedded JSON is built by Argo's `toJson`, not spliced;
//  - conditions are Argo expressions over the values (`{{=...}}`), so a value cannot
//    change the expression either;
//  - the same IR and options give the same bytes (no time stamps, fixed orders).
// Invents: template inputs for the values a loop body takes from outside (`<var>`,
// `<var>-<field>`, `<step>-<output>`), environment variables `PIPEC_<param>` for shell
// scripts, the exit-handler template `<pipeline>-finally`, and a DAG template per pipeline
// called as a step, named after it.
#include "compiler/emit/argo/workflow_writer.hpp"

#include <variant>

#include "compiler/emit/argo/writer.hpp"
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "rules/names.hpp"

namespace pipec::emit::argo::detail {

using namespace yaml;  // the shared YAML writer (compiler/emit/yaml)

namespace {

/// KFP v1's type names for the pipeline_spec annotation.
const char* kfp_type(const ir::Type& t) {
  switch (t.kind) {
    case ir::TypeKind::String: return "String";
    case ir::TypeKind::Int: return "Integer";
    case ir::TypeKind::Float: return "Float";
    case ir::TypeKind::Bool: return "Bool";
    case ir::TypeKind::File: return "String";
    case ir::TypeKind::List: return "JsonArray";
    case ir::TypeKind::Map: return "JsonObject";
  }
  return "String";
}

}  // namespace

std::string WorkflowWriter::k8s_name(const std::string& source, SourceRange range,
                                     const char* what) {
  // sema has checked that the name gives a Kubernetes name (1 to 63 characters).
  std::string name = to_dns1123(source);
  if (name.front() >= '0' && name.front() <= '9') {
    error(range, fmt::format("{} name '{}' becomes '{}', which Argo does not accept as a "
                             "task name (it starts with a digit)",
                             what, source, name));
  }
  return name;
}

void WorkflowWriter::claim_template(const std::string& name, SourceRange range,
                                    const std::string& what) {
  auto [it, inserted] = template_owner_.emplace(name, std::make_pair(what, range));
  if (inserted) return;
  error(range, fmt::format("{} and {} both become the Argo template '{}'; rename one of them",
                           it->second.first, what, name));
  if (it->second.second.valid()) diags_.note(it->second.second, it->second.first + " is here");
}

// --- the workflow ------------------------------------------------------------------------

Json WorkflowWriter::workflow_arguments() const {
  Json params = Json::array();
  for (const auto& param : p_.params) {
    Json p = Json::object();
    p["name"] = param.name;
    if (param.default_value) p["value"] = ir::literal_text(*param.default_value);
    if (!param.constraint.one_of.empty()) {
      Json e = Json::array();
      for (const auto& v : param.constraint.one_of) e.push_back(ir::literal_text(v));
      p["enum"] = std::move(e);
    }
    if (!param.doc.empty()) p["description"] = param.doc;
    params.push_back(std::move(p));
  }
  return params;
}

std::string WorkflowWriter::pipeline_spec_annotation() const {
  // As dsl-compile writes it (sorted keys), with the types it leaves out.
  nlohmann::json spec = nlohmann::json::object();  // std::map: sorted keys
  if (!p_.description.empty()) spec["description"] = p_.description;
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& param : p_.params) {
    nlohmann::json in = nlohmann::json::object();
    in["name"] = param.name;
    in["type"] = kfp_type(param.type);
    if (param.default_value) {
      in["default"] = ir::literal_text(*param.default_value);
      in["optional"] = true;
    }
    if (!param.doc.empty()) in["description"] = param.doc;
    inputs.push_back(std::move(in));
  }
  spec["inputs"] = std::move(inputs);
  spec["name"] = p_.name;
  return spec.dump();
}

void WorkflowWriter::reserve_names(const std::vector<ir::Node>& nodes) {
  for (const auto& node : nodes) {
    if (const auto* st = std::get_if<ir::Step>(&node)) {
      if (st->kind != ir::OpKind::Container && st->kind != ir::OpKind::Pipeline)
        reserved_names_.insert(to_dns1123(st->name));
    } else {
      const auto& loop = std::get<ir::Loop>(node);
      reserved_names_.insert(loop.name);
      if (!loop.limit_name.empty()) reserved_names_.insert(loop.limit_name);
      reserve_names(loop.body);
    }
  }
}

// Moves every line of `text` from `from` on `by` spaces to the right. The writer's text is
// block YAML written line-first, and a literal block's empty lines stay empty, so this
// nests the spec without changing a value.
void indent_lines(std::string& text, std::size_t from, int by) {
  std::string pad(static_cast<std::size_t>(by), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  out.append(text, 0, from);
  for (std::size_t i = from; i < text.size(); ++i) {
    out.push_back(text[i]);
    if (text[i] == '\n' && i + 1 < text.size() && text[i + 1] != '\n') out += pad;
  }
  text = std::move(out);
}

bool WorkflowWriter::run(std::string& out, const TextSink& sink) {
  std::string entry = k8s_name(p_.name, p_.range, "pipeline");
  claim_template(entry, p_.range, "pipeline '" + p_.name + "'");
  std::string exit_name;
  if (!p_.exit_handler.empty()) {
    exit_name = entry + "-finally";
    claim_template(exit_name, p_.range, "the 'finally' block of '" + p_.name + "'");
  }
  // Sized once for a pipeline of plain steps (a template each), not rehashed as it grows.
  const std::size_t nodes = p_.dag.size() + p_.exit_handler.size() + p_.ops.size() + 2;
  reserved_names_.reserve(nodes);
  template_owner_.reserve(nodes);
  reserved_names_.insert(entry);
  reserved_names_.insert(exit_name);
  for (const auto& op : p_.ops) {
    reserved_names_.insert(to_dns1123(op.name));
    ops_by_name_[op.name] = &op;  // the last of a name, as a scan would find
  }
  reserve_names(p_.dag);
  reserve_names(p_.exit_handler);
  for (const auto& callee : p_.callees) {
    reserved_names_.insert(to_dns1123(callee.name));
    reserve_names(callee.dag);
  }
  for (const auto& callee : p_.callees) add_callee(callee);
  // Task names: sema has already rejected two steps that give the same name.
  Scope main;
  main.dag = ir::Plan::kMain;
  std::string tasks;
  tasks.reserve(p_.dag.size() * 512);
  dag_tasks(p_.dag, main, tasks);
  add_dag_template(entry, {}, std::move(tasks));
  add_pipeline_outputs(p_, entry, main);  // the run's outputs, as a called pipeline's
  if (!exit_name.empty()) {
    Scope fin;
    fin.dag = ir::Plan::kFinally;
    std::string exit_tasks;
    dag_tasks(p_.exit_handler, fin, exit_tasks);
    add_dag_template(exit_name, {}, std::move(exit_tasks));
  }
  add_loop_outputs();
  if (!ok_) return false;

  // The document, line-first (see yaml_writer.hpp) after its first line; each template's
  // text is freed as soon as it is copied, so the output is held about once, or, with a
  // sink, never whole: it leaves in pieces of about kPiece bytes. A CronWorkflow is
  // indented as a whole at the end, so it goes to the sink whole.
  const DocumentKind kind = options_.kind;
  const bool stream = sink && kind != DocumentKind::CronWorkflow;
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  std::string& text = out;  // written in place
  text.clear();
  auto flush = [&] {
    sink(text);
    text.clear();
  };
  if (stream) {
    text.reserve(2 * kPiece);
  } else {
    std::size_t size = 0;
    for (const auto& [name, t] : templates_) size += t.size();
    text.reserve(size + 4096);
  }
  text += "apiVersion: argoproj.io/v1alpha1";
  append_scalar_entry(text, "kind",
                      kind == DocumentKind::Workflow           ? "Workflow"
                      : kind == DocumentKind::WorkflowTemplate ? "WorkflowTemplate"
                                                               : "CronWorkflow",
                      0);
  // A Workflow gets a fresh name per run; a template or cron workflow is one object.
  Json metadata = kind == DocumentKind::Workflow ? Json{{"generateName", entry + "-"}}
                                                 : Json{{"name", entry}};
  metadata["annotations"] = {{"pipelines.kubeflow.org/pipeline_spec", pipeline_spec_annotation()},
                             {"pipec.dev/parameters", ir::parameters_json(p_)}};
  metadata["labels"] = {{"pipelines.kubeflow.org/pipeline-sdk-type", "pipec"}};
  append_entry(text, "metadata", metadata, 0);
  new_line(text, 0);
  text += "spec:";
  // A CronWorkflow's schedule, then the workflow's spec one level down, under workflowSpec.
  const bool cron = kind == DocumentKind::CronWorkflow;
  std::size_t spec_start = text.size();
  if (cron) {
    append_scalar_entry(text, "schedule", options_.cron.schedule, 2);
    if (!options_.cron.timezone.empty()) append_scalar_entry(text, "timezone", options_.cron.timezone, 2);
    if (!options_.cron.concurrency_policy.empty())
      append_scalar_entry(text, "concurrencyPolicy", options_.cron.concurrency_policy, 2);
    new_line(text, 2);
    text += "workflowSpec:";
    spec_start = text.size();
  }
  append_scalar_entry(text, "entrypoint", entry, 2);
  if (!p_.params.empty()) append_entry(text, "arguments", Json{{"parameters", workflow_arguments()}}, 2);
  // As dsl-compile orders PipelineConf's fields after serviceAccountName.
  const ir::Settings& set = p_.settings;
  append_scalar_entry(text, "serviceAccountName",
                      !options_.service_account.empty() ? options_.service_account
                      : !set.service_account.empty()    ? set.service_account
                                                        : "pipeline-runner",
                      2);
  if (set.parallelism) append_entry(text, "parallelism", Json(*set.parallelism), 2);
  if (set.ttl_seconds) append_entry(text, "ttlStrategy", Json{{"secondsAfterCompletion", *set.ttl_seconds}}, 2);
  if (!set.image_pull_secrets.empty()) {
    Json secrets = Json::array();
    for (const auto& s : set.image_pull_secrets) secrets.push_back({{"name", s}});
    append_entry(text, "imagePullSecrets", secrets, 2);
  }
  if (set.timeout_seconds) append_entry(text, "activeDeadlineSeconds", Json(*set.timeout_seconds), 2);
  if (!set.pod_gc.empty()) append_entry(text, "podGC", Json{{"strategy", set.pod_gc}}, 2);
  if (set.workspace) {
    // The run's workspace: one claim Argo makes when the run starts (`{{workflow.name}}-`
    // and the template's name) and deletes when it ends, whatever the outcome.
    Json claim = {{"accessModes", Json::array({set.workspace->access_mode})},
                  {"resources", {{"requests", {{"storage", set.workspace->size}}}}}};
    if (!set.workspace->storage_class.empty()) claim["storageClassName"] = set.workspace->storage_class;
    append_entry(text, "volumeClaimTemplates",
                 Json::array({Json{{"metadata", {{"name", ir::kWorkspaceVolume}}}, {"spec", std::move(claim)}}}), 2);
    append_entry(text, "volumeClaimGC", Json{{"strategy", "OnWorkflowCompletion"}}, 2);
  }
  if (!exit_name.empty()) append_scalar_entry(text, "onExit", exit_name, 2);
  new_line(text, 2);
  text += "templates:";
  for (auto it = templates_.begin(); it != templates_.end(); it = templates_.erase(it)) {
    const TemplateText& t = it->second;
    if (stream && !t.op && t.text.size() >= kPiece) {  // a large DAG: straight to the sink
      flush();
      sink(t.text);
      continue;
    }
    t.append_to(text);
    if (stream && text.size() >= kPiece) flush();
  }
  if (cron) indent_lines(text, spec_start, 2);
  text.push_back('\n');
  if (sink) flush();  // the rest, or a CronWorkflow whole
  return true;
}

}  // namespace pipec::emit::argo::detail

namespace pipec::emit::argo {

bool write_workflow(const ir::Pipeline& pipeline, const WriteOptions& options, std::string& out,
                    Diagnostics& diags, const TextSink& sink) {
  return detail::WorkflowWriter(pipeline, options, diags).run(out, sink);
}

}  // namespace pipec::emit::argo
