#pragma once

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/lower/lower.hpp"

namespace pipec::lower {

/// The plan of a lowered pipeline (ir/plan.hpp): its DAGs, where each step and loop
/// stands, what each reads and through which loops, what each loop passes out, what each
/// container receives and what its pod is given, each training step's launcher call (built
/// with `options`).
/// lower::lower sets Pipeline::plan with it; a pipeline built by hand (a test) may call it
/// too. `diags` gets the warnings of a shell-form script and the errors of a value placed
/// in one (compiler/shell).
[[nodiscard]] ir::Plan plan_of(const ir::Pipeline& pipeline, Diagnostics& diags, const Options& options = {});
/// The same for a pipeline whose steps call `callees` (the built pipeline's, which a
/// called pipeline does not hold itself).
[[nodiscard]] ir::Plan plan_of(const ir::Pipeline& pipeline, const std::vector<ir::Pipeline>& callees,
                               Diagnostics& diags, const Options& options = {});

/// What the container of `op` receives (ir/invocation.hpp): part of plan_of().
[[nodiscard]] ir::Invocation invocation_of(const ir::ContainerOp& op, Diagnostics& diags);

/// What the pod of `op` is given beside its container's words (ir/pod.hpp): part of plan_of().
[[nodiscard]] ir::Pod pod_of(const ir::ContainerOp& op);

}  // namespace pipec::lower
