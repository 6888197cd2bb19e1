#pragma once

#include <optional>
#include <string>

#include "compiler/ir/ir.hpp"

namespace pipec::sema {

/// A list or map type without an element type: the type of `[]` or `{}`, which fits
/// any list or map.
bool is_open(const ir::Type& t);
/// How messages name a type: "int", "list<string>", "empty list".
std::string type_str(const ir::Type& t);
bool is_numeric(const ir::Type& t);
/// Whether a value of type `from` may be used where `to` is declared (int -> float,
/// `[]` -> any list, element-wise for lists and maps).
bool assignable(const ir::Type& to, const ir::Type& from);
/// The common type of two list items (or map values), or nullopt.
std::optional<ir::Type> unify(const ir::Type& a, const ir::Type& b);
/// Gives `v` the type `to` (assignable() must hold): int literals, also inside lists
/// and maps, become floats where `to` wants floats.
void coerce(ir::Value& v, const ir::Type& to);

}  // namespace pipec::sema
