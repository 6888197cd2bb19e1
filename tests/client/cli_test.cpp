// The real `pipec upload` / `pipec run` binary against the stateful fake KFP.

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "tests/client/cli_support.hpp"
#include "tests/client/test_support.hpp"

namespace pipec::client {
namespace {

using nlohmann::json;
using testing::ClientCli;
using testing::FakeKfp;
using testing::Result;

TEST_F(ClientCli, RunBuildsAPipeFileUploadsAndFollowsTheRun) {
  fake_.script_runs({"Pending", "Running", "Succeeded"},
                    json::array({{{"name", "accuracy"}, {"node_id", "train-x"}, {"number_value", 0.5},
                                  {"format", "PERCENTAGE"}}}));
  Result r = pipec({"run", example("constraints.pipe"), "--host", fake_.url(), "-p", "workers=8",
                    "-p", "optimizer=adam", "--run-name", "r1", "--wait", "--poll", "10ms"});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("uploaded pipeline 'constraints' (id pipeline-"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("created experiment 'Default'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("run state: Pending\nrun state: Running\nrun state: Succeeded\n"
                       "metrics:\n  step     metric    value\n  train-x  accuracy  50%\n"
                       "series: absent from the server's answer (it holds no workflow status, which lists each step's artifact metric-series)\n"
                       "run 'r1' Succeeded\n"),
            std::string::npos)
      << r.out;
  json body = fake_.last_run_request();
  EXPECT_EQ(body["pipeline_spec"]["parameters"],
            json::parse(R"([{"name":"optimizer","value":"adam"},{"name":"workers","value":"8"}])"));
  std::string id = body["pipeline_spec"]["pipeline_id"];
  auto versions = fake_.versions(id);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].filename, "constraints.tar.gz");
  EXPECT_NE(versions[0].yaml.find("pipec.dev/parameters"), std::string::npos);
}

// The operating commands through the real binary (pipec hands them to pipec-kfp):
// a schedule with its cron converted and typed overrides, then a run and its pipeline's
// versions as --output json.
TEST_F(ClientCli, ScheduleRunsAndVersionsThroughTheBinary) {
  Result r = pipec({"schedule", "create", example("constraints.pipe"), "--host", fake_.url(),
                    "--cron", "0 2 * * MON-FRI", "-p", "workers=8", "--max-concurrency", "2",
                    "--no-catchup", "--experiment", "nightly"});
  ASSERT_EQ(r.exit, 0) << r.err;
  json body = fake_.last_schedule_request();
  EXPECT_EQ(body["trigger"]["cron_schedule"]["cron"], "0 0 2 * * MON-FRI");
  EXPECT_EQ(body["max_concurrency"], "2");
  EXPECT_EQ(body["no_catchup"], true);
  EXPECT_EQ(body["pipeline_spec"]["parameters"], json::parse(R"([{"name":"workers","value":"8"}])"));
  EXPECT_NE(r.out.find("created schedule 'constraints' (id job-"), std::string::npos) << r.out;

  r = pipec({"run", example("constraints.pipe"), "--host", fake_.url(), "--run-name", "r1"});
  ASSERT_EQ(r.exit, 0) << r.err;
  std::string id = r.out.substr(r.out.find("(id run-") + 4);
  id = id.substr(0, id.find(')'));
  r = pipec({"runs", "get", id, "--host", fake_.url(), "--output", "json"});
  ASSERT_EQ(r.exit, 0) << r.err;
  json run = json::parse(r.out);
  EXPECT_EQ(run["id"], id);
  EXPECT_EQ(run["name"], "r1");

  r = pipec({"pipelines", "versions", "constraints", "--host", fake_.url(), "-o", "json"});
  ASSERT_EQ(r.exit, 0) << r.err;
  json versions = json::parse(r.out);
  // The first upload's version is named after the pipeline; the run added the content's.
  ASSERT_EQ(versions["items"].size(), 2u);
  std::set<std::string> names;
  for (const json& v : versions["items"]) names.insert(v["name"].get<std::string>());
  EXPECT_EQ(names.count("constraints"), 1u);
  EXPECT_EQ(std::count_if(names.begin(), names.end(),
                          [](const std::string& n) { return n.rfind("sha256-", 0) == 0; }),
            1);

  r = pipec({"runs", "list", "--host", fake_.url(), "--output", "yaml"});
  EXPECT_EQ(r.exit, 2);
}

TEST_F(ClientCli, OverrideErrorsAreCaughtBeforeAnyRequest) {
  Result r = pipec({"run", example("constraints.pipe"), "--host", fake_.url(), "-p", "worker=8",
                    "-p", "optimizer=adamw", "-p", "validation_split=0.9"});
  EXPECT_EQ(r.exit, 1);
  EXPECT_EQ(r.err,
            "pipec: error: unknown parameter 'worker'; did you mean 'workers'?\n"
            "pipec: error: parameter 'optimizer': 'adamw' is not one of 'momentum', 'sgd', "
            "'adam'; did you mean 'adam'?\n"
            "pipec: error: parameter 'validation_split': 0.9 is above the maximum 0.5\n"
            "pipec: nothing was sent: 3 problems with the parameters\n");
  EXPECT_TRUE(fake_.requests().empty());
  r = pipec({"run", data("typed.yaml"), "--host", fake_.url(), "-p", "layers=[1,2]"});
  EXPECT_EQ(r.exit, 1);
  EXPECT_EQ(r.err,
            "pipec: error: parameter 'data' (string) is required and has no default: give it "
            "with -p data=VALUE\n"
            "pipec: nothing was sent: 1 problem with the parameters\n");
  EXPECT_TRUE(fake_.requests().empty());
}

TEST_F(ClientCli, UploadTwiceAddsAVersionNamedByContent) {
  Result r = pipec({"upload", example("constraints.pipe"), "--host", fake_.url()});
  ASSERT_EQ(r.exit, 0) << r.err;
  r = pipec({"upload", example("constraints.pipe"), "--host", fake_.url()});
  ASSERT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.out.rfind("added version 'sha256-", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(fake_.url() + "/#/pipelines/details/pipeline-"), std::string::npos);
  r = pipec({"upload", example("constraints.pipe"), "--host", fake_.url(), "--version", "v1"});
  ASSERT_EQ(r.exit, 0) << r.err;
  r = pipec({"upload", example("constraints.pipe"), "--host", fake_.url(), "--version", "v1"});
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.err.find("a version of that name exists already"), std::string::npos) << r.err;
}

TEST_F(ClientCli, ExitStatusTellsFailureAndTimeout) {
  fake_.script_runs({"Running", "Failed"}, json::array(), "step 'train' failed");
  Result r = pipec({"run", data("typed.yaml"), "--host", fake_.url(), "-p", "data=x", "--wait",
                    "--poll", "10ms", "--run-name", "r"});
  EXPECT_EQ(r.exit, 4) << r.err;
  EXPECT_EQ(r.err, "pipec: error: run 'r' Failed: step 'train' failed\n");
  fake_.script_runs({"Running"});
  r = pipec({"run", data("typed.yaml"), "--host", fake_.url(), "-p", "data=x", "--wait",
             "--poll", "10ms", "--timeout", "300ms"});
  EXPECT_EQ(r.exit, 5) << r.err;
  r = pipec({"run", data("typed.yaml"), "--host", fake_.url(), "--timeout", "soon"});
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(r.err, "pipec: error: --timeout 'soon': expected a duration such as 90s, 15m or 2h\n");
}

TEST_F(ClientCli, ConfigurationFromTheEnvironmentAndTheTokenNeverShows) {
  const std::string token = "sa-token-0123456789abcdef";
  std::ofstream(dir_ / "token") << token << "\n";
  fake_.require_token(token);
  Result r = pipec({"run", data("typed.yaml"), "-p", "data=x", "--user", "alice"},
                   {"KF_PIPELINES_ENDPOINT=" + fake_.url(),
                    "KF_PIPELINES_SA_TOKEN_PATH=" + (dir_ / "token").string()});
  EXPECT_EQ(r.exit, 0) << r.err;
  for (const auto& auth : fake_.header_values("Authorization")) EXPECT_EQ(auth, "Bearer " + token);
  EXPECT_EQ(fake_.header_values("kubeflow-userid").back(), "alice");

  fake_.require_token("another");
  fake_.echo_auth = true;
  r = pipec({"upload", data("typed.yaml"), "--host", fake_.url(), "--token", token});
  EXPECT_EQ(r.exit, 1);
  EXPECT_NE(r.err.find("HTTP 401 Unauthorized"), std::string::npos) << r.err;
  EXPECT_EQ((r.out + r.err).find(token), std::string::npos) << r.err;

  r = pipec({"run", data("typed.yaml")});
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(r.err, "pipec: error: no Kubeflow Pipelines server: give --host URL or set "
                   "KF_PIPELINES_ENDPOINT\n");
}

TEST_F(ClientCli, RunAPipelineByIdAndBadPackages) {
  std::string id = fake_.add_pipeline("sdk", testing::read_data("kfp-sdk.yaml"));
  Result r = pipec({"run", id, "--host", fake_.url(), "-p", "epochs=3"});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(fake_.last_run_request()["pipeline_spec"]["parameters"],
            json::parse(R"([{"name":"epochs","value":"3"}])"));
  std::ofstream(dir_ / "p.tar") << "not a package";
  r = pipec({"upload", (dir_ / "p.tar").string(), "--host", fake_.url()});
  EXPECT_EQ(r.exit, 1);
  EXPECT_EQ(r.err, "pipec: error: '" + (dir_ / "p.tar").string() +
                       "': unexpected pipeline file format: the server takes .zip, .tar.gz, "
                       ".json or YAML\n");
  r = pipec({"run", "missing.tar.gz", "--host", fake_.url()});
  EXPECT_EQ(r.exit, 1);
  EXPECT_EQ(r.err, "pipec: error: cannot read 'missing.tar.gz': No such file or directory\n");
}

// `--target kfp-v2`: the .pipe is built to a v2 spec and run through v2beta1; overrides are
// still checked against the ranges and enumerations the source declares (which a v2 spec
// cannot hold), before any request.
TEST_F(ClientCli, RunTargetKfpV2BuildsTheSpecAndChecksOverridesAsForV1) {
  Result bad = pipec({"run", "--target", "kfp-v2", example("constraints.pipe"), "--host", fake_.url(),
                      "-p", "workers=100", "-p", "optimizer=rmsprop"});
  EXPECT_EQ(bad.exit, 1) << bad.err;
  EXPECT_NE(bad.err.find("workers"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("optimizer"), std::string::npos) << bad.err;
  EXPECT_TRUE(fake_.requests().empty());

  Result r = pipec({"run", "--target", "kfp-v2", example("constraints.pipe"), "--host", fake_.url(),
                    "-p", "workers=8", "-p", "validation_split=0.2", "--run-name", "r2", "--wait",
                    "--poll", "10ms"});
  ASSERT_EQ(r.exit, 0) << r.err;
  json body = fake_.last_run_request();
  EXPECT_EQ(body["runtime_config"]["parameters"], json::parse(R"({"workers": 8, "validation_split": 0.2})"));
  EXPECT_EQ(fake_.count("POST /apis/v1beta1"), 0);
  auto versions = fake_.versions(body["pipeline_version_reference"]["pipeline_id"]);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].filename, "constraints.yaml");
  EXPECT_NE(versions[0].yaml.find("schemaVersion: '2.1.0'"), std::string::npos);
}

TEST_F(ClientCli, UploadTargetKfpV2AndAV2PackageFileUseTheV2Api) {
  Result up = pipec({"upload", "--target", "kfp-v2", example("constraints.pipe"), "--host", fake_.url()});
  ASSERT_EQ(up.exit, 0) << up.err;
  EXPECT_EQ(fake_.count("POST /apis/v2beta1/pipelines/upload?"), 1);
  std::string spec = (dir_ / "typed.yaml").string();
  std::filesystem::copy_file(data("typed_v2.yaml"), spec);
  Result file = pipec({"upload", spec, "--host", fake_.url()});
  ASSERT_EQ(file.exit, 0) << file.err;
  EXPECT_EQ(fake_.count("POST /apis/v2beta1/pipelines/upload?"), 2);
  EXPECT_EQ(fake_.count("POST /apis/v1beta1"), 0);
}

// `runs compare` of local run directories: no server is asked (none is given).
TEST_F(ClientCli, RunsCompareLocalRunDirectories) {
  auto run_dir = [&](const std::string& name, const std::string& outcome, const std::string& lr,
                     const std::string& metrics) {
    std::filesystem::path dir = dir_ / name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "parameters.json") << json{{"lr", lr}, {"epochs", "10"}}.dump();
    std::ofstream(dir / "summary.json")
        << json{{"pipeline", "p"}, {"outcome", outcome}, {"seconds", 1.5},
                {"steps", json::array({{{"step", "train"}, {"kind", "mpi_job"}, {"outcome", outcome},
                                        {"seconds", 1.0}, {"started", 0.0}, {"after", json::array()},
                                        {"metrics", metrics}, {"message", ""}}})}}
               .dump();
    return dir.string();
  };
  std::string a = run_dir("p-1", "succeeded", "1", "loss=0.5 acc=0.9");
  std::string b = run_dir("p-2", "failed", "2", "loss=0.25 acc=0.9");
  Result r = pipec({"runs", "compare", a, b});
  ASSERT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.out,
            "  run         p-1        p-2\n"
            "* state       succeeded  failed\n"
            "parameters:\n"
            "  epochs      10         10\n"
            "* lr          1          2\n"
            "metrics:\n"
            "  train.acc   0.9        0.9\n"
            "* train.loss  0.5        0.25\n"
            "(* the runs differ in this row)\n");
  Result j = pipec({"runs", "compare", a, b, "--metric", "loss", "-o", "json"});
  ASSERT_EQ(j.exit, 0) << j.err;
  json doc = json::parse(j.out);
  EXPECT_EQ(doc["runs"][1], (json{{"run", b}, {"source", "local"}, {"id", b}, {"name", "p-2"}, {"state", "failed"}}));
  EXPECT_EQ(doc["metrics"], json::parse(R"([{"name": "train.loss", "values": [0.5, 0.25],
                                             "formats": ["RAW", "RAW"], "differs": true}])"));
  // Anything but a directory is a server run's id: without a server, a usage error.
  Result missing = pipec({"runs", "compare", a, (dir_ / "nothing").string()});
  EXPECT_EQ(missing.exit, 2);
  EXPECT_NE(missing.err.find("--host"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace pipec::client
