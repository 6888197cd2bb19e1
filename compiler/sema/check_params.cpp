// The pipeline's own declarations: its parameters (types, defaults, constraints) and
// its `settings` block.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>

#include "compiler/sema/checker.hpp"
#include "runtime/job_render.hpp"

namespace pipec::sema::detail {

void Checker::check_param(const ast::ParamDecl& p) {
  if (symbols_) index_param(p);
  if (auto it = params_.find(p.name.name); it != params_.end()) {
    diags_.error(p.name.range, fmt::format("duplicate parameter '{}'", p.name.name));
    diags_.note(it->second->name.range, "previous declaration here");
    return;
  }
  params_.emplace(p.name.name, &p);
  ir::Param param;
  param.name = p.name.name;
  param.doc = p.doc;
  param.range = p.name.range;
  auto type = resolve_type(p.type);
  if (!type || !visual_param_ok(p.type, *type)) return;
  // A called pipeline takes files as an op does (a step passes it an op's file output);
  // the pipeline built has no step before it to give one.
  if (type->kind == TypeKind::File && root_) {
    diags_.error(p.type.range, "the parameter of the pipeline built cannot be a 'file': files pass "
                               "between steps (an op's file output to a file parameter of an op or "
                               "of a called pipeline)");
    return;
  }
  if (type->kind == TypeKind::File && p.default_value) {
    diags_.error(range_of(*p.default_value), "a 'file' parameter has no default: a step passes it an "
                                             "op's file output");
    return;
  }
  param.type = *type;
  param_types_[p.name.name] = *type;
  if (p.constraint) check_constraint(p, *type, param.constraint);
  if (p.default_value) {
    if (auto v = value(*p.default_value, Context::Default)) {
      if (check_assign(*v, *type, [&] { return fmt::format("default for '{}'", p.name.name); })) {
        param.default_value = v->literal;
        check_against(param, *param.default_value, v->range, "default");
      }
    }
  }
  program_.params.push_back(std::move(param));
}

void Checker::check_constraint(const ast::ParamDecl& p, const Type& type, ir::Constraint& out) {
  const auto& c = *p.constraint;
  if (!type.is_scalar()) {
    diags_.error(c.range,
                 fmt::format("only string, int, float and bool parameters can be constrained, "
                             "'{}' is {}",
                             p.name.name, type_str(type)));
    return;
  }
  if (c.high) {
    auto lo = value(c.low, Context::Default);
    auto hi = value(*c.high, Context::Default);
    if (!lo || !hi) return;
    if (!is_numeric(type)) {
      diags_.error(c.range, fmt::format("a range needs an int or float parameter, '{}' is {}",
                                        p.name.name, type_str(type)));
      return;
    }
    for (const auto* v : {&*lo, &*hi}) {
      if (!is_numeric(v->type) || (type.kind == TypeKind::Int && v->type.kind != TypeKind::Int)) {
        diags_.error(v->range,
                     fmt::format("the bounds of a range on {} parameter '{}' must be {}s",
                                 type_str(type), p.name.name, type_str(type)));
        return;
      }
    }
    double a = lo->literal.get<double>(), b = hi->literal.get<double>();
    if (a > b) {
      diags_.error(c.range, fmt::format("the range {} is empty", sources_.slice(c.range)));
      return;
    }
    out.min = a;
    out.max = b;
    return;
  }
  const auto* list = node<ast::ListExpr>(strip(c.low));
  if (!list) {
    diags_.error(
        range_of(c.low),
        "expected a list of allowed values (e.g. [\"a\", \"b\"]) or a range (e.g. 1..10)");
    return;
  }
  if (list->items.empty()) {
    diags_.error(c.range, fmt::format("parameter '{}' allows no value at all", p.name.name));
    return;
  }
  for (const auto& item : list->items) {
    auto v = value(item, Context::Default);
    if (!v) continue;
    if (!check_assign(*v, type,
                      [&] { return fmt::format("allowed value of '{}'", p.name.name); }))
      continue;
    if (std::find(out.one_of.begin(), out.one_of.end(), v->literal) != out.one_of.end()) {
      diags_.error(v->range, fmt::format("duplicate allowed value {}", v->literal.dump()));
      continue;
    }
    out.one_of.push_back(v->literal);
  }
}

void Checker::check_against(const ir::Param& p, const ir::Literal& v, SourceRange at, const char* what) {
  const auto& c = p.constraint;
  if (!c.one_of.empty() && std::find(c.one_of.begin(), c.one_of.end(), v) == c.one_of.end()) {
    std::string allowed;
    for (const auto& a : c.one_of) allowed += (allowed.empty() ? "" : ", ") + a.dump();
    diags_.error(at, fmt::format("{} {} of '{}' is not one of the allowed values [{}]", what,
                                 v.dump(), p.name, allowed));
  }
  if (c.min && v.is_number() && (v.get<double>() < *c.min || v.get<double>() > *c.max))
    diags_.error(at, fmt::format("{} {} of '{}' is outside its range {}..{}", what, v.dump(),
                                 p.name, bound(*c.min, p.type), bound(*c.max, p.type)));
}

std::string Checker::bound(double b, const Type& type) {
  if (type.kind == TypeKind::Int) return std::to_string(static_cast<std::int64_t>(b));
  return ir::Literal(b).dump();
}

// `settings { ... }`: literals, since they are fields of the workflow itself.
void Checker::check_settings(const ast::SettingsStmt& s) {
  static const char* const kSettings[] = {"timeout", "ttl", "pod_gc", "parallelism",
                                          "service_account", "image_pull_secrets", "fail_fast", "workspace"};
  ir::Settings& out = program_.settings;
  std::set<std::string> seen;
  for (const auto& field : s.body.fields) {
    const std::string& name = field.name.name;
    if (std::find(std::begin(kSettings), std::end(kSettings), name) == std::end(kSettings)) {
      diags_.error(field.name.range, fmt::format("unknown setting '{}'", name));
      if (!suggest(field.name.range, name, {std::begin(kSettings), std::end(kSettings)}))
        diags_.note(field.name.range, "settings are timeout, ttl, pod_gc, parallelism, "
                                      "service_account, image_pull_secrets, fail_fast and workspace");
      continue;
    }
    if (!seen.insert(name).second) {
      diags_.error(field.name.range, fmt::format("duplicate setting '{}'", name));
      continue;
    }
    out.ranges[name] = field.name.range;
    const ast::Expression& e = strip(field.value);
    const auto* str = node<ast::StringLit>(e);
    if (node<ast::Reference>(e) || (str && !str->is_plain())) {
      diags_.error(range_of(e), fmt::format("'{}' must be a literal: settings are read when the "
                                            "run is created, before any parameter has a value",
                                            name));
      continue;
    }
    if (name == "workspace") {
      workspace_setting(field.value);
      continue;
    }
    if (name == "image_pull_secrets") {
      const auto* list = node<ast::ListExpr>(strip(field.value));
      if (!list) {
        diags_.error(range_of(field.value), "'image_pull_secrets' must be a list of Secret names");
        continue;
      }
      for (const auto& item : list->items) {
        auto v = value(item, Context::Default);
        if (!v) continue;
        std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
        if (!v->is_literal() || v->type.kind != TypeKind::String || !rules::is_dns1123_subdomain(text)) {
          diags_.error(v->range, "an image pull secret is a literal Secret name (a Kubernetes name)");
          continue;
        }
        out.image_pull_secrets.push_back(text);
      }
      continue;
    }
    auto v = value(field.value, Context::Default);
    if (!v) continue;
    std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
    bool is_text = v->is_literal() && v->type.kind == TypeKind::String;
    if (name == "timeout" || name == "ttl") {
      std::optional<long long> n;
      if (v->is_literal() && v->literal.is_number_integer()) n = v->literal.get<long long>();
      else if (is_text) n = duration_seconds(text);
      if (!n || *n <= 0 || *n > 2147483647) {
        diags_.error(v->range, fmt::format("'{}' must be a literal positive int of seconds or a "
                                           "duration such as \"6h\", \"1d\"",
                                           name));
        continue;
      }
      (name == "timeout" ? out.timeout_seconds : out.ttl_seconds) = *n;
    } else if (name == "pod_gc") {
      if (text == "OnPodCompletion" || text == "OnPodSuccess" || text == "OnWorkflowCompletion" ||
          text == "OnWorkflowSuccess") {
        out.pod_gc = text;
      } else {
        diags_.error(v->range, "'pod_gc' must be \"OnPodCompletion\", \"OnPodSuccess\", "
                               "\"OnWorkflowCompletion\" or \"OnWorkflowSuccess\" (when Argo deletes "
                               "the run's pods)");
      }
    } else if (name == "parallelism") {
      if (v->is_literal() && v->literal.is_number_integer() && v->literal.get<long long>() >= 1 &&
          v->literal.get<long long>() <= 2147483647)
        out.parallelism = v->literal.get<long long>();
      else
        diags_.error(v->range, "'parallelism' must be a literal int >= 1 (pods of the run at once)");
    } else if (name == "fail_fast") {
      if (v->is_literal() && v->literal.is_boolean()) {
        out.fail_fast = v->literal.get<bool>();
      } else diags_.error(v->range, "'fail_fast' must be a literal bool (false: a failed step stops only the "
                                  "steps that depend on it)");
    } else if (name == "service_account") {
      if (is_text && rules::is_dns1123_subdomain(text)) out.service_account = text;
      else diags_.error(v->range, "'service_account' must be a literal ServiceAccount name");
    }
  }
}

// `workspace "10Gi"` or `workspace {size: "10Gi", storage_class: "nfs", access_mode:
// "ReadWriteMany"}`: the run's claim (ir::Workspace), literals.
void Checker::workspace_setting(const ast::Expression& e) {
  static const char* const kKeys[] = {"size", "storage_class", "access_mode"};
  ir::Workspace ws;
  std::map<std::string, Value> given;
  if (const auto* map = node<ast::MapExpr>(strip(e))) {
    for (const auto& entry : map->entries) {
      std::string key = map_key(entry.key);
      if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
        diags_.error(entry.range, fmt::format("unknown 'workspace' field '{}' (size, storage_class, access_mode)", key));
        suggest(entry.range, key, {std::begin(kKeys), std::end(kKeys)});
        continue;
      }
      if (given.count(key)) {
        diags_.error(entry.range, fmt::format("duplicate key '{}'", key));
        continue;
      }
      if (auto v = value(entry.value, Context::Default)) given.emplace(key, std::move(*v));
    }
  } else if (auto v = value(e, Context::Default)) {
    given.emplace("size", std::move(*v));
  } else {
    return;
  }
  bool ok = true;
  auto text = [&](const std::string& key, bool (*rule)(const std::string&), const char* want) -> std::string {
    auto it = given.find(key);
    if (it == given.end()) return "";
    const Value& v = it->second;
    std::string t = v.is_literal() && v.type.kind == TypeKind::String ? ir::literal_text(v.literal) : "";
    if (t.empty() || !rule(t)) {
      diags_.error(v.range, fmt::format("'workspace' {} must be a literal string: {}", key, want));
      ok = false;
    }
    return t;
  };
  ws.size = text("size", [](const std::string& t) {
    std::string number = t.substr(0, t.find_first_not_of("0123456789."));
    return rules::is_quantity(t) && number.find_first_of("123456789") != std::string::npos;
  },
                 "a Kubernetes quantity above 0 such as \"10Gi\" (the claim's storage)");
  ws.storage_class = text("storage_class", [](const std::string& t) { return rules::is_dns1123_subdomain(t); },
                          "a StorageClass name (lower-case letters, digits, '-' and '.')");
  if (given.count("access_mode"))
    ws.access_mode = text("access_mode", [](const std::string& t) {
      return t == "ReadWriteOnce" || t == "ReadWriteMany" || t == "ReadWriteOncePod";
    }, "\"ReadWriteOnce\" (the default), \"ReadWriteMany\" (pods on several nodes at once) or \"ReadWriteOncePod\"");
  if (!given.count("size")) {
    diags_.error(range_of(e), "'workspace' needs a size (e.g. workspace {size: \"10Gi\"})");
    ok = false;
  }
  if (ok) program_.settings.workspace = std::move(ws);
}

}  // namespace pipec::sema::detail
