#include "input/utf8.hpp"

#include <gtest/gtest.h>

namespace pipec {
namespace {

TEST(FirstInvalidUtf8, FindsTheFirstBadByte) {
  EXPECT_EQ(first_invalid_utf8("plain"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("ab\xFF"), 2u);
  EXPECT_EQ(first_invalid_utf8("\xC3"), 0u);               // truncated
  EXPECT_EQ(first_invalid_utf8("x\xC0\x80"), 1u);          // overlong NUL
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0u);       // a surrogate
  EXPECT_EQ(first_invalid_utf8(std::string_view("a\0b", 3)), std::string_view::npos);
}

}  // namespace
}  // namespace pipec
