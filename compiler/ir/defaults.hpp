#pragma once
// A value read at a pipeline parameter's default: what the training lowering and sema's
// checks of training arguments assume for a value that a parameter gives (one rule, so the
// literal the lowering writes is the one sema checked).

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/ir.hpp"

namespace pipec::ir {

/// The default of the pipeline parameter `ref` names among `params`; none for another kind
/// of reference, a field of one, or a parameter without a default.
inline std::optional<Literal> param_default(const Ref& ref, const std::vector<Param>& params) {
  if (ref.kind != Ref::Kind::Param || !ref.field.empty()) return std::nullopt;
  for (const auto& p : params)
    if (p.name == ref.name) return p.default_value;
  return std::nullopt;
}

/// The text of interpolation `v` with each reference at its parameter's default, if every
/// reference has one.
inline std::optional<std::string> interpolated_default(const Value& v, const std::vector<Param>& params) {
  std::string text;
  for (const auto& part : v.parts) {
    if (!part.ref) {
      text += part.text;
      continue;
    }
    auto def = param_default(*part.ref, params);
    if (!def) return std::nullopt;
    text += literal_text(*def);
  }
  return text;
}

}  // namespace pipec::ir
