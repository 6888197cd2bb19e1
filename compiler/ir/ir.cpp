#include "compiler/ir/ir.hpp"

#include <fmt/format.h>

namespace pipec::ir {

Value::Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;
Value::~Value() = default;

Comparison comparison_of(const Condition& c) {
  const Type& a = c.operands.at(0).value->type;
  const Type& b = c.operands.at(1).value->type;
  auto numeric = [](const Type& t) { return t.kind == TypeKind::Int || t.kind == TypeKind::Float; };
  if (numeric(a) && numeric(b))
    return a.kind == TypeKind::Int && b.kind == TypeKind::Int ? Comparison::Int : Comparison::Float;
  if (a.kind == TypeKind::Bool) return Comparison::Bool;
  return Comparison::Text;
}

bool is_true_text(std::string_view text) {
  for (std::string_view t : kTrueTexts)
    if (text == t) return true;
  return false;
}

const char* op_symbol(Condition::Op op) {
  switch (op) {
    case Condition::Op::Eq: return "==";
    case Condition::Op::Ne: return "!=";
    case Condition::Op::Lt: return "<";
    case Condition::Op::Le: return "<=";
    case Condition::Op::Gt: return ">";
    case Condition::Op::Ge: return ">=";
    case Condition::Op::And: return "&&";
    case Condition::Op::Or: return "||";
    default: return "";
  }
}

std::string quoted_string(std::string_view text, bool escape_braces) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '{':
      case '}':
        if (escape_braces) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out.push_back(c);
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out.push_back(c);
    }
  }
  return out + "'";
}

std::string print_condition(const Condition& c, ConditionSyntax& syntax) {
  using Op = Condition::Op;
  std::string left, right;
  switch (c.op) {
    case Op::Leaf: return syntax.truth(*c.value);
    case Op::Not:  // appended, not "!" + string&&: GCC 12's false -Wrestrict at -O3 (bug 105651)
      return std::string("!").append(print_condition(c.operands[0], syntax));
    case Op::And:
    case Op::Or:
      left = print_condition(c.operands[0], syntax);
      right = print_condition(c.operands[1], syntax);
      break;
    default: {
      // A comparison: both operands are leaves holding values, compared as comparison_of says.
      Comparison how = comparison_of(c);
      const Value& a = *c.operands[0].value;
      const Value& b = *c.operands[1].value;
      left = how == Comparison::Bool ? syntax.truth(a) : syntax.operand(a, how);
      right = how == Comparison::Bool ? syntax.truth(b) : syntax.operand(b, how);
    }
  }
  return "(" + left + " " + op_symbol(c.op) + " " + right + ")";
}

const Ref* whole_ref(const Value& v) {
  if (v.kind == Value::Kind::Ref && v.ref) return &*v.ref;
  if (v.kind == Value::Kind::Interpolation && v.parts.size() == 1 && v.parts[0].ref)
    return &*v.parts[0].ref;
  return nullptr;
}

std::string literal_text(const Literal& l) {
  if (l.is_string()) return l.get<std::string>();
  if (l.is_boolean()) return l.get<bool>() ? "true" : "false";
  return l.dump();
}

namespace {
constexpr std::pair<ContainerOp::Volume::Kind, const char*> kVolumeKinds[] = {
    {ContainerOp::Volume::Kind::Pvc, "pvc"},             {ContainerOp::Volume::Kind::Empty, "empty"},
    {ContainerOp::Volume::Kind::Ephemeral, "ephemeral"}, {ContainerOp::Volume::Kind::ConfigMap, "configmap"},
    {ContainerOp::Volume::Kind::Secret, "secret"},       {ContainerOp::Volume::Kind::Workspace, "workspace"},
};
}  // namespace

const char* volume_kind_word(ContainerOp::Volume::Kind kind) {
  for (const auto& [k, word] : kVolumeKinds)
    if (k == kind) return word;
  return "?";
}

std::optional<ContainerOp::Volume::Kind> volume_kind_of(std::string_view word) {
  for (const auto& [k, w] : kVolumeKinds)
    if (word == w) return k;
  return std::nullopt;
}

const Pipeline* Pipeline::callee(std::string_view name) const {
  for (const auto& c : callees)
    if (c.name == name) return &c;
  return nullptr;
}

std::string Type::str() const {
  switch (kind) {
    case TypeKind::String: return "string";
    case TypeKind::Int: return "int";
    case TypeKind::Float: return "float";
    case TypeKind::Bool: return "bool";
    case TypeKind::File:
      return visual == rules::visuals::Kind::None ? "file" : std::string(rules::visuals::type_name(visual));
    case TypeKind::List: return "list<" + (element.empty() ? std::string("?") : element[0].str()) + ">";
    case TypeKind::Map: return "map<" + (element.empty() ? std::string("?") : element[0].str()) + ">";
  }
  return "?";
}

std::string parameters_json(const Pipeline& pipeline) {
  Literal params = Literal::array();
  for (const auto& param : pipeline.params) {
    Literal p = Literal::object();
    p["name"] = param.name;
    p["type"] = param.type.str();
    p["required"] = !param.default_value.has_value();
    if (param.default_value) p["default"] = *param.default_value;
    if (!param.constraint.one_of.empty()) p["enum"] = param.constraint.one_of;
    if (param.constraint.min) p["min"] = *param.constraint.min;
    if (param.constraint.max) p["max"] = *param.constraint.max;
    if (param.type.kind == TypeKind::Int) {
      // Integral bounds print as integers.
      for (const char* k : {"min", "max"})
        if (p.contains(k)) p[k] = static_cast<long long>(p[k].get<double>());
    }
    params.push_back(std::move(p));
  }
  return params.dump();
}

}  // namespace pipec::ir
