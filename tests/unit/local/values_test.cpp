#include "compiler/local/values.hpp"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace pipec::local {
namespace {

ir::Value ref(const std::string& name, ir::TypeKind kind) {
  ir::Value v;
  v.kind = ir::Value::Kind::Ref;
  v.type = ir::Type::scalar(kind);
  v.ref = ir::Ref{.kind = ir::Ref::Kind::Param, .name = name, .type = v.type};
  return v;
}

ir::Value literal(ir::Literal l, ir::TypeKind kind) {
  ir::Value v;
  v.type = ir::Type::scalar(kind);
  v.literal = std::move(l);
  return v;
}

ir::Condition leaf(ir::Value v) {
  ir::Condition c;
  c.value = Box<ir::Value>(std::move(v));
  return c;
}

ir::Condition compare(ir::Condition::Op op, ir::Value a, ir::Value b) {
  ir::Condition c;
  c.op = op;
  c.operands.push_back(leaf(std::move(a)));
  c.operands.push_back(leaf(std::move(b)));
  return c;
}

struct Values {
  std::map<std::string, std::string> texts;
  RefText ref() const {
    return [this](const ir::Ref& r) { return texts.at(r.name); };
  }
};

TEST(LocalValues, IntsCompareAsIntegersTextAsText) {
  Values v{{{"a", "10"}, {"b", "9"}}};
  using Op = ir::Condition::Op;
  EXPECT_TRUE(condition_holds(compare(Op::Gt, ref("a", ir::TypeKind::Int), ref("b", ir::TypeKind::Int)), v.ref()));
  EXPECT_FALSE(condition_holds(compare(Op::Gt, ref("a", ir::TypeKind::String), ref("b", ir::TypeKind::String)), v.ref()));
  // Beyond 2^53: exact as 64-bit integers, as Argo's asInt.
  Values big{{{"a", "9007199254740993"}, {"b", "9007199254740992"}}};
  EXPECT_TRUE(condition_holds(compare(Op::Gt, ref("a", ir::TypeKind::Int), ref("b", ir::TypeKind::Int)), big.ref()));
  // An int and a float compare as floats.
  Values mixed{{{"a", "2"}, {"b", "1.5"}}};
  EXPECT_TRUE(condition_holds(compare(Op::Ge, ref("a", ir::TypeKind::Int), ref("b", ir::TypeKind::Float)), mixed.ref()));
  EXPECT_TRUE(condition_holds(compare(Op::Lt, literal(1, ir::TypeKind::Int), ref("a", ir::TypeKind::Int)), mixed.ref()));
}

TEST(LocalValues, ANumberThatIsNotOneIsAnError) {
  using Op = ir::Condition::Op;
  for (const char* bad : {"3 ", " 3", "three", "", "3\n"}) {
    Values v{{{"a", bad}, {"b", "1"}}};
    EXPECT_THROW((void)condition_holds(compare(Op::Eq, ref("a", ir::TypeKind::Int), ref("b", ir::TypeKind::Int)), v.ref()),
                 EvalError)
        << bad;
  }
}

TEST(LocalValues, BoolsByTheirText) {
  // `True` is how kfp 1.8 writes a bool output (str(True)); the KFP v2 backend reads it,
  // and `1`, `t`, `TRUE`, as true (strconv.ParseBool): so does every target.
  Values v{{{"f", "true"}, {"g", "false"}, {"h", "True"}, {"i", "False"}, {"j", "yes"}, {"k", "1"}}};
  EXPECT_TRUE(condition_holds(leaf(ref("f", ir::TypeKind::Bool)), v.ref()));
  EXPECT_FALSE(condition_holds(leaf(ref("g", ir::TypeKind::Bool)), v.ref()));
  EXPECT_TRUE(condition_holds(leaf(ref("h", ir::TypeKind::Bool)), v.ref()));
  EXPECT_FALSE(condition_holds(leaf(ref("i", ir::TypeKind::Bool)), v.ref()));
  EXPECT_FALSE(condition_holds(leaf(ref("j", ir::TypeKind::Bool)), v.ref()));
  EXPECT_TRUE(condition_holds(leaf(ref("k", ir::TypeKind::Bool)), v.ref()));
  using Op = ir::Condition::Op;
  EXPECT_TRUE(condition_holds(compare(Op::Eq, ref("h", ir::TypeKind::Bool), literal(true, ir::TypeKind::Bool)), v.ref()));
  EXPECT_TRUE(condition_holds(compare(Op::Eq, ref("h", ir::TypeKind::Bool), ref("f", ir::TypeKind::Bool)), v.ref()));
  EXPECT_TRUE(condition_holds(compare(Op::Ne, ref("i", ir::TypeKind::Bool), ref("h", ir::TypeKind::Bool)), v.ref()));
  ir::Condition no;
  no.op = ir::Condition::Op::Not;
  no.operands.push_back(leaf(ref("g", ir::TypeKind::Bool)));
  EXPECT_TRUE(condition_holds(no, v.ref()));
}

TEST(LocalValues, InterpolationPutsTextsTogetherUnread) {
  std::string hostile = "a \"q\" $(id) ${HOME} {{workflow.name}}\nx";
  Values v{{{"m", hostile}}};
  ir::Value s;
  s.kind = ir::Value::Kind::Interpolation;
  s.parts.push_back(ir::Part{"<", {}});
  s.parts.push_back(ir::Part{{}, ref("m", ir::TypeKind::String).ref});
  s.parts.push_back(ir::Part{">", {}});
  EXPECT_EQ(value_text(s, v.ref()), "<" + hostile + ">");
  ir::Value list;
  list.kind = ir::Value::Kind::List;
  list.items.push_back(literal("lit", ir::TypeKind::String));
  list.items.push_back(ref("m", ir::TypeKind::String));
  EXPECT_EQ(value_text(list, v.ref()), ir::Literal::array({"lit", hostile}).dump());
  EXPECT_EQ(value_text(literal(ir::Literal::array({1, "b"}), ir::TypeKind::List), v.ref()), R"([1,"b"])");
}

}  // namespace
}  // namespace pipec::local
