// Values and what they refer to: literals, lists and maps, `${...}` strings, names
// (loop variables, parameters, step outputs, op parameters in an op body), conditions,
// types, and the helpers every part of the checker shares.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rules/names.hpp"
#include "rules/visuals.hpp"
#include "compiler/base/spellcheck.hpp"
#include "compiler/sema/checker.hpp"

namespace pipec::sema::detail {

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

std::optional<Value> Checker::value(const ast::Expression& expr, Context ctx) {
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
      if (!join_element(v.type, *iv, "list items")) {
        ok = false;
        continue;
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
      if (!join_element(v.type, *ev, "map values")) {
        ok = false;
        continue;
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

// One more item of a list or map (`what`: "list items", "map values"): its type joins the
// element type, or is an error at the item. The first item gives the element type: `[[]]`
// is a list of empty lists, not an empty list.
bool Checker::join_element(Type& container, const Value& item, std::string_view what) {
  if (container.element.empty()) {
    container.element.push_back(item.type);
    return true;
  }
  auto u = unify(container.element[0], item.type);
  if (!u) {
    diags_.error(item.range, fmt::format("{} must have one type: this one is {}, the first is {}",
                                         what, type_str(item.type), type_str(container.element[0])));
    return false;
  }
  container.element[0] = *u;
  return true;
}

// A list or map of literals becomes one literal.
void Checker::fold(Value& v, bool literal) {
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

std::optional<Value> Checker::number(const ast::NumberLit& n) {
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

std::optional<ir::Ref> Checker::resolve(const ast::Identifier& head,
                                         const ast::Identifier* field, SourceRange range,
                                         Context ctx) {
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
      if (symbols_) use_member(head.range, Symbol::Kind::OpParameter, op.name, p.name);
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
    if (symbols_) symbols_->refs.emplace_back(head.range, it->symbol);
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
  if (symbols_) use_symbol(head.range, symbols_->params, head.name);
  if (auto it = param_types_.find(head.name); it != param_types_.end()) {
    if (field) return no_fields("parameter");
    ref.kind = ir::Ref::Kind::Param;
    ref.type = it->second;
    return ref;
  }
  if (params_.count(head.name)) return std::nullopt;  // its type was wrong, already reported
  if (const StepEntry* found = find_step(head.name)) {
    const StepEntry& step = *found;
    if (symbols_) use_symbol(head.range, symbols_->steps, head.name);
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
        diags_.note(step.op->range, fmt::format("{} '{}' has outputs {}", callable_kind(*step.op),
                                                step.op->name, join_quoted(names)));
      return std::nullopt;
    }
    if (symbols_) use_member(field->range, Symbol::Kind::Output, step.op->name, field->name);
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
  if (head.name == "run") return run_value(field, range);
  diags_.error(head.range, fmt::format("unknown name '{}'", head.name));
  if (!suggesting()) return std::nullopt;  // the list of every name is O(steps)
  std::vector<std::string> names;
  for (const auto& v : loop_vars_) names.push_back(v.name);
  for (const auto& [name, type] : param_types_) names.push_back(name);
  for (auto& name : step_names()) names.push_back(std::move(name));
  suggest(head.range, head.name, names);
  return std::nullopt;
}

std::optional<ir::Condition> Checker::condition(const ast::Expression& expr) {
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

std::optional<Type> Checker::resolve_type(const ast::TypeExpr& t) {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = {"string", "int", "float", "bool", "list", "map", "file"};
    for (const auto& v : rules::visuals::type_names()) names.push_back(v);
    return names;
  }();
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
  // A visual output (docs/language.md "Visual outputs"): a file the UIs render.
  if (auto visual = rules::visuals::kind_of(n)) {
    if (auto file = scalar(TypeKind::File)) return Type::visual_file(*visual);
    return std::nullopt;
  }
  if (n == "list" || n == "map") {
    if (t.args.size() != 1) {
      diags_.error(t.range,
                   fmt::format("type '{}' needs one element type (e.g. {}<string>)", n, n));
      return std::nullopt;
    }
    auto el = resolve_type(t.args[0]);
    if (!el) return std::nullopt;
    if (el->kind == TypeKind::File) {
      diags_.error(t.args[0].range, fmt::format("a '{}' is passed whole between steps; it cannot be in a list or map",
                                                el->str()));
      return std::nullopt;
    }
    return n == "list" ? Type::list_of(*el) : Type::map_of(*el);
  }
  diags_.error(t.name.range, fmt::format("unknown type '{}'", n));
  suggest(t.name.range, n, kNames);
  return std::nullopt;
}

bool Checker::visual_param_ok(const ast::TypeExpr& t, const Type& type) {
  if (type.visual == rules::visuals::Kind::None) return true;
  diags_.error(t.range, fmt::format("'{}' is a kind of op output (a file the UIs render); a parameter that "
                                    "takes one is a 'file'",
                                    type.str()));
  return false;
}

bool Checker::declare(std::map<std::string, SourceRange>& seen, const ast::Identifier& id,
                      const char* what) {
  auto [it, inserted] = seen.emplace(id.name, id.range);
  if (inserted) return true;
  diags_.error(id.range, fmt::format("duplicate {} '{}'", what, id.name));
  diags_.note(it->second, "previous declaration here");
  return false;
}

bool Checker::suggest(SourceRange at, const std::string& word, const std::vector<std::string>& names) {
  if (!suggesting()) return false;
  std::string near = spellcheck(word, names);
  if (near.empty()) return false;
  diags_.note(SourceRange{at.file, at.begin, at.begin}, fmt::format("did you mean '{}'?", near));
  return true;
}

// The one check that a name (a pipeline's, an op's, a step's) gives a Kubernetes name, the
// name both targets print (rules::to_dns1123): they check nothing of it.
bool Checker::dns_name_ok(const std::string& name, SourceRange at, const char* what) {
  std::string dns = to_dns1123(name);
  if (dns.empty()) {
    diags_.error(at, fmt::format("{} name '{}' gives an empty Kubernetes name; use letters or digits", what, name));
    return false;
  }
  if (dns.size() > kMaxK8sNameLength) {
    diags_.error(at, fmt::format("{} name '{}' is too long: Kubernetes names have at most {} "
                                 "characters, '{}' has {}",
                                 what, name, kMaxK8sNameLength, dns, dns.size()));
    return false;
  }
  return true;
}

void Checker::check_dns_name(const ast::Identifier& id, const char* what, DnsNames& seen) {
  if (!dns_name_ok(id.name, id.range, what)) return;
  std::string dns = to_dns1123(id.name);
  auto [it, inserted] = seen.try_emplace(
      std::move(dns), std::pair<std::string_view, SourceRange>(id.name, id.range));
  if (!inserted) {
    diags_.error(id.range, fmt::format("{} names '{}' and '{}' both become '{}' in Kubernetes",
                                       what, it->second.first, id.name, it->first));
    diags_.note(it->second.second, fmt::format("'{}' declared here", it->second.first));
  }
}

std::string Checker::map_key(const ast::MapKey& key) {
  if (const auto* id = boost::get<ast::Identifier>(&key.get())) return id->name;
  return boost::get<ast::StringLit>(key.get()).text();
}

}  // namespace pipec::sema::detail

namespace pipec::sema::detail {

// `run.status` and `run.failures` in `finally` (when no parameter or step is named `run`):
// how the run went, as Argo's `{{workflow.status}}` and `{{workflow.failures}}` give it.
std::optional<ir::Ref> Checker::run_value(const ast::Identifier* field, SourceRange range) {
  bool in_finally = finally_scope_ >= 0 && !scope_path_.empty() && scope_path_[0] == finally_scope_;
  if (!in_finally) {
    diags_.error(range, "'run' (the run's status and failures) is known only in 'finally', when "
                        "the run has ended");
    return std::nullopt;
  }
  if (!field || (field->name != "status" && field->name != "failures")) {
    diags_.error(field ? field->range : range, "'run' has the fields 'status' (Succeeded, Failed or "
                                               "Error) and 'failures' (the failed steps, a JSON list)");
    if (field) suggest(field->range, field->name, {"status", "failures"});
    return std::nullopt;
  }
  ir::Ref ref;
  ref.kind = ir::Ref::Kind::Run;
  ref.name = "run";
  ref.field = field->name;
  ref.range = range;
  ref.type = Type::scalar(TypeKind::String);
  return ref;
}

}  // namespace pipec::sema::detail
