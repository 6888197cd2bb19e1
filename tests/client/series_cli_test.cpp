// A server run's metric series drawn by the real binary (`run --wait`, `runs wait`, `runs
// get`): each step's artifact metric-series read through ReadArtifact from the stateful fake,
// which answers in the shape the KFP API server does (fake_kfp.hpp add_artifact).

#include <gtest/gtest.h>

#include "input/limits.hpp"
#include "tests/client/cli_support.hpp"

namespace pipec::client {
namespace {

using nlohmann::json;
using testing::ClientCli;
using testing::make_archive;
using testing::Result;

// The series file the scraper writes (docs/runtime.md "Metric series").
const char* kLoss = R"({"bound":1024,"format":"pipec-metric-series/1","metrics":[{"count":3,"name":"loss",)"
                    R"("points":[{"order":0,"value":0.9},{"order":1,"value":0.7},{"order":2,"value":0.5}],"stride":1}]})";

// A workflow status as Argo writes it: two Pods that list the artifact (with the key the
// API server looks for), one that does not.
json nodes() {
  auto pod = [](const char* id, const char* name, const char* started, bool series) {
    json artifacts = json::array({{{"name", "main-logs"}, {"s3", {{"key", std::string("logs/") + id}}}}});
    if (series) artifacts.push_back({{"name", "metric-series"}, {"path", "/tmp/outputs/metric-series.json"},
                                     {"s3", {{"key", std::string("artifacts/") + id + "/metric-series.tgz"}}}});
    return json{{"id", id}, {"name", std::string("wf.") + name}, {"displayName", name}, {"type", "Pod"},
                {"phase", "Succeeded"}, {"startedAt", started}, {"outputs", {{"artifacts", artifacts}}}};
  };
  return {{"wf-1", pod("wf-1", "prepare", "2026-05-01T10:00:00Z", false)},
          {"wf-2", pod("wf-2", "fit", "2026-05-01T10:01:00Z", true)},
          {"wf-3", pod("wf-3", "eval", "2026-05-01T10:02:00Z", true)}};
}

class ClientCliSeries : public ClientCli {
 protected:
  void SetUp() override {
    ClientCli::SetUp();
    fake_.script_runs({"Running", "Succeeded"},
                      json::array({{{"name", "loss"}, {"node_id", "wf-2"}, {"number_value", 0.5}, {"format", "RAW"}}}));
    fake_.script_nodes(nodes());
    fake_.add_artifact("wf-2", "metric-series", make_archive({{"metric-series.json", kLoss}}));
  }
  // A run that has ended when first asked.
  void ended_at_once() {
    fake_.script_runs({"Succeeded"},
                      json::array({{{"name", "loss"}, {"node_id", "wf-2"}, {"number_value", 0.5}, {"format", "RAW"}}}));
  }
  // Starts a run (without waiting) and returns its id.
  std::string start_run() {
    Result r = pipec({"run", example("constraints.pipe"), "--host", fake_.url(), "--run-name", "r1"});
    EXPECT_EQ(r.exit, 0) << r.err;
    std::size_t at = r.out.find("(id ", r.out.find("started run"));
    std::size_t end = r.out.find(')', at);
    return at == std::string::npos ? "" : r.out.substr(at + 4, end - at - 4);
  }
  const std::string utf8_ = "LC_ALL=C.UTF-8";
};

const char* kMetrics = "metrics:\n  step  metric  value\n  wf-2  loss    0.5\n";

TEST_F(ClientCliSeries, RunWaitDrawsEachStepsSeriesFromItsArtifact) {
  Result r = pipec({"run", example("constraints.pipe"), "--host", fake_.url(), "--run-name", "r1", "--wait",
                    "--poll", "10ms"},
                   {utf8_});
  EXPECT_EQ(r.exit, 0) << r.err;
  // eval lists the artifact but the server has none: a note, not a failure.
  EXPECT_NE(r.out.find(std::string(kMetrics) +
                       "series:\n"
                       "  fit.loss  ████████▄▄▄▄▄▄▄▄▁▁▁▁▁▁▁▁  0.9 → 0.5  min 0.5  max 0.9  (3 values)\n"
                       "  eval: series not read: cannot read its artifact metric-series: HTTP 404 Not Found: "
                       "artifact not found: <nil>\n"
                       "run 'r1' Succeeded\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(fake_.count("GET /apis/v1beta1/runs/run-"), 4) << "two polls, two artifacts";
}

TEST_F(ClientCliSeries, RunsGetAndRunsWaitDrawItToo) {
  std::string id = start_run();
  ASSERT_FALSE(id.empty());
  Result wait = pipec({"runs", "wait", id, "--host", fake_.url(), "--poll", "10ms"});  // no UTF-8 locale
  EXPECT_EQ(wait.exit, 0) << wait.err;
  EXPECT_NE(wait.out.find(std::string(kMetrics) +
                          "series:\n  fit.loss  ########~~~~~~~~________  0.9 -> 0.5  min 0.5  max 0.9  (3 values)\n"),
            std::string::npos)
      << wait.out;
  Result get = pipec({"runs", "get", id, "--host", fake_.url()}, {utf8_});
  EXPECT_EQ(get.exit, 0) << get.err;
  EXPECT_NE(get.out.find(std::string(kMetrics) +
                         "series:\n  fit.loss  ████████▄▄▄▄▄▄▄▄▁▁▁▁▁▁▁▁  0.9 → 0.5  min 0.5  max 0.9  (3 values)\n"
                         "  eval: series not read: "),
            std::string::npos)
      << get.out;
  EXPECT_EQ(fake_.count("GET /apis/v1beta1/runs/" + id + "/nodes/wf-2/artifacts/metric-series:read"), 2);
  EXPECT_EQ(fake_.count("GET /apis/v1beta1/runs/" + id + "/nodes/wf-1/"), 0) << "prepare lists none";
}

TEST_F(ClientCliSeries, AnOversizedAnswerIsANote) {
  ended_at_once();
  std::string id = start_run();
  std::string huge = "{\"data\":\"" + std::string(input::kMaxSeriesAnswerBytes, 'A') + "\"}";
  fake_.answer("GET /apis/v1beta1/runs/" + id + "/nodes/wf-2/", 200, "application/json", huge);
  // A login page in front of the server: said as such, in one line.
  fake_.answer("GET /apis/v1beta1/runs/" + id + "/nodes/wf-3/", 200, "text/html", "<html>log in</html>");
  Result r = pipec({"runs", "get", id, "--host", fake_.url()});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_NE(r.out.find("series:\n  fit: series not read: the ReadArtifact answer is larger than 24 MiB, more "
                       "than pipec reads\n  eval: series not read: cannot read its artifact metric-series: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("an HTML page, not an artifact"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("an HTML page, not a log"), std::string::npos) << r.out;
}

TEST_F(ClientCliSeries, AHostileArchiveIsRefused) {
  ended_at_once();
  std::string id = start_run();
  fake_.add_artifact("wf-2", "metric-series", make_archive({{"../../.bashrc", kLoss}}));
  fake_.add_artifact("wf-3", "metric-series",
                     make_archive({{"metric-series.json", kLoss}, {"metric-series.json", "{}"}}));
  Result r = pipec({"runs", "get", id, "--host", fake_.url()});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_NE(r.out.find("series:\n"
                       "  fit: series not read: the archive holds '../../.bashrc', not the regular file "
                       "metric-series.json\n"
                       "  eval: series not read: the archive holds more than one member ('metric-series.json' "
                       "after metric-series.json)\nsteps:\n"),
            std::string::npos)
      << r.out;
}

TEST_F(ClientCliSeries, WithoutAWorkflowStatusTheSeriesAreAbsent) {
  ended_at_once();
  fake_.script_nodes(nullptr);
  std::string id = start_run();
  Result r = pipec({"runs", "get", id, "--host", fake_.url()});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_NE(r.out.find(std::string(kMetrics) +
                       "series: absent from the server's answer (it holds no workflow status, which lists "
                       "each step's artifact metric-series)\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(fake_.count("GET /apis/v1beta1/runs/" + id + "/nodes/"), 0);
}

}  // namespace
}  // namespace pipec::client
