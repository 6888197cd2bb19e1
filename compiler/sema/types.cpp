// Type rules of the language (docs/language.md, "Types").
#include "compiler/sema/types.hpp"

#include <cstdint>

namespace pipec::sema {

using ir::Type;
using ir::TypeKind;

bool is_open(const Type& t) {
  return (t.kind == TypeKind::List || t.kind == TypeKind::Map) && t.element.empty();
}

std::string type_str(const Type& t) {
  return is_open(t) ? (t.kind == TypeKind::List ? "empty list" : "empty map") : t.str();
}

bool is_numeric(const Type& t) { return t.kind == TypeKind::Int || t.kind == TypeKind::Float; }

bool assignable(const Type& to, const Type& from) {
  if (to.kind == TypeKind::Float && from.kind == TypeKind::Int) return true;
  if (to.kind != from.kind) return false;
  if (to.is_scalar() || is_open(from)) return true;
  if (is_open(to)) return false;
  return assignable(to.element[0], from.element[0]);
}

std::optional<Type> unify(const Type& a, const Type& b) {
  if (assignable(a, b) && !is_open(a)) return a;
  if (assignable(b, a)) return b;
  return std::nullopt;
}

namespace {

void coerce_literal(ir::Literal& literal, const Type& to) {
  if (to.kind == TypeKind::Float && literal.is_number_integer()) {
    literal = static_cast<double>(literal.get<std::int64_t>());
  } else if (!to.is_scalar() && !to.element.empty() &&
             (literal.is_array() || literal.is_object())) {
    for (auto& item : literal) coerce_literal(item, to.element[0]);
  }
}

}  // namespace

void coerce(ir::Value& v, const Type& to) {
  if (v.kind == ir::Value::Kind::Literal) coerce_literal(v.literal, to);
  if (!to.is_scalar() && !to.element.empty()) {
    for (auto& item : v.items) coerce(item, to.element[0]);
    for (auto& entry : v.entries) coerce(entry.second, to.element[0]);
  }
  v.type = to;
}

}  // namespace pipec::sema
