#include "compiler/local/values.hpp"

#include <cctype>

#include <nlohmann/json.hpp>
#include <string>

#include "input/json.hpp"

namespace pipec::local {

namespace {

// As the Argo expressions (workflow_writer.cpp, expr_condition): two ints compare as
// 64-bit integers, other numbers as floats, bools by ir::is_true_text, the rest as text.
long long as_int(const std::string& t) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (...) {
    used = 0;
  }
  // Go's strconv (Argo's asInt) takes no surrounding space; std::stoll would skip it.
  if (used == 0 || used != t.size() || std::isspace(static_cast<unsigned char>(t[0])))
    throw EvalError{"'" + t + "' is not an integer"};
  return v;
}

double as_float(const std::string& t) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != t.size() || std::isspace(static_cast<unsigned char>(t[0])))
    throw EvalError{"'" + t + "' is not a number"};
  return v;
}


}  // namespace

std::string value_text(const ir::Value& v, const RefText& ref) {
  switch (v.kind) {
    case ir::Value::Kind::Literal: return ir::literal_text(v.literal);
    case ir::Value::Kind::Ref: return ref(*v.ref);
    case ir::Value::Kind::Interpolation: {
      std::string t;
      for (const auto& part : v.parts) t += part.ref ? ref(*part.ref) : part.text;
      return t;
    }
    case ir::Value::Kind::List: {
      ir::Literal a = ir::Literal::array();
      for (const auto& item : v.items) {
        if (item.is_literal()) a.push_back(item.literal);
        else a.push_back(value_text(item, ref));
      }
      return a.dump();
    }
    case ir::Value::Kind::Map: {
      ir::Literal m = ir::Literal::object();
      for (const auto& [k, item] : v.entries) {
        if (item.is_literal()) m[k] = item.literal;
        else m[k] = value_text(item, ref);
      }
      return m.dump();
    }
  }
  return "";
}

std::string word_text(const ir::Word& word, const std::map<std::string, std::string>& args) {
  std::string t;
  for (const auto& piece : word.pieces) {
    if (piece.kind != ir::Piece::Kind::Param) {
      t += piece.text;
      continue;
    }
    auto it = args.find(piece.name);
    if (it == args.end()) throw EvalError{"op parameter '" + piece.name + "' has no value"};
    t += it->second;
  }
  return t;
}

bool condition_holds(const ir::Condition& c, const RefText& ref) {
  using Op = ir::Condition::Op;
  switch (c.op) {
    case Op::Leaf: return ir::is_true_text(value_text(*c.value, ref));
    case Op::And: return condition_holds(c.operands[0], ref) && condition_holds(c.operands[1], ref);
    case Op::Or: return condition_holds(c.operands[0], ref) || condition_holds(c.operands[1], ref);
    case Op::Not: return !condition_holds(c.operands[0], ref);
    default: break;
  }
  const ir::Value& a = *c.operands[0].value;
  const ir::Value& b = *c.operands[1].value;
  std::string ta = value_text(a, ref), tb = value_text(b, ref);
  int cmp = 0;
  switch (ir::comparison_of(c)) {
    case ir::Comparison::Int: {
      long long x = as_int(ta), y = as_int(tb);
      cmp = x < y ? -1 : x > y ? 1 : 0;
      break;
    }
    case ir::Comparison::Float: {
      double x = as_float(ta), y = as_float(tb);
      cmp = x < y ? -1 : x > y ? 1 : 0;
      break;
    }
    case ir::Comparison::Bool: cmp = ir::is_true_text(ta) == ir::is_true_text(tb) ? 0 : 1; break;
    case ir::Comparison::Text: cmp = ta.compare(tb); break;
  }
  switch (c.op) {
    case Op::Eq: return cmp == 0;
    case Op::Ne: return cmp != 0;
    case Op::Lt: return cmp < 0;
    case Op::Le: return cmp <= 0;
    case Op::Gt: return cmp > 0;
    default: return cmp >= 0;
  }
}


std::string collected_text(const std::vector<std::string>& values) {
  nlohmann::json parsed = nlohmann::json::array();
  for (const auto& v : values) {
    auto j = input::parse_json(v);  // a step's output: nesting bounded
    if (j.is_discarded() || !(j.is_array() || j.is_object())) {
      parsed = nullptr;
      break;
    }
    parsed.push_back(std::move(j));
  }
  if (parsed.is_null()) parsed = values;
  return parsed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pipec::local
