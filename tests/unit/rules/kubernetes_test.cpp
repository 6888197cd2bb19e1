#include "rules/kubernetes.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pipec::rules {
namespace {

// A toleration spec read as data, once (sema keeps it, the writers print it): the key, the
// operator Equal with a value or Exists without one, the effect when given; "*" has no key.
TEST(Tolerations, SpecsReadAsData) {
  EXPECT_EQ(parse_toleration("dedicated=ml:NoSchedule"), (Toleration{"dedicated", "Equal", "ml", "NoSchedule"}));
  EXPECT_EQ(parse_toleration("gpu"), (Toleration{"gpu", "Exists", "", ""}));
  EXPECT_EQ(parse_toleration("k=:NoExecute"), (Toleration{"k", "Equal", "", "NoExecute"}));
  EXPECT_EQ(parse_toleration("nvidia.com/gpu:PreferNoSchedule"),
            (Toleration{"nvidia.com/gpu", "Exists", "", "PreferNoSchedule"}));
  EXPECT_EQ(parse_toleration("*"), (Toleration{"", "Exists", "", ""}));
  EXPECT_FALSE(parse_toleration("gpu:Sometimes"));
  EXPECT_FALSE(parse_toleration("=v"));
  EXPECT_FALSE(parse_toleration(""));
  EXPECT_FALSE(parse_toleration(":NoSchedule"));
}

// The Kubernetes object of a toleration: fields in sorted order, each only when it says
// something (no key for "*", no value without Equal, no effect unless given).
TEST(Tolerations, ObjectsAndJsonText) {
  EXPECT_EQ(toleration_json("dedicated=ml:NoSchedule"),
            R"({"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"ml"})");
  EXPECT_EQ(toleration_json("*"), R"({"operator":"Exists"})");
  EXPECT_EQ(toleration_json("gpu"), R"({"key":"gpu","operator":"Exists"})");
  EXPECT_EQ(toleration_json("k="), R"({"key":"k","operator":"Equal","value":""})");
  EXPECT_FALSE(toleration_json("k:Never"));
  // An ordered object prints the same fields in the same order.
  auto ordered = toleration_object<nlohmann::ordered_json>(*parse_toleration("a=b:NoExecute"));
  EXPECT_EQ(ordered.dump(), R"({"effect":"NoExecute","key":"a","operator":"Equal","value":"b"})");
}

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
