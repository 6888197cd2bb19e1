#include "compiler/base/names.hpp"

#include <gtest/gtest.h>

namespace pipec {
namespace {

TEST(Names, SanitisesToDns1123) {
  EXPECT_EQ(to_dns1123("all_reduce"), "all-reduce");
  EXPECT_EQ(to_dns1123("Train_Model"), "train-model");
  EXPECT_EQ(to_dns1123("_x__y_"), "x-y");
  EXPECT_EQ(to_dns1123("pipeline to run mpi job"), "pipeline-to-run-mpi-job");
  EXPECT_EQ(to_dns1123("___"), "");
  EXPECT_EQ(to_dns1123("a.b/c"), "a-b-c");
}

TEST(Names, ChecksLabels) {
  EXPECT_TRUE(is_dns1123_label("all-reduce"));
  EXPECT_TRUE(is_dns1123_label("a1"));
  EXPECT_FALSE(is_dns1123_label("-a"));
  EXPECT_FALSE(is_dns1123_label("a-"));
  EXPECT_FALSE(is_dns1123_label("A"));
  EXPECT_FALSE(is_dns1123_label(""));
  EXPECT_FALSE(is_dns1123_label(std::string(64, 'a')));
  EXPECT_TRUE(is_dns1123_label(std::string(63, 'a')));
}

}  // namespace
}  // namespace pipec
