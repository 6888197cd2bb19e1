#include "compiler/preflight/needs.hpp"

#include <set>
#include <tuple>
#include <variant>

#include "rules/kubernetes.hpp"
#include "runtime/trainer_v2.hpp"

namespace pipec::preflight {
namespace {

using ir::Value;

// A training argument's value at submission: its text, or why it is known only later.
struct Known {
  std::optional<std::string> text;
  std::string why;  // when !text
  SourceRange range;
};

class Collector {
 public:
  Collector(const ir::Pipeline& top, const NeedsOptions& options) : top_(top), options_(options) {}

  std::vector<Need> run() {
    settings();
    walk(top_, true);
    return std::move(out_);
  }

 private:
  void add(Need need) {
    // One need per place and object: an op's field is named once, whatever calls it.
    auto key = std::make_tuple(static_cast<int>(need.what), need.name, need.range.file,
                               need.range.begin, need.subject, need.skipped);
    if (!seen_.insert(key).second) return;
    out_.push_back(std::move(need));
  }

  Need need(Need::What what, std::string name, std::string step, SourceRange range) {
    Need n;
    n.what = what;
    n.name = std::move(name);
    n.step = std::move(step);
    n.range = range;
    return n;
  }

  void settings() {
    const auto& s = top_.settings;
    auto at = [&](const char* name) {
      auto it = s.ranges.find(name);
      return it != s.ranges.end() ? it->second : top_.range;
    };
    account_ = !options_.service_account.empty() ? options_.service_account
               : !s.service_account.empty()      ? s.service_account
                                                 : std::string("pipeline-runner");
    account_range_ = at("service_account");
    add(need(Need::What::service_account, account_, "settings", account_range_));
    for (const auto& secret : s.image_pull_secrets)
      add(need(Need::What::pull_secret, secret, "settings", at("image_pull_secrets")));
  }

  void walk(const ir::Pipeline& p, bool top) {
    for (const auto& node : p.dag) walk(node, p, top);
    for (const auto& node : p.exit_handler) walk(node, p, top);
  }

  void walk(const ir::Node& node, const ir::Pipeline& p, bool top) {
    if (const auto* loop = std::get_if<ir::Loop>(&node)) {
      for (const auto& n : loop->body) walk(n, p, top);
      return;
    }
    const auto& step = std::get<ir::Step>(node);
    switch (step.kind) {
      case ir::OpKind::Container:
        for (const auto& op : top_.ops)
          if (op.name == step.op) container(op, step, top);
        break;
      case ir::OpKind::Pipeline:
        if (const auto* callee = top_.callee(step.op)) walk(*callee, false);
        break;
      default:
        training(step, top);
    }
  }

  void container(const ir::ContainerOp& op, const ir::Step& step, bool top) {
    for (const auto& v : op.volumes) {
      using Kind = ir::ContainerOp::Volume::Kind;
      if (v.kind == Kind::Pvc) add(need(Need::What::claim, v.name, step.name, v.range));
      if (v.kind == Kind::Secret) add(need(Need::What::secret, v.name, step.name, v.range));
      if (v.kind == Kind::ConfigMap) add(need(Need::What::config_map, v.name, step.name, v.range));
    }
    for (const auto& s : op.secret_env) {
      auto n = need(Need::What::secret, s.secret, step.name, s.range);
      n.keys = {s.key};
      add(std::move(n));
    }
    for (auto [field, what] : {std::pair{"priority_class", Need::What::priority_class},
                               std::pair{"queue", Need::What::local_queue}}) {
      const std::string& name = field == std::string_view("queue") ? op.queue : op.priority_class;
      auto it = op.scheduling_ranges.find(field);
      if (!name.empty()) add(need(what, name, step.name, it != op.scheduling_ranges.end() ? it->second : op.range));
    }
    // The image: a literal of the op, or the op's parameter the step gives.
    if (op.image.is_literal()) {
      add(need(Need::What::image, ir::literal_text(op.image.literal), step.name, op.image.range));
    } else if (const auto* ref = ir::whole_ref(op.image); ref && ref->kind == ir::Ref::Kind::OpParam) {
      image(known(step, ref->name, top), step);
    } else {
      image(Known{std::nullopt, "the image is built from values at run time", op.image.range}, step);
    }
  }

  void image(const Known& k, const ir::Step& step) {
    auto n = need(Need::What::image, k.text.value_or(""), step.name, k.range);
    if (!k.text) n.skipped = k.why;
    if (k.text && k.text->empty()) return;
    add(std::move(n));
  }

  // The value of argument `name` of `step`, as it is when the run is submitted.
  Known known(const ir::Step& step, const std::string& name, bool top) {
    for (const auto& [arg, v] : step.args) {
      if (arg != name) continue;
      const SourceRange at = v.range.valid() ? v.range : step.range;
      if (v.is_literal()) return {ir::literal_text(v.literal), {}, at};
      const auto* ref = ir::whole_ref(v);
      if (ref && ref->kind == ir::Ref::Kind::Param && top) {
        auto it = options_.params.find(ref->name);
        if (it != options_.params.end()) return {it->second, {}, at};
        return {std::nullopt, "parameter '" + ref->name + "' has no value", at};
      }
      std::string why = !ref                                   ? "it is built from values at run time"
                        : ref->kind == ir::Ref::Kind::StepOutput ? "it is step '" + ref->name + "'s output '" +
                                                                     ref->field + "', known only at run time"
                        : ref->kind == ir::Ref::Kind::LoopItem ? "it is the loop's item '" + ref->name + "'"
                                                               : "it is a parameter of a pipeline called as a step";
      return {std::nullopt, why, at};
    }
    return {std::string(), {}, step.range};
  }

  long long count(const ir::Step& step, const char* name, bool top, long long fallback) {
    auto k = known(step, name, top);
    if (!k.text || k.text->empty()) return fallback;
    try {
      return std::stoll(*k.text);
    } catch (...) {
      return fallback;
    }
  }

  // A named object of a training argument (priority_class, queue, trainer_runtime).
  void named(Need::What what, const ir::Step& step, const char* arg, bool top) {
    auto k = known(step, arg, top);
    if (k.text && k.text->empty()) return;
    auto n = need(what, k.text.value_or(""), step.name, k.range);
    if (!k.text) n.skipped = k.why;
    add(std::move(n));
  }

  // A TrainJob in its own terms (train_job): Trainer v2's API and the runtime it names,
  // whatever its ML policy; the Secrets its initializers read; GPUs per node.
  void train_job(const ir::Step& step, bool top) {
    creates("TrainJob", step, step.range);
    add(runtime_need(step, top, "", step.range));
    for (const char* secret : {"dataset_secret", "model_secret"}) named(Need::What::secret, step, secret, top);
    data(step, top);
    named(Need::What::local_queue, step, "queue", top);
    image(known(step, "image", top), step);  // "": the runtime's
    quota(step, top);
  }

  // The API kind a step creates: served, and the workflow's account may create it.
  void creates(const char* kind, const ir::Step& step, SourceRange at) {
    add(need(Need::What::served, kind, step.name, at));
    auto access = need(Need::What::access, kind, step.name, at);
    access.subject = account_;
    add(std::move(access));
  }

  // The Trainer runtime a step names (trainer_runtime, trainer_runtime_kind); `fallback`:
  // the name of a step that names none; `policy`: the ML policy it needs ("": any).
  Need runtime_need(const ir::Step& step, bool top, std::string_view policy, SourceRange at,
                    const std::string& fallback = "") {
    auto k = known(step, "trainer_runtime", top);
    auto kind_k = known(step, "trainer_runtime_kind", top);
    auto n = need(Need::What::runtime, k.text ? (k.text->empty() ? fallback : *k.text) : std::string(), step.name,
                  k.range.valid() ? k.range : at);
    n.policy = std::string(policy);
    n.namespaced = kind_k.text && *kind_k.text == "TrainingRuntime";
    if (!k.text) n.skipped = k.why;
    if (!kind_k.text) n.skipped = kind_k.why;
    return n;
  }

  void training(const ir::Step& step, bool top) {
    if (step.kind == ir::OpKind::TrainJob) return train_job(step, top);
    const char* kind = step.kind == ir::OpKind::MpiJob ? "MPIJob" : step.kind == ir::OpKind::TfJob ? "TFJob" : "PyTorchJob";
    auto runtime = known(step, "runtime", top);
    std::string chosen = runtime.text.value_or("");
    if (runtime.text && chosen.empty()) {
      // The build's runtime for a step that names none: the first of the list that fits.
      std::string_view list = options_.training_runtime;
      while (!list.empty()) {
        std::string_view one = list.substr(0, list.find(','));
        list.remove_prefix(std::min(list.size(), one.size() + 1));
        if (!one.empty() && one != "operator" && runtime::is_training_runtime(kind, one)) {
          chosen = one;
          break;
        }
      }
    }
    const SourceRange at = runtime.range.valid() ? runtime.range : step.range;
    if (!runtime.text) {
      auto n = need(Need::What::served, kind, step.name, at);
      n.skipped = "its runtime is known only at run time: " + runtime.why;
      add(std::move(n));
    } else if (chosen == "trainer-v2") {
      creates("TrainJob", step, at);
      add(runtime_need(step, top, step.kind == ir::OpKind::MpiJob ? "mpi" : "torch", at,
                       runtime::default_trainer_runtime(kind)));
    } else if (step.kind == ir::OpKind::MpiJob && options_.mpi_v1) {
      auto n = need(Need::What::served, kind, step.name, step.range);
      n.skipped = "the training operator's kubeflow.org/v1 MPIJob (--mpi-v1) is not asked about";
      add(std::move(n));
    } else if (chosen != "pods") {
      creates(kind, step, step.range);
    }
    data(step, top);
    named(Need::What::priority_class, step, "priority_class", top);
    named(Need::What::local_queue, step, "queue", top);
    image(known(step, "image", top), step);
    if (step.kind == ir::OpKind::TfJob) image(known(step, "ps_image", top), step);
    quota(step, top);
  }

  // Pods of the job at once, and those with GPUs (docs/training-ops.md: the roles).
  std::pair<long long, long long> pods(const ir::Step& step, bool top) {
    const long long workers = count(step, "workers", top, 1);
    switch (step.kind) {
      case ir::OpKind::TrainJob: {
        const long long nodes = count(step, "num_nodes", top, 1);
        return {nodes, nodes};
      }
      case ir::OpKind::MpiJob: return {workers + 1, workers};
      case ir::OpKind::PyTorchJob: return {workers + 1, workers + 1};
      default: {
        const long long chief = count(step, "chief", top, 0), evaluator = count(step, "evaluator", top, 0);
        return {workers + chief + evaluator + count(step, "ps", top, 0), workers + chief + evaluator};
      }
    }
  }

  // The claims of a training step's `data` entries ("claim:/path"), item by item.
  void data(const ir::Step& step, bool top) {
    for (const auto& [arg, v] : step.args) {
      if (arg != "data") continue;
      const SourceRange at = v.range.valid() ? v.range : step.range;
      auto entry = [&](const std::string& text, SourceRange where) {
        if (auto e = rules::parse_data_entry(text)) {
          auto n = need(Need::What::claim, e->claim, step.name, where);
          n.pods_at_once = pods(step, top).first;
          add(std::move(n));
        }
      };
      auto run_time = [&](const std::string& why, SourceRange where) {
        auto n = need(Need::What::claim, "", step.name, where);
        n.skipped = "the claim is known only at run time: " + why;
        add(std::move(n));
      };
      std::vector<std::pair<ir::Literal, SourceRange>> items;
      if (v.is_literal() && v.literal.is_array()) {
        for (const auto& item : v.literal) items.emplace_back(item, at);
      } else if (v.kind == Value::Kind::List) {
        for (const auto& item : v.items) {
          const SourceRange where = item.range.valid() ? item.range : at;
          if (item.is_literal()) {
            items.emplace_back(item.literal, where);
          } else if (const auto* ref = ir::whole_ref(item); ref && ref->kind == ir::Ref::Kind::Param && top &&
                                                            options_.params.count(ref->name)) {
            items.emplace_back(options_.params.at(ref->name), where);
          } else {
            run_time(ref && ref->kind == ir::Ref::Kind::StepOutput ? "it is a step's output" : "it is a run-time value",
                     where);
          }
        }
      } else if (const auto* ref = ir::whole_ref(v); ref && ref->kind == ir::Ref::Kind::Param && top &&
                                                     options_.params.count(ref->name)) {
        auto list = ir::Literal::parse(options_.params.at(ref->name), nullptr, false);
        if (list.is_array())
          for (const auto& item : list) items.emplace_back(item, at);
      } else {
        run_time("the list is a run-time value", at);
      }
      for (const auto& [item, where] : items)
        if (item.is_string()) entry(item.get<std::string>(), where);
    }
  }

  void quota(const ir::Step& step, bool top) {
    auto gpus = known(step, "gpus", top);
    if (!gpus.text) {
      auto n = need(Need::What::quota, "", step.name, gpus.range);
      n.skipped = "the GPUs per replica are known only at run time: " + gpus.why;
      add(std::move(n));
      return;
    }
    const long long per = count(step, "gpus", top, 0);
    if (per <= 0) return;
    auto resource = known(step, "gpu_resource", top);
    const std::string name = resource.text && !resource.text->empty() ? *resource.text : "nvidia.com/gpu";
    auto n = need(Need::What::quota, name, step.name, gpus.range);
    n.amounts["requests." + name] = static_cast<double>(per * pods(step, top).second);
    add(std::move(n));
  }

  const ir::Pipeline& top_;
  const NeedsOptions& options_;
  std::string account_;
  SourceRange account_range_;
  std::vector<Need> out_;
  std::set<std::tuple<int, std::string, FileId, std::uint32_t, std::string, std::string>> seen_;
};

}  // namespace

std::vector<Need> collect_needs(const ir::Pipeline& pipeline, const NeedsOptions& options) {
  return Collector(pipeline, options).run();
}

const char* need_check(Need::What what) {
  switch (what) {
    case Need::What::claim: return "pvc.exists";
    case Need::What::secret: return "secret.exists";
    case Need::What::config_map: return "configmap.exists";
    case Need::What::pull_secret: return "pullsecret.exists";
    case Need::What::service_account: return "serviceaccount.exists";
    case Need::What::priority_class: return "priorityclass.exists";
    case Need::What::local_queue: return "localqueue.exists";
    case Need::What::runtime: return "runtime.exists";
    case Need::What::served: return "api.served";
    case Need::What::access: return "access.create";
    case Need::What::quota: return "quota.headroom";
    case Need::What::image: return "image.manifest";
    case Need::What::job: return "dryrun.admitted";
  }
  return "preflight";
}

}  // namespace pipec::preflight
