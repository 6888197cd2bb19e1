// The checks of a container op's body (`op NAME(...) { image ..., command ..., ... }`):
// each field's rule (the retry map: check_retries.cpp), and the fields a step's arguments reach through
// the op's parameters (resources, metrics).
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
#include "compiler/sema/checker.hpp"
#include "compiler/sema/python_op.hpp"
#include "runtime/job_render.hpp"
#include "runtime/metrics.hpp"

namespace pipec::sema::detail {

namespace {

const char* const kRetryKeys[] = {"limit",        "policy", "backoff",    "factor",
                                  "max_duration", "on",     "memory_factor", "memory_max"};
const char* const kBodyFields[] = {"image",   "command",       "args",        "env",
                                   "resources", "outputs",     "retries",     "timeout",
                                   "node_selector", "tolerations", "labels", "annotations",
                                   "cache", "volumes", "secret_env", "image_pull_policy",
                                   "working_dir", "run_as_user", "run_as_group", "run_as_non_root",
                                   "metrics", "metrics_from", "inputs", "python", "packages"};

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

const char* const kResourceKeys[] = {"cpu", "memory", "gpus", "gpu_vendor"};

bool is_queue(const std::string& t) { return rules::is_label_value(t) && !t.empty(); }
bool is_name(const std::string& t) { return rules::is_dns1123_subdomain(t); }
bool is_size(const std::string& t) { return rules::is_quantity(t); }

// The body fields that are one literal text by one rule: a row each (name, rule, what it
// sets: ir::kSchedulingFields, in the same order). The training ops' arguments of the same
// names follow the same rules (compiler/training); docs/language.md, "Scheduling".
struct TextField {
  const char* name;
  bool (*ok)(const std::string&);
  const char* want;
};
const TextField kTextFields[] = {
    {"queue", is_queue, "a Kueue queue name (at most 63 of [A-Za-z0-9-_.], alphanumeric at both ends)"},
    {"priority_class", is_name, "a PriorityClass name (lower-case letters, digits, '-' and '.')"},
    {"scheduler", is_name, "a scheduler name (lower-case letters, digits, '-' and '.')"},
    {"shm_size", is_size, "a Kubernetes quantity such as \"8Gi\" (the size of /dev/shm)"},
};
static_assert(std::size(kTextFields) == std::size(ir::kSchedulingFields));

// A `volumes` source (ir::ContainerOp::Volume); nullopt when it is not one.
std::optional<ir::ContainerOp::Volume> volume_source(std::string source) {
  ir::ContainerOp::Volume vol;
  if (source.size() > 3 && source.compare(source.size() - 3, 3, ":ro") == 0) {
    vol.read_only = true;
    source.resize(source.size() - 3);
  }
  auto colon = source.find(':');
  vol.kind = source.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : source.substr(colon + 1);
  if (vol.kind == "pvc") {
    auto slash = rest.find('/');
    vol.name = rest.substr(0, slash);
    if (slash != std::string::npos) {
      vol.sub_path = rest.substr(slash + 1);
      // A relative path inside the claim: the mount path's rule, without the leading '/'.
      if (vol.sub_path.empty() || !rules::parse_data_entry("x:/" + vol.sub_path)) return std::nullopt;
      vol.sub_path = rules::parse_data_entry("x:/" + vol.sub_path)->path.substr(1);
    }
    return rules::is_dns1123_subdomain(vol.name) ? std::optional(vol) : std::nullopt;
  }
  if (vol.kind == "configmap" || vol.kind == "secret") {
    vol.name = rest;
    return rules::is_dns1123_subdomain(vol.name) ? std::optional(vol) : std::nullopt;
  }
  if (vol.kind == "memory") {
    vol.kind = "empty";
    vol.memory = true;
  }
  if ((vol.kind != "empty" && vol.kind != "ephemeral") || (colon != std::string::npos && !rules::is_quantity(rest)) ||
      (vol.kind == "ephemeral" && rest.empty()))
    return std::nullopt;
  vol.size = rest;
  return vol;
}

const TextField* text_field(const std::string& name) {
  for (const auto& f : kTextFields)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

// "90s", "30m", "2h", "1h30m" as whole seconds: the launcher's rule (rules::parse_duration).
std::optional<long long> duration_seconds(const std::string& text) {
  auto d = rules::parse_duration(text);
  if (!d || d->count() % 1000 != 0) return std::nullopt;
  return d->count() / 1000;
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
  bool has_image = false;
  bool unknown_field = false;
  std::map<std::string, std::string> paths;
  std::set<std::string> mentioned;  // outputs given a path, valid or not
  std::map<std::string, std::string> input_paths;  // file parameters placed by `inputs`
  std::map<std::string, SourceRange> env_keys, secret_keys;  // where each variable is set
  for (const auto& field : op.body->fields) {
    const std::string& name = field.name.name;
    const TextField* text_row = text_field(name);
    if (!text_row && std::find(std::begin(kBodyFields), std::end(kBodyFields), name) == std::end(kBodyFields)) {
      diags_.error(field.name.range, fmt::format("unknown op body field '{}'", name));
      unknown_field = true;
      std::vector<std::string> known(std::begin(kBodyFields), std::end(kBodyFields));
      for (const auto& f : kTextFields) known.emplace_back(f.name);
      suggest(field.name.range, name, known);
      continue;
    }
    if (!declare(seen, field.name, "field")) continue;
    if (text_row) {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      std::string text = v->is_literal() && v->type.kind == TypeKind::String ? ir::literal_text(v->literal) : "";
      if (!v->is_literal() || !text_row->ok(text)) {
        diags_.error(v->range, fmt::format("'{}' must be a literal string: {}", name, text_row->want));
        continue;
      }
      c.*(ir::kSchedulingFields[text_row - kTextFields].member) = std::move(text);
      c.scheduling_ranges[name] = v->range;
    } else if (name == "image") {
      has_image = true;
      if (auto v = value(field.value, Context::Body);
          v && check_assign(*v, Type::scalar(TypeKind::String), "'image'"))
        c.image = std::move(*v);
    } else if (name == "command") {
      if (node<ast::ListExpr>(strip(field.value))) {
        c.command = words(field.value, "'command'");
      } else if (auto v = value(field.value, Context::Body)) {
        if (v->type.kind != TypeKind::String) {
          diags_.error(v->range,
                       fmt::format("'command' must be a string (run by sh -c) or a list "
                                   "of words, got {}",
                                   type_str(v->type)));
        } else {
          c.command.push_back(std::move(*v));
          c.shell = true;
        }
      }
    } else if (name == "args") {
      c.args = words(field.value, "'args'");
    } else if (name == "env") {
      c.env = entries(field.value, "'env'", [&](const ast::MapEntry& e, const std::string& key) {
        bool ok = rules::is_env_name(key);
        if (!ok)
          diags_.error(e.range,
                       fmt::format("'{}' is not a valid environment variable name", key));
        env_keys.emplace(key, e.range);
        if (ok && rules::env_reserved_by(key, false)) {
          // The shell-form command's values arrive as PIPEC_<param>: a user variable of
          // that name would replace one of them.
          diags_.error(e.range, fmt::format("environment variable names starting with "
                                            "'PIPEC_' are reserved for pipec ('{}')",
                                            key));
          ok = false;
        }
        return ok;
      });
    } else if (name == "retries" && node<ast::MapExpr>(strip(field.value))) {
      retry_map(field.value, c);
    } else if (name == "retries" || name == "timeout") {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
      std::optional<long long> n;
      if (v->is_literal() && v->type.kind == TypeKind::Int && text.size() < 10 &&
          text.find('-') == std::string::npos)
        n = std::stoll(text);
      else if (name == "timeout" && v->is_literal() && v->type.kind == TypeKind::String)
        n = duration_seconds(text);
      if (name == "retries" && n) {
        c.retries = *n;
      } else if (name == "timeout" && n && *n > 0) {
        c.timeout_seconds = *n;
      } else {
        diags_.error(v->range, name == "retries"
                                   ? std::string("'retries' must be a literal int >= 0 (how "
                                                 "many times a failed step is run again)")
                                   : std::string("'timeout' must be a literal positive int of "
                                                 "seconds or a duration such as \"90s\", "
                                                 "\"30m\", \"1h30m\""));
      }
    } else if (name == "node_selector" || name == "labels" || name == "annotations") {
      // Literal texts: they become pod metadata and scheduling fields, never a place a
      // value could reach the structure. The label rules are the launcher's own.
      auto what = "'" + name + "'";
      auto items = entries(field.value, what, [&](const ast::MapEntry& e, const std::string& key) {
        if (rules::is_label_key(key)) return true;
        diags_.error(e.range, fmt::format("'{}' is not a Kubernetes {} key ([prefix/]name, "
                                          "name at most 63 of [A-Za-z0-9-_.])",
                                          key, name == "annotations" ? "annotation" : "label"));
        return false;
      });
      auto& out = name == "node_selector" ? c.node_selector : name == "labels" ? c.labels : c.annotations;
      for (auto& [key, v] : items) {
        if (!v.is_literal()) {
          diags_.error(v.range, fmt::format("{} values must be literals (they are pod metadata)", what));
          continue;
        }
        std::string text = ir::literal_text(v.literal);
        if (name != "annotations" && !rules::is_label_value(text)) {
          diags_.error(v.range, fmt::format("'{}' is not a Kubernetes label value (at most 63 of "
                                            "[A-Za-z0-9-_.], alphanumeric at both ends)",
                                            text));
          continue;
        }
        out.emplace_back(key, std::move(text));
      }
    } else if (name == "volumes") {
      // Mount path -> source, literal texts; paths by the launcher's data-entry rule.
      std::set<std::string> paths_seen;
      auto items = entries(field.value, "'volumes'", [](const ast::MapEntry&, const std::string&) { return true; });
      for (auto& [path, v] : items) {
        std::string source = v.is_literal() ? ir::literal_text(v.literal) : "";
        auto vol = v.is_literal() ? volume_source(source) : std::nullopt;
        if (!vol) {
          diags_.error(v.range, fmt::format("a volume is a literal \"pvc:CLAIM[/SUB/PATH]\", \"empty[:SIZE]\", "
                                            "\"memory[:SIZE]\", \"ephemeral:SIZE\", \"configmap:NAME\" or "
                                            "\"secret:NAME\" (Kubernetes names and quantities), each with an "
                                            "optional \":ro\" (read-only), got {}",
                                            v.is_literal() ? "'" + source + "'" : std::string("a value known only at run time")));
          continue;
        }
        auto entry = rules::parse_data_entry("x:" + path);
        if (!entry) {
          diags_.error(v.range, fmt::format("'{}' is not a mount path (absolute, without ':', '..' or "
                                            "control characters)", path));
          continue;
        }
        if (!paths_seen.insert(entry->path).second) {
          diags_.error(v.range, fmt::format("two volumes are mounted at '{}'", entry->path));
          continue;
        }
        vol->path = entry->path;
        vol->range = v.range;
        c.volumes.push_back(std::move(*vol));
      }
    } else if (name == "secret_env") {
      auto items = entries(field.value, "'secret_env'", [&](const ast::MapEntry& e, const std::string& key) {
        bool ok = !key.empty() && !(key[0] >= '0' && key[0] <= '9') && key.rfind("PIPEC_", 0) != 0 &&
                  std::all_of(key.begin(), key.end(), [](char ch) {
                    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
                  });
        if (!ok) diags_.error(e.range, fmt::format("'{}' is not an environment variable name a step may set", key));
        secret_keys.emplace(key, e.range);
        return ok;
      });
      for (auto& [var, v] : items) {
        std::string text = v.is_literal() ? ir::literal_text(v.literal) : "";
        auto colon = text.find(':');
        std::string secret = text.substr(0, colon), key = colon == std::string::npos ? "" : text.substr(colon + 1);
        bool key_ok = !key.empty() && key.size() <= 253 && std::all_of(key.begin(), key.end(), [](char ch) {
          return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '-' || ch == '_' || ch == '.';
        });
        if (!v.is_literal() || !rules::is_dns1123_subdomain(secret) || !key_ok) {
          diags_.error(v.range, fmt::format("a secret variable is a literal \"SECRET:KEY\" (a Secret's "
                                            "name and one of its keys), got {}",
                                            v.is_literal() ? "'" + text + "'" : std::string("a value known only at run time")));
          continue;
        }
        c.secret_env.push_back({var, secret, key, v.range});
      }
    } else if (name == "image_pull_policy") {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
      if (text != "Always" && text != "IfNotPresent" && text != "Never") {
        diags_.error(v->range, "'image_pull_policy' must be \"Always\", \"IfNotPresent\" or \"Never\"");
        continue;
      }
      c.image_pull_policy = text;
    } else if (name == "metrics") {
      // The launcher's rules (runtime/metrics.hpp) for each literal spec and the set;
      // pipec-metrics applies them to values known at run time.
      std::vector<rules::MetricSpec> specs;
      for (auto& v : words(field.value, "'metrics'")) {
        if (v.is_literal()) {
          std::string why;
          auto spec = v.type.kind == TypeKind::String ? rules::parse_metric_spec(ir::literal_text(v.literal), why)
                                                      : std::nullopt;
          if (!spec) {
            diags_.error(v.range, why.empty() ? std::string("a metric spec is a string such as \"acc:PERCENTAGE\"") : why);
            continue;
          }
          specs.push_back(std::move(*spec));
        } else if (!ir::whole_ref(v)) {
          diags_.error(v.range, "a metric spec is a literal or one of the op's parameters, not text built from values");
          continue;
        } else if (const ir::OpParam* p = bound_param(info, v); p && p->default_value) {
          for (const auto& text : metric_texts(*p->default_value)) {
            std::string why;
            if (rules::parse_metric_spec(text, why)) continue;
            diags_.error(param_range(info, *p), "the default of '" + p->name + "': " + why);
            diags_.note(v.range, fmt::format("op '{}' uses it as a metric spec here", info.name));
          }
        }
        c.metrics.push_back(std::move(v));
      }
      if (std::string why; !rules::check_metric_specs(specs, why)) diags_.error(range_of(field.value), why);
    } else if (name == "metrics_from") {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
      auto entry = v->is_literal() && v->type.kind == TypeKind::String ? rules::parse_data_entry("x:" + text)
                                                                        : std::nullopt;
      if (!entry) {
        diags_.error(v->range, "'metrics_from' must be a literal absolute path (a file the command writes "
                               "its metrics to, as name=value lines)");
        continue;
      }
      c.metrics_from = entry->path;
    } else if (name == "working_dir") {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
      if (!v->is_literal() || v->type.kind != TypeKind::String || !rules::parse_data_entry("x:" + text)) {
        diags_.error(v->range, "'working_dir' must be a literal absolute path (without ':', '..' or "
                               "control characters)");
        continue;
      }
      c.working_dir = rules::parse_data_entry("x:" + text)->path;
    } else if (name == "run_as_user" || name == "run_as_group") {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      if (!v->is_literal() || !v->literal.is_number_integer() || v->literal.get<long long>() < 0 ||
          v->literal.get<long long>() > 2147483647) {
        diags_.error(v->range, fmt::format("'{}' must be a literal int from 0 to 2147483647 (a numeric "
                                           "{} id)",
                                           name, name == "run_as_user" ? "user" : "group"));
        continue;
      }
      (name == "run_as_user" ? c.run_as_user : c.run_as_group) = v->literal.get<long long>();
    } else if (name == "run_as_non_root") {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      if (!v->is_literal() || !v->literal.is_boolean()) {
        diags_.error(v->range, "'run_as_non_root' must be a literal bool");
        continue;
      }
      c.run_as_non_root = v->literal.get<bool>();
    } else if (name == "tolerations") {
      const auto* list = node<ast::ListExpr>(strip(field.value));
      if (!list) {
        diags_.error(range_of(field.value),
                     "'tolerations' must be a list of strings such as \"gpu=true:NoSchedule\"");
        continue;
      }
      for (const auto& item : list->items) {
        auto v = value(item, Context::Body);
        if (!v) continue;
        std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
        auto json = v->is_literal() && v->type.kind == TypeKind::String ? rules::toleration_json(text)
                                                                         : std::nullopt;
        if (!json) {
          diags_.error(v->range, "a toleration is a literal \"key\", \"key=value\", either with "
                                 "\":NoSchedule\", \":PreferNoSchedule\" or \":NoExecute\", or \"*\"");
          continue;
        }
        c.tolerations.push_back(*json);
      }
    } else if (name == "cache") {
      auto v = value(field.value, Context::Body);
      if (!v) continue;
      std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
      if (v->is_literal() && v->type.kind == TypeKind::Bool) {
        c.cache = text == "true";
      } else if (auto seconds = v->is_literal() && v->type.kind == TypeKind::String
                                    ? duration_seconds(text)
                                    : std::nullopt) {
        c.cache = *seconds > 0;
        if (*seconds > 0) c.cache_staleness_seconds = *seconds;
      } else {
        diags_.error(v->range, "'cache' must be a literal bool (false: never reuse a result) or a "
                               "duration such as \"7d\" (reuse results at most that old)");
      }
    } else if (name == "resources") {
      c.resources = entries(
          field.value, "'resources'", [&](const ast::MapEntry& e, const std::string& key) {
            if (std::find(std::begin(kResourceKeys), std::end(kResourceKeys), key) !=
                std::end(kResourceKeys))
              return true;
            diags_.error(e.range, fmt::format("unknown resource '{}'", key));
            suggest(e.range, key, {std::begin(kResourceKeys), std::end(kResourceKeys)});
            return false;
          });
      for (const auto& [key, v] : c.resources) {
        bool ok = key == "gpus"         ? v.type.kind == TypeKind::Int
                  : key == "gpu_vendor" ? v.type.kind == TypeKind::String
                                        : v.type.kind != TypeKind::Bool;
        if (!ok) {
          diags_.error(v.range,
                       fmt::format("resource '{}' must be {}, got {}", key,
                                   key == "gpus"         ? "an int"
                                   : key == "gpu_vendor" ? "a string"
                                                         : "a quantity (e.g. \"500m\" or 2)",
                                   type_str(v.type)));
        } else if (v.is_literal()) {
          if (std::string why = resource_problem(key, v.literal); !why.empty()) diags_.error(v.range, why);
        } else if (const ir::OpParam* p = bound_param(info, v); p && p->default_value) {
          if (std::string why = resource_problem(key, *p->default_value); !why.empty()) {
            diags_.error(param_range(info, *p), "the default of '" + p->name + "': " + why);
            diags_.note(v.range, fmt::format("op '{}' uses it as resource '{}' here", info.name, key));
          }
        }
      }
    } else if (name == "inputs") {
      // Where each file parameter is placed: an absolute path (the outputs' rule).
      auto list = entries(field.value, "'inputs'", [&](const ast::MapEntry& e, const std::string& key) {
        auto it = std::find_if(info.params.begin(), info.params.end(),
                               [&](const ir::OpParam& p) { return p.name == key; });
        if (it != info.params.end() && it->type.kind == TypeKind::File) return true;
        diags_.error(e.range, fmt::format("'inputs' places the file parameters of op '{}'; '{}' is not one",
                                          info.name, key));
        return false;
      });
      for (auto& [key, v] : list) {
        std::string path = v.is_literal() && v.literal.is_string() ? v.literal.get<std::string>() : "";
        auto entry = rules::parse_data_entry("x:" + path);
        if (!entry) {
          diags_.error(v.range, fmt::format("the path of file parameter '{}' must be a literal absolute path", key));
          continue;
        }
        input_paths[key] = entry->path;
      }
    } else if (name == "outputs") {
      auto list =
          entries(field.value, "'outputs'", [&](const ast::MapEntry& e, const std::string& key) {
            auto it = std::find_if(info.outputs.begin(), info.outputs.end(),
                                   [&](const ir::OpOutput& o) { return o.name == key; });
            if (it != info.outputs.end()) return true;
            diags_.error(e.range, fmt::format("op '{}' declares no output '{}'", info.name, key));
            std::vector<std::string> names;
            for (const auto& o : info.outputs) names.push_back(o.name);
            suggest(e.range, key, names);
            return false;
          });
      for (auto& [key, v] : list) {
        mentioned.insert(key);
        if (!v.is_literal() || !v.literal.is_string()) {
          diags_.error(v.range,
                       fmt::format("the path of output '{}' must be a plain string", key));
          continue;
        }
        std::string path = v.literal.get<std::string>();
        if (path.empty() || path[0] != '/') {
          diags_.error(v.range,
                       fmt::format("the path of output '{}' must be absolute (e.g. \"/tmp/{}\")",
                                   key, key));
          continue;
        }
        paths[key] = path;
      }
    }
  }
  current_op_ = nullptr;
  bool python = lower_python_op(host_, op, info.outputs, c, paths, diags_);  // sema/python_op.cpp
  for (auto& param : c.params)
    if (param.type.kind == TypeKind::File)
      param.path = input_paths.count(param.name) ? input_paths[param.name] : "/tmp/inputs/" + param.name + "/data";
  if (!c.metrics_from.empty() && c.metrics.empty())
    diags_.error(seen.count("metrics_from") ? seen["metrics_from"] : op.name.range,
                 "'metrics_from' names where the metrics are read; say which with 'metrics'");
  if (!c.metrics.empty() && c.command.empty())
    diags_.error(seen.count("metrics") ? seen["metrics"] : op.name.range,
                 "an op with 'metrics' needs a 'command': pipec-metrics runs it and reads its output "
                 "(the image's own entrypoint is not known)");
  // One variable in both maps: which value the container gets would be left to the
  // kubelet (Argo) or to the backend's merge order (KFP v2).
  for (const auto& [var, at] : secret_keys) {
    auto plain = env_keys.find(var);
    if (plain == env_keys.end()) continue;
    diags_.error(at, fmt::format("environment variable '{}' is set by both 'env' and 'secret_env'; keep "
                                 "one of them",
                                 var));
    diags_.note(plain->second, fmt::format("'env' sets '{}' here", var));
  }
  if (!has_image && !python && !unknown_field)
    diags_.error(op.name.range, fmt::format("op '{}' has no 'image' (e.g. image \"python:3.11\")",
                                            op.name.name));
  for (auto& out : info.outputs) {
    auto it = paths.find(out.name);
    if (it == paths.end()) {
      if (!mentioned.count(out.name))
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
template <class KeyOk>
std::vector<std::pair<std::string, Value>> Checker::entries(const ast::Expression& e,
                                                            const std::string& what,
                                                            KeyOk key_ok) {
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
      double f = v.is_literal() && v.literal.is_number() ? v.literal.get<double>() : 0;
      if (f > 1 && f <= 10) {
        c.retry_memory_factor = f;
        memory_factor_at_ = v.range;
        if (!c.retry_reasons_range.valid()) c.retry_reasons_range = v.range;  // `on` first
      } else {
        diags_.error(v.range, "'memory_factor' must be a literal number above 1 and at most 10 (each "
                              "attempt's memory is the last one's times it)");
      }
    } else if (key == "memory_max") {
      memory_max_at = v.range;
      if (v.is_literal() && v.type.kind == TypeKind::String && rules::quantity_value(text))
        c.retry_memory_max = text;
      else
        diags_.error(v.range, "'memory_max' must be a literal memory quantity such as \"16Gi\" (the most "
                              "an attempt gets)");
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
