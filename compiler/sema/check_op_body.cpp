// The checks of a container op's body (`op NAME(...) { image ..., command ..., ... }`):
// the body table (a row a field: its rule and what the other passes read of it,
// op_body.hpp; the rules themselves: check_op_fields.cpp, the retry map check_retries.cpp),
// the checks across fields, and the fields a step's arguments reach through the op's
// parameters (resources, metrics).
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "rules/retry.hpp"
#include "rules/visuals.hpp"
#include "compiler/sema/checker.hpp"
#include "compiler/sema/op_body.hpp"
#include "compiler/sema/python_op.hpp"
#include "runtime/job_render.hpp"
#include "runtime/metrics.hpp"

namespace pipec::sema::detail {

namespace {

const char* const kRetryKeys[] = {"limit",        "policy", "backoff",    "factor",
                                  "max_duration", "on",     "memory_factor", "memory_max"};

bool is_queue(const std::string& t) { return rules::is_label_value(t) && !t.empty(); }
bool is_name(const std::string& t) { return rules::is_dns1123_subdomain(t); }
bool is_size(const std::string& t) { return rules::is_quantity(t); }

constexpr std::string_view kLocalRunAs = "a step runs as you";
constexpr std::string_view kLocalScheduling = "no cluster scheduler";
constexpr std::string_view kLocalPod = "a step is a process, not a pod";

}  // namespace

// A row of the body table: the field, the Checker member that checks it (nullptr: the
// Python function op's reader takes it, sema/python_op.cpp), and for a scheduling text the
// rule it follows, what the message says it must be and the member it sets (body_text).
struct BodyRow {
  OpBodyField field;
  void (Checker::*check)(const BodyRow&, const ast::BodyField&, BodyState&) = nullptr;
  bool (*ok)(const std::string&) = nullptr;
  const char* want = nullptr;
  std::string ir::ContainerOp::*text = nullptr;
};

namespace {

// Every body field, one row each. A new field is a row here and its printing in the
// writers; component export and the local run read what they must not forget from the
// row (op_body.hpp). The training ops' arguments of the scheduling names follow the same
// rules (compiler/training); docs/language.md, "Scheduling".
using O = const ir::ContainerOp&;
const BodyRow kBodyRows[] = {
    {{"image", [](O o) { return !o.python; }}, &Checker::body_image},
    {{"command", [](O o) { return !o.command.empty(); }}, &Checker::body_command},
    {{"args", [](O o) { return !o.args.empty(); }}, &Checker::body_args},
    {{"env", [](O o) { return !o.env.empty(); }}, &Checker::body_env},
    {{"resources", [](O o) { return !o.resources.empty(); }, false}, &Checker::body_resources},
    {{"outputs", [](O o) { return !o.outputs.empty(); }}, &Checker::body_outputs},
    {{"retries", [](O o) { return o.retries.has_value(); }, false}, &Checker::body_count},
    {{"timeout", [](O o) { return o.timeout_seconds.has_value(); }, false}, &Checker::body_count},
    {{"node_selector", [](O o) { return !o.node_selector.empty(); }, false}, &Checker::body_metadata},
    {{"tolerations", [](O o) { return !o.tolerations.empty(); }, false}, &Checker::body_tolerations},
    {{"labels", [](O o) { return !o.labels.empty(); }, false, kLocalPod}, &Checker::body_metadata},
    {{"annotations", [](O o) { return !o.annotations.empty(); }, false, kLocalPod}, &Checker::body_metadata},
    {{"cache", [](O o) { return o.cache.has_value() || o.cache_staleness_seconds.has_value(); }, false},
     &Checker::body_cache},
    {{"volumes", [](O o) { return !o.volumes.empty(); }, false}, &Checker::body_volumes},
    {{"secret_env", [](O o) { return !o.secret_env.empty(); }, false}, &Checker::body_secret_env},
    {{"image_pull_policy", [](O o) { return !o.image_pull_policy.empty(); }, false},
     &Checker::body_image_pull_policy},
    {{"working_dir", [](O o) { return !o.working_dir.empty(); }}, &Checker::body_working_dir},
    {{"run_as_user", [](O o) { return o.run_as_user.has_value(); }, false, kLocalRunAs}, &Checker::body_run_as_id},
    {{"run_as_group", [](O o) { return o.run_as_group.has_value(); }, false, kLocalRunAs}, &Checker::body_run_as_id},
    {{"run_as_non_root", [](O o) { return o.run_as_non_root.has_value(); }, false, kLocalRunAs},
     &Checker::body_run_as_non_root},
    {{"metrics", [](O o) { return !o.metrics.empty(); }, false}, &Checker::body_metrics},
    {{"metrics_from", [](O o) { return !o.metrics_from.empty(); }, false}, &Checker::body_metrics_from},
    {{"inputs", [](O o) { return std::any_of(o.params.begin(), o.params.end(), [](const ir::OpParam& p) {
       return p.type.kind == TypeKind::File; }); }},
     &Checker::body_inputs},
    {{"python", [](O o) { return o.python; }}},
    {{"packages", [](O o) { return o.python; }}},
    {{"queue", [](O o) { return !o.queue.empty(); }, false, kLocalScheduling}, &Checker::body_text, is_queue,
     "a Kueue queue name (at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends)", &ir::ContainerOp::queue},
    {{"priority_class", [](O o) { return !o.priority_class.empty(); }, false, kLocalScheduling},
     &Checker::body_text, is_name, "a PriorityClass name (lower-case letters, digits, '-' and '.')",
     &ir::ContainerOp::priority_class},
    {{"scheduler", [](O o) { return !o.scheduler.empty(); }, false, kLocalScheduling}, &Checker::body_text,
     is_name, "a scheduler name (lower-case letters, digits, '-' and '.')", &ir::ContainerOp::scheduler},
    {{"shm_size", [](O o) { return !o.shm_size.empty(); }, false, "/dev/shm is this machine's"},
     &Checker::body_text, is_size, "a Kubernetes quantity such as \"8Gi\" (the size of /dev/shm)",
     &ir::ContainerOp::shm_size},
};

const BodyRow* body_row(const std::string& name) {
  for (const auto& row : kBodyRows)
    if (name == row.field.name) return &row;
  return nullptr;
}

}  // namespace

// The rule a literal resource value follows, in the op or as a step's argument bound to
// it through an op parameter: "" when it holds, else the message. gpu_vendor "nvidia" or
// "amd" (as KFP's set_gpu_limit) means <vendor>.com/gpu; a name with '/' is the resource.
std::string resource_problem(const std::string& key, const ir::Literal& literal) {
  std::string text = ir::literal_text(literal);
  if (key == "gpus") return {};
  if (key == "gpu_vendor") {
    std::string vendor = rules::gpu_resource_name(text);
    if (rules::is_resource_name(vendor)) return {};
    return fmt::format("gpu_vendor '{}' gives the resource name '{}', which is not valid; use "
                       "\"nvidia\", \"amd\" or a name such as \"intel.com/gpu\"",
                       text, vendor);
  }
  if (rules::is_quantity(text)) return {};
  return fmt::format("resource '{}' must be a Kubernetes quantity (e.g. \"500m\", 2, \"4Gi\"), got '{}'",
                     key, text);
}

// The metric specs a literal holds: a string is one, a list of strings each one.
std::vector<std::string> metric_texts(const ir::Literal& literal) {
  std::vector<std::string> out;
  if (literal.is_string()) out.push_back(literal.get<std::string>());
  else if (literal.is_array())
    for (const auto& item : literal)
      if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

// "90s", "30m", "2h", "1h30m" as whole seconds: the launcher's rule (rules::parse_duration).
std::optional<long long> duration_seconds(const std::string& text) {
  auto d = rules::parse_duration(text);
  if (!d || d->count() % 1000 != 0) return std::nullopt;
  return d->count() / 1000;
}

// A scheduling text: one literal string by the rule of its row.
void Checker::body_text(const BodyRow& row, const ast::BodyField& field, BodyState& b) {
  auto v = value(field.value, Context::Body);
  if (!v) return;
  std::string text = v->is_literal() && v->type.kind == TypeKind::String ? ir::literal_text(v->literal) : "";
  if (!v->is_literal() || !row.ok(text)) {
    diags_.error(v->range, fmt::format("'{}' must be a literal string: {}", row.field.name, row.want));
    return;
  }
  b.c.*row.text = std::move(text);
  b.c.scheduling_ranges[std::string(row.field.name)] = v->range;
}

ir::ContainerOp Checker::check_body(const ast::OpDecl& op, OpInfo& info) {
  ir::ContainerOp c;
  c.name = op.name.name;
  c.params = info.params;
  c.doc = op.doc;
  c.range = op.name.range;
  current_op_ = &info;
  memory_factor_at_.reset();
  std::map<std::string, SourceRange> seen;
  bool unknown_field = false;
  BodyState b{op, info, c};
  for (const auto& field : op.body->fields) {
    const std::string& name = field.name.name;
    const BodyRow* row = body_row(name);
    if (!row) {
      diags_.error(field.name.range, fmt::format("unknown op body field '{}'", name));
      unknown_field = true;
      std::vector<std::string> known;
      for (const auto& r : kBodyRows) known.emplace_back(r.field.name);
      suggest(field.name.range, name, known);
      continue;
    }
    if (!declare(seen, field.name, "field")) continue;
    if (row->check) (this->*row->check)(*row, field, b);
  }
  current_op_ = nullptr;
  bool python = lower_python_op(host_, op, info.outputs, c, b.paths, diags_);  // sema/python_op.cpp
  for (auto& param : c.params)
    if (param.type.kind == TypeKind::File)
      param.path = b.input_paths.count(param.name) ? b.input_paths[param.name] : "/tmp/inputs/" + param.name + "/data";
  if (!c.metrics_from.empty() && c.metrics.empty())
    diags_.error(seen.count("metrics_from") ? seen["metrics_from"] : op.name.range,
                 "'metrics_from' names where the metrics are read; say which with 'metrics'");
  if (!c.metrics.empty() && c.command.empty())
    diags_.error(seen.count("metrics") ? seen["metrics"] : op.name.range,
                 "an op with 'metrics' needs a 'command': pipec-metrics runs it and reads its output "
                 "(the image's own entrypoint is not known)");
  // A visual output is read by pipec-metrics too, after the command ends.
  if (c.command.empty())
    for (const auto& o : op.outputs) {
      auto it = std::find_if(info.outputs.begin(), info.outputs.end(),
                             [&](const ir::OpOutput& out) { return out.name == o.name.name; });
      if (it != info.outputs.end() && it->type.visual != rules::visuals::Kind::None)
        diags_.error(o.type.range, fmt::format("an op with a visual output ('{}') needs a 'command': pipec-metrics "
                                               "runs it and reads the file when it ends (the image's own "
                                               "entrypoint is not known)",
                                               it->type.str()));
    }
  // One variable in both maps: which value the container gets would be left to the
  // kubelet (Argo) or to the backend's merge order (KFP v2).
  for (const auto& [var, at] : b.secret_keys) {
    auto plain = b.env_keys.find(var);
    if (plain == b.env_keys.end()) continue;
    diags_.error(at, fmt::format("environment variable '{}' is set by both 'env' and 'secret_env'; keep "
                                 "one of them",
                                 var));
    diags_.note(plain->second, fmt::format("'env' sets '{}' here", var));
  }
  if (!b.has_image && !python && !unknown_field)
    diags_.error(op.name.range, fmt::format("op '{}' has no 'image' (e.g. image \"python:3.11\")",
                                            op.name.name));
  for (auto& out : info.outputs) {
    auto it = b.paths.find(out.name);
    if (it == b.paths.end()) {
      if (!b.mentioned.count(out.name))
        diags_.error(op.name.range,
                     fmt::format("output '{}' of op '{}' has no path; add it to 'outputs' (e.g. "
                                 "outputs {{{}: \"/tmp/{}\"}})",
                                 out.name, op.name.name, out.name, out.name));
      continue;
    }
    out.path = it->second;
  }
  c.outputs = info.outputs;
  retry_memory(c);
  return c;
}

// A list literal whose items are scalars: argv words.
std::vector<Value> Checker::words(const ast::Expression& e, const std::string& what) {
  std::vector<Value> out;
  const auto* list = node<ast::ListExpr>(strip(e));
  if (!list) {
    diags_.error(range_of(e),
                 fmt::format("{} must be a list (e.g. [\"python\", \"main.py\"])", what));
    return out;
  }
  for (const auto& item : list->items) {
    auto v = value(item, current_op_ ? Context::Body : Context::Arg);
    if (!v) continue;
    if (!v->type.is_scalar()) {
      diags_.error(v->range, fmt::format("items of {} must be strings or numbers, got {}", what,
                                         type_str(v->type)));
      continue;
    }
    out.push_back(std::move(*v));
  }
  return out;
}

// A map literal whose keys pass `key_ok` and whose values are scalars.
std::vector<std::pair<std::string, Value>> Checker::entries(const ast::Expression& e, const std::string& what,
                                                            const KeyOk& key_ok) {
  std::vector<std::pair<std::string, Value>> out;
  const auto* map = node<ast::MapExpr>(strip(e));
  if (!map) {
    diags_.error(range_of(e), fmt::format("{} must be a map (e.g. {{KEY: \"value\"}})", what));
    return out;
  }
  std::set<std::string> seen;
  for (const auto& entry : map->entries) {
    std::string key = map_key(entry.key);
    if (!seen.insert(key).second) {
      diags_.error(entry.range, fmt::format("duplicate key '{}'", key));
      continue;
    }
    auto v = value(entry.value, current_op_ ? Context::Body : Context::Arg);
    if (!key_ok(entry, key) || !v) continue;
    if (!v->type.is_scalar()) {
      diags_.error(v->range, fmt::format("values of {} must be strings or numbers, got {}", what,
                                         type_str(v->type)));
      continue;
    }
    out.emplace_back(key, std::move(*v));
  }
  return out;
}

// `retries {limit: 3, policy: "OnFailure", backoff: "30s", factor: 2, max_duration: "1h",
// on: ["oom", "exit:75"], memory_factor: 1.5, memory_max: "16Gi"}`: literals (Argo's
// retryStrategy fields are fixed in the workflow); `on` and the memory: check_retries.cpp.
void Checker::retry_map(const ast::Expression& e, ir::ContainerOp& c) {
  std::optional<SourceRange> memory_max_at;
  auto items = entries(e, "'retries'", [&](const ast::MapEntry& entry, const std::string& key) {
    if (key == "on") {  // a list: read here, not as a scalar entry
      retry_on(entry.value, c);
      c.retry_reasons_range = entry.range;
      return false;
    }
    if (std::find(std::begin(kRetryKeys), std::end(kRetryKeys), key) != std::end(kRetryKeys)) return true;
    diags_.error(entry.range, fmt::format("unknown 'retries' field '{}' (limit, policy, backoff, "
                                          "factor, max_duration, on, memory_factor, memory_max)",
                                          key));
    suggest(entry.range, key, {std::begin(kRetryKeys), std::end(kRetryKeys)});
    return false;
  });
  for (auto& item : items) {
    const std::string& key = item.first;
    Value& v = item.second;  // a lambda below uses it: no structured binding (clang 14)
    std::string text = v.is_literal() ? ir::literal_text(v.literal) : "";
    auto whole = [&]() -> std::optional<long long> {
      if (!v.is_literal() || !v.literal.is_number_integer()) return std::nullopt;
      long long n = v.literal.get<long long>();
      return n >= 0 && n < 1000000000 ? std::optional<long long>(n) : std::nullopt;
    };
    if (key == "limit") {
      if (auto n = whole()) c.retries = *n;
      else diags_.error(v.range, "'limit' must be a literal int >= 0 (how many times a failed step is run again)");
    } else if (key == "policy") {
      if (text == "Always" || text == "OnFailure" || text == "OnError" || text == "OnTransientError")
        c.retry_policy = text;
      else
        diags_.error(v.range, "'policy' must be \"Always\", \"OnFailure\" (the container failed), "
                              "\"OnError\" (Argo or Kubernetes failed) or \"OnTransientError\"");
    } else if (key == "factor") {
      if (auto n = whole(); n && *n >= 1) c.retry_factor = *n;
      else diags_.error(v.range, "'factor' must be a literal int >= 1 (each wait is the last one times it)");
    } else if (key == "memory_factor") {
      if (auto f = retry_memory_factor(v)) {
        c.retry_memory_factor = *f;
        memory_factor_at_ = v.range;
        if (!c.retry_reasons_range.valid()) c.retry_reasons_range = v.range;  // `on` first
      }
    } else if (key == "memory_max") {
      memory_max_at = v.range;
      if (auto q = retry_memory_max(v)) c.retry_memory_max = *q;
    } else {
      std::optional<long long> s;
      if (auto n = whole()) s = *n;
      else if (v.is_literal() && v.type.kind == TypeKind::String) s = duration_seconds(text);
      if (!s || *s <= 0) {
        diags_.error(v.range, fmt::format("'{}' must be a literal positive int of seconds or a "
                                          "duration such as \"30s\", \"5m\"",
                                          key));
        continue;
      }
      (key == "backoff" ? c.retry_backoff_seconds : c.retry_max_duration_seconds) = *s;
    }
  }
  if (!c.retries) {
    diags_.error(range_of(e), "'retries' needs a 'limit' (how many times a failed step is run again)");
    return;
  }
  if ((c.retry_factor || c.retry_max_duration_seconds) && !c.retry_backoff_seconds)
    diags_.error(range_of(e), "'factor' and 'max_duration' need a 'backoff' (the first wait)");
  if (memory_max_at && !memory_factor_at_)
    diags_.error(*memory_max_at, "'memory_max' bounds a growing memory; say how it grows with 'memory_factor'");
  if (memory_factor_at_ && *c.retries > rules::kMaxGrowingRetries)
    diags_.error(*memory_factor_at_, fmt::format("with 'memory_factor' the 'limit' is at most {} (got {})",
                                                 rules::kMaxGrowingRetries, *c.retries));
}

// The op parameter a body value is, when it is one whole op parameter.
const ir::OpParam* Checker::bound_param(const OpInfo& op, const Value& v) {
  const ir::Ref* r = ir::whole_ref(v);
  if (!r || r->kind != ir::Ref::Kind::OpParam) return nullptr;
  auto it = std::find_if(op.params.begin(), op.params.end(), [&](const ir::OpParam& p) { return p.name == r->name; });
  return it == op.params.end() ? nullptr : &*it;
}

SourceRange Checker::param_range(const OpInfo& op, const ir::OpParam& p) {
  auto i = static_cast<std::size_t>(&p - op.params.data());
  return i < op.param_ranges.size() ? op.param_ranges[i] : op.range;
}

// A container op's resources and metrics given through its parameters follow the rules
// of the same fields written in the op: a step's literal argument for one is checked
// here, at the argument (a default was checked with the op, a run-time value is checked
// when the pod starts: by the kubelet, or by pipec-metrics).
void Checker::check_bound_fields(const OpInfo& op, const std::vector<std::pair<std::string, Value>>& args) {
  auto given = [&](const Value& body) -> const Value* {
    const ir::OpParam* p = bound_param(op, body);
    if (!p) return nullptr;
    auto it = std::find_if(args.begin(), args.end(), [&](const auto& a) { return a.first == p->name; });
    return it == args.end() || !it->second.is_literal() ? nullptr : &it->second;
  };
  for (const auto& [key, body] : op.container->resources) {
    const Value* arg = given(body);
    if (!arg) continue;
    if (std::string why = resource_problem(key, arg->literal); !why.empty()) {
      diags_.error(arg->range, why);
      diags_.note(body.range, fmt::format("op '{}' uses it as resource '{}' here", op.name, key));
    }
  }
  // The step's whole set of metric specs, when every one is known now.
  std::vector<rules::MetricSpec> specs;
  bool known = true, from_args = false;
  SourceRange at;
  for (const auto& body : op.container->metrics) {
    std::vector<std::string> texts;
    if (body.is_literal()) {
      texts = metric_texts(body.literal);
    } else if (const Value* arg = given(body)) {
      texts = metric_texts(arg->literal);
      if (!from_args) at = arg->range;
      from_args = true;
      bool ok = true;
      for (const auto& text : texts) {
        std::string why;
        if (rules::parse_metric_spec(text, why)) continue;
        diags_.error(arg->range, why);
        diags_.note(body.range, fmt::format("op '{}' uses it as a metric spec here", op.name));
        ok = false;
      }
      if (!ok) known = false;
    } else if (const ir::OpParam* p = bound_param(op, body);
               p && p->default_value && std::none_of(args.begin(), args.end(), [&](const auto& a) { return a.first == p->name; })) {
      texts = metric_texts(*p->default_value);
    } else {
      known = false;
    }
    for (const auto& text : texts) {
      std::string why;
      if (auto spec = rules::parse_metric_spec(text, why)) specs.push_back(std::move(*spec));
      else known = false;
    }
  }
  if (known && from_args)
    if (std::string why; !rules::check_metric_specs(specs, why)) diags_.error(at, why);
}

}  // namespace pipec::sema::detail

namespace pipec::sema {

std::span<const OpBodyField> op_body_fields() {
  static const std::vector<OpBodyField> fields = [] {
    std::vector<OpBodyField> out;
    for (const auto& row : detail::kBodyRows) out.push_back(row.field);
    return out;
  }();
  return fields;
}

}  // namespace pipec::sema
