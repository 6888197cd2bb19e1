// The lowering's graph decisions (ir::Plan), tested once on the IR: every back end reads
// them instead of deriving them again.
#include "compiler/ir/plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/lower/lower.hpp"
#include "tests/unit/syntax/test_support.hpp"

namespace pipec::ir {
namespace {

using testing::check_string;
using RouteKind = Plan::Route::Kind;
using Strings = std::vector<std::string>;

const char* const kPlanOps =
    "op make(n: int = 1) -> (out: string, count: int) {\n"
    "  image \"busybox\"\n"
    "  command [\"make\", \"${n}\"]\n"
    "  outputs {out: \"/tmp/out\", count: \"/tmp/count\"}\n"
    "}\n"
    "op take(x: string = \"\", y: int = 0) {\n"
    "  image \"busybox\"\n"
    "  command [\"use\", \"${x}\"]\n"
    "}\n";

Pipeline lower_plan_ok(const std::string& text) {
  auto out = check_string(text);
  EXPECT_TRUE(out.pipeline) << out.diagnostics;
  return out.pipeline ? *out.pipeline : Pipeline{};
}

// A step inside two loops, the outer one under `if`, read after them under the same `if`
// (in the same DAG: the `if` is a condition on each node, not a DAG): the value crosses
// both loops (a list of lists), each loop exports it, the reader depends on the outer loop.
TEST(Plan, FanInOutOfNestedLoopsInsideACondition) {
  auto p = lower_plan_ok(std::string(kPlanOps) +
                    "pipeline p {\n"
                    "  param go: bool = true\n"
                    "  step first = make()\n"
                    "  if go {\n"
                    "    for a in [1, 2] {\n"
                    "      for b in [3, 4] {\n"
                    "        step inner = make(n: b)\n"
                    "        step sibling = take(x: inner.out)\n"
                    "      }\n"
                    "      step mid = take(x: first.out)\n"
                    "    }\n"
                    "    step last = take(x: \"${inner.out}\", y: first.count)\n"
                    "  }\n"
                    "}\n");
  const Plan& plan = p.plan;
  ASSERT_EQ(plan.dags.size(), 4u);  // main, finally, the two loop bodies
  EXPECT_EQ(plan.dags[Plan::kMain].nodes, (Strings{"first", "for-a", "last"}));
  EXPECT_TRUE(plan.dags[Plan::kFinally].nodes.empty());

  // Scopes: where each node stands, and each loop's body.
  const Plan::Place* outer = plan.place("for-a");
  ASSERT_NE(outer, nullptr);
  EXPECT_TRUE(outer->loop);
  EXPECT_TRUE(outer->conditional);
  EXPECT_EQ(outer->dag, Plan::kMain);
  const Plan::Dag& outer_body = plan.dags.at(outer->body);
  EXPECT_EQ(outer_body.owner, "for-a");
  EXPECT_EQ(outer_body.var, "a");
  EXPECT_EQ(outer_body.parent, Plan::kMain);
  EXPECT_EQ(outer_body.nodes, (Strings{"for-b", "mid"}));
  const Plan::Place* inner_loop = plan.place("for-b");
  ASSERT_NE(inner_loop, nullptr);
  EXPECT_FALSE(inner_loop->conditional);  // the condition is the outer loop's
  EXPECT_EQ(plan.dags.at(inner_loop->body).nodes, (Strings{"inner", "sibling"}));
  EXPECT_EQ(plan.place("inner")->dag, inner_loop->body);
  EXPECT_EQ(plan.place("last")->dag, Plan::kMain);
  EXPECT_TRUE(plan.place("last")->conditional);

  // Routes: a sibling, fan-in through both loops, from outside.
  EXPECT_EQ(plan.route(Plan::kMain, "first").kind, RouteKind::Sibling);
  Plan::Route fan_in = plan.route(Plan::kMain, "inner");
  EXPECT_EQ(fan_in.kind, RouteKind::FanIn);
  EXPECT_EQ(fan_in.through, (Strings{"for-a", "for-b"}));
  EXPECT_EQ(plan.route(outer->body, "inner").through, (Strings{"for-b"}));
  EXPECT_EQ(plan.route(inner_loop->body, "inner").kind, RouteKind::Sibling);
  EXPECT_EQ(plan.route(outer->body, "first").kind, RouteKind::Outside);
  EXPECT_EQ(plan.route(inner_loop->body, "mid").kind, RouteKind::Outside);

  // Reads: the producers each node reads, and how.
  const auto& last = plan.reads.at("last");
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0].step, "inner");
  EXPECT_EQ(last[0].field, "out");
  EXPECT_EQ(last[0].route.through, (Strings{"for-a", "for-b"}));
  EXPECT_EQ(last[1].step, "first");
  EXPECT_EQ(last[1].field, "count");
  EXPECT_EQ(last[1].route.kind, RouteKind::Sibling);
  // The outer loop reads what its body reads from outside it, not its own steps.
  const auto& loop_reads = plan.reads.at("for-a");
  ASSERT_EQ(loop_reads.size(), 1u);
  EXPECT_EQ(loop_reads[0].step, "first");
  EXPECT_EQ(plan.reads.at("sibling").at(0).route.kind, RouteKind::Sibling);
  EXPECT_EQ(plan.reads.count("first"), 0u);

  // Fan-in lists: each loop gives `inner.out` out of its body, a list per loop crossed.
  ASSERT_EQ(plan.exports.at("for-a").size(), 1u);
  EXPECT_EQ(plan.exports.at("for-a")[0].step, "inner");
  EXPECT_EQ(plan.exports.at("for-a")[0].type.str(), "list<list<string>>");
  ASSERT_EQ(plan.exports.at("for-b").size(), 1u);
  EXPECT_EQ(plan.exports.at("for-b")[0].type.str(), "list<string>");

  // The condition is a tree on the node that carries it.
  const Loop& loop = std::get<Loop>(p.dag.at(1));
  ASSERT_TRUE(loop.when);
  EXPECT_EQ(loop.when->op, Condition::Op::Leaf);
}

TEST(Plan, LoopVariablesBindToTheInnermostLoop) {
  auto p = lower_plan_ok(std::string(kPlanOps) +
                    "pipeline p {\n"
                    "  for x in [1] {\n"
                    "    step a = make(n: x)\n"
                    "  }\n"
                    "  for x in [2] {\n"
                    "    for y in [3] {\n"
                    "      step b = make(n: x)\n"
                    "    }\n"
                    "  }\n"
                    "}\n");
  const Plan& plan = p.plan;
  EXPECT_EQ(plan.loop_of_var(plan.place("a")->dag, "x"), "for-x");
  EXPECT_EQ(plan.loop_of_var(plan.place("b")->dag, "x"), "for-x-2");
  EXPECT_EQ(plan.loop_of_var(plan.place("b")->dag, "y"), "for-y");
  EXPECT_EQ(plan.loop_of_var(Plan::kMain, "x"), "");
  EXPECT_TRUE(plan.exports.empty());
}

// What a container receives: argv words as text, parameter and file pieces; the shell
// form's script with its values as environment variables; files in and out.
TEST(Plan, ContainersReceiveWordsOfPieces) {
  auto p = lower_plan_ok(
      "op run(name: string, data: file, n: int = 2) -> (model: file, score: float) {\n"
      "  image \"img:${name}\"\n"
      "  command [\"train\", \"--data=${data}\", \"${n}\"]\n"
      "  env {MODE: \"fast\", WHO: \"${name}\"}\n"
      "  inputs {data: \"/in/data\"}\n"
      "  outputs {model: \"/out/model\", score: \"/out/score\"}\n"
      "}\n"
      "op sh(msg: string) {\n"
      "  image \"busybox\"\n"
      "  command \"echo ${msg}; echo ${msg} again\"\n"
      "}\n"
      "op src() -> (f: file) {\n  image \"x\"\n  outputs {f: \"/f\"}\n}\n"
      "pipeline p {\n"
      "  step s = src()\n"
      "  step r = run(name: \"x\", data: s.f)\n"
      "  step t = sh(msg: \"hi\")\n"
      "}\n");
  const Invocation& run = p.plan.container("run");
  ASSERT_EQ(run.image.pieces.size(), 2u);
  EXPECT_EQ(run.image.pieces[1].kind, Piece::Kind::Param);
  EXPECT_EQ(run.image.pieces[1].name, "name");
  EXPECT_FALSE(run.shell);
  ASSERT_EQ(run.command.size(), 3u);
  EXPECT_TRUE(run.command[0].literal());
  ASSERT_EQ(run.command[1].pieces.size(), 2u);
  EXPECT_EQ(run.command[1].pieces[0].text, "--data=");
  EXPECT_EQ(run.command[1].pieces[1].kind, Piece::Kind::File);
  EXPECT_EQ(run.command[1].pieces[1].name, "data");
  EXPECT_EQ(run.command[1].pieces[1].text, "/in/data");
  EXPECT_EQ(run.command[2].pieces.at(0).kind, Piece::Kind::Param);
  ASSERT_EQ(run.env.size(), 2u);
  EXPECT_TRUE(run.env[0].second.literal());
  EXPECT_FALSE(run.env[1].second.literal());
  ASSERT_EQ(run.inputs.size(), 1u);
  EXPECT_EQ(run.inputs[0].path, "/in/data");
  ASSERT_EQ(run.outputs.size(), 2u);
  EXPECT_TRUE(run.outputs[0].file);
  EXPECT_EQ(run.outputs[1].path, "/out/score");
  EXPECT_FALSE(run.outputs[1].file);

  const Invocation& sh = p.plan.container("sh");
  EXPECT_TRUE(sh.shell);
  EXPECT_TRUE(sh.command.empty());
  EXPECT_EQ(sh.name, "sh");
  ASSERT_EQ(sh.script_values.size(), 1u);  // one variable, however often it is used
  EXPECT_EQ(sh.script_values[0].name, "msg");
  EXPECT_NE(sh.script.find("\"${PIPEC_msg}\""), std::string::npos) << sh.script;
  EXPECT_EQ(sh.script.find("hi"), std::string::npos) << "a value is never script text";
}

}  // namespace
}  // namespace pipec::ir
