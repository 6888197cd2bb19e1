// DAG templates: the pipeline's, the exit handler's and loop bodies', with a task per node
// and the fan-in outputs of loops.
#include "compiler/emit/argo/writer.hpp"

#include <variant>
#include "compiler/emit/yaml/yaml_writer.hpp"
#include "rules/names.hpp"
#include "compiler/ir/print.hpp"

namespace pipec::emit::argo::detail {

using namespace yaml;  // the shared YAML writer (compiler/emit/yaml)

// Templates are items of spec.templates (indent 2); their keys are at indent 4.
void WorkflowWriter::add_template(const std::string& name, const Json& t) {
  std::string text;
  append_item(text, t, 2);
  templates_[name] = TemplateText{std::move(text)};
}

// `tasks` becomes the template's text: the header goes in front of it, so the tasks of a
// large DAG are not copied.
void WorkflowWriter::add_dag_template(const std::string& name, const std::vector<std::string>& inputs,
                                      std::string tasks, int parallelism,
                                      const std::vector<std::string>& file_inputs) {
  std::string text;
  new_line(text, 2);
  text += "- name: ";
  append_scalar(text, name, 4);
  if (!inputs.empty() || !file_inputs.empty()) {
    new_line(text, 4);
    text += "inputs:";
  }
  for (const auto* list : {&inputs, &file_inputs}) {
    if (list->empty()) continue;
    new_line(text, 6);
    text += list == &inputs ? "parameters:" : "artifacts:";
    for (const auto& input : *list) {
      new_line(text, 6);
      text += "- name: ";
      append_scalar(text, input, 8);
    }
  }
  if (parallelism > 0) append_entry(text, "parallelism", Json(parallelism), 4);
  new_line(text, 4);
  text += "dag:";
  // Argo's DAGs stop scheduling tasks after a failure unless failFast is false.
  if (!p_.settings.fail_fast) append_entry(text, "failFast", Json(false), 6);
  new_line(text, 6);
  text += "tasks:";
  tasks.insert(0, text);
  templates_[name] = TemplateText{std::move(tasks)};
}

// --- DAGs --------------------------------------------------------------------------------

// Tasks are items of dag.tasks (indent 6); their keys are at indent 8.
namespace {
void begin_task(std::string& out, const std::string& name, const std::string& tmpl) {
  new_line(out, 6);
  out += "- name: ";
  append_scalar(out, name, 8);
  append_scalar_entry(out, "template", tmpl, 8);
}

// A task's dependencies: `dependencies` (each after a success or a skip, Argo's default),
// or in a DAG whose plan says some task runs on another outcome (`outcomes`), `depends`
// for every task of it, since Argo takes one form per DAG: `a` (the same default),
// `(a.Failed || a.Errored)` for `after a.failed`, `(a.Succeeded || a.Skipped || a.Failed ||
// a.Errored)` for `after a.done`.
void task_dependencies(std::string& out, const std::vector<std::string>& depends, bool outcomes,
                       const std::map<std::string, ir::Upon>& upon = {}) {
  if (depends.empty()) return;
  if (outcomes) {
    std::string logic;
    for (const auto& d : depends) {
      std::string t = to_dns1123(d);
      auto it = upon.find(d);
      ir::Upon u = it == upon.end() ? ir::Upon::Succeeded : it->second;
      if (!logic.empty()) logic += " && ";
      if (u == ir::Upon::Succeeded) logic += t;
      else if (u == ir::Upon::Failed) logic += "(" + t + ".Failed || " + t + ".Errored)";
      else logic += "(" + t + ".Succeeded || " + t + ".Skipped || " + t + ".Failed || " + t + ".Errored)";
    }
    append_scalar_entry(out, "depends", logic, 8);
    return;
  }
  new_line(out, 8);
  out += "dependencies:";
  for (const auto& d : depends) {
    new_line(out, 8);
    out += "- ";
    append_scalar(out, to_dns1123(d), 10);
  }
}

using Arguments = std::vector<std::pair<std::string, std::string>>;

/// A task's `arguments`: parameters (name, value) and artifacts (name, `from`).
void task_arguments(std::string& out, const Arguments& params, const Arguments& artifacts = {}) {
  if (params.empty() && artifacts.empty()) return;
  new_line(out, 8);
  out += "arguments:";
  if (!params.empty()) {
    new_line(out, 10);
    out += "parameters:";
  }
  for (const auto& [name, value] : params) {
    new_line(out, 10);
    out += "- name: ";
    append_scalar(out, name, 12);
    append_scalar_entry(out, "value", value, 12);
  }
  if (!artifacts.empty()) {
    new_line(out, 10);
    out += "artifacts:";
  }
  for (const auto& [name, from] : artifacts) {
    new_line(out, 10);
    out += "- name: ";
    append_scalar(out, name, 12);
    append_scalar_entry(out, "from", from, 12);
  }
}
}  // namespace

void WorkflowWriter::task_for(const ir::Step& step, Scope& scope, std::string& out) {
  std::vector<std::pair<std::string, std::string>> params, artifacts;
  std::string tmpl;
  if (step.kind == ir::OpKind::Pipeline || step.kind == ir::OpKind::Container) {
    // The called pipeline's DAG template (add_callee) or the step's container template; a
    // file argument is an artifact, any other a parameter.
    tmpl = step.kind == ir::OpKind::Pipeline ? to_dns1123(step.op) : container_template(step);
    params.reserve(step.args.size());
    for (const auto& [name, value] : step.args) {
      const ir::Ref* r = ir::whole_ref(value);
      (r && is_file(*r) ? artifacts : params).emplace_back(name, argo_value(value, scope));
    }
  } else if (const ir::LauncherCall* call = cur_->plan.launcher(step.name)) {
    tmpl = launcher_template(step, *call);
    for (const auto& [name, value] : call->inputs) params.emplace_back(name, argo_value(value, scope));
  } else {
    ok_ = false;  // a training step whose call the lowering could not build
  }
  begin_task(out, to_dns1123(step.name), tmpl);
  task_dependencies(out, step.depends, outcomes(scope), step.upon);
  if (step.allow_failure) {
    // `allow_failure`: its failure fails neither the DAG nor the tasks after it.
    new_line(out, 8);
    out += "continueOn:";
    append_entry(out, "failed", Json(true), 10);
  }
  if (std::string when = when_of(step.when, scope); !when.empty()) append_scalar_entry(out, "when", when, 8);
  task_arguments(out, params, artifacts);
}

void WorkflowWriter::task_for(const ir::Loop& loop, Scope& scope, std::string& out) {
  loops_[loop.name] = &loop;
  if (loop.tolerates()) tolerant_.push_back(&loop);
  Scope body;
  body.dag = cur_->plan.place(loop.name)->body;
  claim_template(loop.name, loop.range, "the loop over '" + loop.var + "'");
  std::string tasks;
  dag_tasks(loop.body, body, tasks);
  std::vector<std::string> inputs, files;
  for (const auto& key : body.import_order) {
    const auto& [input, ref] = body.imports.at(key);
    (is_file(ref) ? files : inputs).push_back(input);
  }
  add_dag_template(loop.name, inputs, std::move(tasks), 0, files);
  if (loop.limit_name.empty()) {
    loop_task(loop, loop.name, body, scope, true, out);
    return;
  }
  // Argo's `parallelism` counts the running tasks of one DAG template: a template that
  // holds only the loop task bounds the loop's iterations and nothing else. A loop that
  // tolerates failures has the check of its items' outcomes there too (loop_check_task):
  // the task of that template succeeds or fails as the loop does.
  claim_template(loop.limit_name, loop.range,
                 std::string(loop.limit > 0 ? "the limit" : "the failure check") + " of the loop over '" +
                     loop.var + "'");
  Scope limit;
  std::string limit_tasks;
  loop_task(loop, loop.name, body, limit, false, limit_tasks);
  if (loop.tolerates()) loop_check_task(loop, limit, limit_tasks);
  std::vector<std::pair<std::string, std::string>> params, artifacts;
  std::vector<std::string> limit_inputs, limit_files;
  for (const auto& key : limit.import_order) {
    const auto& [input, ref] = limit.imports.at(key);
    (is_file(ref) ? artifacts : params).emplace_back(input, argo_ref(ref, scope));
    (is_file(ref) ? limit_files : limit_inputs).push_back(input);
  }
  add_dag_template(loop.limit_name, limit_inputs, std::move(limit_tasks), loop.limit, limit_files);
  begin_task(out, loop.name, loop.limit_name);
  task_dependencies(out, loop.depends, outcomes(scope));
  if (std::string when = when_of(loop.when, scope); !when.empty()) append_scalar_entry(out, "when", when, 8);
  task_arguments(out, params, artifacts);
}

// The task that runs template `tmpl` (the body of `loop`, whose scope is `inner`) once per
// item, written into the DAG of `scope`; `here`: with the loop's dependencies and `when`
// (false inside the template that holds a limit, whose own task carries them).
void WorkflowWriter::loop_task(const ir::Loop& loop, const std::string& tmpl, Scope& inner,
                               Scope& scope, bool here, std::string& out) {
  std::vector<std::pair<std::string, std::string>> params, artifacts;
  for (const auto& key : inner.import_order) {
    const auto& [input, ref] = inner.imports.at(key);
    std::string value;
    if (ref.kind == ir::Ref::Kind::LoopItem && ref.name == loop.var) {
      value = ref.field.empty() ? "{{item}}" : "{{item." + ref.field + "}}";
    } else {
      value = argo_ref(ref, scope);
    }
    (is_file(ref) ? artifacts : params).emplace_back(input, std::move(value));
  }
  begin_task(out, loop.name, tmpl);
  if (here) {
    task_dependencies(out, loop.depends, outcomes(scope));
    if (std::string when = when_of(loop.when, scope); !when.empty()) append_scalar_entry(out, "when", when, 8);
  } else if (loop.tolerates()) {
    // Its failed (or errored) items fail neither the template around it nor the check,
    // which runs after the loop whatever its outcome.
    new_line(out, 8);
    out += "continueOn:";
    append_entry(out, "failed", Json(true), 10);
    append_entry(out, "error", Json(true), 10);
  }
  task_arguments(out, params, artifacts);
  if (loop.items->is_literal()) {
    append_entry(out, "withItems", Json(loop.items->literal), 8);
  } else {
    append_scalar_entry(out, "withParam", argo_value(*loop.items, scope), 8);
  }
}

// After a loop that tolerates failures, in the template around it: the task that decides
// the loop's outcome (kLoopCheck). Argo gives a loop's outputs as the list of its succeeded
// iterations' outputs (`{{tasks.LOOP.outputs.parameters}}`, one object per iteration with
// outputs), and each iteration gives kLoopItemOutput: the list's length is the number of
// items that succeeded. The check compares it with the number of items, `max_failures`
// and `min_success` (-1 and 0 when not set), and fails when the rule does not hold.
void WorkflowWriter::loop_check_task(const ir::Loop& loop, Scope& scope, std::string& out) {
  if (!templates_.contains(kLoopCheck)) {
    claim_template(kLoopCheck, loop.range, "the failure check of loops");
    add_template(kLoopCheck, loop_check_template());
  }
  std::string items = loop.items->is_literal() ? std::to_string(loop.items->literal.size())
                                               : argo_value(*loop.items, scope);
  begin_task(out, kLoopCheck, kLoopCheck);
  task_dependencies(out, {loop.name}, false);
  task_arguments(out, {{"items", std::move(items)},
                       {"succeeded", "{{tasks." + loop.name + ".outputs.parameters}}"},
                       {"max-failures", std::to_string(loop.max_failures)},
                       {"min-success", fmt::format("{}", loop.min_success)}});
}

// Fan-in: each loop whose steps' outputs are read from outside it gives them as outputs
// of its template (and of the template around it), as the plan lists them; Argo makes each
// a JSON list, one value per iteration in item order. The body of a loop that tolerates
// failures also gives kLoopItemOutput (loop_check_task), and the template around it
// passes on the lists of its succeeded items, `[]` when none succeeded.
void WorkflowWriter::add_loop_outputs() {
  auto append_outputs = [&](const std::string& tmpl, const auto& values, const char* fallback) {
    if (values.empty()) return;
    std::string& text = templates_.at(tmpl).text;  // a loop's DAG template: text
    new_line(text, 4);
    text += "outputs:";
    new_line(text, 6);
    text += "parameters:";
    for (const auto& [name, value] : values) {
      new_line(text, 6);
      text += "- name: ";
      append_scalar(text, name, 8);
      new_line(text, 8);
      text += "valueFrom:";
      append_scalar_entry(text, "parameter", value, 10);
      if (fallback) append_scalar_entry(text, "default", fallback, 10);
    }
  };
  // output name -> value, in name order, per loop of this pipeline that has outputs
  std::map<std::string, std::map<std::string, std::string>> outputs;
  for (const auto& [loop_name, exports] : cur_->plan.exports) {
    Scope body{cur_->plan.place(loop_name)->body, {}, {}};
    auto& values = outputs[loop_name];
    for (const auto& e : exports)
      values.emplace(export_name(e.step, e.field), argo_ref(ir::step_output(e.step, e.field), body));
  }
  for (const ir::Loop* loop : tolerant_) {
    // The id of the body's first task: any value will do. (A body without tasks is no DAG
    // Argo takes; the validator says so.)
    if (loop->body.empty()) continue;
    const auto* step = std::get_if<ir::Step>(&loop->body.front());
    std::string first = step ? to_dns1123(step->name) : std::get<ir::Loop>(loop->body.front()).name;
    outputs[loop->name].emplace(kLoopItemOutput, "{{tasks." + first + ".id}}");
  }
  tolerant_.clear();
  for (const auto& [loop_name, values] : outputs) {
    append_outputs(loop_name, values, nullptr);
    const ir::Loop& loop = *loops_.at(loop_name);
    if (loop.limit_name.empty()) continue;
    std::map<std::string, std::string> passed;
    for (const auto& [name, value] : values)
      if (name != kLoopItemOutput) passed.emplace(name, "{{tasks." + loop_name + ".outputs.parameters." + name + "}}");
    append_outputs(loop.limit_name, passed, loop.tolerates() ? "[]" : nullptr);
  }
}

// The outputs a pipeline declares (`-> (...)`, `output NAME = STEP.OUTPUT`) as the outputs
// of its DAG template `tmpl`: `outputs.parameters` (`valueFrom.parameter`) and
// `outputs.artifacts` (`from`) of its tasks, or through loops their lists, as its plan routes
// them to the top of its DAG (`top`). A called pipeline's template (its callers' tasks read
// them) and the entry template of the pipeline built (the run's outputs, which the UI shows).
void WorkflowWriter::add_pipeline_outputs(const ir::Pipeline& p, const std::string& tmpl, Scope& top) {
  std::string& text = templates_.at(tmpl).text;
  bool any[2] = {false, false};  // parameters, artifacts
  for (int files = 0; files < 2; ++files) {
    for (const auto& out : p.outputs) {
      if (is_file(out.ref) != (files == 1)) continue;
      if (!any[0] && !any[1]) {
        new_line(text, 4);
        text += "outputs:";
      }
      if (!any[files]) {
        new_line(text, 6);
        text += files ? "artifacts:" : "parameters:";
        any[files] = true;
      }
      new_line(text, 6);
      text += "- name: ";
      append_scalar(text, out.name, 8);
      std::string value = argo_ref(out.ref, top);
      if (files) {
        append_scalar_entry(text, "from", value, 8);
      } else {
        new_line(text, 8);
        text += "valueFrom:";
        append_scalar_entry(text, "parameter", value, 10);
      }
    }
  }
}

// A pipeline called as a step: one DAG template, shared by every call, named after it. Its
// inputs are its parameters; its outputs are its steps' (or, through loops, their lists),
// as its plan routes them to the top of its DAG.
void WorkflowWriter::add_callee(const ir::Pipeline& callee) {
  cur_ = &callee;
  std::string name = k8s_name(callee.name, callee.range, "pipeline");
  claim_template(name, callee.range, "pipeline '" + callee.name + "'");
  Scope top;
  top.dag = ir::Plan::kMain;
  std::string tasks;
  dag_tasks(callee.dag, top, tasks);
  std::vector<std::string> inputs, files;
  for (const auto& param : callee.params)
    (param.type.kind == ir::TypeKind::File ? files : inputs).push_back(param.name);
  add_dag_template(name, inputs, std::move(tasks), 0, files);
  add_pipeline_outputs(callee, name, top);
  add_loop_outputs();
  cur_ = &p_;
}

void WorkflowWriter::dag_tasks(const std::vector<ir::Node>& nodes, Scope& scope, std::string& out) {
  for (const auto& node : nodes) {
    if (const auto* s = std::get_if<ir::Step>(&node)) {
      task_for(*s, scope, out);
    } else {
      task_for(std::get<ir::Loop>(node), scope, out);
    }
  }
}

}  // namespace pipec::emit::argo::detail
