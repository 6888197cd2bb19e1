#pragma once

// The checked program that check_program() returns and lower::lower() reads: every
// name resolved, every value typed (as ir::Value), every step's dependencies known.
// It holds no AST, so lowering never sees parser types.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/base/source_manager.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/sema/component.hpp"

namespace pipec::sema {

/// An op any step may call: a container op, or a built-in training op from stdlib.
struct OpInfo {
  std::string name;
  ir::OpKind kind = ir::OpKind::Container;
  std::vector<ir::OpParam> params;
  std::vector<SourceRange> param_ranges;  // parallel to params
  std::vector<ir::OpOutput> outputs;
  std::optional<ir::ContainerOp> container;  // set for OpKind::Container
  SourceRange range;                         // of the op's name
  /// A `use`d KFP component: each step gets the container its arguments resolve to
  /// (check_step registers it under this name, or NAME_2, ... for other resolutions).
  std::shared_ptr<const component::Component> component;
};

/// A checked statement of a pipeline body.
struct Stmt {
  enum class Kind { Step, If, For };
  Kind kind = Kind::Step;
  SourceRange range;

  // Step: the op, the given arguments (checked, not yet in signature order), and
  // every step it depends on (after, output uses, uses in enclosing conditions and
  // loop items), sorted, without duplicates.
  std::string name;
  std::string op;
  std::vector<std::pair<std::string, ir::Value>> args;
  std::vector<std::string> deps;
  // Failure policy: `after a.failed` / `after a.done` (by step name; the rest of deps run
  // after a success), `allow_failure`, and where the first of them is written.
  std::map<std::string, ir::Upon> upon;
  bool allow_failure = false;
  SourceRange policy_range;

  // If: the condition; then_body/else_body.
  Box<ir::Condition> condition;
  std::vector<Stmt> then_body;
  std::vector<Stmt> else_body;

  // For: `for var in items [limit N] { body }`; deps are the steps the items use.
  std::string var;
  int limit = 0;  // 0: no limit
  // `max_failures N` (-1: none) and `min_success R` (0: none): the loop's failure tolerance.
  int max_failures = -1;
  double min_success = 0;
  SourceRange tolerance_range;  // where the first of them is written
  ir::Type item_type;
  Box<ir::Value> items;
  std::vector<Stmt> body;
};

/// One checked pipeline: the one built, or one that steps call (OpKind::Pipeline).
struct PipelineDef {
  std::string name;
  std::string description;
  SourceRange range;                  // of the pipeline's name
  std::vector<ir::Param> params;      // in source order
  std::vector<Stmt> body;
  std::vector<Stmt> finally_body;
  ir::Settings settings;
  std::vector<ir::PipelineOutput> outputs;  // `output` statements, in signature order
};

/// The pipeline built, every op its steps can call, and the pipelines they call.
struct Program : PipelineDef {
  std::map<std::string, OpInfo, std::less<>> ops;  // every op and called pipeline, by name
  std::vector<PipelineDef> callees;  // every pipeline called, callees before their callers
};

}  // namespace pipec::sema
