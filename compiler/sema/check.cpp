// check_program(): every semantic check of a program, in passes that stop between
// them (load, ops, pipeline, graph) and report everything they find within one.
// Expects nothing of the input. Guarantees, when it returns a Program: every name
// resolves, every value has the type its use declares (ints widened to floats),
// constraints hold on defaults, the step graph is acyclic and every step, op and
// pipeline name is a distinct DNS-1123 label once sanitised.
#include "compiler/sema/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rules/names.hpp"
#include "rules/quantities.hpp"
#include "compiler/base/spellcheck.hpp"
#include "compiler/sema/graph.hpp"
#include "compiler/sema/load.hpp"
#include "compiler/sema/program.hpp"
#include "compiler/sema/types.hpp"
#include "runtime/job_render.hpp"
#include "runtime/metrics.hpp"

namespace pipec::sema {

namespace ast = syntax::ast;
namespace x3 = boost::spirit::x3;
using ir::Type;
using ir::TypeKind;
using ir::Value;

namespace {

//// AST helpers ///////////////////////////////////////////////////////////

template <class T>
const T* node(const ast::Expression& e) {
  if constexpr (std::is_same_v<T, ast::StringLit> || std::is_same_v<T, ast::NumberLit> ||
                std::is_same_v<T, ast::BoolLit> || std::is_same_v<T, ast::Reference>) {
    return boost::get<T>(&e.get());
  } else {
    if (const auto* p = boost::get<x3::forward_ast<T>>(&e.get())) return &p->get();
    return nullptr;
  }
}

// The operand a one-element or/and/compare level stands for.
const ast::Expression& strip(const ast::Expression& e) {
  const ast::Expression* cur = &e;
  for (;;) {
    if (const auto* o = node<ast::OrExpr>(*cur); o && o->rest.empty()) {
      cur = &o->first;
    } else if (const auto* a = node<ast::AndExpr>(*cur); a && a->rest.empty()) {
      cur = &a->first;
    } else if (const auto* c = node<ast::CompareExpr>(*cur); c && !c->tail) {
      cur = &c->lhs;
    } else {
      return *cur;
    }
  }
}

SourceRange range_of(const ast::Expression& e) {
  return boost::apply_visitor(
      [](const auto& n) -> SourceRange {
        if constexpr (std::is_base_of_v<ast::Located, std::decay_t<decltype(n)>>)
          return n.range;
        else
          return n.get().range;
      },
      e.get());
}

std::string join_quoted(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

//// The checker ///////////////////////////////////////////////////////////

// Where a value is written; decides which references it may hold.
enum class Context { Default, Arg, Body, Condition };

enum class ScopeKind { Loop, IfBranch, Finally };

struct StepEntry {
  const ast::StepDecl* decl = nullptr;
  std::vector<int> scopes;  // enclosing scopes, outermost first
  const OpInfo* op = nullptr;
  std::uint32_t first_dep = 0;  // its edges in the step graph: edges_[first_dep, +dep_count)
  std::uint32_t dep_count = 0;
};

// Where a dns name was first taken: the source name (owned by the AST) and its range.
using DnsNames = std::unordered_map<std::string, std::pair<std::string_view, SourceRange>>;

struct LoopVar {
  std::string name;
  Type type;
  SourceRange range;
  bool items_bad = false;  // its items had an error: uses are not checked (no follow-on errors)
};

const char* const kBodyFields[] = {"image",   "command",       "args",        "env",
                                   "resources", "outputs",     "retries",     "timeout",
                                   "node_selector", "tolerations", "labels", "annotations",
                                   "cache", "volumes", "secret_env", "image_pull_policy",
                                   "working_dir", "run_as_user", "run_as_group", "run_as_non_root",
                                   "metrics", "metrics_from", "inputs"};

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

// "90s", "30m", "2h", "1h30m" as whole seconds: the launcher's rule (runtime::parse_duration).
std::optional<long long> duration_seconds(const std::string& text) {
  auto d = runtime::parse_duration(text);
  if (!d || d->count() % 1000 != 0) return std::nullopt;
  return d->count() / 1000;
}
const char* const kResourceKeys[] = {"cpu", "memory", "gpus", "gpu_vendor"};

class Checker {
 public:
  Checker(SourceManager& sources, Diagnostics& diags) : sources_(sources), diags_(diags) {}

  std::shared_ptr<const Program> run(FileId main) {
    if (!load_modules(sources_, main, diags_, modules_)) return nullptr;
    collect_ops();
    if (diags_.has_errors()) return nullptr;
    const ast::PipelineDecl* pipeline = find_pipeline(main);
    if (!pipeline) return nullptr;
    check_pipeline(*pipeline);
    if (diags_.has_errors()) return nullptr;
    if (!check_graph(step_graph(), diags_)) return nullptr;
    return std::make_shared<const Program>(std::move(program_));
  }

 private:
  // The graph the cycle check walks. A dependency that crosses a loop's boundary is the
  // loop's (Argo runs a loop as one task that ends when every iteration has): A -> B
  // becomes (the outermost loop around A that is not around B, else A) -> (the
  // outermost loop around B that is not around A, else B). So a step after a loop
  // whose body runs after that step is a cycle through the loop, reported as `for VAR`.
  StepGraph step_graph() {
    StepGraph graph;
    const auto steps = static_cast<std::uint32_t>(steps_.size());
    graph.steps.reserve(steps);
    for (const auto& entry : steps_)
      graph.steps.push_back(
          {entry.decl->name.name, entry.decl->name.range, entry.first_dep, entry.dep_count});
    std::vector<std::vector<int>> chains(steps);  // each step's loops, outermost first
    bool crossing = false;
    for (std::uint32_t i = 0; i < steps; ++i) {
      for (int scope : steps_[i].scopes)
        if (scope_kinds_[scope] == ScopeKind::Loop) chains[i].push_back(scope);
      if (!chains[i].empty()) crossing = true;
    }
    if (!crossing) {
      graph.deps = std::move(edges_);
      return graph;
    }
    std::unordered_map<int, std::uint32_t> loop_node;  // loop scope -> node index
    auto node_of = [&](int scope) {
      auto [it, added] = loop_node.emplace(scope, static_cast<std::uint32_t>(graph.steps.size()));
      if (added) {
        const ast::ForStmt* loop = scope_loops_.at(scope);
        graph.steps.push_back({loop_labels_.emplace_back("for " + loop->var.name),
                               loop->var.range, 0, 0});
      }
      return it->second;
    };
    std::vector<std::vector<std::uint32_t>> adjacent(steps);
    for (std::uint32_t i = 0; i < steps; ++i) {
      const auto& entry = steps_[i];
      for (std::uint32_t k = 0; k < entry.dep_count; ++k) {
        std::uint32_t j = edges_[entry.first_dep + k];
        const auto& a = chains[i];
        const auto& b = chains[j];
        std::size_t common = 0;
        while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
        std::uint32_t from = common < a.size() ? node_of(a[common]) : i;
        std::uint32_t to = common < b.size() ? node_of(b[common]) : j;
        if (adjacent.size() < graph.steps.size()) adjacent.resize(graph.steps.size());
        adjacent[from].push_back(to);
      }
    }
    adjacent.resize(graph.steps.size());
    for (std::size_t n = 0; n < adjacent.size(); ++n) {
      graph.steps[n].first_dep = static_cast<std::uint32_t>(graph.deps.size());
      graph.steps[n].dep_count = static_cast<std::uint32_t>(adjacent[n].size());
      graph.deps.insert(graph.deps.end(), adjacent[n].begin(), adjacent[n].end());
    }
    return graph;
  }

  //// Ops ////////////////////////////////////////////////////////////////

  void collect_ops() {
    DnsNames dns_names;
    for (const auto& m : modules_) {
      for (const auto& decl : m.module.decls) {
        const auto* op = boost::get<ast::OpDecl>(&decl.get());
        if (!op) continue;
        if (auto it = program_.ops.find(op->name.name); it != program_.ops.end()) {
          diags_.error(op->name.range, fmt::format("duplicate op '{}'", op->name.name));
          diags_.note(it->second.range, "previous declaration here");
          continue;
        }
        OpInfo info = check_op(*op, m);
        if (info.kind == ir::OpKind::Container) check_dns_name(op->name, "op", dns_names);
        program_.ops.emplace(op->name.name, std::move(info));
      }
    }
  }

  OpInfo check_op(const ast::OpDecl& op, const LoadedModule& m) {
    OpInfo info;
    info.name = op.name.name;
    info.range = op.name.range;
    std::map<std::string, SourceRange> seen;
    for (const auto& p : op.params) {
      if (!declare(seen, p.name, "parameter")) continue;
      ir::OpParam param;
      param.name = p.name.name;
      param.doc = p.doc;
      auto type = resolve_type(p.type);
      if (type) param.type = *type;
      if (type && type->kind == TypeKind::File && p.default_value) {
        diags_.error(range_of(*p.default_value), "a 'file' parameter has no default: a step passes it an "
                                                   "op's file output");
      } else if (p.default_value && type) {
        if (auto v = value(*p.default_value, Context::Default)) {
          if (check_assign(*v, *type, [&] { return fmt::format("default for '{}'", p.name.name); }))
            param.default_value = v->literal;
        }
      }
      info.params.push_back(std::move(param));
      info.param_ranges.push_back(p.name.range);
    }
    std::map<std::string, SourceRange> seen_outputs;
    for (const auto& o : op.outputs) {
      if (!declare(seen_outputs, o.name, "output")) continue;
      ir::OpOutput out;
      out.name = o.name.name;
      out.doc = o.doc;
      if (auto type = resolve_type(o.type)) out.type = *type;
      info.outputs.push_back(std::move(out));
    }
    if (!op.body && m.component) {
      info.component = m.component;
      component_sigs_.emplace(info.name, info);
      return info;
    }
    if (!op.body) {
      if (!m.is_stdlib) {
        diags_.error(op.name.range,
                     fmt::format("op '{}' has no body; give it one with at least 'image' (only "
                                 "stdlib modules declare built-in ops)",
                                 op.name.name));
      } else if (op.name.name == "mpi_job") {
        info.kind = ir::OpKind::MpiJob;
      } else if (op.name.name == "tf_job") {
        info.kind = ir::OpKind::TfJob;
      } else if (op.name.name == "pytorch_job") {
        info.kind = ir::OpKind::PyTorchJob;
      } else {
        diags_.error(op.name.range, fmt::format("unknown built-in op '{}'", op.name.name));
      }
      return info;
    }
    info.container = check_body(op, info);
    return info;
  }

  ir::ContainerOp check_body(const ast::OpDecl& op, OpInfo& info) {
    ir::ContainerOp c;
    c.name = op.name.name;
    c.params = info.params;
    c.doc = op.doc;
    c.range = op.name.range;
    current_op_ = &info;
    std::map<std::string, SourceRange> seen;
    bool has_image = false;
    bool unknown_field = false;
    std::map<std::string, std::string> paths;
    std::set<std::string> mentioned;  // outputs given a path, valid or not
    std::map<std::string, std::string> input_paths;  // file parameters placed by `inputs`
    std::map<std::string, SourceRange> env_keys, secret_keys;  // where each variable is set
    for (const auto& field : op.body->fields) {
      const std::string& name = field.name.name;
      if (std::find(std::begin(kBodyFields), std::end(kBodyFields), name) ==
          std::end(kBodyFields)) {
        diags_.error(field.name.range, fmt::format("unknown op body field '{}'", name));
        unknown_field = true;
        suggest(field.name.range, name, {std::begin(kBodyFields), std::end(kBodyFields)});
        continue;
      }
      if (!declare(seen, field.name, "field")) continue;
      if (name == "image") {
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
          if (runtime::is_label_key(key)) return true;
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
          if (name != "annotations" && !runtime::is_label_value(text)) {
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
          ir::ContainerOp::Volume vol;
          auto colon = source.find(':');
          vol.kind = source.substr(0, colon);
          vol.name = colon == std::string::npos ? "" : source.substr(colon + 1);
          bool named = vol.kind == "pvc" || vol.kind == "configmap" || vol.kind == "secret";
          bool ok = v.is_literal() && ((named && runtime::is_dns1123_subdomain(vol.name)) ||
                                       (vol.kind == "empty" && colon == std::string::npos));
          if (!ok) {
            diags_.error(v.range, fmt::format("a volume is a literal \"pvc:CLAIM\", \"empty\", "
                                              "\"configmap:NAME\" or \"secret:NAME\" (Kubernetes "
                                              "names), got {}",
                                              v.is_literal() ? "'" + source + "'" : std::string("a value known only at run time")));
            continue;
          }
          auto entry = runtime::parse_data_entry("x:" + path);
          if (!entry) {
            diags_.error(v.range, fmt::format("'{}' is not a mount path (absolute, without ':', '..' or "
                                              "control characters)", path));
            continue;
          }
          if (!paths_seen.insert(entry->path).second) {
            diags_.error(v.range, fmt::format("two volumes are mounted at '{}'", entry->path));
            continue;
          }
          vol.path = entry->path;
          c.volumes.push_back(std::move(vol));
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
          if (!v.is_literal() || !runtime::is_dns1123_subdomain(secret) || !key_ok) {
            diags_.error(v.range, fmt::format("a secret variable is a literal \"SECRET:KEY\" (a Secret's "
                                              "name and one of its keys), got {}",
                                              v.is_literal() ? "'" + text + "'" : std::string("a value known only at run time")));
            continue;
          }
          c.secret_env.push_back({var, secret, key});
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
        std::vector<runtime::MetricSpec> specs;
        for (auto& v : words(field.value, "'metrics'")) {
          if (v.is_literal()) {
            std::string why;
            auto spec = v.type.kind == TypeKind::String ? runtime::parse_metric_spec(ir::literal_text(v.literal), why)
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
              if (runtime::parse_metric_spec(text, why)) continue;
              diags_.error(param_range(info, *p), "the default of '" + p->name + "': " + why);
              diags_.note(v.range, fmt::format("op '{}' uses it as a metric spec here", info.name));
            }
          }
          c.metrics.push_back(std::move(v));
        }
        if (std::string why; !runtime::check_metric_specs(specs, why)) diags_.error(range_of(field.value), why);
      } else if (name == "metrics_from") {
        auto v = value(field.value, Context::Body);
        if (!v) continue;
        std::string text = v->is_literal() ? ir::literal_text(v->literal) : "";
        auto entry = v->is_literal() && v->type.kind == TypeKind::String ? runtime::parse_data_entry("x:" + text)
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
        if (!v->is_literal() || v->type.kind != TypeKind::String || !runtime::parse_data_entry("x:" + text)) {
          diags_.error(v->range, "'working_dir' must be a literal absolute path (without ':', '..' or "
                                 "control characters)");
          continue;
        }
        c.working_dir = runtime::parse_data_entry("x:" + text)->path;
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
          auto json = v->is_literal() && v->type.kind == TypeKind::String ? runtime::toleration_json(text)
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
          auto entry = runtime::parse_data_entry("x:" + path);
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
    if (!has_image && !unknown_field)
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
    return c;
  }

  // A list literal whose items are scalars: argv words.
  std::vector<Value> words(const ast::Expression& e, const std::string& what) {
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
  std::vector<std::pair<std::string, Value>> entries(const ast::Expression& e,
                                                     const std::string& what, KeyOk key_ok) {
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

  //// Pipeline ///////////////////////////////////////////////////////////

  const ast::PipelineDecl* find_pipeline(FileId main) {
    const ast::PipelineDecl* found = nullptr;
    for (const auto& m : modules_) {
      for (const auto& decl : m.module.decls) {
        const auto* p = boost::get<ast::PipelineDecl>(&decl.get());
        if (!p) continue;
        if (!m.is_main) {
          diags_.error(p->name.range,
                       fmt::format("'{}' is used as a library, so it cannot declare a pipeline",
                                   sources_.name(m.file)));
        } else if (found) {
          diags_.error(p->name.range, "a file declares only one pipeline");
          diags_.note(found->name.range, "first pipeline here");
        } else {
          found = p;
        }
      }
    }
    if (!found && !diags_.has_errors())
      diags_.error(SourceRange{main, 0, 0},
                   fmt::format("'{}' declares no pipeline (e.g. pipeline NAME {{ ... }})",
                               sources_.name(main)));
    return diags_.has_errors() ? nullptr : found;
  }

  void check_pipeline(const ast::PipelineDecl& p) {
    program_.name = p.name.name;
    program_.range = p.name.range;
    std::string dns = to_dns1123(p.name.name);
    if (dns.empty() || dns.size() > kMaxK8sNameLength)
      diags_.error(p.name.range,
                   fmt::format("pipeline name '{}' does not give a valid Kubernetes name "
                               "(1 to {} letters, digits or '-')",
                               p.name.name, kMaxK8sNameLength));
    // Top-level declarations first: params, description, finally.
    const ast::FinallyStmt* finally = nullptr;
    for (const auto& s : p.body.statements) {
      if (const auto* d = boost::get<ast::Description>(&s.get())) {
        if (description_seen_) {
          diags_.error(d->range, "duplicate description");
        } else if (!d->text.is_plain()) {
          diags_.error(d->text.range, "the description must be a plain string (no '${...}')");
        }
        description_seen_ = true;
        program_.description = d->text.text();
      } else if (const auto* param = boost::get<x3::forward_ast<ast::ParamDecl>>(&s.get())) {
        check_param(param->get());
      } else if (const auto* set = boost::get<x3::forward_ast<ast::SettingsStmt>>(&s.get())) {
        if (settings_seen_) diags_.error(set->get().range, "a pipeline has only one 'settings' block");
        settings_seen_ = true;
        check_settings(set->get());
      } else if (const auto* f = boost::get<x3::forward_ast<ast::FinallyStmt>>(&s.get())) {
        if (finally) {
          diags_.error(f->get().range, "a pipeline has only one 'finally' block");
          diags_.note(finally->range, "first 'finally' here");
        }
        finally = &f->get();
      }
    }
    // Most steps are usually at the top level; sizing the tables for them up front
    // saves rehashing them as they grow.
    steps_.reserve(p.body.statements.size());
    step_ids_.reserve(p.body.statements.size());
    step_dns_.reserve(p.body.statements.size());
    collect_steps(p.body.statements, {}, true);
    program_.body = statements(p.body.statements);
    if (finally) {
      scope_path_ = {finally_scope_};
      program_.finally_body = statements(finally->body.statements);
      scope_path_.clear();
    }
  }

  void check_param(const ast::ParamDecl& p) {
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
    if (!type) return;
    if (type->kind == TypeKind::File) {
      diags_.error(p.type.range, "a pipeline parameter cannot be a 'file': files pass between steps "
                                 "(an op's file output to another op's file parameter)");
      return;
    }
    param.type = *type;
    param_types_[p.name.name] = *type;
    if (p.constraint) check_constraint(p, *type, param.constraint);
    if (p.default_value) {
      if (auto v = value(*p.default_value, Context::Default)) {
        if (check_assign(*v, *type, [&] { return fmt::format("default for '{}'", p.name.name); })) {
          param.default_value = v->literal;
          check_against(param, v->range);
        }
      }
    }
    program_.params.push_back(std::move(param));
  }

  void check_constraint(const ast::ParamDecl& p, const Type& type, ir::Constraint& out) {
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

  void check_against(const ir::Param& p, SourceRange at) {
    const auto& c = p.constraint;
    const auto& v = *p.default_value;
    if (!c.one_of.empty() && std::find(c.one_of.begin(), c.one_of.end(), v) == c.one_of.end()) {
      std::string allowed;
      for (const auto& a : c.one_of) allowed += (allowed.empty() ? "" : ", ") + a.dump();
      diags_.error(at, fmt::format("default {} of '{}' is not one of the allowed values [{}]",
                                   v.dump(), p.name, allowed));
    }
    if (c.min && v.is_number() && (v.get<double>() < *c.min || v.get<double>() > *c.max))
      diags_.error(at, fmt::format("default {} of '{}' is outside its range {}..{}", v.dump(),
                                   p.name, bound(*c.min, p.type), bound(*c.max, p.type)));
  }

  static std::string bound(double b, const Type& type) {
    if (type.kind == TypeKind::Int) return std::to_string(static_cast<std::int64_t>(b));
    return ir::Literal(b).dump();
  }

  //// Steps //////////////////////////////////////////////////////////////

  // First walk: every step and its scopes, so that references may point forward.
  void collect_steps(const std::vector<ast::Statement>& body, std::vector<int> scopes, bool top) {
    for (const auto& s : body) {
      if (const auto* step = boost::get<ast::StepDecl>(&s.get())) {
        auto [id, inserted] =
            step_ids_.emplace(step->name.name, static_cast<std::uint32_t>(steps_.size()));
        if (!inserted) {
          diags_.error(step->name.range, fmt::format("duplicate step '{}'", step->name.name));
          diags_.note(steps_[id->second].decl->name.range, "previous declaration here");
          continue;
        }
        if (auto it = params_.find(step->name.name); it != params_.end()) {
          diags_.error(step->name.range,
                       fmt::format("step '{}' has the name of a parameter", step->name.name));
          diags_.note(it->second->name.range, "parameter declared here");
        }
        check_dns_name(step->name, "step", step_dns_);
        StepEntry entry{step, scopes, nullptr};
        if (auto it = program_.ops.find(step->op.name); it != program_.ops.end())
          entry.op = &it->second;
        steps_.push_back(std::move(entry));
      } else if (const auto* f = boost::get<x3::forward_ast<ast::IfStmt>>(&s.get())) {
        auto then_scopes = scopes;
        then_scopes.push_back(next_if_scope(f->get(), false));
        collect_steps(f->get().then_block.statements, then_scopes, false);
        if (f->get().else_block) {
          auto else_scopes = scopes;
          else_scopes.push_back(next_if_scope(f->get(), true));
          collect_steps(f->get().else_block->statements, else_scopes, false);
        }
      } else if (const auto* l = boost::get<x3::forward_ast<ast::ForStmt>>(&s.get())) {
        auto inner = scopes;
        inner.push_back(new_scope(ScopeKind::Loop));
        loop_scopes_[&l->get()] = inner.back();
        scope_loops_[inner.back()] = &l->get();
        collect_steps(l->get().body.statements, inner, false);
      } else if (const auto* fin = boost::get<x3::forward_ast<ast::FinallyStmt>>(&s.get())) {
        if (!top) {
          diags_.error(fin->get().range, "'finally' is only allowed at the top of a pipeline");
          continue;
        }
        if (finally_scope_ < 0) {
          finally_scope_ = new_scope(ScopeKind::Finally);
          collect_steps(fin->get().body.statements, {finally_scope_}, false);
        }
      } else if (!top) {
        if (const auto* d = boost::get<ast::Description>(&s.get()))
          diags_.error(d->range, "'description' is only allowed at the top of a pipeline");
        if (const auto* p = boost::get<x3::forward_ast<ast::ParamDecl>>(&s.get()))
          diags_.error(p->get().range, "'param' is only allowed at the top of a pipeline");
        if (const auto* set = boost::get<x3::forward_ast<ast::SettingsStmt>>(&s.get()))
          diags_.error(set->get().range, "'settings' is only allowed at the top of a pipeline");
      }
    }
  }

  int new_scope(ScopeKind kind) {
    scope_kinds_.push_back(kind);
    return static_cast<int>(scope_kinds_.size() - 1);
  }

  // Second walk: checks and converts each statement.
  std::vector<Stmt> statements(const std::vector<ast::Statement>& body) {
    std::vector<Stmt> out;
    out.reserve(body.size());
    for (const auto& s : body) {
      if (const auto* step = boost::get<ast::StepDecl>(&s.get())) {
        // Built in place: a Stmt is large, and most statements are steps.
        if (!check_step(*step, out.emplace_back())) out.pop_back();
      } else if (const auto* f = boost::get<x3::forward_ast<ast::IfStmt>>(&s.get())) {
        out.push_back(check_if(f->get()));
      } else if (const auto* l = boost::get<x3::forward_ast<ast::ForStmt>>(&s.get())) {
        out.push_back(check_for(l->get()));
      }
    }
    return out;
  }

  Stmt check_if(const ast::IfStmt& s) {
    Stmt out;
    out.kind = Stmt::Kind::If;
    out.range = s.range;
    std::vector<std::uint32_t> uses;
    uses_ = &uses;
    out.condition = condition(s.condition);
    uses_ = nullptr;
    inherited_.push_back(std::move(uses));
    // Scope ids follow the order collect_steps() gave them.
    scope_path_.push_back(next_if_scope(s, false));
    out.then_body = statements(s.then_block.statements);
    scope_path_.pop_back();
    if (s.else_block) {
      scope_path_.push_back(next_if_scope(s, true));
      out.else_body = statements(s.else_block->statements);
      scope_path_.pop_back();
    }
    inherited_.pop_back();
    return out;
  }

  // If branches get scope ids on first sight, so both walks agree on them.
  int next_if_scope(const ast::IfStmt& s, bool else_branch) {
    auto key = std::make_pair(&s, else_branch);
    auto it = if_scopes_.find(key);
    if (it == if_scopes_.end()) it = if_scopes_.emplace(key, new_scope(ScopeKind::IfBranch)).first;
    return it->second;
  }

  Stmt check_for(const ast::ForStmt& s) {
    Stmt out;
    out.kind = Stmt::Kind::For;
    out.range = s.range;
    out.var = s.var.name;
    std::vector<std::uint32_t> uses;
    uses_ = &uses;
    auto items = value(s.items, Context::Arg);
    uses_ = nullptr;
    Type item_type = Type::scalar(TypeKind::String);
    bool items_bad = true;
    if (items) {
      if (items->type.kind != TypeKind::List) {
        diags_.error(items->range,
                     fmt::format("'for' needs a list to go over, got {}", type_str(items->type)));
      } else if (is_open(items->type)) {
        diags_.error(items->range, "'for' over an empty list runs nothing");
      } else if (items->kind == Value::Kind::List) {
        // Argo takes withItems (constants) or withParam (one run-time list), nothing between.
        diags_.error(items->range,
                     "'for' goes over a list of constants, a list parameter or a step's list "
                     "output; this list mixes in run-time values");
      } else {
        item_type = items->type.element[0];
        items_bad = false;
      }
    }
    for (const auto& v : loop_vars_) {
      if (v.name == s.var.name) {
        diags_.error(s.var.range,
                     fmt::format("loop variable '{}' hides the one of an enclosing 'for'", v.name));
        diags_.note(v.range, "declared here");
      }
    }
    if (auto it = params_.find(s.var.name); it != params_.end()) {
      diags_.error(s.var.range,
                   fmt::format("loop variable '{}' has the name of a parameter", s.var.name));
      diags_.note(it->second->name.range, "parameter declared here");
    }
    if (const StepEntry* step = find_step(s.var.name)) {
      diags_.error(s.var.range,
                   fmt::format("loop variable '{}' has the name of a step", s.var.name));
      diags_.note(step->decl->name.range, "step declared here");
    }
    if (s.limit) out.limit = loop_limit(*s.limit);
    out.item_type = item_type;
    out.items = std::move(items);
    // Steps in the body depend on what the items use (lowering lifts that to the loop).
    finish_uses(uses);
    out.deps = dep_names(uses);
    loop_vars_.push_back({s.var.name, item_type, s.var.range, items_bad});
    scope_path_.push_back(loop_scopes_.at(&s));
    inherited_.push_back(std::move(uses));
    out.body = statements(s.body.statements);
    inherited_.pop_back();
    scope_path_.pop_back();
    loop_vars_.pop_back();
    return out;
  }

  // `retries {limit: 3, policy: "OnFailure", backoff: "30s", factor: 2, max_duration: "1h"}`:
  // literals (Argo's retryStrategy fields are fixed in the workflow).
  void retry_map(const ast::Expression& e, ir::ContainerOp& c) {
    static const char* const kKeys[] = {"limit", "policy", "backoff", "factor", "max_duration"};
    auto items = entries(e, "'retries'", [&](const ast::MapEntry& entry, const std::string& key) {
      if (std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys)) return true;
      diags_.error(entry.range, fmt::format("unknown 'retries' field '{}' (limit, policy, backoff, "
                                            "factor, max_duration)",
                                            key));
      suggest(entry.range, key, {std::begin(kKeys), std::end(kKeys)});
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
  }

  // `settings { ... }`: literals, since they are fields of the workflow itself.
  void check_settings(const ast::SettingsStmt& s) {
    static const char* const kSettings[] = {"timeout", "ttl", "pod_gc", "parallelism",
                                            "service_account", "image_pull_secrets"};
    ir::Settings& out = program_.settings;
    std::set<std::string> seen;
    for (const auto& field : s.body.fields) {
      const std::string& name = field.name.name;
      if (std::find(std::begin(kSettings), std::end(kSettings), name) == std::end(kSettings)) {
        diags_.error(field.name.range, fmt::format("unknown setting '{}'", name));
        if (!suggest(field.name.range, name, {std::begin(kSettings), std::end(kSettings)}))
          diags_.note(field.name.range, "settings are timeout, ttl, pod_gc, parallelism, "
                                        "service_account and image_pull_secrets");
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
          if (!v->is_literal() || v->type.kind != TypeKind::String || !runtime::is_dns1123_subdomain(text)) {
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
      } else if (name == "service_account") {
        if (is_text && runtime::is_dns1123_subdomain(text)) out.service_account = text;
        else diags_.error(v->range, "'service_account' must be a literal ServiceAccount name");
      }
    }
  }

  // `limit N`: a literal positive int (Argo's `parallelism` and KFP's
  // `parallelismLimit` are numbers in the workflow, fixed before the run starts).
  int loop_limit(const ast::Expression& expr) {
    const ast::Expression& e = strip(expr);
    const auto* n = node<ast::NumberLit>(e);
    auto v = n ? number(*n) : std::nullopt;
    if (n && !v) return 0;  // out of range, reported
    if (!v || !v->literal.is_number_integer()) {
      diags_.error(range_of(e), "a loop's 'limit' must be a literal int: Argo and KFP fix the "
                                "number of iterations run at once before the run starts");
      return 0;
    }
    auto i = v->literal.get<std::int64_t>();
    if (i < 1 || i > 2147483647) {
      diags_.error(range_of(e), fmt::format("a loop's 'limit' must be 1 to 2147483647, got {}", i));
      return 0;
    }
    return static_cast<int>(i);
  }

  // Fills `out`; returns false for a duplicate step, which has no statement.
  bool check_step(const ast::StepDecl& s, Stmt& out) {
    // Steps are checked in the order collect_steps() found them, so the next entry is
    // nearly always this one; the name lookup is the fallback (and finds duplicates).
    std::uint32_t id = next_step_;
    if (id >= steps_.size() || steps_[id].decl != &s) {
      auto id_it = step_ids_.find(s.name.name);
      if (id_it == step_ids_.end() || steps_[id_it->second].decl != &s) return false;
      id = id_it->second;
    }
    next_step_ = id + 1;
    StepEntry& entry = steps_[id];
    out.kind = Stmt::Kind::Step;
    out.range = s.name.range;
    out.name = s.name.name;
    out.op = s.op.name;
    const OpInfo* op = entry.op;
    // A component's steps are checked against its signature; program_.ops holds the
    // resolved containers (component_variant()).
    if (op && op->component) op = &component_sigs_.at(op->name);
    if (!op) {
      diags_.error(s.op.range, fmt::format("unknown op '{}'", s.op.name));
      std::vector<std::string> names;
      for (const auto& [name, info] : program_.ops) names.push_back(name);
      if (!suggest(s.op.range, s.op.name, names) && program_.ops.count("mpi_job") == 0 &&
          (s.op.name == "mpi_job" || s.op.name == "tf_job" || s.op.name == "pytorch_job"))
        diags_.note(s.op.range, "training ops come from the stdlib: add 'use arena'");
    }
    std::vector<std::uint32_t> uses;
    // Arguments are few, so a vector beats a map here.
    std::vector<std::pair<std::string_view, SourceRange>> given;
    given.reserve(s.args.size());
    auto find_given = [&](std::string_view name) {
      return std::find_if(given.begin(), given.end(),
                          [&](const auto& g) { return g.first == name; });
    };
    std::set<std::string> suggested;  // a misspelt argument is not also reported missing
    out.args.reserve(s.args.size());
    for (const auto& arg : s.args) {
      if (auto it = find_given(arg.name.name); it != given.end()) {
        diags_.error(arg.name.range, fmt::format("duplicate argument '{}'", arg.name.name));
        diags_.note(it->second, "first given here");
        continue;
      }
      given.emplace_back(arg.name.name, arg.name.range);
      uses_ = &uses;
      auto v = value(arg.value, Context::Arg);
      uses_ = nullptr;
      if (!op) continue;
      auto p = std::find_if(op->params.begin(), op->params.end(),
                            [&](const ir::OpParam& q) { return q.name == arg.name.name; });
      if (p == op->params.end()) {
        diags_.error(arg.name.range,
                     fmt::format("unknown argument '{}' for op '{}'", arg.name.name, op->name));
        std::vector<std::string> names;
        for (const auto& q : op->params) names.push_back(q.name);
        if (suggest(arg.name.range, arg.name.name, names))
          suggested.insert(spellcheck(arg.name.name, names));
        diags_.note(op->range, fmt::format("'{}' declared here", op->name));
        continue;
      }
      if (!v) continue;
      if (!check_assign(*v, p->type, [&] {
            return fmt::format("argument '{}' of op '{}'", arg.name.name, op->name);
          }))
        continue;
      out.args.emplace_back(arg.name.name, std::move(*v));
    }
    if (op && op->container) check_bound_fields(*op, out.args);
    if (op) {
      for (std::size_t i = 0; i < op->params.size(); ++i) {
        const auto& p = op->params[i];
        if (p.default_value || find_given(p.name) != given.end() || suggested.count(p.name))
          continue;
        if (op->component && component::may_leave_out(*op->component, p.name)) continue;
        diags_.error(s.op.range,
                     fmt::format("missing argument '{}' for op '{}'", p.name, op->name));
        diags_.note(op->param_ranges[i], fmt::format("'{}' declared here", p.name));
      }
    }
    if (op && op->component) out.op = component_variant(*op, out.args, s.op.range);
    for (const auto& a : s.after) {
      const StepEntry* after = find_step(a.name);
      if (!after) {
        diags_.error(a.range, fmt::format("unknown step '{}' in 'after'", a.name));
        if (suggesting()) suggest(a.range, a.name, step_names());
        continue;
      }
      if (check_reach(*after, a.range, false)) uses.push_back(id_of(*after));
    }
    finish_uses(uses);
    out.deps = dep_names(uses);
    entry.first_dep = static_cast<std::uint32_t>(edges_.size());
    entry.dep_count = static_cast<std::uint32_t>(uses.size());
    edges_.insert(edges_.end(), uses.begin(), uses.end());
    return true;
  }

  // The op a step of a component runs: the component resolved for the arguments given
  // (component::instantiate), registered once per resolution: the first under the op's
  // name, others under NAME_2, NAME_3, ... (the first name no op has).
  std::string component_variant(const OpInfo& sig,
                                const std::vector<std::pair<std::string, Value>>& args,
                                SourceRange call) {
    std::map<std::string, component::Given> given;
    for (const auto& [name, v] : args)
      given[name] = component::Given{true, v.is_literal() ? &v.literal : nullptr};
    std::string key;
    auto container = component::instantiate(*sig.component, given, call, diags_, key);
    if (!container) return sig.name;
    auto& names = component_variants_[sig.name];
    if (auto it = names.find(key); it != names.end()) return it->second;
    std::string name = sig.name;
    if (!names.empty())
      for (int k = 2; program_.ops.count(name = fmt::format("{}_{}", sig.name, k)); ++k) {}
    names.emplace(key, name);
    OpInfo info = sig;
    info.name = name;
    container->name = name;
    info.params = container->params;
    info.param_ranges.clear();
    for (const auto& p : info.params) {
      auto at = std::find_if(sig.params.begin(), sig.params.end(),
                             [&](const ir::OpParam& q) { return q.name == p.name; });
      info.param_ranges.push_back(sig.param_ranges[static_cast<std::size_t>(at - sig.params.begin())]);
    }
    info.container = std::move(*container);
    program_.ops[name] = std::move(info);
    return name;
  }

  // The op parameter a body value is, when it is one whole op parameter.
  static const ir::OpParam* bound_param(const OpInfo& op, const Value& v) {
    const ir::Ref* r = ir::whole_ref(v);
    if (!r || r->kind != ir::Ref::Kind::OpParam) return nullptr;
    auto it = std::find_if(op.params.begin(), op.params.end(), [&](const ir::OpParam& p) { return p.name == r->name; });
    return it == op.params.end() ? nullptr : &*it;
  }

  static SourceRange param_range(const OpInfo& op, const ir::OpParam& p) {
    auto i = static_cast<std::size_t>(&p - op.params.data());
    return i < op.param_ranges.size() ? op.param_ranges[i] : op.range;
  }

  // A container op's resources and metrics given through its parameters follow the rules
  // of the same fields written in the op: a step's literal argument for one is checked
  // here, at the argument (a default was checked with the op, a run-time value is checked
  // when the pod starts: by the kubelet, or by pipec-metrics).
  void check_bound_fields(const OpInfo& op, const std::vector<std::pair<std::string, Value>>& args) {
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
    std::vector<runtime::MetricSpec> specs;
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
          if (runtime::parse_metric_spec(text, why)) continue;
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
        if (auto spec = runtime::parse_metric_spec(text, why)) specs.push_back(std::move(*spec));
        else known = false;
      }
    }
    if (known && from_args)
      if (std::string why; !runtime::check_metric_specs(specs, why)) diags_.error(at, why);
  }

  const StepEntry* find_step(std::string_view name) const {
    auto it = step_ids_.find(name);
    return it == step_ids_.end() ? nullptr : &steps_[it->second];
  }

  std::uint32_t id_of(const StepEntry& step) const {
    return static_cast<std::uint32_t>(&step - steps_.data());
  }

  // Every step name in declaration order, for suggestions.
  std::vector<std::string> step_names() const {
    std::vector<std::string> names;
    names.reserve(steps_.size());
    for (const auto& step : steps_) names.push_back(step.decl->name.name);
    return names;
  }

  // Adds the uses of the enclosing conditions and loop items to a step's (or loop's)
  // own, then sorts them by name without duplicates: the step's dependencies.
  void finish_uses(std::vector<std::uint32_t>& uses) const {
    for (const auto& inherited : inherited_)
      uses.insert(uses.end(), inherited.begin(), inherited.end());
    std::sort(uses.begin(), uses.end(), [&](std::uint32_t a, std::uint32_t b) {
      return steps_[a].decl->name.name < steps_[b].decl->name.name;
    });
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
  }

  std::vector<std::string> dep_names(const std::vector<std::uint32_t>& uses) const {
    std::vector<std::string> names;
    names.reserve(uses.size());
    for (std::uint32_t id : uses) names.push_back(steps_[id].decl->name.name);
    return names;
  }

  // Whether the current place may refer to `step`: not into `finally` from outside,
  // and (for outputs) not into an `if` branch from outside. Into a loop from outside is
  // fan-in: `after` waits for the whole loop, and an output is the list of every
  // iteration's value; `loops`, when given, is set to the number of loops crossed.
  bool check_reach(const StepEntry& step, SourceRange at, bool output, int* loops = nullptr) {
    const auto& name = step.decl->name.name;
    if (loops) *loops = 0;
    for (int scope : step.scopes) {
      if (std::find(scope_path_.begin(), scope_path_.end(), scope) != scope_path_.end()) continue;
      ScopeKind kind = scope_kinds_[scope];
      if (kind == ScopeKind::Loop) {
        if (loops) ++*loops;
        continue;
      }
      if (kind == ScopeKind::Finally) {
        diags_.error(
            at, fmt::format("step '{}' runs in 'finally' and cannot be referred to from outside it",
                            name));
      } else if (output) {
        diags_.error(at,
                     fmt::format("step '{}' runs only in one branch of an 'if'; its outputs cannot "
                                 "be used outside that branch",
                                 name));
      } else {
        continue;
      }
      diags_.note(step.decl->name.range, fmt::format("'{}' declared here", name));
      return false;
    }
    if (finally_scope_ >= 0 && !scope_path_.empty() && scope_path_[0] == finally_scope_ &&
        (step.scopes.empty() || step.scopes[0] != finally_scope_)) {
      diags_.error(
          at,
          fmt::format("steps in 'finally' cannot refer to step '{}' of the main pipeline", name));
      return false;
    }
    return true;
  }

  //// Values ///////////////////////////////////////////////////////////////

  std::optional<Value> value(const ast::Expression& expr, Context ctx) {
    const ast::Expression& e = strip(expr);
    Value v;
    v.range = range_of(e);
    if (const auto* s = node<ast::StringLit>(e)) {
      v.type = Type::scalar(TypeKind::String);
      if (s->is_plain()) {
        v.literal = s->text();
        return v;
      }
      v.kind = Value::Kind::Interpolation;
      bool ok = true;
      for (const auto& part : s->parts) {
        ir::Part out;
        if (!part.is_ref) {
          out.text = part.text;
          v.parts.push_back(std::move(out));
          continue;
        }
        auto ref = resolve(part.head, part.field ? &*part.field : nullptr, part.range, ctx);
        if (!ref) {
          // `${HOME}` meant for the shell: an environment variable's usual spelling.
          const std::string& n = part.head.name;
          if (!part.field && std::none_of(n.begin(), n.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
            diags_.note(part.range, fmt::format("'${{...}}' in a string is a pipec value; to read the "
                                                "container's own variable write '\\${{{}}}'",
                                                n));
          ok = false;
          continue;
        }
        // A list or map goes into a string as its compact JSON text (as KFP passes
        // JsonArray/JsonObject parameters), e.g. "--items=${xs}" -> --items=["a","b"].
        // A file has no text: only inside its op is `${f}` its path.
        if (ref->type.kind == TypeKind::File && ctx != Context::Body) {
          diags_.error(part.range, fmt::format("'{}{}' is a file: it has no text; pass it whole to a file "
                                               "parameter of an op, whose command reads it at the path "
                                               "'${{...}}' gives",
                                               part.head.name, part.field ? "." + part.field->name : ""));
          ok = false;
          continue;
        }
        out.ref = std::move(*ref);
        v.parts.push_back(std::move(out));
      }
      if (!ok) return std::nullopt;
      return v;
    }
    if (const auto* n = node<ast::NumberLit>(e)) return number(*n);
    if (const auto* b = node<ast::BoolLit>(e)) {
      v.type = Type::scalar(TypeKind::Bool);
      v.literal = b->value;
      return v;
    }
    if (const auto* r = node<ast::Reference>(e)) {
      auto ref = resolve(r->head, r->field ? &*r->field : nullptr, r->range, ctx);
      if (!ref) return std::nullopt;
      v.kind = Value::Kind::Ref;
      v.type = ref->type;
      v.ref = std::move(*ref);
      return v;
    }
    if (const auto* l = node<ast::ListExpr>(e)) {
      v.type = Type{TypeKind::List, {}};
      bool ok = true, literal = true;
      for (const auto& item : l->items) {
        auto iv = value(item, ctx);
        if (!iv) {
          ok = false;
          continue;
        }
        if (!v.type.element.empty()) {
          auto u = unify(v.type.element[0], iv->type);
          if (!u) {
            diags_.error(
                iv->range,
                fmt::format("list items must have one type: this one is {}, the first is {}",
                            type_str(iv->type), type_str(v.type.element[0])));
            ok = false;
            continue;
          }
          v.type.element[0] = *u;
        } else {  // the first item; `[[]]` is a list of empty lists, not an empty list
          v.type.element.push_back(iv->type);
        }
        literal = literal && iv->is_literal();
        v.items.push_back(std::move(*iv));
      }
      if (!ok) return std::nullopt;
      for (auto& item : v.items)
        coerce(item, v.type.element.empty() ? item.type : v.type.element[0]);
      fold(v, literal);
      return v;
    }
    if (const auto* m = node<ast::MapExpr>(e)) {
      v.type = Type{TypeKind::Map, {}};
      bool ok = true, literal = true;
      std::map<std::string, SourceRange> seen;
      for (const auto& entry : m->entries) {
        std::string key = map_key(entry.key);
        if (auto it = seen.find(key); it != seen.end()) {
          diags_.error(entry.range, fmt::format("duplicate key '{}'", key));
          diags_.note(it->second, "first given here");
          ok = false;
          continue;
        }
        seen.emplace(key, entry.range);
        auto ev = value(entry.value, ctx);
        if (!ev) {
          ok = false;
          continue;
        }
        if (!v.type.element.empty()) {
          auto u = unify(v.type.element[0], ev->type);
          if (!u) {
            diags_.error(
                ev->range,
                fmt::format("map values must have one type: this one is {}, the first is {}",
                            type_str(ev->type), type_str(v.type.element[0])));
            ok = false;
            continue;
          }
          v.type.element[0] = *u;
        } else {
          v.type.element.push_back(ev->type);
        }
        literal = literal && ev->is_literal();
        v.entries.emplace_back(key, std::move(*ev));
      }
      if (!ok) return std::nullopt;
      for (auto& entry : v.entries)
        coerce(entry.second, v.type.element.empty() ? entry.second.type : v.type.element[0]);
      fold(v, literal);
      return v;
    }
    if (ctx == Context::Condition) return std::nullopt;  // handled by condition()
    diags_.error(v.range,
                 "comparisons and 'and', 'or', 'not' are only allowed in an 'if' condition");
    return std::nullopt;
  }

  // A list or map of literals becomes one literal.
  static void fold(Value& v, bool literal) {
    if (!literal) {
      v.kind = v.type.kind == TypeKind::List ? Value::Kind::List : Value::Kind::Map;
      return;
    }
    v.kind = Value::Kind::Literal;
    if (v.type.kind == TypeKind::List) {
      v.literal = ir::Literal::array();
      for (auto& item : v.items) v.literal.push_back(item.literal);
      v.items.clear();
    } else {
      v.literal = ir::Literal::object();
      for (auto& [key, ev] : v.entries) v.literal[key] = ev.literal;
      v.entries.clear();
    }
  }

  std::optional<Value> number(const ast::NumberLit& n) {
    Value v;
    v.range = n.range;
    const std::string& t = n.text;
    if (n.is_float()) {
      errno = 0;
      double d = std::strtod(t.c_str(), nullptr);
      if (errno == ERANGE || !std::isfinite(d)) {
        diags_.error(n.range, fmt::format("number '{}' is out of range", t));
        return std::nullopt;
      }
      v.type = Type::scalar(TypeKind::Float);
      v.literal = d;
      return v;
    }
    std::int64_t i = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), i);
    if (ec != std::errc() || ptr != t.data() + t.size()) {
      diags_.error(n.range, fmt::format("integer '{}' is out of range", t));
      return std::nullopt;
    }
    v.type = Type::scalar(TypeKind::Int);
    v.literal = i;
    return v;
  }

  std::optional<ir::Ref> resolve(const ast::Identifier& head, const ast::Identifier* field,
                                 SourceRange range, Context ctx) {
    ir::Ref ref;
    ref.name = head.name;
    ref.range = range;
    auto no_fields = [&](const std::string& what) {
      diags_.error(field->range,
                   fmt::format("{} '{}' has no field '{}'", what, head.name, field->name));
      return std::nullopt;
    };
    if (ctx == Context::Default) {
      diags_.error(range, "a default value must be a constant, not a reference");
      return std::nullopt;
    }
    if (ctx == Context::Body) {
      const OpInfo& op = *current_op_;
      for (const auto& p : op.params) {
        if (p.name != head.name) continue;
        if (field) return no_fields("parameter");
        ref.kind = ir::Ref::Kind::OpParam;
        ref.type = p.type;
        return ref;
      }
      diags_.error(head.range,
                   fmt::format("unknown parameter '{}' of op '{}'", head.name, op.name));
      std::vector<std::string> names;
      for (const auto& p : op.params) names.push_back(p.name);
      suggest(head.range, head.name, names);
      return std::nullopt;
    }
    for (auto it = loop_vars_.rbegin(); it != loop_vars_.rend(); ++it) {
      if (it->name != head.name) continue;
      if (it->items_bad) return std::nullopt;  // the error is at its items
      ref.kind = ir::Ref::Kind::LoopItem;
      ref.type = it->type;
      if (field) {
        if (it->type.kind != TypeKind::Map) {
          diags_.error(field->range,
                       fmt::format("loop variable '{}' has no field '{}' (its items are {})",
                                   head.name, field->name, type_str(it->type)));
          return std::nullopt;
        }
        ref.field = field->name;
        ref.type = it->type.element[0];
      }
      return ref;
    }
    if (auto it = param_types_.find(head.name); it != param_types_.end()) {
      if (field) return no_fields("parameter");
      ref.kind = ir::Ref::Kind::Param;
      ref.type = it->second;
      return ref;
    }
    if (params_.count(head.name)) return std::nullopt;  // its type was wrong, already reported
    if (const StepEntry* found = find_step(head.name)) {
      const StepEntry& step = *found;
      if (!step.op) return std::nullopt;  // unknown op, reported at the step
      const auto& outputs = step.op->outputs;
      if (!field) {
        diags_.error(
            range,
            outputs.empty()
                ? fmt::format("step '{}' is not a value and its op has no outputs", head.name)
                : fmt::format("step '{}' is not a value; use one of its outputs (e.g. '{}.{}')",
                              head.name, head.name, outputs[0].name));
        return std::nullopt;
      }
      auto o = std::find_if(outputs.begin(), outputs.end(),
                            [&](const ir::OpOutput& out) { return out.name == field->name; });
      if (o == outputs.end()) {
        diags_.error(field->range,
                     fmt::format("step '{}' has no output '{}'", head.name, field->name));
        std::vector<std::string> names;
        for (const auto& out : outputs) names.push_back(out.name);
        if (!suggest(field->range, field->name, names) && !names.empty())
          diags_.note(step.op->range,
                      fmt::format("op '{}' has outputs {}", step.op->name, join_quoted(names)));
        return std::nullopt;
      }
      int loops = 0;
      if (!check_reach(step, range, true, &loops)) return std::nullopt;
      ref.kind = ir::Ref::Kind::StepOutput;
      ref.field = field->name;
      ref.type = o->type;
      if (loops > 0 && o->type.kind == TypeKind::File) {
        diags_.error(range, fmt::format("'{}.{}' is a file of a step inside a 'for' loop: after the loop "
                                        "there is one per iteration, and a list holds no files (Argo "
                                        "collects parameters only); pass it on inside the loop",
                                        head.name, field->name));
        return std::nullopt;
      }
      // From outside a loop, the values of every iteration, in item order (fan-in).
      for (int i = 0; i < loops; ++i) ref.type = Type::list_of(std::move(ref.type));
      if (uses_) uses_->push_back(id_of(step));
      return ref;
    }
    diags_.error(head.range, fmt::format("unknown name '{}'", head.name));
    if (!suggesting()) return std::nullopt;  // the list of every name is O(steps)
    std::vector<std::string> names;
    for (const auto& v : loop_vars_) names.push_back(v.name);
    for (const auto& [name, type] : param_types_) names.push_back(name);
    for (auto& name : step_names()) names.push_back(std::move(name));
    suggest(head.range, head.name, names);
    return std::nullopt;
  }

  //// Conditions ///////////////////////////////////////////////////////////

  std::optional<ir::Condition> condition(const ast::Expression& expr) {
    const ast::Expression& e = strip(expr);
    ir::Condition c;
    c.range = range_of(e);
    auto chain = [&](const ast::Expression& first, const std::vector<ast::Expression>& rest,
                     ir::Condition::Op op) -> std::optional<ir::Condition> {
      auto acc = condition(first);
      bool ok = acc.has_value();
      for (const auto& r : rest) {
        auto next = condition(r);
        if (!next || !ok) {
          ok = false;
          continue;
        }
        ir::Condition both;
        both.op = op;
        both.range = SourceRange{c.range.file, acc->range.begin, next->range.end};
        both.operands.push_back(std::move(*acc));
        both.operands.push_back(std::move(*next));
        acc = std::move(both);
      }
      if (!ok) return std::nullopt;
      return acc;
    };
    if (const auto* o = node<ast::OrExpr>(e))
      return chain(o->first, o->rest, ir::Condition::Op::Or);
    if (const auto* a = node<ast::AndExpr>(e))
      return chain(a->first, a->rest, ir::Condition::Op::And);
    if (const auto* n = node<ast::NotExpr>(e)) {
      auto inner = condition(n->operand);
      if (!inner) return std::nullopt;
      c.op = ir::Condition::Op::Not;
      c.operands.push_back(std::move(*inner));
      return c;
    }
    if (const auto* cmp = node<ast::CompareExpr>(e)) {
      auto lhs = value(cmp->lhs, Context::Arg);
      auto rhs = value(cmp->tail->rhs, Context::Arg);
      if (!lhs || !rhs) return std::nullopt;
      for (const auto* side : {&*lhs, &*rhs}) {
        if (side->kind == Value::Kind::Interpolation) {
          diags_.error(side->range,
                       "compare the value itself, not a string with '${...}' (e.g. mode == \"x\")");
          return std::nullopt;
        }
      }
      const std::string& op = cmp->tail->op;
      bool ordering = op != "==" && op != "!=";
      bool numeric = is_numeric(lhs->type) && is_numeric(rhs->type);
      if (!lhs->type.is_scalar() || !rhs->type.is_scalar() ||
          (!numeric && lhs->type.kind != rhs->type.kind)) {
        diags_.error(c.range, fmt::format("cannot compare {} with {}", type_str(lhs->type),
                                          type_str(rhs->type)));
        return std::nullopt;
      }
      if (ordering && !numeric) {
        diags_.error(c.range,
                     fmt::format("'{}' compares numbers, not {}", op, type_str(lhs->type)));
        return std::nullopt;
      }
      c.op = op == "=="   ? ir::Condition::Op::Eq
             : op == "!=" ? ir::Condition::Op::Ne
             : op == "<"  ? ir::Condition::Op::Lt
             : op == "<=" ? ir::Condition::Op::Le
             : op == ">"  ? ir::Condition::Op::Gt
                          : ir::Condition::Op::Ge;
      for (auto* side : {&*lhs, &*rhs}) {
        ir::Condition leaf;
        leaf.range = side->range;
        leaf.value = std::move(*side);
        c.operands.push_back(std::move(leaf));
      }
      return c;
    }
    auto v = value(e, Context::Condition);
    if (!v) return std::nullopt;
    if (v->type.kind != TypeKind::Bool) {
      diags_.error(v->range, fmt::format("a condition must be bool, got {}", type_str(v->type)));
      return std::nullopt;
    }
    c.value = std::move(*v);
    return c;
  }

  //// Shared helpers ///////////////////////////////////////////////////////

  std::optional<Type> resolve_type(const ast::TypeExpr& t) {
    static const std::vector<std::string> kNames = {"string", "int", "float", "bool",
                                                    "list",   "map", "file"};
    const std::string& n = t.name.name;
    auto scalar = [&](TypeKind k) -> std::optional<Type> {
      if (!t.args.empty()) {
        diags_.error(t.range, fmt::format("type '{}' takes no element type", n));
        return std::nullopt;
      }
      return Type::scalar(k);
    };
    if (n == "string") return scalar(TypeKind::String);
    if (n == "int") return scalar(TypeKind::Int);
    if (n == "float") return scalar(TypeKind::Float);
    if (n == "bool") return scalar(TypeKind::Bool);
    if (n == "file") return scalar(TypeKind::File);
    if (n == "list" || n == "map") {
      if (t.args.size() != 1) {
        diags_.error(t.range,
                     fmt::format("type '{}' needs one element type (e.g. {}<string>)", n, n));
        return std::nullopt;
      }
      auto el = resolve_type(t.args[0]);
      if (!el) return std::nullopt;
      if (el->kind == TypeKind::File) {
        diags_.error(t.args[0].range, "a 'file' is passed whole between steps; it cannot be in a list or map");
        return std::nullopt;
      }
      return n == "list" ? Type::list_of(*el) : Type::map_of(*el);
    }
    diags_.error(t.name.range, fmt::format("unknown type '{}'", n));
    suggest(t.name.range, n, kNames);
    return std::nullopt;
  }

  // `what` names the value in the message: a string, or a function that builds it
  // (so the common case, no error, formats nothing).
  template <class What>
  bool check_assign(Value& v, const Type& to, const What& what) {
    if (!assignable(to, v.type)) {
      std::string subject;
      if constexpr (std::is_invocable_v<const What&>)
        subject = what();
      else
        subject = what;
      diags_.error(v.range,
                   fmt::format("{} must be {}, got {}", subject, type_str(to), type_str(v.type)));
      return false;
    }
    coerce(v, to);
    return true;
  }

  bool declare(std::map<std::string, SourceRange>& seen, const ast::Identifier& id,
               const char* what) {
    auto [it, inserted] = seen.emplace(id.name, id.range);
    if (inserted) return true;
    diags_.error(id.range, fmt::format("duplicate {} '{}'", what, id.name));
    diags_.note(it->second, "previous declaration here");
    return false;
  }

  // Whether a did-you-mean note would still be shown: past the error limit nothing is,
  // and building the candidates for each of thousands of errors made reporting quadratic.
  bool suggesting() const { return diags_.error_count() <= Diagnostics::kMaxErrors; }

  bool suggest(SourceRange at, const std::string& word, const std::vector<std::string>& names) {
    if (!suggesting()) return false;
    std::string near = spellcheck(word, names);
    if (near.empty()) return false;
    diags_.note(SourceRange{at.file, at.begin, at.begin}, fmt::format("did you mean '{}'?", near));
    return true;
  }

  void check_dns_name(const ast::Identifier& id, const char* what, DnsNames& seen) {
    std::string dns = to_dns1123(id.name);
    if (dns.empty()) {
      diags_.error(id.range,
                   fmt::format("{} name '{}' gives an empty Kubernetes name; use letters or digits",
                               what, id.name));
      return;
    }
    if (dns.size() > kMaxK8sNameLength) {
      diags_.error(id.range,
                   fmt::format("{} name '{}' is too long: Kubernetes names have at most {} "
                               "characters, '{}' has {}",
                               what, id.name, kMaxK8sNameLength, dns, dns.size()));
      return;
    }
    auto [it, inserted] = seen.try_emplace(
        std::move(dns), std::pair<std::string_view, SourceRange>(id.name, id.range));
    if (!inserted) {
      diags_.error(id.range, fmt::format("{} names '{}' and '{}' both become '{}' in Kubernetes",
                                         what, it->second.first, id.name, it->first));
      diags_.note(it->second.second, fmt::format("'{}' declared here", it->second.first));
    }
  }

  static std::string map_key(const ast::MapKey& key) {
    if (const auto* id = boost::get<ast::Identifier>(&key.get())) return id->name;
    return boost::get<ast::StringLit>(key.get()).text();
  }

  SourceManager& sources_;
  Diagnostics& diags_;
  std::vector<LoadedModule> modules_;
  Program program_;
  bool description_seen_ = false;
  std::map<std::string, const ast::ParamDecl*, std::less<>> params_;
  std::map<std::string, Type, std::less<>> param_types_;  // in name order, for suggestions
  std::vector<StepEntry> steps_;                           // in collect_steps() order
  std::unordered_map<std::string_view, std::uint32_t> step_ids_;  // name -> index in steps_
  std::uint32_t next_step_ = 0;  // the steps_ entry check_step() expects next
  DnsNames step_dns_;
  std::vector<std::uint32_t> edges_;  // the steps each step depends on, see StepEntry
  std::vector<ScopeKind> scope_kinds_;
  std::map<const ast::ForStmt*, int> loop_scopes_;
  std::unordered_map<int, const ast::ForStmt*> scope_loops_;  // the other way round
  std::deque<std::string> loop_labels_;
  bool settings_seen_ = false;  // names of loops in the step graph ("for VAR")
  std::map<std::pair<const ast::IfStmt*, bool>, int> if_scopes_;
  int finally_scope_ = -1;
  std::vector<int> scope_path_;
  std::vector<LoopVar> loop_vars_;
  std::vector<std::vector<std::uint32_t>> inherited_;  // step uses of enclosing conditions
  std::vector<std::uint32_t>* uses_ = nullptr;          // collects the steps a value uses
  const OpInfo* current_op_ = nullptr;
  std::map<std::string, OpInfo> component_sigs_;  // components' signatures, by op name
  std::map<std::string, std::map<std::string, std::string>> component_variants_;  // op -> key -> name
};

}  // namespace

std::shared_ptr<const Program> check_program(SourceManager& sources, FileId main,
                                             Diagnostics& diags) {
  Checker checker(sources, diags);
  return checker.run(main);
}

}  // namespace pipec::sema
