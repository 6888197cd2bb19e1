#include "compiler/ir/ir.hpp"

namespace pipec::ir {

Value::Value() = default;
Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;
Value::~Value() = default;

std::string Type::str() const {
  switch (kind) {
    case TypeKind::String: return "string";
    case TypeKind::Int: return "int";
    case TypeKind::Float: return "float";
    case TypeKind::Bool: return "bool";
    case TypeKind::List: return "list<" + (element.empty() ? std::string("?") : element[0].str()) + ">";
    case TypeKind::Map: return "map<" + (element.empty() ? std::string("?") : element[0].str()) + ">";
  }
  return "?";
}

}  // namespace pipec::ir
