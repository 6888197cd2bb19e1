#pragma once
// The fields of a container op's body (`op NAME(...) { image ..., command ..., ... }`), one
// row each. Sema checks each field by the rule of its row (check_op_body.cpp, the same
// table); what the other passes must not forget is read from here: the fields a KFP v1
// component cannot hold (component export), the fields a local run does not apply.

#include <span>
#include <string_view>

#include "compiler/ir/ir.hpp"

namespace pipec::sema {

struct OpBodyField {
  std::string_view name;
  /// Whether an op sets the field (after checking).
  bool (*is_set)(const ir::ContainerOp& op);
  /// A KFP v1 component (`pipec component export`) can hold it.
  bool exported = true;
  /// "" when a local run applies the field, or refuses the op itself where it cannot;
  /// else why it does not apply it, said once a run at the first op that sets it.
  std::string_view not_applied_locally;
};

/// Every body field, in the order the language reference lists them.
[[nodiscard]] std::span<const OpBodyField> op_body_fields();

}  // namespace pipec::sema
