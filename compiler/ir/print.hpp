#pragma once

// Small helpers the back ends print the IR with.

#include <string>

#include "compiler/ir/ir.hpp"

namespace pipec::ir {

/// print_condition() with the syntax as two functions: truth(value), operand(value, how).
template <typename Truth, typename Operand>
std::string print_condition(const Condition& c, Truth&& truth, Operand&& operand) {
  struct Syntax : ConditionSyntax {
    Truth& t;
    Operand& o;
    Syntax(Truth& a, Operand& b) : t(a), o(b) {}
    std::string truth(const Value& v) override { return t(v); }
    std::string operand(const Value& v, Comparison how) override { return o(v, how); }
  } syntax(truth, operand);
  return print_condition(c, syntax);
}

/// A reference to output `field` of step `step` (a loop's fan-in list, Plan::Export).
inline Ref step_output(const std::string& step, const std::string& field) {
  Ref r;
  r.kind = Ref::Kind::StepOutput;
  r.name = step;
  r.field = field;
  return r;
}

}  // namespace pipec::ir
