// The operating commands (runs, experiments, pipelines, schedules) from recorded KFP
// answers of both API versions, and what they send.
//
// Fixtures (tests/client/data):
// - run_v1_failed.json: a v1beta1 apiRunDetail (fields of apiRun and apiPipelineRuntime in
//   shared/kfp-api/v1beta1/run.swagger.json). Its workflow_manifest has the shape of the
//   kubeflow/pipelines mirror's frontend/mock-backend/data/v1/runtime/mock-coinflip-runtime.ts
//   (status.nodes keyed by id with displayName, type, phase, startedAt, finishedAt) and a
//   failed Pod node with a message as in mock-error-runtime.ts.
// - run_v2_failed.json: a v2beta1Run with run_details.task_details, the fields of
//   v2beta1PipelineTaskDetail in shared/kfp-api/v2beta1/run.swagger.json, states from
//   v2beta1RuntimeState.
// - run_v1_pending.json: run_v1_failed.json while the run goes on: `fit` Pending with the
//   message Argo gives an unschedulable pod (its PodScheduled condition's reason and message,
//   as kube-scheduler writes them), `fetch` Pending with its container's waiting reason
//   (ImagePullBackOff and the kubelet's message), `evaluate` Failed with Argo's message for an
//   OOM-killed container ("OOMKilled (exit code 137)").
// - run_v2_oom.json: run_v2_failed.json with a task `evaluate` FAILED whose `error`
//   (googlerpcStatus, "only populated when the task is in FAILED or CANCELED state" in the
//   v2beta1 spec) says OOMKilled (exit code 137).
// - run_v1_succeeded.json: run_v1_failed.json made to succeed (made from it by hand): another
//   id and name, `lr` 0.01, every node Succeeded without a message, and the metrics
//   `accuracy` (PERCENTAGE, 0.88) of node `prepare` and `loss` (RAW, 0.25) of node `fit`:
//   the second run of `runs compare`.
// - run_v2_succeeded.json: run_v2_failed.json made to succeed likewise (another run_id and
//   display_name, `lr` 0.01, every task SUCCEEDED without an error).
// Filters are checked against the Predicate definitions of the same specs.

#include <deque>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "compiler/client/kfp/commands.hpp"
#include "compiler/client/kfp/compare.hpp"
#include "compiler/client/kfp/operate.hpp"
#include "compiler/client/kfp/resources.hpp"
#include "tests/client/fake_kfp.hpp"
#include "tests/client/test_support.hpp"

namespace pipec::client::kfp {
namespace {

using json = nlohmann::json;
using testing::fast_retries;
using testing::read_data;
using testing::test_connection;

// Answers from a script: "METHOD /path" (no query) -> answers in turn, the last repeated.
class ScriptedTurns final : public HttpTransport {
 public:
  void answer(const std::string& key, std::string body, long status = 200) {
    answers_[key].push_back({status, std::move(body), {}});
  }
  Status send(const HttpRequest& request, HttpResponse& response) override {
    requests.push_back(request);
    std::string path = request.url.substr(request.url.find('/', 8));
    std::string key = request.method + " " + path.substr(0, path.find('?'));
    auto it = answers_.find(key);
    if (it == answers_.end()) {
      response = {404, R"({"code":5,"message":"no such route in the script: )" + key + "\"}", {}};
      return Status::ok();
    }
    response = it->second.front();
    if (it->second.size() > 1) it->second.pop_front();
    return Status::ok();
  }
  std::vector<HttpRequest> requests;

 private:
  std::map<std::string, std::deque<HttpResponse>> answers_;
};

// The value of query parameter `name` of `url`, percent-decoded.
std::string query_value(const std::string& url, const std::string& name) {
  std::size_t q = url.find('?');
  if (q == std::string::npos) return {};
  std::string rest = url.substr(q + 1);
  std::stringstream parts(rest);
  std::string part;
  while (std::getline(parts, part, '&')) {
    if (part.rfind(name + "=", 0) != 0) continue;
    std::string value = part.substr(name.size() + 1), out;
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i] == '%' && i + 2 < value.size()) {
        out.push_back(static_cast<char>(std::stoi(value.substr(i + 1, 2), nullptr, 16)));
        i += 2;
      } else {
        out.push_back(value[i]);
      }
    }
    return out;
  }
  return {};
}

json spec(const std::string& version) {
  // The filter's definitions: v1beta1 keeps them in filter.swagger.json only.
  std::ifstream in(std::string(PIPEC_KFP_API_DIR) + "/" + version + "/filter.swagger.json");
  return json::parse(in);
}

// Checks a filter against the spec: only the Predicate's members, its operator from the
// spec's enum, and `predicates` the only member of the filter.
void expect_filter_follows_spec(const std::string& filter_text, const std::string& version) {
  json filter = json::parse(filter_text, nullptr, false);
  ASSERT_TRUE(filter.is_object()) << filter_text;
  json definitions = spec(version)["definitions"];
  std::string predicate = version == "v2beta1" ? "v2beta1Predicate" : "apiPredicate";
  std::string filter_def = version == "v2beta1" ? "v2beta1Filter" : "apiFilter";
  for (const auto& [key, value] : filter.items())
    EXPECT_TRUE(definitions[filter_def]["properties"].contains(key)) << key;
  std::string op_key = version == "v2beta1" ? "operation" : "op";
  std::string enum_ref = definitions[predicate]["properties"][op_key]["$ref"];
  json ops = definitions[enum_ref.substr(enum_ref.rfind('/') + 1)]["enum"];
  ASSERT_FALSE(ops.empty()) << enum_ref;
  for (const json& p : filter["predicates"]) {
    for (const auto& [key, value] : p.items())
      EXPECT_TRUE(definitions[predicate]["properties"].contains(key)) << key << " in " << p;
    EXPECT_NE(std::find(ops.begin(), ops.end(), p[op_key]), ops.end()) << p;
  }
}

class ClientOperate : public ::testing::Test {
 protected:
  OperateArgs args(bool v2, bool as_json = false) {
    OperateArgs a;
    a.v2 = v2;
    a.json = as_json;
    a.retry = fast_retries(1);
    return a;
  }
  Connection connection_ = test_connection("http://kfp.test", "t0ken");
  ScriptedTurns transport_;
  std::ostringstream out_, err_;
};

TEST_F(ClientOperate, RunsGetShowsAV1RunFromItsRecordedDetail) {
  transport_.answer("GET /apis/v1beta1/runs/r1", read_data("run_v1_failed.json"));
  ASSERT_EQ(get_command(Kind::Run, "r1", args(false), connection_, transport_, out_, err_), 0)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "run 'train 2026-05-01 10:00:00' (id 3f1c2d4e-0000-4000-8000-000000000001)\n"
            "  state:      Failed\n"
            "  experiment: e0e0e0e0-0000-4000-8000-0000000000ee\n"
            "  pipeline:   9a8b7c6d-0000-4000-8000-0000000000aa (version b1b1b1b1-0000-4000-8000-0000000000bb)\n"
            "  created:    2026-05-01T09:59:58Z\n"
            "  started:    2026-05-01T10:00:00Z\n"
            "  finished:   2026-05-01T10:12:05Z\n"
            "  duration:   12m05s\n"
            "parameters:\n"
            "  lr = 0.001\n"
            "  layers = [3,2]\n"
            "metrics:\n"
            "  step                    metric    value\n"
            "  train-x7k2p-1787723858  accuracy  91.2%\n"
            "series: none (no step of the run lists the artifact metric-series)\n"
            "steps:\n"
            "  step     state      duration  reason\n"
            "  prepare  Succeeded  1m05s\n"
            "  fit      Failed     10m55s    Error (exit code 1)\n");
  ASSERT_EQ(transport_.requests.size(), 1u);
  EXPECT_EQ(transport_.requests[0].url, "http://kfp.test/apis/v1beta1/runs/r1");
}

TEST_F(ClientOperate, RunsGetShowsAV2RunFromItsRecordedAnswer) {
  transport_.answer("GET /apis/v2beta1/runs/r2", read_data("run_v2_failed.json"));
  ASSERT_EQ(get_command(Kind::Run, "r2", args(true), connection_, transport_, out_, err_), 0)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "run 'train v2' (id 7c7c7c7c-0000-4000-8000-000000000002)\n"
            "  state:      FAILED\n"
            "  experiment: e0e0e0e0-0000-4000-8000-0000000000ee\n"
            "  pipeline:   9a8b7c6d-0000-4000-8000-0000000000aa (version b1b1b1b1-0000-4000-8000-0000000000bb)\n"
            "  created:    2026-05-01T09:59:58Z\n"
            "  started:    2026-05-01T10:00:00Z\n"
            "  finished:   2026-05-01T11:02:03Z\n"
            "  duration:   1h02m03s\n"
            "  error:      task 'fit' failed: exit code 1\n"
            "parameters:\n"
            "  layers = [3,2]\n"
            "  lr = 0.001\n"
            "  message = it's \"$(id)\"\n"
            "steps:\n"
            "  step     state      duration  reason\n"
            "  train    FAILED     1h02m03s\n"
            "  prepare  SUCCEEDED  45s\n"
            "  fit      FAILED     1h01m03s  exit code 1\n");
}

TEST_F(ClientOperate, RunsGetJsonIsTheRecordOfBothApis) {
  transport_.answer("GET /apis/v1beta1/runs/r1", read_data("run_v1_failed.json"));
  transport_.answer("GET /apis/v2beta1/runs/r2", read_data("run_v2_failed.json"));
  ASSERT_EQ(get_command(Kind::Run, "r1", args(false, true), connection_, transport_, out_, err_), 0);
  json v1 = json::parse(out_.str());
  out_.str("");
  ASSERT_EQ(get_command(Kind::Run, "r2", args(true, true), connection_, transport_, out_, err_), 0);
  json v2 = json::parse(out_.str());
  // One shape: the same members, in the same order, whatever the API.
  std::vector<std::string> k1, k2;
  for (const auto& [k, v] : v1.items()) k1.push_back(k);
  for (const auto& [k, v] : v2.items()) k2.push_back(k);
  EXPECT_EQ(k1, k2);
  EXPECT_EQ(v1["steps"][1], (json{{"id", "train-x7k2p-3721646052"}, {"name", "fit"}, {"state", "Failed"},
                                  {"started_at", "2026-05-01T10:01:10Z"},
                                  {"finished_at", "2026-05-01T10:12:05Z"}, {"pod", "train-x7k2p-fit-3721646052"},
                                  {"reason", "Error (exit code 1)"}}));
  EXPECT_EQ(v2["steps"][2]["pod"], "train-v2-abcde-system-container-impl-2222222222");
  EXPECT_EQ(v2["parameters"]["layers"], "[3,2]");
  EXPECT_EQ(v1["metrics"][0]["value"], 0.912);
}

// `pipec runs compare`: the table from recorded answers of each API version.
TEST_F(ClientOperate, RunsCompareShowsTwoV1RunsSideBySide) {
  transport_.answer("GET /apis/v1beta1/runs/r1", read_data("run_v1_failed.json"));
  transport_.answer("GET /apis/v1beta1/runs/r3", read_data("run_v1_succeeded.json"));
  std::vector<CompareInput> inputs{{"r1", false, {}}, {"r3", false, {}}};
  ASSERT_EQ(compare_command(inputs, "", args(false), connection_, &transport_, out_, err_), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "  run               train 2026-05-01 10:00:00  train 2026-05-02 10:00:00\n"
            "* state             Failed                     Succeeded\n"
            "parameters:\n"
            "  layers            [3,2]                      [3,2]\n"
            "* lr                0.001                      0.01\n"
            "metrics:\n"
            "* fit.loss          -                          0.25\n"
            "* prepare.accuracy  91.2%                      88%\n"
            "(* the runs differ in this row)\n");
  out_.str("");
  ASSERT_EQ(compare_command(inputs, "accuracy", args(false), connection_, &transport_, out_, err_), 0);
  EXPECT_NE(out_.str().find("* prepare.accuracy  91.2%"), std::string::npos) << out_.str();
  EXPECT_EQ(out_.str().find("fit.loss"), std::string::npos) << out_.str();
}

TEST_F(ClientOperate, RunsCompareShowsTwoV2RunsAndSaysTheyHaveNoMetrics) {
  transport_.answer("GET /apis/v2beta1/runs/r2", read_data("run_v2_failed.json"));
  transport_.answer("GET /apis/v2beta1/runs/r4", read_data("run_v2_succeeded.json"));
  std::vector<CompareInput> inputs{{"r2", false, {}}, {"r4", false, {}}};
  ASSERT_EQ(compare_command(inputs, "", args(true), connection_, &transport_, out_, err_), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "  run      train v2      train v2 again\n"
            "* state    FAILED        SUCCEEDED\n"
            "parameters:\n"
            "  layers   [3,2]         [3,2]\n"
            "* lr       0.001         0.01\n"
            "  message  it's \"$(id)\"  it's \"$(id)\"\n"
            "metrics: none\n"
            "note: run 'train v2' is a v2beta1 run, whose API gives no metrics (KFP v2 keeps them as artifacts)\n"
            "note: run 'train v2 again' is a v2beta1 run, whose API gives no metrics (KFP v2 keeps them as "
            "artifacts)\n"
            "(* the runs differ in this row)\n");
}

// The JSON of docs/client.md "Comparing runs": its members, their types and order.
TEST_F(ClientOperate, RunsCompareJsonFollowsItsDocumentedSchema) {
  transport_.answer("GET /apis/v1beta1/runs/r1", read_data("run_v1_failed.json"));
  transport_.answer("GET /apis/v1beta1/runs/r3", read_data("run_v1_succeeded.json"));
  ComparedRun local;
  local.run = local.id = "pipec-runs/p-1";
  local.source = "local";
  local.name = "p-1";
  local.state = "succeeded";
  local.parameters = {{"lr", "0.01"}};
  local.metrics = {{"fit.loss", 0.5, ""}};
  std::vector<CompareInput> inputs{{"r1", false, {}}, {"r3", false, {}}, {"pipec-runs/p-1", true, local}};
  ASSERT_EQ(compare_command(inputs, "", args(false, true), connection_, &transport_, out_, err_), 0) << err_.str();
  json doc = json::parse(out_.str());
  auto keys = [](const json& object) {
    std::vector<std::string> out;
    for (const auto& [k, v] : object.items()) out.push_back(k);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(keys(doc), (std::vector<std::string>{"format", "metrics", "parameters", "runs"}));
  EXPECT_EQ(doc["format"], "pipec-runs-compare/1");
  ASSERT_EQ(doc["runs"].size(), 3u);
  for (const json& run : doc["runs"]) {
    EXPECT_EQ(keys(run), (std::vector<std::string>{"id", "name", "run", "source", "state"}));
    for (const auto& [k, v] : run.items()) EXPECT_TRUE(v.is_string()) << k;
  }
  EXPECT_EQ(doc["runs"][0]["source"], "v1beta1");
  EXPECT_EQ(doc["runs"][0]["run"], "r1");
  EXPECT_EQ(doc["runs"][2]["source"], "local");
  std::vector<std::string> names;
  for (const json& p : doc["parameters"]) {
    EXPECT_EQ(keys(p), (std::vector<std::string>{"differs", "name", "values"}));
    EXPECT_TRUE(p["differs"].is_boolean());
    ASSERT_EQ(p["values"].size(), 3u);
    for (const json& v : p["values"]) EXPECT_TRUE(v.is_string() || v.is_null()) << p;
    names.push_back(p["name"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"layers", "lr"}));
  EXPECT_EQ(doc["parameters"][0]["values"], json::parse(R"(["[3,2]", "[3,2]", null])"));
  EXPECT_EQ(doc["parameters"][0]["differs"], true);
  names.clear();
  for (const json& m : doc["metrics"]) {
    EXPECT_EQ(keys(m), (std::vector<std::string>{"differs", "formats", "name", "values"}));
    ASSERT_EQ(m["values"].size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(m["values"][i].is_number() || m["values"][i].is_null()) << m;
      EXPECT_EQ(m["values"][i].is_null(), m["formats"][i].is_null()) << m;
      if (m["formats"][i].is_string()) {
        EXPECT_TRUE(m["formats"][i] == "RAW" || m["formats"][i] == "PERCENTAGE") << m;
      }
    }
    names.push_back(m["name"]);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"fit.loss", "prepare.accuracy"}));
  EXPECT_EQ(doc["metrics"][0]["values"], json::parse("[null, 0.25, 0.5]"));
  EXPECT_EQ(doc["metrics"][1]["values"], json::parse("[0.912, 0.88, null]"));
  EXPECT_EQ(doc["metrics"][1]["formats"], json::parse(R"(["PERCENTAGE", "PERCENTAGE", null])"));
}

// `pipec runs wait` / `run --wait`: each step's change once, then the failed steps.
TEST_F(ClientOperate, WaitPrintsEachStepsStateChangesFromRecordedV1Answers) {
  json failed = json::parse(read_data("run_v1_failed.json"));
  // The same run earlier: Running, `prepare` running and `fit` not started yet.
  json running = failed;
  running["run"]["status"] = "Running";
  json wf = json::parse(running["pipeline_runtime"]["workflow_manifest"].get<std::string>());
  wf["status"]["nodes"]["train-x7k2p-1787723858"]["phase"] = "Running";
  wf["status"]["nodes"].erase("train-x7k2p-3721646052");
  running["pipeline_runtime"]["workflow_manifest"] = wf.dump();
  json later = failed;
  later["run"]["status"] = "Running";
  wf = json::parse(later["pipeline_runtime"]["workflow_manifest"].get<std::string>());
  wf["status"]["nodes"]["train-x7k2p-3721646052"]["phase"] = "Running";
  wf["status"]["nodes"]["train-x7k2p-3721646052"].erase("message");  // said as it failed
  later["pipeline_runtime"]["workflow_manifest"] = wf.dump();
  for (const json& answer : {running, running, later, failed})
    transport_.answer("GET /apis/v1beta1/runs/r1", answer.dump());
  std::string log;
  for (int i = 1; i <= 25; ++i) log += "epoch " + std::to_string(i) + "\n";
  transport_.answer("GET /k8s/pod/logs", log + "Traceback (most recent call last):\nValueError: nan loss");
  int status = wait_command("r1", {std::chrono::milliseconds(0), std::chrono::milliseconds(1)},
                            args(false), connection_, transport_, out_, err_);
  EXPECT_EQ(status, kExitRunFailed);
  EXPECT_EQ(out_.str(),
            "run state: Running\n"
            "  step prepare: Running\n"
            "  step prepare: Succeeded\n"
            "  step fit: Running\n"
            "run state: Failed\n"
            "  step fit: Failed: Error (exit code 1)\n"
            "metrics:\n"
            "  step                    metric    value\n"
            "  train-x7k2p-1787723858  accuracy  91.2%\n"
            "series: none (no step of the run lists the artifact metric-series)\n"
            "step 'fit' Failed; the end of its log (pipec logs r1 'fit' for all of it):\n"
            "  | epoch 8\n  | epoch 9\n  | epoch 10\n  | epoch 11\n  | epoch 12\n  | epoch 13\n"
            "  | epoch 14\n  | epoch 15\n  | epoch 16\n  | epoch 17\n  | epoch 18\n  | epoch 19\n"
            "  | epoch 20\n  | epoch 21\n  | epoch 22\n  | epoch 23\n  | epoch 24\n  | epoch 25\n"
            "  | Traceback (most recent call last):\n"
            "  | ValueError: nan loss\n");
  // The failed step's pod, named as Argo names it (WORKFLOW-TEMPLATE-HASH), in its namespace.
  const std::string& url = transport_.requests.back().url;
  EXPECT_EQ(query_value(url, "podname"), "train-x7k2p-fit-3721646052");
  EXPECT_EQ(query_value(url, "runid"), "r1");
  EXPECT_EQ(query_value(url, "podnamespace"), "kubeflow");
  EXPECT_EQ(err_.str(),
            "pipec: error: run 'train 2026-05-01 10:00:00' Failed: child 'train-x7k2p-3721646052' "
            "failed\n");
}

TEST_F(ClientOperate, WaitPrintsEachStepsStateChangesFromRecordedV2Answers) {
  json failed = json::parse(read_data("run_v2_failed.json"));
  json running = failed;
  running["state"] = "RUNNING";
  running["run_details"]["task_details"][0]["state"] = "RUNNING";
  running["run_details"]["task_details"][2]["state"] = "RUNNING";
  running["run_details"]["task_details"][2].erase("error");  // set as it failed
  transport_.answer("GET /apis/v2beta1/runs/r2", running.dump());
  transport_.answer("GET /apis/v2beta1/runs/r2", failed.dump());
  int status = wait_command("r2", {std::chrono::milliseconds(0), std::chrono::milliseconds(1)},
                            args(true), connection_, transport_, out_, err_);
  EXPECT_EQ(status, kExitRunFailed);
  EXPECT_EQ(out_.str(),
            "run state: RUNNING\n"
            "  step train: RUNNING\n"
            "  step prepare: SUCCEEDED\n"
            "  step fit: RUNNING\n"
            "run state: FAILED\n"
            "  step train: FAILED\n"
            "  step fit: FAILED: exit code 1\n"
            "step 'fit' FAILED: see its log with: pipec logs r2 'fit'\n");
  EXPECT_EQ(err_.str(), "pipec: error: run 'train v2' FAILED: task 'fit' failed: exit code 1\n");
}

// Why a step waits or failed, as the server said it (issue 37): the Argo node messages of
// run_v1_pending.json and the v2 task error of run_v2_oom.json (fixtures above).
TEST_F(ClientOperate, RunsGetShowsWhyAStepWaitsOrFailed) {
  transport_.answer("GET /apis/v1beta1/runs/r1", read_data("run_v1_pending.json"));
  transport_.answer("GET /apis/v2beta1/runs/r2", read_data("run_v2_oom.json"));
  ASSERT_EQ(get_command(Kind::Run, "r1", args(false), connection_, transport_, out_, err_), 0) << err_.str();
  std::string v1 = out_.str();
  EXPECT_NE(v1.find("steps:\n"
                    "  step      state      duration  reason\n"
                    "  prepare   Succeeded  1m05s\n"
                    "  fit       Pending    -         Unschedulable: 0/3 nodes are available: 3 Insufficient "
                    "nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found for "
                    "incoming pod.\n"
                    "  evaluate  Failed     2m28s     OOMKilled (exit code 137)\n"
                    "  fetch     Pending    -         ImagePullBackOff: Back-off pulling image "
                    "\"registry.example.com/fetch:1.2\"\n"),
            std::string::npos)
      << v1;
  out_.str("");
  ASSERT_EQ(get_command(Kind::Run, "r2", args(true), connection_, transport_, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("  evaluate  FAILED     1m55s     OOMKilled (exit code 137)\n"), std::string::npos)
      << out_.str();
}

// run --wait / runs wait: a pending step's reason as it appears, again when it changes.
TEST_F(ClientOperate, WaitShowsWhyAStepWaitsFromRecordedV1Answers) {
  json pending = json::parse(read_data("run_v1_pending.json"));
  json failed = pending;
  failed["run"]["status"] = "Failed";
  json wf = json::parse(failed["pipeline_runtime"]["workflow_manifest"].get<std::string>());
  wf["status"]["phase"] = "Failed";
  for (const char* id : {"train-x7k2p-3721646052", "train-x7k2p-2210553201"}) {
    wf["status"]["nodes"][id]["phase"] = "Failed";
    wf["status"]["nodes"][id]["finishedAt"] = "2026-05-01T10:12:05Z";
  }
  failed["pipeline_runtime"]["workflow_manifest"] = wf.dump();
  for (const json& answer : {pending, pending, failed}) transport_.answer("GET /apis/v1beta1/runs/r1", answer.dump());
  transport_.answer("GET /k8s/pod/logs", "");
  int status = wait_command("r1", {std::chrono::milliseconds(0), std::chrono::milliseconds(1)}, args(false),
                            connection_, transport_, out_, err_);
  EXPECT_EQ(status, kExitRunFailed);
  std::string out = out_.str();
  const std::string gpus = "  step fit: Pending: Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.";
  auto at = out.find(gpus);
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_EQ(out.find(gpus, at + 1), std::string::npos) << "said once while it stays: " << out;
  EXPECT_NE(out.find("  step evaluate: Failed: OOMKilled (exit code 137)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  step fetch: Pending: ImagePullBackOff: Back-off pulling image"), std::string::npos) << out;
  EXPECT_NE(out.find("  step fit: Failed: Unschedulable: 0/3 nodes"), std::string::npos) << out;
}

// Newest first, the experiment by name, the state as each API spells it, archived runs
// left out, and every page followed with --all.
TEST_F(ClientOperate, RunsListFiltersAndFollowsPagesOnV1) {
  transport_.answer("GET /apis/v1beta1/experiments",
                    R"({"experiments":[{"id":"e1","name":"nightly"}],"total_size":1})");
  json detail = json::parse(read_data("run_v1_failed.json"));
  json page1 = {{"runs", {detail["run"]}}, {"total_size", 2}, {"next_page_token", "tok/2=="}};
  json second = detail["run"];
  second["id"] = "r-older";
  second["name"] = "older\nline";  // a server value never breaks the table
  json page2 = {{"runs", {second}}, {"total_size", 2}};
  transport_.answer("GET /apis/v1beta1/runs", page1.dump());
  transport_.answer("GET /apis/v1beta1/runs", page2.dump());
  ListArgs list;
  list.experiment = "nightly";
  list.state = "failed";
  list.all = true;
  list.page_size = 1;
  ASSERT_EQ(list_command(Kind::Run, list, args(false), connection_, transport_, out_, err_), 0)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "ID                                    NAME                       STATE   CREATED               FINISHED\n"
            "3f1c2d4e-0000-4000-8000-000000000001  train 2026-05-01 10:00:00  Failed  2026-05-01T09:59:58Z  2026-05-01T10:12:05Z\n"
            "r-older                               older line                 Failed  2026-05-01T09:59:58Z  2026-05-01T10:12:05Z\n");
  ASSERT_EQ(transport_.requests.size(), 3u);
  const std::string& first = transport_.requests[1].url;
  const std::string& next = transport_.requests[2].url;
  EXPECT_EQ(query_value(first, "sort_by"), "created_at desc");
  EXPECT_EQ(query_value(first, "page_size"), "1");
  EXPECT_EQ(query_value(first, "page_token"), "");
  EXPECT_EQ(query_value(next, "page_token"), "tok/2==");
  EXPECT_EQ(query_value(first, "resource_reference_key.type"), "EXPERIMENT");
  EXPECT_EQ(query_value(first, "resource_reference_key.id"), "e1");
  EXPECT_EQ(json::parse(query_value(first, "filter")),
            json::parse(R"({"predicates":[{"op":"EQUALS","key":"status","string_value":"Failed"},
              {"op":"NOT_EQUALS","key":"storage_state","string_value":"STORAGESTATE_ARCHIVED"},
              {"op":"NOT_EQUALS","key":"storage_state","string_value":"ARCHIVED"}]})"));
  expect_filter_follows_spec(query_value(first, "filter"), "v1beta1");
  expect_filter_follows_spec(query_value(transport_.requests[0].url, "filter"), "v1beta1");
}

TEST_F(ClientOperate, RunsListOnV2UsesItsOwnParametersAndStableJson) {
  transport_.answer("GET /apis/v2beta1/experiments",
                    R"({"experiments":[{"experiment_id":"e1","display_name":"nightly"}]})");
  json run = json::parse(read_data("run_v2_failed.json"));
  transport_.answer("GET /apis/v2beta1/runs",
                    json{{"runs", {run}}, {"next_page_token", "p2"}}.dump());
  connection_.namespace_name = "team-a";
  ListArgs list;
  list.experiment = "nightly";
  list.state = "Running";
  ASSERT_EQ(list_command(Kind::Run, list, args(true, true), connection_, transport_, out_, err_), 0)
      << err_.str();
  json answer = json::parse(out_.str());
  EXPECT_EQ(answer["next_page_token"], "p2");
  ASSERT_EQ(answer["items"].size(), 1u);
  EXPECT_EQ(answer["items"][0]["id"], "7c7c7c7c-0000-4000-8000-000000000002");
  EXPECT_EQ(answer["items"][0]["state"], "FAILED");
  const std::string& url = transport_.requests[1].url;
  EXPECT_EQ(query_value(url, "experiment_id"), "e1");
  EXPECT_EQ(query_value(url, "namespace"), "team-a");
  EXPECT_EQ(json::parse(query_value(url, "filter")),
            json::parse(R"({"predicates":[{"operation":"EQUALS","key":"state","string_value":"RUNNING"},
              {"operation":"NOT_EQUALS","key":"storage_state","string_value":"ARCHIVED"}]})"));
  expect_filter_follows_spec(query_value(url, "filter"), "v2beta1");
  EXPECT_TRUE(err_.str().empty()) << err_.str();
}

TEST_F(ClientOperate, ATableNamesTheNextPage) {
  transport_.answer("GET /apis/v1beta1/pipelines",
                    R"({"pipelines":[{"id":"p1","name":"train","created_at":"2026-05-01T00:00:00Z"}],
                        "next_page_token":"abc"})");
  ASSERT_EQ(list_command(Kind::Pipeline, {}, args(false), connection_, transport_, out_, err_), 0);
  EXPECT_EQ(out_.str(),
            "ID  NAME   CREATED\n"
            "p1  train  2026-05-01T00:00:00Z\n");
  EXPECT_EQ(err_.str(), "more: --page-token 'abc' (or --all)\n");
}

// Each action's method and path, per API version (the specs' paths).
TEST_F(ClientOperate, ActionsUseEachApisPaths) {
  struct Row {
    Kind kind;
    Action action;
    const char* v1;
    const char* v2;
  };
  const Row rows[] = {
      {Kind::Run, Action::Terminate, "POST /apis/v1beta1/runs/r%2F1/terminate", "POST /apis/v2beta1/runs/r%2F1:terminate"},
      {Kind::Run, Action::Retry, "POST /apis/v1beta1/runs/r%2F1/retry", "POST /apis/v2beta1/runs/r%2F1:retry"},
      {Kind::Run, Action::Archive, "POST /apis/v1beta1/runs/r%2F1:archive", "POST /apis/v2beta1/runs/r%2F1:archive"},
      {Kind::Run, Action::Delete, "DELETE /apis/v1beta1/runs/r%2F1", "DELETE /apis/v2beta1/runs/r%2F1"},
      {Kind::Schedule, Action::Enable, "POST /apis/v1beta1/jobs/r%2F1/enable", "POST /apis/v2beta1/recurringruns/r%2F1:enable"},
      {Kind::Schedule, Action::Disable, "POST /apis/v1beta1/jobs/r%2F1/disable", "POST /apis/v2beta1/recurringruns/r%2F1:disable"},
      {Kind::Schedule, Action::Delete, "DELETE /apis/v1beta1/jobs/r%2F1", "DELETE /apis/v2beta1/recurringruns/r%2F1"},
  };
  for (const Row& row : rows) {
    for (bool v2 : {false, true}) {
      ScriptedTurns transport;
      std::string want = v2 ? row.v2 : row.v1;
      std::string method = want.substr(0, want.find(' '));
      transport.answer(method + " " + want.substr(want.find(' ') + 1), "{}");
      out_.str("");
      err_.str("");
      EXPECT_EQ(act_command(row.kind, row.action, "r/1", "", args(v2), connection_, transport, out_, err_), 0)
          << want << ": " << err_.str();
      ASSERT_EQ(transport.requests.size(), 1u);
      EXPECT_EQ(transport.requests[0].method + " " + transport.requests[0].url.substr(15), want);
    }
  }
}

// A refusal: the server's text, what pipec was doing, exit status 1, and no retry of a POST.
TEST_F(ClientOperate, AServerErrorIsShownWithItsText) {
  transport_.answer("POST /apis/v1beta1/runs/r1/terminate",
                    R"({"error":"Failed to terminate run r1","code":9,"message":"Failed to terminate run r1: run is already finished","details":[]})",
                    400);
  EXPECT_EQ(act_command(Kind::Run, Action::Terminate, "r1", "", args(false), connection_, transport_,
                        out_, err_),
            1);
  EXPECT_EQ(err_.str(),
            "pipec: error: cannot stop run 'r1': HTTP 400 Bad Request: Failed to terminate run r1: "
            "run is already finished\n");
  EXPECT_EQ(transport_.requests.size(), 1u);
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(ClientOperate, PipelinesDeleteOneVersionByName) {
  transport_.answer("GET /apis/v2beta1/pipelines",
                    R"({"pipelines":[{"pipeline_id":"p1","display_name":"train"}]})");
  transport_.answer("GET /apis/v2beta1/pipelines/p1/versions",
                    R"({"pipeline_versions":[{"pipeline_id":"p1","pipeline_version_id":"v9","display_name":"1.0"}]})");
  transport_.answer("DELETE /apis/v2beta1/pipelines/p1/versions/v9", "{}");
  ASSERT_EQ(act_command(Kind::Pipeline, Action::Delete, "train", "1.0", args(true), connection_,
                        transport_, out_, err_),
            0)
      << err_.str();
  EXPECT_EQ(out_.str(), "deleted version '1.0' (id v9) of pipeline 'train'\n");
  EXPECT_EQ(transport_.requests.back().method, "DELETE");
}

TEST_F(ClientOperate, ExperimentsCreateOnlyWhenMissing) {
  transport_.answer("GET /apis/v1beta1/experiments", R"({})");
  transport_.answer("POST /apis/v1beta1/experiments", R"({"id":"e7","name":"nightly"})");
  ASSERT_EQ(experiment_create_command("nightly", "every night", args(false), connection_, transport_,
                                      out_, err_),
            0);
  EXPECT_EQ(out_.str(), "created experiment 'nightly' (id e7)\n");
  EXPECT_EQ(json::parse(transport_.requests[1].body),
            (json{{"name", "nightly"}, {"description", "every night"}}));
}

// Schedules: the body of a job / recurring run, with the overrides typed as `run` sends
// them (v1beta1: canonical text; v2beta1: JSON values), against the stateful fake.
class ClientSchedule : public ::testing::Test {
 protected:
  LocalPackage package_from(const std::string& text, const std::string& filename) {
    LocalPackage package;
    EXPECT_TRUE(load_package_bytes(text, filename, package));
    return package;
  }
  testing::FakeKfp fake_;
  CurlTransport transport_{TransportOptions{}};
  std::ostringstream out_, err_;
};

TEST_F(ClientSchedule, AV1JobCarriesTheCronAndCanonicalOverrides) {
  ScheduleArgs args;
  args.run.params = {"data=s3://b/x", "lr=1e-4", "layers=[ 3, 2 ]"};
  args.run.experiment = "nightly";
  args.run.retry = fast_retries();
  args.cron = "0 0 2 * * *";
  args.max_concurrency = 2;
  args.catchup = false;
  args.start_time = "2026-12-01T00:00:00Z";
  ASSERT_EQ(schedule_create_command(package_from(read_data("typed.yaml"), "train.yaml"), "", args,
                                    test_connection(fake_.url()), transport_, out_, err_),
            0)
      << err_.str();
  json body = fake_.last_schedule_request();
  EXPECT_EQ(body["name"], "train");
  EXPECT_EQ(body["trigger"], json::parse(R"({"cron_schedule":{"cron":"0 0 2 * * *","start_time":"2026-12-01T00:00:00Z"}})"));
  EXPECT_EQ(body["max_concurrency"], "2");
  EXPECT_EQ(body["no_catchup"], true);
  EXPECT_EQ(body["enabled"], true);
  EXPECT_EQ(body["pipeline_spec"]["parameters"],
            json::parse(R"([{"name":"data","value":"s3://b/x"},{"name":"lr","value":"0.0001"},
                            {"name":"layers","value":"[3,2]"}])"));
  EXPECT_EQ(body["resource_references"][0]["key"]["type"], "EXPERIMENT");
  EXPECT_EQ(body["resource_references"][1]["key"]["type"], "PIPELINE_VERSION");
  EXPECT_NE(out_.str().find("created schedule 'train' (id job-"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("cron '0 0 2 * * *'"), std::string::npos) << out_.str();
}

TEST_F(ClientSchedule, AV2RecurringRunCarriesTypedOverridesAndAnInterval) {
  ScheduleArgs args;
  args.run.params = {"lr=0.5", "layers=[3, 4]", "epochs=7", "dry=true", "message=it's \"$(id)\"\n{{x}}"};
  args.run.retry = fast_retries();
  args.interval_seconds = 6 * 3600;
  args.enabled = false;
  ASSERT_EQ(schedule_create_command(package_from(read_data("typed_v2.yaml"), "train.yaml"), "", args,
                                    test_connection(fake_.url()), transport_, out_, err_),
            0)
      << err_.str();
  json body = fake_.last_schedule_request();
  EXPECT_EQ(body["display_name"], "train");
  EXPECT_EQ(body["runtime_config"]["parameters"],
            json::parse(R"({"lr": 0.5, "layers": [3, 4], "epochs": 7, "dry": true,
                            "message": "it's \"$(id)\"\n{{x}}"})"));
  EXPECT_EQ(body["trigger"], json::parse(R"({"periodic_schedule":{"interval_second":"21600"}})"));
  EXPECT_EQ(body["mode"], "DISABLE");
  EXPECT_EQ(body["no_catchup"], false);
  EXPECT_FALSE(body.value("experiment_id", "").empty());
  EXPECT_EQ(fake_.count("POST /apis/v1beta1"), 0);
}

TEST_F(ClientSchedule, BadOverridesSendNothing) {
  ScheduleArgs args;
  args.run.params = {"epochs=many"};
  args.cron = "0 0 2 * * *";
  EXPECT_EQ(schedule_create_command(package_from(read_data("typed_v2.yaml"), "train.yaml"), "", args,
                                    test_connection(fake_.url()), transport_, out_, err_),
            1);
  EXPECT_EQ(fake_.requests().size(), 0u);
  EXPECT_NE(err_.str().find("parameter 'epochs' (int): 'many' is not an integer"), std::string::npos)
      << err_.str();
}

}  // namespace
}  // namespace pipec::client::kfp
