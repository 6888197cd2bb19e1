#include "rules/metrics.hpp"

#include <gtest/gtest.h>

namespace pipec::rules {
namespace {

TEST(MetricSet, OneMessageForTwoSpecsReportedAlike) {
  MetricSet set;
  EXPECT_EQ(set.add(split_metric_spec("img/sec:max")), "");
  EXPECT_EQ(set.add(split_metric_spec("loss")), "");
  EXPECT_EQ(set.add(split_metric_spec("img.sec")), "metrics 'img/sec' and 'img.sec' would both be reported as 'img-sec'");
  std::string error;
  EXPECT_FALSE(check_metric_specs({split_metric_spec("acc"), split_metric_spec("acc:PERCENTAGE")}, error));
  EXPECT_EQ(error, "metrics 'acc' and 'acc' would both be reported as 'acc'");
}

TEST(MetricSet, AtMostFifty) {
  std::vector<MetricSpec> specs;
  for (int i = 0; i < 50; ++i) specs.push_back(split_metric_spec("m" + std::to_string(i)));
  std::string error;
  EXPECT_TRUE(check_metric_specs(specs, error)) << error;
  specs.push_back(split_metric_spec("m50"));
  EXPECT_FALSE(check_metric_specs(specs, error));
  EXPECT_EQ(error, "a step reports at most 50 metrics (what KFP shows), got 51");
  EXPECT_EQ(MetricSet::count_problem(50), "");
  EXPECT_EQ(MetricSet::count_problem(51), error);
}

TEST(MetricSpecs, OneMessageForAnUnreportableName) {
  std::string error;
  EXPECT_FALSE(parse_metric_spec("val:acc", error));
  EXPECT_EQ(error, std::string("metric 'val:acc' cannot be reported: ") + kMetricNameRule);
  EXPECT_NE(std::string(kMetricNameRule).find("(expected NAME[:RAW|PERCENTAGE][:last|max|min], e.g. images/sec:RAW:max)"),
            std::string::npos);
  auto m = parse_metric_spec("Final Cost:PERCENTAGE:min", error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->reported, "Final-Cost");
  EXPECT_EQ(aggregation_word(m->aggregation), std::string("min"));
}

}  // namespace
}  // namespace pipec::rules
