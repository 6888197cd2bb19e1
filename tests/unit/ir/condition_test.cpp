// ir::comparison_of and ir::op_symbol: the one decision of how a condition compares, which
// the Argo writer, the KFP v2 writer and the local run all take.
#include <gtest/gtest.h>

#include "compiler/ir/ir.hpp"

namespace pipec::ir {
namespace {

Condition compare(Condition::Op op, TypeKind a, TypeKind b) {
  Condition c;
  c.op = op;
  for (TypeKind k : {a, b}) {
    Condition leaf;
    Value v;
    v.type = Type::scalar(k);
    leaf.value = v;
    c.operands.push_back(std::move(leaf));
  }
  return c;
}

TEST(Condition, TwoIntsCompareAsIntegersAnIntAndAFloatAsDoubles) {
  EXPECT_EQ(comparison_of(compare(Condition::Op::Lt, TypeKind::Int, TypeKind::Int)), Comparison::Int);
  EXPECT_EQ(comparison_of(compare(Condition::Op::Lt, TypeKind::Int, TypeKind::Float)), Comparison::Float);
  EXPECT_EQ(comparison_of(compare(Condition::Op::Lt, TypeKind::Float, TypeKind::Int)), Comparison::Float);
  EXPECT_EQ(comparison_of(compare(Condition::Op::Eq, TypeKind::Float, TypeKind::Float)), Comparison::Float);
}

TEST(Condition, BoolsCompareAsTruthValuesEverythingElseAsText) {
  EXPECT_EQ(comparison_of(compare(Condition::Op::Eq, TypeKind::Bool, TypeKind::Bool)), Comparison::Bool);
  EXPECT_EQ(comparison_of(compare(Condition::Op::Lt, TypeKind::String, TypeKind::String)), Comparison::Text);
  EXPECT_EQ(comparison_of(compare(Condition::Op::Eq, TypeKind::String, TypeKind::Int)), Comparison::Text);
}

TEST(Condition, OperatorsAreSpelledAsBothTargetsSpellThem) {
  EXPECT_STREQ(op_symbol(Condition::Op::Eq), "==");
  EXPECT_STREQ(op_symbol(Condition::Op::Ne), "!=");
  EXPECT_STREQ(op_symbol(Condition::Op::Lt), "<");
  EXPECT_STREQ(op_symbol(Condition::Op::Le), "<=");
  EXPECT_STREQ(op_symbol(Condition::Op::Gt), ">");
  EXPECT_STREQ(op_symbol(Condition::Op::Ge), ">=");
  EXPECT_STREQ(op_symbol(Condition::Op::And), "&&");
  EXPECT_STREQ(op_symbol(Condition::Op::Or), "||");
}

TEST(Condition, StringLiteralsHoldTheTextExactlyInBothLanguages) {
  EXPECT_EQ(quoted_string("it's a\\b", false), R"('it\'s a\\b')");
  EXPECT_EQ(quoted_string("a\nb\tc\rd", false), R"('a\nb\tc\rd')");
  // Other control characters as \u00XX, which expr-lang and CEL both read.
  EXPECT_EQ(quoted_string(std::string("\x01\x1f", 2), false), R"('\u0001\u001f')");
  EXPECT_EQ(quoted_string("{{x}}", false), "'{{x}}'");
  // Argo's literal can never close its `{{=...}}` tag.
  EXPECT_EQ(quoted_string("{{x}}", true), R"('\u007b\u007bx\u007d\u007d')");
  EXPECT_EQ(quoted_string("", true), "''");
}

}  // namespace
}  // namespace pipec::ir
