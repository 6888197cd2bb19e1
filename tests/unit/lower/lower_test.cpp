#include "compiler/lower/lower.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "tests/unit/syntax/test_support.hpp"

namespace pipec::ir {
namespace {

using testing::check_string;

const char* const kOps =
    "op echo(message: string, count: int = 1, tags: list<string> = []) -> (out: string) {\n"
    "  image \"busybox\"\n"
    "  command [\"echo\", \"${message}\"]\n"
    "  outputs {out: \"/tmp/out\"}\n"
    "}\n"
    "op unused() {\n"
    "  image \"busybox\"\n"
    "}\n"
    "op alpha(x: int) {\n"
    "  image \"busybox\"\n"
    "}\n";

Pipeline lower_ok(const std::string& text) {
  auto out = check_string(text);
  EXPECT_TRUE(out.pipeline) << out.diagnostics;
  return out.pipeline ? *out.pipeline : Pipeline{};
}

const Step& step_at(const std::vector<Node>& nodes, std::size_t i) {
  return std::get<Step>(nodes.at(i));
}
const Loop& loop_at(const std::vector<Node>& nodes, std::size_t i) {
  return std::get<Loop>(nodes.at(i));
}

TEST(Lower, FillsArgsInSignatureOrderWithDefaults) {
  auto p = lower_ok(std::string(kOps) +
                    "pipeline p {\n"
                    "  param who: string = \"w\"\n"
                    "  step a = echo(tags: [\"x\", \"y\"], message: \"hi ${who}\")\n"
                    "  step b = alpha(x: 2)\n"
                    "}\n");
  const Step& a = step_at(p.dag, 0);
  EXPECT_EQ(a.kind, OpKind::Container);
  ASSERT_EQ(a.args.size(), 3u);
  EXPECT_EQ(a.args[0].first, "message");
  EXPECT_EQ(a.args[0].second.kind, Value::Kind::Interpolation);
  EXPECT_EQ(a.args[0].second.parts.at(1).ref->kind, Ref::Kind::Param);
  EXPECT_EQ(a.args[1].first, "count");
  EXPECT_EQ(a.args[1].second.kind, Value::Kind::Literal);
  EXPECT_EQ(a.args[1].second.literal.dump(), "1");
  EXPECT_EQ(a.args[1].second.type.str(), "int");
  EXPECT_EQ(a.args[2].first, "tags");
  // A container op's list is one value (sema refuses one built from run-time values).
  EXPECT_EQ(a.args[2].second.kind, Value::Kind::Literal);
  EXPECT_EQ(a.args[2].second.literal.dump(), "[\"x\",\"y\"]");
  // Only used container ops, by name; a step's outputs are its op's.
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].name, "alpha");
  EXPECT_EQ(p.ops[1].name, "echo");
  EXPECT_EQ(p.ops[1].outputs.at(0).path, "/tmp/out");
}

TEST(Lower, FoldsLiteralListsAndMaps) {
  auto p = lower_ok(
      "use arena\npipeline p {\n  step t = tf_job(image: \"i\", command: \"c\", env: {A: \"1\", B: "
      "\"2\"}, data: [\"v:/d\"])\n}\n");
  const Step& t = step_at(p.dag, 0);
  EXPECT_EQ(t.kind, OpKind::TfJob);
  EXPECT_EQ(t.op, "tf_job");
  auto arg = [&](const std::string& name) -> const Value& {
    for (const auto& [n, v] : t.args)
      if (n == name) return v;
    throw std::runtime_error(name);
  };
  EXPECT_EQ(arg("env").kind, Value::Kind::Literal);
  EXPECT_EQ(arg("env").literal.dump(), "{\"A\":\"1\",\"B\":\"2\"}");
  EXPECT_EQ(arg("data").literal.dump(), "[\"v:/d\"]");
  EXPECT_EQ(arg("workers").literal.dump(), "1");
  EXPECT_TRUE(p.ops.empty());
}

TEST(Lower, SortsDependsAndAttachesConditions) {
  auto p = lower_ok(std::string(kOps) +
                    "pipeline p {\n"
                    "  param n: int = 1\n"
                    "  step z = echo(message: \"z\")\n"
                    "  step y = echo(message: \"y\")\n"
                    "  if n > 1 {\n"
                    "    step x = echo(message: \"${z.out}${y.out}\") after y, z\n"
                    "  } else {\n"
                    "    step w = echo(message: \"w\")\n"
                    "  }\n"
                    "}\n");
  ASSERT_EQ(p.dag.size(), 4u);
  const Step& x = step_at(p.dag, 2);
  EXPECT_EQ(x.depends, (std::vector<std::string>{"y", "z"}));
  ASSERT_TRUE(x.when);
  EXPECT_EQ(x.when->op, Condition::Op::Gt);
  EXPECT_EQ(x.when->operands.at(0).value->ref->name, "n");
  EXPECT_EQ(x.when->operands.at(1).value->literal.dump(), "1");
  const Step& w = step_at(p.dag, 3);
  ASSERT_TRUE(w.when);
  EXPECT_EQ(w.when->op, Condition::Op::Not);
  EXPECT_EQ(w.when->operands.at(0).op, Condition::Op::Gt);
  EXPECT_FALSE(step_at(p.dag, 0).when);
}

TEST(Lower, NestedIfsFormAConjunction) {
  auto p = lower_ok(std::string(kOps) +
                    "pipeline p {\n"
                    "  param a: bool = true\n"
                    "  param b: bool = false\n"
                    "  if a {\n"
                    "    if not b {\n"
                    "      step s = echo(message: \"s\")\n"
                    "    }\n"
                    "  }\n"
                    "}\n");
  const Step& s = step_at(p.dag, 0);
  ASSERT_TRUE(s.when);
  EXPECT_EQ(s.when->op, Condition::Op::And);
  EXPECT_EQ(s.when->operands.at(0).op, Condition::Op::Leaf);
  EXPECT_EQ(s.when->operands.at(1).op, Condition::Op::Not);
}

TEST(Lower, LoopsGetUniqueNamesAndLiftedDepends) {
  auto p = lower_ok(std::string(kOps) +
                    "pipeline p {\n"
                    "  param xs: list<string> = [\"a\"]\n"
                    "  step for_x = echo(message: \"taken\")\n"
                    "  step first = echo(message: \"1\")\n"
                    "  for x in xs {\n"
                    "    step inner = echo(message: \"${x} ${first.out}\")\n"
                    "    step inner2 = echo(message: inner.out)\n"
                    "  }\n"
                    "  for x in [{k: \"1\"}, {k: \"2\"}] {\n"
                    "    step m = echo(message: x.k)\n"
                    "  }\n"
                    "}\n");
  ASSERT_EQ(p.dag.size(), 4u);
  const Loop& l1 = loop_at(p.dag, 2);
  EXPECT_EQ(l1.name, "for-x-2");  // "for-x" is the step for_x
  EXPECT_EQ(l1.var, "x");
  EXPECT_EQ(l1.items->kind, Value::Kind::Ref);
  EXPECT_EQ(l1.depends, (std::vector<std::string>{"first"}));
  EXPECT_TRUE(step_at(l1.body, 0).depends.empty());
  EXPECT_EQ(step_at(l1.body, 1).depends, (std::vector<std::string>{"inner"}));
  EXPECT_EQ(step_at(l1.body, 0).args.at(0).second.parts.at(0).ref->kind, Ref::Kind::LoopItem);
  const Loop& l2 = loop_at(p.dag, 3);
  EXPECT_EQ(l2.name, "for-x-3");
  EXPECT_EQ(l2.items->kind, Value::Kind::Literal);
  EXPECT_EQ(l2.item_type.str(), "map<string>");
  const Ref& item = *step_at(l2.body, 0).args.at(0).second.ref;
  EXPECT_EQ(item.kind, Ref::Kind::LoopItem);
  EXPECT_EQ(item.field, "k");
}

TEST(Lower, FinallyBecomesTheExitHandler) {
  auto p = lower_ok(std::string(kOps) +
                    "pipeline p {\n"
                    "  step main = echo(message: \"m\")\n"
                    "  finally {\n"
                    "    step a = echo(message: \"a\")\n"
                    "    step b = echo(message: a.out)\n"
                    "  }\n"
                    "}\n");
  ASSERT_EQ(p.dag.size(), 1u);
  ASSERT_EQ(p.exit_handler.size(), 2u);
  EXPECT_EQ(step_at(p.exit_handler, 1).depends, (std::vector<std::string>{"a"}));
}

TEST(Lower, StepOutputRefsCarryTheirType) {
  auto p = lower_ok(
      "op produce() -> (n: int) {\n  image \"x\"\n  outputs {n: \"/tmp/n\"}\n}\n"
      "op consume(f: float) {\n  image \"x\"\n}\n"
      "pipeline p {\n  step a = produce()\n  step b = consume(f: a.n)\n}\n");
  const Value& v = step_at(p.dag, 1).args.at(0).second;
  EXPECT_EQ(v.kind, Value::Kind::Ref);
  EXPECT_EQ(v.ref->kind, Ref::Kind::StepOutput);
  EXPECT_EQ(v.ref->name, "a");
  EXPECT_EQ(v.ref->field, "n");
  EXPECT_EQ(v.ref->type.str(), "int");
  EXPECT_EQ(step_at(p.dag, 1).depends, (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace pipec::ir
