#include "compiler/base/spellcheck.hpp"

#include <gtest/gtest.h>

namespace pipec {
namespace {

TEST(Spellcheck, EditDistanceCountsSwapsAsOne) {
  EXPECT_EQ(edit_distance("gpus", "gpus"), 0u);
  EXPECT_EQ(edit_distance("gpu", "gpus"), 1u);
  EXPECT_EQ(edit_distance("wokrers", "workers"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Spellcheck, SuggestsTheNearestCandidate) {
  std::vector<std::string> names = {"gpus", "workers", "image", "memory_limit"};
  EXPECT_EQ(spellcheck("gpu", names), "gpus");
  EXPECT_EQ(spellcheck("wokrers", names), "workers");
  EXPECT_EQ(spellcheck("memory_limt", names), "memory_limit");
  EXPECT_EQ(spellcheck("zzz", names), "");
  EXPECT_EQ(spellcheck("gpus", names), "");  // an exact match is not a suggestion
}

}  // namespace
}  // namespace pipec
