#include "rules/quantities.hpp"

#include <gtest/gtest.h>

namespace pipec::rules {
namespace {

// Preflight compares a quota's hard and used amounts with a step's needs as numbers.
TEST(Quantities, ValueScalesEachSuffix) {
  EXPECT_DOUBLE_EQ(*quantity_value("2"), 2.0);
  EXPECT_DOUBLE_EQ(*quantity_value("500m"), 0.5);
  EXPECT_DOUBLE_EQ(*quantity_value("2Gi"), 2147483648.0);
  EXPECT_DOUBLE_EQ(*quantity_value("1.5k"), 1500.0);
  EXPECT_DOUBLE_EQ(*quantity_value("1e3"), 1000.0);
  EXPECT_DOUBLE_EQ(*quantity_value("25E-1"), 2.5);
}

TEST(Quantities, ValueRefusesWhatIsNoQuantity) {
  EXPECT_FALSE(quantity_value(""));
  EXPECT_FALSE(quantity_value("two"));
  EXPECT_FALSE(quantity_value("2Xi"));
  EXPECT_FALSE(quantity_value("1e999"));
  EXPECT_FALSE(quantity_value("1e-99999999999999999999"));
}

}  // namespace
}  // namespace pipec::rules
