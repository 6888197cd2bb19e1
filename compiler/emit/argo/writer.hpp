#pragma once

// The Argo writer's parts (write_workflow(), workflow_writer.hpp), one concept a file:
// values and conditions (values.cpp), container and launcher templates (templates.cpp),
// DAG templates and their tasks (dag.cpp), the workflow around them (workflow_writer.cpp).
// Private to compiler/emit/argo.

#include <map>
#include <unordered_map>
#include <set>
#include <unordered_set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/base/box.hpp"
#include "compiler/emit/argo/workflow_writer.hpp"
#include "compiler/ir/launcher_call.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/ir/plan.hpp"

namespace pipec::emit::argo::detail {

using Json = nlohmann::ordered_json;

/// An expr-lang string literal ('...') holding `text`, braces escaped (values.cpp).
std::string expr_string(std::string_view text);

/// User text as Argo must be given it so that it arrives unchanged (values.cpp).
std::string argo_text(std::string_view text, bool tag_follows = false);

/// Where an op with metrics finds pipec-metrics: an emptyDir its init container fills.
inline constexpr const char* kMetricsVolume = "pipec-metrics";
inline constexpr const char* kMetricsDir = "/.pipec";
inline constexpr const char* kMetricsTool = "/.pipec/pipec-metrics";

// --- scopes ----------------------------------------------------------------------------

/// One DAG template being written: the pipeline's, the exit handler's, or a loop body's
/// (`dag`, whose nodes are its tasks: ir::Plan says where each value comes from). Values
/// from outside arrive as the template's inputs.
struct Scope {
  ir::Plan::DagId dag = ir::Plan::kNoDag;  // kNoDag: a template of no DAG of the plan
                                           // (a loop's limit): every value is an input
  /// Values imported from outside: key -> (input name, the ref as the parent renders it).
  std::map<std::string, std::pair<std::string, ir::Ref>> imports;
  std::vector<std::string> import_order;  // keys, in first-use order
};

inline bool is_file(const ir::Ref& r) { return r.type.kind == ir::TypeKind::File; }

inline std::string ref_key(const ir::Ref& r) {
  return fmt::format("{}/{}/{}", static_cast<int>(r.kind), r.name, r.field);
}

/// The output of a loop's template that carries a step output from inside it: the
/// list of its values, one per iteration.
inline std::string export_name(const std::string& step, const std::string& field) { return step + "-" + field; }

/// The check after a loop that tolerates failures (WorkflowWriter::loop_check_task): its
/// template and task, and the output each succeeded iteration of the loop gives (no
/// export_name has two '-').
inline constexpr const char* kLoopCheck = "pipec-loop-check";
inline constexpr const char* kLoopItemOutput = "pipec-item-ok";

class WorkflowWriter {
 public:
  WorkflowWriter(const ir::Pipeline& pipeline, const WriteOptions& options, Diagnostics& diags)
      : p_(pipeline), cur_(&pipeline), options_(options), diags_(diags) {}

  bool run(std::string& out, const TextSink& sink);

 private:
  // Names.
  std::string k8s_name(const std::string& source, SourceRange range, const char* what);
  void claim_template(const std::string& name, SourceRange range, const std::string& what);

  // Values.
  struct RefPath {
    const char* root;    // "workflow", "inputs" or "tasks"
    std::string name;    // parameter, input or task name
    std::string output;  // for "tasks": the output parameter
  };
  RefPath resolve(const ir::Ref& r, Scope& scope);
  /// Whether the DAG of `scope` writes its tasks' dependencies as `depends` (Plan::Dag::outcomes).
  bool outcomes(const Scope& scope) const {
    return scope.dag != ir::Plan::kNoDag && cur_->plan.dags[scope.dag].outcomes;
  }
  std::string argo_ref(const ir::Ref& r, Scope& scope);
  std::string argo_value(const ir::Value& v, Scope& scope);
  std::string argo_word(const ir::Word& w);
  std::string expr_ref(const ir::Ref& r, Scope& scope);
  /// `as_number`: "asInt" or "asFloat" to compare numerically, nullptr for text.
  std::string expr_value(const ir::Value& v, Scope& scope, const char* as_number);
  std::string expr_condition(const ir::Condition& c, Scope& scope);
  std::string expr_bool(const ir::Value& v, Scope& scope);

  // Templates.
  // DAG templates are written straight to text (they hold one task per step, the bulk
  // of a large pipeline); the few other templates are built as trees, then written.
  void dag_tasks(const std::vector<ir::Node>& nodes, Scope& scope, std::string& out);
  void task_for(const ir::Step& step, Scope& scope, std::string& out);
  void task_for(const ir::Loop& loop, Scope& scope, std::string& out);
  std::string when_of(const Box<ir::Condition>& when, Scope& scope);
  void add_template(const std::string& name, const Json& t);
  void add_dag_template(const std::string& name, const std::vector<std::string>& inputs,
                        std::string tasks, int parallelism = 0,
                        const std::vector<std::string>& file_inputs = {});
  void loop_task(const ir::Loop& loop, const std::string& tmpl, Scope& inner, Scope& scope,
                 bool here, std::string& out);
  void loop_check_task(const ir::Loop& loop, Scope& scope, std::string& out);
  Json loop_check_template() const;
  void add_loop_outputs();
  void add_callee(const ir::Pipeline& callee);
  void add_pipeline_outputs(const ir::Pipeline& p, const std::string& tmpl, Scope& top);
  std::string container_template(const ir::Step& step);
  Json container_template_json(const ir::ContainerOp* op, const std::string& name, const std::string& display,
                               bool with_doc);
  void reserve_names(const std::vector<ir::Node>& nodes);
  std::string launcher_template(const ir::Step& step, const ir::LauncherCall& call);
  Json container_body(const ir::ContainerOp& op, Json& inputs, Json& pod_spec_patch);
  void pod_fields(const ir::ContainerOp& op, Json& t, Json& labels, Json& annotations);
  void container_resources(const ir::ContainerOp& op, const ir::Pod& pod, Json& c, Json& pod_spec_patch);

  // Annotations and arguments.
  Json workflow_arguments() const;
  std::string pipeline_spec_annotation() const;

  void error(SourceRange range, std::string message) {
    diags_.error(range.valid() ? range : p_.range, std::move(message));
    ok_ = false;
  }

  const ir::Pipeline& p_;
  /// The pipeline whose templates are being written: p_, or one of p_.callees (its DAG's
  /// template takes its parameters as inputs, and its plan places its steps).
  const ir::Pipeline* cur_;
  const WriteOptions& options_;
  Diagnostics& diags_;
  bool ok_ = true;

  // A container op's template text, made once: everything but the template's name and the
  // step's display name, which each step's copy puts between the three pieces.
  struct OpText {
    std::string head, middle, tail;
    bool whole = false;  // false: the op's text could not be cut; each step renders its own
  };
  // A template's YAML text; or, for a step's copy of its op's template, the op's pieces and
  // the two names as YAML scalars, put together only when the document is assembled, so
  // that the copies of a large pipeline are written once (into the document), not twice.
  struct TemplateText {
    std::string text;
    const OpText* op = nullptr;
    std::string name, display;  // with `op`: the scalars that go between its pieces
    std::size_t size() const {
      return op ? op->head.size() + name.size() + op->middle.size() + display.size() + op->tail.size()
                : text.size();
    }
    void append_to(std::string& out) const {
      if (!op) {
        out += text;
        return;
      }
      out += op->head;
      out += name;
      out += op->middle;
      out += display;
      out += op->tail;
    }
  };
  std::map<std::string, TemplateText> templates_;  // by name: written in name order
  ir::NameMap<std::pair<std::string, SourceRange>> template_owner_;  // looked up, never walked
  ir::NameMap<int> op_template_count_;  // op name -> templates made for it
  std::map<std::string, OpText, std::less<>> op_text_;
  std::unordered_set<std::string, ir::NameHash, std::equal_to<>> reserved_names_;  // names other templates will take
  std::unordered_map<std::string_view, const ir::ContainerOp*> ops_by_name_;  // p_.ops by name
  std::map<std::string, const ir::Loop*, std::less<>> loops_;  // written, by name
  std::vector<const ir::Loop*> tolerant_;  // written loops that tolerate failures, of cur_
};

}  // namespace pipec::emit::argo::detail
