// The rule of each container op body field but the retry map (check_retries.cpp) and the
// scheduling texts (check_op_body.cpp): a Checker member per row of the body table
// (check_op_body.cpp, kBodyRows), which calls it with the field and the body read so far.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "compiler/sema/checker.hpp"
#include "runtime/job_render.hpp"
#include "runtime/metrics.hpp"

namespace pipec::sema::detail {

namespace {

const char* const kResourceKeys[] = {"cpu", "memory", "gpus", "gpu_vendor"};

// A `volumes` source (ir::ContainerOp::Volume); nullopt when it is not one.
std::optional<ir::ContainerOp::Volume> volume_source(std::string source) {
  using Kind = ir::ContainerOp::Volume::Kind;
  ir::ContainerOp::Volume vol;
  if (source.size() > 3 && source.compare(source.size() - 3, 3, ":ro") == 0) {
    vol.read_only = true;
    source.resize(source.size() - 3);
  }
  auto colon = source.find(':');
  std::string word = source.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : source.substr(colon + 1);
  vol.memory = word == "memory";  // an emptyDir of medium Memory
  auto kind = vol.memory ? std::optional(Kind::Empty) : ir::volume_kind_of(word);
  if (!kind) return std::nullopt;
  vol.kind = *kind;
  switch (vol.kind) {
    case Kind::Pvc: {
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
    case Kind::Workspace: return colon == std::string::npos ? std::optional(vol) : std::nullopt;
    case Kind::ConfigMap:
    case Kind::Secret:
      vol.name = rest;
      return rules::is_dns1123_subdomain(vol.name) ? std::optional(vol) : std::nullopt;
    case Kind::Empty:
    case Kind::Ephemeral:
      if ((colon != std::string::npos && !rules::is_quantity(rest)) || (vol.kind == Kind::Ephemeral && rest.empty()))
        return std::nullopt;
      vol.size = rest;
      return vol;
  }
  return std::nullopt;
}

}  // namespace

void Checker::body_image(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  b.has_image = true;
  if (auto v = value(field.value, Context::Body);
      v && check_assign(*v, Type::scalar(TypeKind::String), "'image'"))
    b.c.image = std::move(*v);
}

void Checker::body_command(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  if (node<ast::ListExpr>(strip(field.value))) {
    b.c.command = words(field.value, "'command'");
  } else if (auto v = value(field.value, Context::Body)) {
    if (v->type.kind != TypeKind::String) {
      diags_.error(v->range,
                   fmt::format("'command' must be a string (run by sh -c) or a list "
                               "of words, got {}",
                               type_str(v->type)));
    } else {
      b.c.command.push_back(std::move(*v));
      b.c.shell = true;
    }
  }
}

void Checker::body_args(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  b.c.args = words(field.value, "'args'");
}

void Checker::body_env(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  b.c.env = entries(field.value, "'env'", [&](const ast::MapEntry& e, const std::string& key) {
    bool ok = rules::is_env_name(key);
    if (!ok)
      diags_.error(e.range,
                   fmt::format("'{}' is not a valid environment variable name", key));
    b.env_keys.emplace(key, e.range);
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
}

// `retries N` and `timeout N|"90s"`; `retries {limit ..., on ...}` is retry_map's.
void Checker::body_count(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  const std::string& name = field.name.name;
  if (name == "retries" && node<ast::MapExpr>(strip(field.value))) {
    retry_map(field.value, b.c);
    return;
  }
  auto v = value(field.value, Context::Body);
  if (!v) return;
  std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
  std::optional<long long> n;
  if (v->is_literal() && v->type.kind == TypeKind::Int && text.size() < 10 &&
      text.find('-') == std::string::npos)
    n = std::stoll(text);
  else if (name == "timeout" && v->is_literal() && v->type.kind == TypeKind::String)
    n = duration_seconds(text);
  if (name == "retries" && n) {
    b.c.retries = *n;
  } else if (name == "timeout" && n && *n > 0) {
    b.c.timeout_seconds = *n;
  } else {
    diags_.error(v->range, name == "retries"
                               ? std::string("'retries' must be a literal int >= 0 (how "
                                             "many times a failed step is run again)")
                               : std::string("'timeout' must be a literal positive int of "
                                             "seconds or a duration such as \"90s\", "
                                             "\"30m\", \"1h30m\""));
  }
}

void Checker::body_metadata(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  const std::string& name = field.name.name;
  // Literal texts: they become pod metadata and scheduling fields, never a place a
  // value could reach the structure. The label rules are the launcher's own.
  auto what = "'" + name + "'";
  auto items = entries(field.value, what, [&](const ast::MapEntry& e, const std::string& key) {
    return label_key_ok(diags_, key, e.range, name);
  });
  auto& out = name == "node_selector" ? b.c.node_selector : name == "labels" ? b.c.labels : b.c.annotations;
  for (auto& [key, v] : items) {
    if (!v.is_literal()) {
      diags_.error(v.range, fmt::format("{} values must be literals (they are pod metadata)", what));
      continue;
    }
    std::string text = ir::literal_text(v.literal);
    if (name != "annotations" && !label_value_ok(diags_, text, v.range)) continue;
    out.emplace_back(key, std::move(text));
  }
}

// The one rule of a node selector's, a label's or an annotation's key and of a label's
// value, for container ops and training ops alike: the launcher's own (rules/names).
bool label_key_ok(Diagnostics& diags, const std::string& key, SourceRange at, std::string_view field) {
  if (rules::is_label_key(key)) return true;
  diags.error(at, fmt::format("'{}' is not a Kubernetes {} key ([prefix/]name, name at most 63 of [A-Za-z0-9-_.])",
                              key, field == "annotations" ? "annotation" : "label"));
  return false;
}

bool label_value_ok(Diagnostics& diags, const std::string& text, SourceRange at) {
  if (rules::is_label_value(text)) return true;
  diags.error(at, fmt::format("'{}' is not a Kubernetes label value (at most 63 of [A-Za-z0-9-_.], "
                              "alphanumeric at both ends)",
                              text));
  return false;
}

// The one rule of a toleration, for container ops and training ops alike: a literal text
// rules::parse_toleration reads, as data.
std::optional<rules::Toleration> toleration_of(Diagnostics& diags, const Value& item) {
  std::string text = item.is_literal() ? ir::literal_text(item.literal) : "";
  auto tol = item.is_literal() && item.type.kind == TypeKind::String ? rules::parse_toleration(text) : std::nullopt;
  if (!tol)
    diags.error(item.range, "a toleration is a literal \"key\", \"key=value\", either with \":NoSchedule\", "
                            "\":PreferNoSchedule\" or \":NoExecute\", or \"*\"" +
                                (item.is_literal() ? fmt::format(", got '{}'", text) : std::string()));
  return tol;
}

void Checker::body_volumes(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  // Mount path -> source, literal texts; paths by the launcher's data-entry rule.
  std::set<std::string> paths_seen;
  auto items = entries(field.value, "'volumes'", [](const ast::MapEntry&, const std::string&) { return true; });
  for (auto& [path, v] : items) {
    std::string source = v.is_literal() ? ir::literal_text(v.literal) : "";
    auto vol = v.is_literal() ? volume_source(source) : std::nullopt;
    if (!vol) {
      diags_.error(v.range, fmt::format("a volume is a literal \"pvc:CLAIM[/SUB/PATH]\", \"empty[:SIZE]\", "
                                        "\"memory[:SIZE]\", \"ephemeral:SIZE\", \"configmap:NAME\", "
                                        "\"secret:NAME\" (Kubernetes names and quantities) or \"workspace\" "
                                        "(the run's, settings {{ workspace ... }}), each with an "
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
    b.c.volumes.push_back(std::move(*vol));
  }
}

void Checker::body_secret_env(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  auto items = entries(field.value, "'secret_env'", [&](const ast::MapEntry& e, const std::string& key) {
    bool ok = !key.empty() && !(key[0] >= '0' && key[0] <= '9') && key.rfind("PIPEC_", 0) != 0 &&
              std::all_of(key.begin(), key.end(), [](char ch) {
                return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
              });
    if (!ok) diags_.error(e.range, fmt::format("'{}' is not an environment variable name a step may set", key));
    b.secret_keys.emplace(key, e.range);
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
    b.c.secret_env.push_back({var, secret, key, v.range});
  }
}

void Checker::body_image_pull_policy(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  auto v = value(field.value, Context::Body);
  if (!v) return;
  std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
  if (text != "Always" && text != "IfNotPresent" && text != "Never") {
    diags_.error(v->range, "'image_pull_policy' must be \"Always\", \"IfNotPresent\" or \"Never\"");
    return;
  }
  b.c.image_pull_policy = text;
}

void Checker::body_metrics(const BodyRow&, const ast::BodyField& field, BodyState& b) {
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
    } else if (const ir::OpParam* p = bound_param(b.info, v); p && p->default_value) {
      for (const auto& text : metric_texts(*p->default_value)) {
        std::string why;
        if (rules::parse_metric_spec(text, why)) continue;
        diags_.error(param_range(b.info, *p), "the default of '" + p->name + "': " + why);
        diags_.note(v.range, fmt::format("op '{}' uses it as a metric spec here", b.info.name));
      }
    }
    b.c.metrics.push_back(std::move(v));
  }
  if (std::string why; !rules::check_metric_specs(specs, why)) diags_.error(range_of(field.value), why);
}

void Checker::body_metrics_from(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  auto v = value(field.value, Context::Body);
  if (!v) return;
  std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
  auto entry = v->is_literal() && v->type.kind == TypeKind::String ? rules::parse_data_entry("x:" + text)
                                                                    : std::nullopt;
  if (!entry) {
    diags_.error(v->range, "'metrics_from' must be a literal absolute path (a file the command writes "
                           "its metrics to, as name=value lines)");
    return;
  }
  b.c.metrics_from = entry->path;
}

void Checker::body_working_dir(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  auto v = value(field.value, Context::Body);
  if (!v) return;
  std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
  if (!v->is_literal() || v->type.kind != TypeKind::String || !rules::parse_data_entry("x:" + text)) {
    diags_.error(v->range, "'working_dir' must be a literal absolute path (without ':', '..' or "
                           "control characters)");
    return;
  }
  b.c.working_dir = rules::parse_data_entry("x:" + text)->path;
}

void Checker::body_run_as_id(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  const std::string& name = field.name.name;
  auto v = value(field.value, Context::Body);
  if (!v) return;
  if (!v->is_literal() || !v->literal.is_number_integer() || v->literal.get<long long>() < 0 ||
      v->literal.get<long long>() > 2147483647) {
    diags_.error(v->range, fmt::format("'{}' must be a literal int from 0 to 2147483647 (a numeric "
                                       "{} id)",
                                       name, name == "run_as_user" ? "user" : "group"));
    return;
  }
  (name == "run_as_user" ? b.c.run_as_user : b.c.run_as_group) = v->literal.get<long long>();
}

void Checker::body_run_as_non_root(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  auto v = value(field.value, Context::Body);
  if (!v) return;
  if (!v->is_literal() || !v->literal.is_boolean()) {
    diags_.error(v->range, "'run_as_non_root' must be a literal bool");
    return;
  }
  b.c.run_as_non_root = v->literal.get<bool>();
}

void Checker::body_tolerations(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  const auto* list = node<ast::ListExpr>(strip(field.value));
  if (!list) {
    diags_.error(range_of(field.value),
                 "'tolerations' must be a list of strings such as \"gpu=true:NoSchedule\"");
    return;
  }
  for (const auto& item : list->items) {
    auto v = value(item, Context::Body);
    if (!v) continue;
    if (auto tol = toleration_of(diags_, *v)) b.c.tolerations.push_back(std::move(*tol));
  }
}

void Checker::body_cache(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  auto v = value(field.value, Context::Body);
  if (!v) return;
  std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
  if (v->is_literal() && v->type.kind == TypeKind::Bool) {
    b.c.cache = text == "true";
  } else if (auto seconds = v->is_literal() && v->type.kind == TypeKind::String
                                ? duration_seconds(text)
                                : std::nullopt) {
    b.c.cache = *seconds > 0;
    if (*seconds > 0) b.c.cache_staleness_seconds = *seconds;
  } else {
    diags_.error(v->range, "'cache' must be a literal bool (false: never reuse a result) or a "
                           "duration such as \"7d\" (reuse results at most that old)");
  }
}

void Checker::body_resources(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  b.c.resources = entries(
      field.value, "'resources'", [&](const ast::MapEntry& e, const std::string& key) {
        if (std::find(std::begin(kResourceKeys), std::end(kResourceKeys), key) !=
            std::end(kResourceKeys))
          return true;
        diags_.error(e.range, fmt::format("unknown resource '{}'", key));
        suggest(e.range, key, {std::begin(kResourceKeys), std::end(kResourceKeys)});
        return false;
      });
  for (const auto& [key, v] : b.c.resources) {
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
    } else if (const ir::OpParam* p = bound_param(b.info, v); p && p->default_value) {
      if (std::string why = resource_problem(key, *p->default_value); !why.empty()) {
        diags_.error(param_range(b.info, *p), "the default of '" + p->name + "': " + why);
        diags_.note(v.range, fmt::format("op '{}' uses it as resource '{}' here", b.info.name, key));
      }
    }
  }
}

void Checker::body_inputs(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  // Where each file parameter is placed: an absolute path (the outputs' rule).
  auto list = entries(field.value, "'inputs'", [&](const ast::MapEntry& e, const std::string& key) {
    auto it = std::find_if(b.info.params.begin(), b.info.params.end(),
                           [&](const ir::OpParam& p) { return p.name == key; });
    if (it != b.info.params.end() && it->type.kind == TypeKind::File) return true;
    diags_.error(e.range, fmt::format("'inputs' places the file parameters of op '{}'; '{}' is not one",
                                      b.info.name, key));
    return false;
  });
  for (auto& [key, v] : list) {
    std::string path = v.is_literal() && v.literal.is_string() ? v.literal.get<std::string>() : "";
    auto entry = rules::parse_data_entry("x:" + path);
    if (!entry) {
      diags_.error(v.range, fmt::format("the path of file parameter '{}' must be a literal absolute path", key));
      continue;
    }
    b.input_paths[key] = entry->path;
  }
}

void Checker::body_outputs(const BodyRow&, const ast::BodyField& field, BodyState& b) {
  auto list =
      entries(field.value, "'outputs'", [&](const ast::MapEntry& e, const std::string& key) {
        auto it = std::find_if(b.info.outputs.begin(), b.info.outputs.end(),
                               [&](const ir::OpOutput& o) { return o.name == key; });
        if (it != b.info.outputs.end()) return true;
        diags_.error(e.range, fmt::format("op '{}' declares no output '{}'", b.info.name, key));
        std::vector<std::string> names;
        for (const auto& o : b.info.outputs) names.push_back(o.name);
        suggest(e.range, key, names);
        return false;
      });
  for (auto& [key, v] : list) {
    b.mentioned.insert(key);
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
    b.paths[key] = path;
  }
}

}  // namespace pipec::sema::detail
