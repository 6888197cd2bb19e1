#pragma once

// The KFP v2 writer's parts (write_pipeline_spec(), pipeline_spec_writer.hpp), one concept
// a file: values, task inputs and CEL conditions (values.cpp), DAG components and their
// tasks (dag.cpp), container and training components with their executors
// (components.cpp), the spec around them (pipeline_spec_writer.cpp). Private to
// compiler/emit/kfpv2.

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/emit/kfpv2/pipeline_spec_writer.hpp"
#include "compiler/ir/launcher_call.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::emit::kfpv2::detail {

using J = nlohmann::json;  // std::map objects: keys in sorted order, as kfp writes them

inline constexpr const char* kChannel = "pipelinechannel--";

inline const char* parameter_type(const ir::Type& t) {
  switch (t.kind) {
    case ir::TypeKind::String: return "STRING";
    case ir::TypeKind::Int: return "NUMBER_INTEGER";
    case ir::TypeKind::Float: return "NUMBER_DOUBLE";
    case ir::TypeKind::Bool: return "BOOLEAN";
    case ir::TypeKind::File: return "STRING";
    case ir::TypeKind::List: return "LIST";
    case ir::TypeKind::Map: return "STRUCT";
  }
  return "STRING";
}

inline J literal_json(const ir::Literal& l) { return J::parse(l.dump()); }

/// The component input that carries a resource an op builds from text around values.
inline std::string resource_input(std::string_view key) { return fmt::format("pipec-resource-{}", key); }

/// The run's workspace on KFP v2: a container task is given kWorkspaceInput =
/// `{{$.workspace_path}}` (KFP's driver then mounts the claim at /kfp-workspace in its pod,
/// as kfp compiles dsl.WORKSPACE_PATH_PLACEHOLDER); a training task kRunNameInput =
/// `{{$.pipeline_job_resource_name}}`, the workflow's name, of which the claim is named.
inline constexpr const char* kWorkspaceInput = "pipec-workspace";
inline constexpr const char* kRunNameInput = "pipec-run-name";

/// `run.status` in `finally` (SpecWriter::add_run_status): the finally DAG's input
/// kFinalStatusInput, the main DAG's PipelineTaskFinalStatus, and its task kRunStatusTask,
/// whose output `status` is the word; a DAG inside it takes the word as its input
/// kRunStatusTask. No user value's channel (`pipelinechannel--…`) is named so; a step whose
/// task would be (`pipec_run_status`) is an error where `run.status` is read (claim_task).
inline constexpr const char* kFinalStatusInput = "pipec-final-status";
inline constexpr const char* kRunStatusTask = "pipec-run-status";

inline std::string input_placeholder(std::string_view name) {
  return fmt::format("{{{{$.inputs.parameters['{}']}}}}", name);
}
inline std::string output_placeholder(std::string_view name) {
  return fmt::format("{{{{$.outputs.parameters['{}'].output_file}}}}", name);
}
inline std::string input_artifact_path(std::string_view name) {
  return fmt::format("{{{{$.inputs.artifacts['{}'].path}}}}", name);
}
inline std::string output_artifact_path(std::string_view name) {
  return fmt::format("{{{{$.outputs.artifacts['{}'].path}}}}", name);
}

inline bool is_file(const ir::Type& t) { return t.kind == ir::TypeKind::File; }

/// A file passes as an artifact (system.Artifact, kfp's default type).
/// A file's artifact type: system.Artifact, or a visual output's (system.HTML, ...).
inline J artifact_type(const ir::Type& t = ir::Type::scalar(ir::TypeKind::File)) {
  return {{"artifactType",
           {{"schemaTitle", std::string(rules::visuals::v2_schema_title(t.visual))}, {"schemaVersion", "0.0.1"}}}};
}

/// A task input's source as the artifact form of what resolve() gives for a parameter.
inline J as_artifact(const J& source) {
  if (source.contains("taskOutputParameter"))
    return {{"taskOutputArtifact",
             {{"producerTask", source["taskOutputParameter"]["producerTask"]},
              {"outputArtifactKey", source["taskOutputParameter"]["outputParameterKey"]}}}};
  if (source.contains("componentInputParameter"))
    return {{"componentInputArtifact", source["componentInputParameter"]}};
  return source;
}

// --- scopes ------------------------------------------------------------------------------

/// One DAG component being written: the root, the exit handler's, a loop body (`dag`,
/// whose nodes are its tasks: ir::Plan says where each value comes from) or a condition
/// wrapper (`wrapper`: it holds one task, and every value is an input). Values from
/// outside arrive as inputs of the component.
struct Scope {
  const Scope* parent = nullptr;
  bool root = false;
  ir::Plan::DagId dag = ir::Plan::kNoDag;  // kNoDag: the root around the exit handler
  bool wrapper = false;
  std::string loop_var;    // the variable this DAG iterates, if a loop body
  std::string item_input;  // its input
  ir::Type item_type;
  struct Import {
    std::string input;
    ir::Ref ref;
    ir::Type type;
  };
  std::map<std::string, std::size_t> import_index;  // ref key -> imports
  std::vector<Import> imports;
  std::set<std::string> task_names;
};

inline std::string ref_key(const ir::Ref& r) {
  return fmt::format("{}/{}/{}", static_cast<int>(r.kind), r.name, r.field);
}

/// The files a DAG component takes from outside, as its input artifacts (dag.cpp).
void add_artifact_inputs(J& component, const std::vector<Scope::Import>& imports);
/// Output `name` of a DAG component from output `key` of its task `producer` (dag.cpp).
void add_dag_output(J& component, const std::string& name, const ir::Type& type, const J& producer,
                    const J& key);

class SpecWriter {
 public:
  SpecWriter(const ir::Pipeline& p, const WriteOptions& o, Diagnostics& d)
      : p_(p), cur_(&p), options_(o), diags_(d) {
    for (const auto& op : p_.ops) ops_[op.name] = &op;
  }

  bool run(std::string& out);

 private:
  void error(SourceRange range, std::string message) {
    diags_.error(range.valid() ? range : p_.range, std::move(message));
    ok_ = false;
  }
  std::string name_of(const std::string& source, SourceRange range, const char* what);
  void claim_component(const std::string& name, SourceRange range, const std::string& what);
  void claim_task(Scope& s, const std::string& name, SourceRange range);

  // Values.
  std::string channel(const ir::Ref& r, const Scope& s) const;
  ir::Type type_of(const ir::Ref& r) const;
  /// A node's task in its DAG (in its condition wrapper's name when it has one), and the
  /// key of its output `field` there.
  std::string task_of(const std::string& node) const;
  J resolve(const ir::Ref& r, Scope& s, std::set<std::string>& deps);
  /// The task of the finally DAG that turns the main DAG's final state into `run.status`,
  /// its input and the finally task's `taskFinalStatus`, when a finally step reads it.
  void add_run_status(Scope& fin, J& fin_tasks, J& fin_comp, J& fin_task);
  void add_sh_component(const char* component, const char* executor, const char* script, const char* name,
                        const char* in, const char* out);
  std::string import(const ir::Ref& r, Scope& s);
  void task_input(J& inputs, const std::string& name, const ir::Value& v, Scope& s,
                  std::set<std::string>& deps);
  ir::Value at_call_site(const ir::Value& body, const ir::Step& step);
  std::string cel_ref(const ir::Ref& r, Scope& s);
  std::string cel_value(const ir::Value& v, Scope& s, const char* as);
  std::string cel_bool(const ir::Value& v, Scope& s);
  std::string cel_condition(const ir::Condition& c, Scope& s);

  // DAGs.
  void dag(const std::vector<ir::Node>& nodes, Scope& s, J& tasks);
  /// `siblings`: the tasks of the DAG the step's task goes into, where a call's string
  /// built from values gets the task that builds it (call_text).
  J step_task(const ir::Step& step, Scope& s, std::set<std::string>& deps, J& siblings);
  bool failure_policy(const ir::Step& step, J& task);
  J call_text(const ir::Step& step, const std::string& param, const ir::Value& v, Scope& s, J& siblings,
              std::set<std::string>& deps);
  J loop_task(const ir::Loop& loop, Scope& s, std::set<std::string>& deps);
  void add_loop_outputs();
  void add_callee(const ir::Pipeline& callee);
  void add_pipeline_outputs(const ir::Pipeline& p, Scope& top, J& component);
  /// The outputs a step gives (its op's, or its called pipeline's): name and type.
  std::vector<std::pair<std::string, ir::Type>> step_outputs(const ir::Step& step) const;
  void add_dependencies(J& task, const std::vector<std::string>& depends, std::set<std::string> deps) const;
  J component_inputs(const Scope& s) const;
  void pass_imports(const Scope& child, Scope& parent, J& task, std::set<std::string>& deps);

  // Components and executors.
  std::string container_component(const ir::Step& step);
  void pod_platform(const ir::ContainerOp& op, const std::string& executor);
  J container_resources(const ir::ContainerOp& op, J& comp_inputs);
  std::vector<J> container_argv(const ir::ContainerOp& op, const ir::Invocation& call);
  void wrap_argv(const ir::ContainerOp& op, const ir::Invocation& call, J& container, std::vector<J>& argv);
  std::string training_component(const ir::Step& step, const ir::LauncherCall& call);
  J op_word(const ir::Word& w);
  bool literal_ok(std::string_view text, SourceRange range);

  const ir::Pipeline& p_;
  /// The pipeline whose DAGs are being written: p_, or one of p_.callees (a DAG component
  /// whose inputs are its parameters; its plan places its steps).
  const ir::Pipeline* cur_;
  /// Before the names of the components a DAG's own tasks get (condition wrappers,
  /// training steps): "" for p_, "<pipeline>-" for a callee, so no two pipelines meet.
  std::string prefix_;
  const WriteOptions& options_;
  Diagnostics& diags_;
  bool ok_ = true;
  /// Where `run.status` is first read in the finally DAG (resolve), if it is.
  std::optional<SourceRange> run_status_;

  std::map<std::string, const ir::ContainerOp*> ops_;
  std::map<std::string, std::string> component_owner_;
  // pipeline/loop -> the name of its item's input (kfp's `<items channel>-loop-item`)
  std::map<std::string, std::string> loop_item_;
  std::map<std::string, std::string> op_component_;       // op name -> component written
  J components_ = J::object();
  J executors_ = J::object();
  J platform_ = J::object();
};

}  // namespace pipec::emit::kfpv2::detail
