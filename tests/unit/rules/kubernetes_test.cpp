#include "rules/kubernetes.hpp"

#include <gtest/gtest.h>

namespace pipec::rules {
namespace {

// One rule for "a directory in a data volume", the compiler's check of a literal
// `tensorboard` and the launcher's of a run-time one.
TEST(Mounts, InsideAMountIsTheMountOrBelowIt) {
  EXPECT_TRUE(is_inside_mount("/data", "/data"));
  EXPECT_TRUE(is_inside_mount("/data/logs/tb", "/data"));
  EXPECT_FALSE(is_inside_mount("/database", "/data"));
  EXPECT_FALSE(is_inside_mount("/dat", "/data"));
  EXPECT_FALSE(is_inside_mount("/other/data", "/data"));
  EXPECT_TRUE(is_inside_mount("/anything", "/"));
  EXPECT_TRUE(is_inside_mount("/", "/"));
}

}  // namespace
}  // namespace pipec::rules
