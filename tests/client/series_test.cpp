// A server run's series artifact read back (compiler/client/kfp/series.hpp): the shape of
// a ReadArtifact answer, the bounds, and archives that are not Argo's one file.

#include "compiler/client/kfp/series.hpp"

#include <gtest/gtest.h>

#include "input/limits.hpp"
#include "tests/client/fake_kfp.hpp"

namespace pipec::client {
namespace {

using kfp::series_steps;
using kfp::unpack_series_answer;
using nlohmann::json;
using testing::base64;
using testing::make_archive;

const char* kSeries = R"({"bound":1024,"format":"pipec-metric-series/1","metrics":[{"count":3,"name":"loss",)"
                      R"("points":[{"order":0,"value":0.9},{"order":1,"value":0.7},{"order":2,"value":0.5}],"stride":1}]})";

// As the API server answers: the object Argo stored, base64 in `data`.
std::string answer_of(const std::string& bytes) { return json{{"data", base64(bytes)}}.dump(); }

TEST(ClientSeries, UnpacksArgosArchiveOfTheSeriesFile) {
  std::string text, why;
  ASSERT_TRUE(unpack_series_answer(answer_of(make_archive({{"metric-series.json", kSeries}})), text, why))
      << why;
  EXPECT_EQ(text, kSeries);
}

TEST(ClientSeries, RefusesArchivesThatAreNotOneSeriesFile) {
  std::string text, why;
  EXPECT_FALSE(unpack_series_answer(
      answer_of(make_archive({{"metric-series.json", kSeries}, {"metric-series.json", "{}"}})), text, why));
  EXPECT_EQ(why, "the archive holds more than one member ('metric-series.json' after metric-series.json)");
  for (const char* name : {"../metric-series.json", "/tmp/outputs/metric-series.json", "x/../metric-series.json",
                           "metrics.json"}) {
    EXPECT_FALSE(unpack_series_answer(answer_of(make_archive({{name, kSeries}})), text, why)) << name;
    EXPECT_EQ(why, std::string("the archive holds '") + name + "', not the regular file metric-series.json");
  }
  EXPECT_FALSE(unpack_series_answer(answer_of(make_archive({})), text, why));
  EXPECT_EQ(why, "the archive is empty");
  EXPECT_FALSE(unpack_series_answer(answer_of(std::string("\x1f\x8b broken")), text, why));
  EXPECT_NE(why.find("not a readable gzip'd tar: "), std::string::npos) << why;
}

TEST(ClientSeries, BoundsTheFileOnceUnpacked) {
  // 16 MiB and one byte of zeros: a few KiB packed.
  std::string big(input::kMaxSeriesFileBytes + 1, '0');
  std::string text, why;
  EXPECT_FALSE(unpack_series_answer(answer_of(make_archive({{"metric-series.json", big}})), text, why));
  EXPECT_EQ(why, "metric-series.json in the archive is larger than 16 MiB once unpacked");
  big.pop_back();
  EXPECT_TRUE(unpack_series_answer(answer_of(make_archive({{"metric-series.json", big}})), text, why)) << why;
  EXPECT_EQ(text.size(), input::kMaxSeriesFileBytes);
}

TEST(ClientSeries, SaysWhatElseTheAnswerIs) {
  std::string text, why;
  EXPECT_FALSE(unpack_series_answer("<html>login</html>", text, why));
  EXPECT_EQ(why, "the answer is not ReadArtifact's {\"data\": BASE64}");
  EXPECT_FALSE(unpack_series_answer(R"({"data":"not*base64"})", text, why));
  EXPECT_EQ(why, "the answer's data is not base64");
  EXPECT_FALSE(unpack_series_answer(answer_of(kSeries), text, why));
  EXPECT_EQ(why, "the artifact is not a gzip'd tar (Argo's archive of an output)");
}

TEST(ClientSeries, StepsAreThePodsWhoseStatusListsTheArtifact) {
  json nodes = {
      {"wf", {{"id", "wf"}, {"type", "DAG"}, {"displayName", "wf"}}},
      {"wf-2", {{"id", "wf-2"}, {"type", "Pod"}, {"displayName", "fit"}, {"startedAt", "2026-05-01T10:02:00Z"},
                {"outputs", {{"artifacts", json::array({{{"name", "main-logs"}},
                                                        {{"name", "metric-series"}, {"s3", {{"key", "k"}}}}})}}}}},
      {"wf-1", {{"id", "wf-1"}, {"type", "Pod"}, {"displayName", "prepare"}, {"startedAt", "2026-05-01T10:00:00Z"},
                {"outputs", {{"artifacts", json::array({{{"name", "metric-series"}}})}}}}},
      {"wf-3", {{"id", "wf-3"}, {"type", "Pod"}, {"displayName", "report"},
                {"outputs", {{"artifacts", json::array({{{"name", "main-logs"}}})}}}}}};
  auto steps = series_steps(json{{"status", {{"phase", "Succeeded"}, {"nodes", nodes}}}}.dump());
  ASSERT_TRUE(steps);
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].node_id, "wf-1");
  EXPECT_EQ((*steps)[0].name, "prepare");
  EXPECT_EQ((*steps)[1].node_id, "wf-2");
  EXPECT_EQ((*steps)[1].name, "fit");
  EXPECT_FALSE(series_steps(""));
  EXPECT_FALSE(series_steps(R"({"metadata":{}})"));
  EXPECT_TRUE(series_steps(R"({"status":{"phase":"Running"}})")->empty());
}

}  // namespace
}  // namespace pipec::client
