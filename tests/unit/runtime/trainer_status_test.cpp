// A TrainJob's status.trainerStatus (Trainer v2.3.0) read as data: the CRD's ranges, the
// metric rules' names, numbers only, the bound on metrics; and the progress line.
#include "runtime/trainer_status.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pipec::runtime {
namespace {

using nlohmann::json;

json job_with(json trainer_status) { return {{"status", {{"trainerStatus", std::move(trainer_status)}}}}; }

TEST(RuntimeTrainerStatus, NoTrainerStatusIsNoProgress) {
  EXPECT_FALSE(trainer_progress(json::object()));
  EXPECT_FALSE(trainer_progress(json{{"status", {{"trainerStatus", "50%"}}}}));
  auto empty = trainer_progress(job_with(json::object()));
  ASSERT_TRUE(empty);
  EXPECT_EQ(progress_line(*empty), "progress: (no progress reported yet)");
}

TEST(RuntimeTrainerStatus, ValuesOutsideTheCrdRangesAndNonNumbersAreLeftOut) {
  auto p = trainer_progress(job_with({{"progressPercentage", 101}, {"estimatedRemainingSeconds", -1},
                                      {"metrics", {{{"name", "loss"}, {"value", "nan"}},
                                                   {{"name", "acc"}, {"value", "12%"}},
                                                   {{"name", "9"}, {"value", "1"}},
                                                   {{"name", "lr"}, {"value", 0.1}},
                                                   {{"name", "Step/Loss"}, {"value", "-3e-2"}},
                                                   {{"name", "Step/Loss"}, {"value", "-4e-2"}}}}}));
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->percent);
  EXPECT_FALSE(p->remaining_seconds);
  ASSERT_EQ(p->metrics.size(), 1u);
  EXPECT_EQ(p->metrics[0].first, "Step-Loss");
  EXPECT_EQ(p->metrics[0].second, -0.04);
  EXPECT_EQ(progress_line(*p), "progress: Step-Loss=-0.04");
}

TEST(RuntimeTrainerStatus, AtMost256MetricsAreReadAndEightPrinted) {
  json metrics = json::array();
  for (int i = 0; i < 300; ++i) metrics.push_back({{"name", "m" + std::to_string(i)}, {"value", "1"}});
  auto p = trainer_progress(job_with({{"progressPercentage", 0}, {"estimatedRemainingSeconds", 59},
                                      {"metrics", metrics}}));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->metrics.size(), kMaxTrainerMetrics);
  EXPECT_EQ(progress_line(*p),
            "progress: 0%, about 59s left, m0=1 m1=1 m2=1 m3=1 m4=1 m5=1 m6=1 m7=1 (+248 more)");
}

}  // namespace
}  // namespace pipec::runtime
