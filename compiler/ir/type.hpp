#pragma once

#include <string>
#include <utility>
#include <vector>

namespace pipec::ir {

/// `File`: a file passed between container steps (Argo artifacts), only as an op's
/// parameter or output.
enum class TypeKind { String, Int, Float, Bool, List, Map, File };

/// A value type: a scalar, `list<T>` or `map<T>` (keys are strings).
struct Type {
  TypeKind kind = TypeKind::String;
  std::vector<Type> element;  // one entry for List and Map, empty otherwise

  static Type scalar(TypeKind k) { return Type{k, {}}; }
  static Type list_of(Type t) { return Type{TypeKind::List, {std::move(t)}}; }
  static Type map_of(Type t) { return Type{TypeKind::Map, {std::move(t)}}; }
  bool is_scalar() const { return kind != TypeKind::List && kind != TypeKind::Map; }
  /// The spelling in the language: "int", "list<string>", "map<string>".
  std::string str() const;
  friend bool operator==(const Type&, const Type&) = default;
};

}  // namespace pipec::ir
