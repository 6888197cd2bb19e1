#pragma once
// JSON from outside (server answers, LSP messages, annotations, values) parsed with a
// bound on nesting, checked before the parser sees the text: nlohmann's writer and the
// code that walks a document recurse, so depth is what a hostile input would use.

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipec::input {

/// Where the text nests deeper than kMaxNesting: "line L, column C: nesting deeper than
/// 256 levels" (columns in bytes), or "" when it does not. Brackets inside strings do not
/// count.
std::string json_nesting_problem(std::string_view text);

/// Parses JSON text. On failure returns false and sets `error`: the nesting problem, or
/// the parser's message (which says where).
[[nodiscard]] bool parse_json(std::string_view text, nlohmann::json& out, std::string& error);

/// Parses JSON text; a discarded value (is_discarded()) when it is not JSON or nests too
/// deep, as nlohmann::json::parse(text, nullptr, false) does for text that is not JSON.
nlohmann::json parse_json(std::string_view text);

/// Safe reads of a document from outside (a server's answer, a job, an annotation): the
/// member `key` of `object`, or null when `object` is not an object or has no such member
/// (never an exception). With more keys, the path of members: member(j, "a", "b").
const nlohmann::json& member(const nlohmann::json& object, std::string_view key);
template <typename... Keys>
const nlohmann::json& member(const nlohmann::json& object, std::string_view key, std::string_view next,
                             Keys... rest) {
  return member(member(object, key), next, rest...);
}
/// The member `key` of `object` as a string; "" when it is absent or not a string.
std::string member_text(const nlohmann::json& object, std::string_view key);

/// "line L, column C" of byte `offset` in `text` (1-based, columns in bytes).
std::string place_of(std::string_view text, std::size_t offset);

}  // namespace pipec::input
