#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rules/visuals.hpp"

namespace pipec::ir {

/// `File`: a file passed between container steps (Argo artifacts), only as an op's
/// parameter or output.
enum class TypeKind { String, Int, Float, Bool, List, Map, File };

/// A value type: a scalar, `list<T>` or `map<T>` (keys are strings).
struct Type {
  TypeKind kind = TypeKind::String;
  std::vector<Type> element;  // one entry for List and Map, empty otherwise
  /// A File the UIs render (`html`, `markdown`, `table`, `confusion_matrix`, `roc`: an op's
  /// output only); it passes on as any file does.
  rules::visuals::Kind visual = rules::visuals::Kind::None;

  static Type scalar(TypeKind k) { return Type{k, {}}; }
  static Type visual_file(rules::visuals::Kind v) { return Type{TypeKind::File, {}, v}; }
  static Type list_of(Type t) { return Type{TypeKind::List, {std::move(t)}}; }
  static Type map_of(Type t) { return Type{TypeKind::Map, {std::move(t)}}; }
  bool is_scalar() const { return kind != TypeKind::List && kind != TypeKind::Map; }
  /// The spelling in the language: "int", "list<string>", "map<string>", "html".
  std::string str() const;
  friend bool operator==(const Type&, const Type&) = default;
};

}  // namespace pipec::ir
