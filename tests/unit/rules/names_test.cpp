#include "rules/names.hpp"

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

TEST(Names, OneRuleForTheEnvironmentAStepMaySet) {
  EXPECT_TRUE(rules::is_env_name("LR"));
  EXPECT_TRUE(rules::is_env_name("_x9"));
  EXPECT_FALSE(rules::is_env_name("9x"));
  EXPECT_FALSE(rules::is_env_name("A-B"));
  EXPECT_FALSE(rules::is_env_name(""));
  // PIPEC_* carry the shell form's values everywhere; TF_CONFIG is the operator's in a
  // training step only: a container op may set it for its own program.
  EXPECT_STREQ(rules::env_reserved_by("PIPEC_x", false), "pipec");
  EXPECT_STREQ(rules::env_reserved_by("PIPEC_x", true), "pipec");
  EXPECT_STREQ(rules::env_reserved_by("TF_CONFIG", true), "the operator");
  EXPECT_EQ(rules::env_reserved_by("TF_CONFIG", false), nullptr);
  EXPECT_EQ(rules::env_reserved_by("LR", true), nullptr);
}

}  // namespace
}  // namespace pipec
