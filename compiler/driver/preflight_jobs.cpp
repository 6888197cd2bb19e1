// The training jobs `pipec preflight` asks the API to admit (dryRun=All): each training
// step's launcher call, its inputs given the values known at submission, run through the
// launcher's own `--dry-run` (no second renderer).
#include "compiler/driver/preflight_jobs.hpp"

#include <atomic>
#include <sstream>
#include <variant>

#include "compiler/base/diagnostics.hpp"
#include "compiler/local/values.hpp"
#include "rules/launcher_cli.hpp"
#include "runtime/job_render.hpp"
#include "runtime/launcher.hpp"

namespace pipec::driver {
namespace {

// What a run passes where the job's name and its workspace claim come from the run: the
// dry run needs a name, and admission does not look a claim up.
constexpr const char* kRunName = "preflight";

// The text of a reference at submission: a parameter of the built pipeline; anything else
// is known only when the run gets there.
std::string ref_text(const ir::Ref& ref, const std::map<std::string, std::string>& params) {
  using K = ir::Ref::Kind;
  if (ref.kind == K::Param && ref.field.empty()) {
    auto it = params.find(ref.name);
    if (it != params.end()) return it->second;
    throw local::EvalError{"parameter '" + ref.name + "' has no value"};
  }
  switch (ref.kind) {
    case K::StepOutput:
      throw local::EvalError{"it takes step '" + ref.name + "'s output '" + ref.field + "', known only at run time"};
    case K::LoopItem: throw local::EvalError{"it takes the loop's item '" + ref.name + "'"};
    default: throw local::EvalError{"it takes a value known only at run time"};
  }
}

RenderedJob render(const ir::Step& step, const ir::Pipeline& pipeline, const RenderOptions& options) {
  RenderedJob out;
  out.step = &step;
  const ir::LauncherCall* call = pipeline.plan.launcher(step.name);
  if (!call) {
    out.skipped = "its launcher call cannot be built";
    return out;
  }
  std::map<std::string, std::string> inputs;
  try {
    for (const auto& [name, value] : call->inputs)
      inputs[name] = local::value_text(value, [&](const ir::Ref& r) { return ref_text(r, options.params); });
  } catch (const local::EvalError& e) {
    out.skipped = "its job needs a value known only at run time: " + e.message;
    return out;
  }
  // The words the pod would run, read by the launcher's own parser (the dry run is the
  // launcher's, as in the pod).
  std::vector<std::string> words;
  for (const auto& [option, w] : call->args) {
    words.push_back(rules::launcher_flag(option));
    switch (w.kind) {
      case ir::LauncherWord::Kind::Input: words.push_back(inputs[w.text]); break;
      case ir::LauncherWord::Kind::Binding: words.push_back(rules::value_arg(w.text, inputs[w.text])); break;
      case ir::LauncherWord::Kind::Workspace:
        words.push_back(rules::value_arg(ir::kWorkspaceValue, ir::workspace_entry(kRunName, w.text)));
        break;
      case ir::LauncherWord::Kind::WorkflowName: words.push_back(kRunName); break;
      case ir::LauncherWord::Kind::PodName: words.push_back(kRunName + std::string("-") + step.name); break;
      default: words.push_back(w.text); break;
    }
  }
  std::string error, help;
  auto launcher = runtime::parse_options(words, error, help);
  if (!launcher) {
    out.skipped = "the launcher refuses its call: " + error;
    return out;
  }
  launcher->dry_run = true;
  out.pods = launcher->runtime == "pods";
  auto source = runtime::render_job_from_args(launcher->manifest, launcher->bind_args, launcher->value_args);
  std::ostringstream printed, said;
  const std::atomic<bool> stop{false};
  const runtime::ConnectFn no_cluster = [](std::string& why) -> kube::KubeClient* {
    why = "a dry run asks no cluster";
    return nullptr;
  };
  if (!source.ok || runtime::run_launcher(*launcher, no_cluster, printed, said, stop) != runtime::kExitSucceeded) {
    out.skipped = "the launcher refuses its values: " + (source.ok ? said.str() : source.error);
    while (!out.skipped.empty() && out.skipped.back() == '\n') out.skipped.pop_back();
    return out;
  }
  out.source = std::move(source.job);
  out.created = printed.str();
  return out;
}

class Walker {
 public:
  Walker(const ir::Pipeline& top, const RenderOptions& options) : top_(top), options_(options) {}

  std::vector<RenderedJob> run() {
    walk(top_, nullptr);
    return std::move(out_);
  }

 private:
  void walk(const ir::Pipeline& p, const ir::Step* call) {
    for (const auto& node : p.dag) walk(node, p, call);
    for (const auto& node : p.exit_handler) walk(node, p, call);
  }

  void walk(const ir::Node& node, const ir::Pipeline& p, const ir::Step* call) {
    if (const auto* loop = std::get_if<ir::Loop>(&node)) {
      for (const auto& n : loop->body) walk(n, p, call);
      return;
    }
    const auto& step = std::get<ir::Step>(node);
    if (step.kind == ir::OpKind::Container) return;
    if (step.kind == ir::OpKind::Pipeline) {
      if (const auto* callee = top_.callee(step.op)) walk(*callee, &step);
      return;
    }
    if (call != nullptr) {
      RenderedJob job;
      job.step = &step;
      job.skipped = "it is a step of pipeline '" + call->op + "', called as step '" + call->name +
                    "': its values come from the call at run time";
      out_.push_back(std::move(job));
      return;
    }
    out_.push_back(render(step, p, options_));
  }

  const ir::Pipeline& top_;
  const RenderOptions& options_;
  std::vector<RenderedJob> out_;
};

}  // namespace

std::vector<RenderedJob> render_training_jobs(const ir::Pipeline& pipeline, const RenderOptions& options) {
  return Walker(pipeline, options).run();
}

}  // namespace pipec::driver
