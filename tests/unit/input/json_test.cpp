#include "input/json.hpp"

#include <gtest/gtest.h>

#include "input/limits.hpp"

namespace pipec::input {
namespace {

TEST(JsonNesting, DeepNestingIsRefusedWithItsPlace) {
  // The LSP server segfaulted on a body nested 100,000 deep.
  std::string deep = "{\"a\":\n" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(json_nesting_problem(deep), "line 2, column 256: nesting deeper than 256 levels");
  nlohmann::json out;
  std::string error;
  EXPECT_FALSE(parse_json(deep, out, error));
  EXPECT_EQ(error, "line 2, column 256: nesting deeper than 256 levels");
  EXPECT_TRUE(parse_json(deep).is_discarded());
}

TEST(JsonNesting, TheLimitItselfIsAccepted) {
  std::string at_limit = std::string(kMaxNesting, '[') + std::string(kMaxNesting, ']');
  EXPECT_EQ(json_nesting_problem(at_limit), "");
  EXPECT_FALSE(parse_json(at_limit).is_discarded());
  std::string over = "[" + at_limit + "]";
  EXPECT_EQ(json_nesting_problem(over), "line 1, column 257: nesting deeper than 256 levels");
}

TEST(JsonNesting, BracketsInStringsDoNotCount) {
  std::string text = "{\"a\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  EXPECT_EQ(json_nesting_problem(text), "");
  EXPECT_FALSE(parse_json(text).is_discarded());
}

TEST(ParseJson, NotJsonSaysWhere) {
  nlohmann::json out;
  std::string error;
  EXPECT_FALSE(parse_json("{\"a\": 1,}", out, error));
  EXPECT_NE(error.find("parse error"), std::string::npos) << error;
  EXPECT_TRUE(parse_json("{\"a\": 1,}").is_discarded());
  ASSERT_TRUE(parse_json("{\"a\": [1, 2]}", out, error)) << error;
  EXPECT_EQ(out["a"][1], 2);
}

TEST(PlaceOf, LinesAndColumns) {
  EXPECT_EQ(place_of("ab\ncd", 0), "line 1, column 1");
  EXPECT_EQ(place_of("ab\ncd", 2), "line 1, column 3");
  EXPECT_EQ(place_of("ab\ncd", 3), "line 2, column 1");
  EXPECT_EQ(place_of("ab\ncd", 4), "line 2, column 2");
}

// One safe member read for every document from outside: a missing member, a parent of
// another type or a member of another type reads as null or "", never an exception.
TEST(JsonMember, ReadsNullOrEmptyInsteadOfThrowing) {
  nlohmann::json doc = nlohmann::json::parse(R"({"a":{"b":{"c":"x"}},"n":1,"list":[1]})");
  EXPECT_EQ(member(doc, "a", "b", "c"), "x");
  EXPECT_TRUE(member(doc, "a", "missing", "c").is_null());
  EXPECT_TRUE(member(doc, "list", "a").is_null());
  EXPECT_TRUE(member(nlohmann::json(), "a").is_null());
  EXPECT_EQ(member_text(member(doc, "a", "b"), "c"), "x");
  EXPECT_EQ(member_text(doc, "n"), "");
  EXPECT_EQ(member_text(doc, "none"), "");
}

}  // namespace
}  // namespace pipec::input
