// How values reach a KFP v2 task: component inputs, sibling outputs, fan-in lists, the
// loop item, constants with placeholders, `run.status` in `finally`; conditions as CEL over
// a wrapper's inputs.
#include "compiler/emit/kfpv2/spec_writer.hpp"

#include <algorithm>
#include <stdexcept>
#include "rules/names.hpp"
#include "compiler/ir/print.hpp"

namespace pipec::emit::kfpv2::detail {

namespace {

/// A CEL string literal ('...') holding `text`.
std::string cel_string(std::string_view text) { return ir::quoted_string(text, false); }

}  // namespace

// The name a value takes as an input of a DAG component (kfp's `pipelinechannel--…`).
std::string SpecWriter::channel(const ir::Ref& r, const Scope& s) const {
  switch (r.kind) {
    case ir::Ref::Kind::Param: return kChannel + r.name;
    case ir::Ref::Kind::StepOutput: return kChannel + to_dns1123(r.name) + "-" + r.field;
    case ir::Ref::Kind::LoopItem: {
      std::string_view loop = cur_->plan.loop_of_var(s.dag, r.name);
      auto named = loop_item_.find(cur_->name + "/" + std::string(loop));
      std::string base = named != loop_item_.end()
                             ? named->second
                             : kChannel + std::string(loop.empty() ? std::string_view(r.name) : loop) + "-item";
      // A field of the item as its own value (a condition's input, a string's part): kfp's
      // loop-argument subvariable, `<item>-subvar-<key>`.
      return r.field.empty() ? base : base + "-subvar-" + r.field;
    }
    case ir::Ref::Kind::Run:  // no user channel starts so (`pipelinechannel--…`)
      return r.field == "status" ? std::string(kRunStatusTask) : "pipec-run-" + r.field;
    case ir::Ref::Kind::OpParam: break;
  }
  return kChannel + r.name;
}

// A value's type where the ref was written; a step output read from outside its loops is
// already the list over their iterations (fan-in).
ir::Type SpecWriter::type_of(const ir::Ref& r) const { return r.type; }

std::string SpecWriter::task_of(const std::string& node) const {
  const ir::Plan::Place* place = cur_->plan.place(node);
  std::string task = place && place->loop ? node : to_dns1123(node);
  return place && place->conditional ? "condition-" + task : task;
}

std::string SpecWriter::import(const ir::Ref& r, Scope& s) {
  std::string key = ref_key(r);
  if (auto it = s.import_index.find(key); it != s.import_index.end()) return s.imports[it->second].input;
  s.import_index.emplace(key, s.imports.size());
  s.imports.push_back({channel(r, s), r, type_of(r)});
  return s.imports.back().input;
}

// How a value reaches a task of `s`: an input of the component `s` is, a sibling's
// output, or the loop item. `deps` collects the sibling tasks it comes from.
J SpecWriter::resolve(const ir::Ref& r, Scope& s, std::set<std::string>& deps) {
  switch (r.kind) {
    case ir::Ref::Kind::Param:
      if (s.root) return J{{"componentInputParameter", r.name}};
      break;
    case ir::Ref::Kind::StepOutput: {
      if (s.wrapper || s.dag == ir::Plan::kNoDag) break;
      ir::Plan::Route route = cur_->plan.route(s.dag, r.name);
      if (route.kind == ir::Plan::Route::Kind::Outside) break;
      // A sibling's output (its condition wrapper's, under the channel name), or fan-in:
      // the loop (or its condition wrapper) gives the list under the channel name.
      bool sibling = route.kind == ir::Plan::Route::Kind::Sibling;
      std::string task = task_of(sibling ? r.name : route.through.front());
      deps.insert(task);
      std::string key = sibling && !cur_->plan.place(r.name)->conditional ? r.field : channel(r, s);
      return J{{"taskOutputParameter", {{"producerTask", std::move(task)}, {"outputParameterKey", std::move(key)}}}};
    }
    case ir::Ref::Kind::LoopItem: {
      auto select = [&](std::string input) {
        J j = {{"componentInputParameter", std::move(input)}};
        if (!r.field.empty()) j["parameterExpressionSelector"] = "parseJson(string_value)[" + J(r.field).dump() + "]";
        return j;
      };
      if (r.name == s.loop_var) return select(s.item_input);
      if (r.field.empty()) break;
      // A field of an outer loop's item: the whole item comes in and the task selects the
      // field, as kfp passes a loop item down nested DAGs (kfp-v2.md, "Names").
      ir::Ref item = r;
      item.field.clear();
      for (const Scope* up = &s; up; up = up->parent)
        if (up->loop_var == r.name) {
          item.type = up->item_type;
          break;
        }
      return select(import(item, s));
    }
    case ir::Ref::Kind::OpParam:  // sema: only inside its op's body
      throw std::logic_error("an op's own parameter used outside its body");
    case ir::Ref::Kind::Run:
      if (r.field != "status") {
        // The backend fills a PipelineTaskFinalStatus with the main DAG's state only (its
        // `error` is left empty: driver/resolve.go), so which steps failed is not known.
        error(r.range, fmt::format("'run.{}' has no KFP v2 form (an exit task gets only the main DAG's "
                                   "final state, a PipelineTaskFinalStatus, not which steps failed); "
                                   "build for Argo or run it with 'pipec run --local'",
                                   r.field));
        return J::object();
      }
      // The word comes from the finally DAG's own task kRunStatusTask (add_run_status);
      // a condition wrapper or loop inside it takes it as an input.
      if (s.dag != ir::Plan::kFinally || s.wrapper) break;
      if (!run_status_) run_status_ = r.range;
      deps.insert(kRunStatusTask);
      return J{{"taskOutputParameter", {{"producerTask", kRunStatusTask}, {"outputParameterKey", "status"}}}};
  }
  return J{{"componentInputParameter", import(r, s)}};
}

namespace {

constexpr const char* kRunStatusComponent = "comp-pipec-run-status";
constexpr const char* kRunStatusExecutor = "exec-pipec-run-status";
/// The state, a positional argument compared with fixed words and never read as code, as
/// the word Argo's {{workflow.status}} gives: the KFP v2 backend's states (ML Metadata's:
/// COMPLETE, CACHED, FAILED, CANCELED; RUNNING when it has not recorded the end) and
/// kfp.local's (SUCCEEDED, FAILED).
constexpr const char* kRunStatusScript =
    "case \"$1\" in COMPLETE|CACHED|SUCCEEDED) s=Succeeded ;; FAILED|CANCELED) s=Failed ;; *) s=Error ;; "
    "esac; printf '%s' \"$s\" > \"$2\"";

}  // namespace

// `run.status` in `finally`. The finally DAG's task, which runs after the main one
// (`exit-handler-1`) whatever its end, takes its PipelineTaskFinalStatus as kfp writes an
// exit task's input (`taskFinalStatus {producerTask: exit-handler-1}`; the backend's driver
// fills it for the task's first dependent task, driver/resolve.go) into kFinalStatusInput of
// the finally DAG. There the task kRunStatusTask selects its `state` (a
// parameterExpressionSelector, as a loop item's field) and writes the word as its output
// `status`, which the finally steps read. Its image is the launcher's (it needs `sh`).
void SpecWriter::add_run_status(Scope& fin, J& fin_tasks, J& fin_comp, J& fin_task) {
  if (!run_status_) return;
  claim_component(kRunStatusComponent, *run_status_, "the run's status in 'finally'");
  claim_task(fin, kRunStatusTask, *run_status_);
  add_sh_component(kRunStatusComponent, kRunStatusExecutor, kRunStatusScript, kRunStatusTask, "state", "status");
  J state = {{"componentInputParameter", kFinalStatusInput},
             {"parameterExpressionSelector", "parseJson(string_value)[\"state\"]"}};
  fin_tasks[kRunStatusTask] = {{"componentRef", {{"name", kRunStatusComponent}}},
                               {"cachingOptions", {{"enableCache", true}}},
                               {"taskInfo", {{"name", kRunStatusTask}}},
                               {"inputs", {{"parameters", {{"state", std::move(state)}}}}}};
  fin_comp["inputDefinitions"]["parameters"][kFinalStatusInput] = {{"parameterType", "TASK_FINAL_STATUS"}};
  fin_task["inputs"]["parameters"][kFinalStatusInput] = {{"taskFinalStatus", {{"producerTask", "exit-handler-1"}}}};
}

// One input of a task: a constant, a value from `resolve`, or a string built from values
// (a constant with placeholders, and the values as further inputs, as kfp's f-strings).
void SpecWriter::task_input(J& inputs, const std::string& name, const ir::Value& v, Scope& s,
                            std::set<std::string>& deps) {
  const ir::Ref* whole = ir::whole_ref(v);
  // "${n}" with an int n is a string: it goes the way of text built from values, so the
  // input gets a STRING as declared (KFP checks parameter types).
  bool as_text = whole && v.kind == ir::Value::Kind::Interpolation && type_of(*whole).kind != v.type.kind;
  if (whole && !as_text) {
    inputs[name] = resolve(*whole, s, deps);
    return;
  }
  switch (v.kind) {
    case ir::Value::Kind::Literal:
      inputs[name] = J{{"runtimeValue", {{"constant", literal_json(v.literal)}}}};
      return;
    case ir::Value::Kind::Interpolation: {
      std::string text;
      for (const auto& part : v.parts) {
        if (!part.ref) {
          if (!literal_ok(part.text, v.range)) return;
          text += part.text;
          continue;
        }
        std::string ch = channel(*part.ref, s);
        text += input_placeholder(ch);
        // A field of an outer loop's item comes in as its own input (`…-subvar-<key>`), as
        // kfp passes an f-string's loop-argument subvariable; a whole value as resolve() says.
        const ir::Ref& r = *part.ref;
        bool subvar = r.kind == ir::Ref::Kind::LoopItem && !r.field.empty() && r.name != s.loop_var;
        if (!inputs.contains(ch)) inputs[ch] = subvar ? J{{"componentInputParameter", import(r, s)}} : resolve(r, s, deps);
      }
      inputs[name] = J{{"runtimeValue", {{"constant", text}}}};
      return;
    }
    default:  // sema: a container's or a pipeline's argument is one value
      throw std::logic_error("an argument from a list or map of run-time values");
  }
}

bool SpecWriter::literal_ok(std::string_view text, SourceRange range) {
  if (text.find("{{$") == std::string_view::npos) return true;
  error(range, "on the kfp-v2 target this text holds '{{$', which KFP's launcher would read as a "
               "placeholder of its own (docs/kfp-v2.md); the Argo target passes it unchanged");
  return false;
}

// An op body's string (its parameters as refs) as the step gives it: each parameter
// replaced by the step's argument, literal text kept.
ir::Value SpecWriter::at_call_site(const ir::Value& body, const ir::Step& step) {
  ir::Value out;
  out.kind = ir::Value::Kind::Interpolation;
  out.type = body.type;
  out.range = body.range;
  auto add_text = [&](const std::string& text) {
    if (!out.parts.empty() && !out.parts.back().ref) out.parts.back().text += text;
    else out.parts.push_back(ir::Part{text, {}});
  };
  for (const auto& part : body.parts) {
    if (!part.ref) {
      add_text(part.text);
      continue;
    }
    const ir::Value* arg = nullptr;
    for (const auto& [n, v] : step.args)
      if (n == part.ref->name) arg = &v;
    if (!arg) throw std::logic_error("an op parameter with no value");  // sema: every one has one
    if (arg->is_literal()) add_text(ir::literal_text(arg->literal));
    else if (const ir::Ref* r = ir::whole_ref(*arg)) out.parts.push_back(ir::Part{{}, *r});
    else if (arg->kind == ir::Value::Kind::Interpolation)
      for (const auto& p : arg->parts) p.ref ? out.parts.push_back(p) : add_text(p.text);
    else throw std::logic_error("a list or map in a resource");  // sema: one value
  }
  if (std::none_of(out.parts.begin(), out.parts.end(), [](const ir::Part& p) { return p.ref.has_value(); })) {
    out.kind = ir::Value::Kind::Literal;
    out.literal = out.parts.empty() ? std::string() : out.parts.front().text;
    out.parts.clear();
  }
  return out;
}

// --- conditions (CEL over the inputs of the wrapper task) -------------------------------------

std::string SpecWriter::cel_ref(const ir::Ref& r, Scope& s) {
  // In a condition wrapper every value is an input of the wrapper: `s` has no steps.
  return "inputs.parameter_values[" + cel_string(import(r, s)) + "]";
}

std::string SpecWriter::cel_value(const ir::Value& v, Scope& s, const char* as) {
  if (const ir::Ref* r = ir::whole_ref(v)) {
    std::string x = cel_ref(*r, s);
    return as ? std::string(as) + "(" + x + ")" : x;
  }
  if (v.kind == ir::Value::Kind::Literal) {
    if (as && v.literal.is_number()) {
      if (std::string_view(as) == "double") {
        std::string t = v.literal.dump();
        if (t.find_first_of(".eE") == std::string::npos) t += ".0";
        return t;
      }
      return v.literal.dump();
    }
    if (v.literal.is_boolean()) return v.literal.get<bool>() ? "true" : "false";
    return cel_string(ir::literal_text(v.literal));
  }
  if (v.kind == ir::Value::Kind::Interpolation) {
    std::string text;
    for (const auto& part : v.parts) {
      if (!text.empty()) text += " + ";
      if (!part.ref) {
        text += cel_string(part.text);
      } else if (part.ref->type.kind == ir::TypeKind::String) {
        text += cel_ref(*part.ref, s);
      } else if (part.ref->type.kind == ir::TypeKind::Int) {
        text += "string(int(" + cel_ref(*part.ref, s) + "))";
      } else {
        error(v.range, "on the kfp-v2 target a condition can build a string only from string and "
                       "int values");
      }
    }
    return std::string("(").append(text.empty() ? "''" : text).append(")");  // not "(" + string&&: GCC 12's -Wrestrict at -O3
  }
  throw std::logic_error("a list or map in a comparison");  // sema compares scalars only
}

std::string SpecWriter::cel_bool(const ir::Value& v, Scope& s) {
  if (v.is_literal() && v.literal.is_boolean()) return v.literal.get<bool>() ? "true" : "false";
  return std::string("(").append(cel_value(v, s, nullptr)).append(" == true)");
}

std::string SpecWriter::cel_condition(const ir::Condition& c, Scope& s) {
  // CEL over the wrapper's inputs. KFP holds every number as a double; two ints compare
  // as ints (as kfp writes int(...)).
  auto number = [](ir::Comparison how) -> const char* {
    if (how == ir::Comparison::Text) return nullptr;
    return how == ir::Comparison::Int ? "int" : "double";
  };
  return ir::print_condition(
      c, [&](const ir::Value& v) { return cel_bool(v, s); },
      [&](const ir::Value& v, ir::Comparison how) { return cel_value(v, s, number(how)); });
}

}  // namespace pipec::emit::kfpv2::detail
