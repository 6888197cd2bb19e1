#include "input/json.hpp"

#include <algorithm>

#include "input/limits.hpp"

namespace pipec::input {

std::string place_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  std::size_t line_start = text.rfind('\n', offset == 0 ? std::string_view::npos : offset - 1);
  std::size_t column = line_start == std::string_view::npos || offset == 0 ? offset + 1 : offset - line_start;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string json_nesting_problem(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        return place_of(text, i) + ": nesting deeper than " + std::to_string(kMaxNesting) + " levels";
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

bool parse_json(std::string_view text, nlohmann::json& out, std::string& error) {
  error = json_nesting_problem(text);
  if (!error.empty()) return false;
  try {
    out = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    error = e.what();
    return false;
  }
  return true;
}

nlohmann::json parse_json(std::string_view text) {
  if (!json_nesting_problem(text).empty()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

const nlohmann::json& member(const nlohmann::json& object, std::string_view key) {
  static const nlohmann::json null;
  if (!object.is_object()) return null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

std::string member_text(const nlohmann::json& object, std::string_view key) {
  const nlohmann::json& value = member(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

}  // namespace pipec::input
