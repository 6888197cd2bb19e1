// The upload and run flows, and the whole commands, against the stateful fake.

#include "compiler/client/kfp/flows.hpp"

#include <sstream>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "compiler/client/kfp/commands.hpp"
#include "compiler/base/sha256.hpp"
#include "tests/client/fake_kfp.hpp"
#include "tests/client/test_support.hpp"

namespace pipec::client::kfp {
namespace {

using nlohmann::json;
using testing::FakeKfp;
using testing::fast_retries;
using testing::make_archive;
using testing::read_data;
using testing::test_connection;

LocalPackage package_from(const std::string& yaml, const std::string& filename = "train.tar.gz") {
  LocalPackage package;
  std::string bytes = filename.size() > 5 && filename.substr(filename.size() - 5) == ".yaml"
                          ? yaml
                          : make_archive({{"pipeline.yaml", yaml}});
  Status status = load_package_bytes(bytes, filename, package);
  EXPECT_TRUE(status) << status.message();
  return package;
}

class ClientFlows : public ::testing::Test {
 protected:
  KfpApi api() { return KfpApi(transport_, test_connection(fake_.url()), fast_retries()); }

  FakeKfp fake_;
  CurlTransport transport_{TransportOptions{}};
  std::string yaml_ = read_data("typed.yaml");
};

TEST_F(ClientFlows, UploadCreatesThenAddsVersionsNamedByContent) {
  KfpApi client = api();
  LocalPackage first = package_from(yaml_);
  UploadResult result;
  ASSERT_TRUE(upload(client, first, {}, result));
  EXPECT_TRUE(result.created_pipeline);
  EXPECT_EQ(result.pipeline.name, "train");  // from the workflow's annotation
  EXPECT_EQ(result.version.name, "train");   // KFP names the first version like the pipeline
  auto versions = fake_.versions(result.pipeline.id);
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions[0].filename, "train.tar.gz");
  EXPECT_EQ(versions[0].yaml, yaml_);

  // Same name again: a version named after the content.
  ApiStatus again = upload(client, first, {}, result);
  ASSERT_TRUE(again) << again.message << ::testing::PrintToString(fake_.requests());
  EXPECT_FALSE(result.created_pipeline);
  std::string derived = "sha256-" + sha256_hex(yaml_).substr(0, 12);
  EXPECT_EQ(content_version_name(first), derived);
  EXPECT_EQ(result.version.name, derived);
  EXPECT_EQ(fake_.versions(result.pipeline.id).size(), 2u);

  // Same content a third time: that version is found, nothing is uploaded.
  int posts = fake_.count("POST");
  ASSERT_TRUE(upload(client, first, {}, result));
  EXPECT_TRUE(result.reused_version);
  EXPECT_EQ(result.version.name, derived);
  EXPECT_EQ(fake_.count("POST"), posts);

  // Other content: another version; an explicit name is used as given.
  LocalPackage changed = package_from(yaml_ + "# changed\n");
  ASSERT_TRUE(upload(client, changed, {"", "", "v2"}, result));
  EXPECT_EQ(result.version.name, "v2");
  EXPECT_EQ(fake_.versions(result.pipeline.id).size(), 3u);
  EXPECT_EQ(fake_.pipeline_count(), 1);
}

TEST_F(ClientFlows, AnExistingVersionNameIsAnErrorBeforeUploading) {
  KfpApi client = api();
  LocalPackage package = package_from(yaml_);
  UploadResult result;
  ASSERT_TRUE(upload(client, package, {}, result));
  ASSERT_TRUE(upload(client, package, {"", "", "v1"}, result));
  int posts = fake_.count("POST");
  ApiStatus status = upload(client, package, {"", "", "v1"}, result);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message,
            "cannot add version 'v1' to pipeline 'train' (id " + result.pipeline.id +
                "): a version of that name exists already\n"
                "  hint: choose another --version, or leave it out to name the version after "
                "the content");
  EXPECT_EQ(fake_.count("POST"), posts);
}

TEST_F(ClientFlows, FirstUploadWithAVersionNameAddsThatVersion) {
  KfpApi client = api();
  UploadResult result;
  ASSERT_TRUE(upload(client, package_from(yaml_), {"my-train", "desc", "1.0.0"}, result));
  EXPECT_TRUE(result.created_pipeline);
  EXPECT_EQ(result.pipeline.name, "my-train");
  EXPECT_EQ(result.version.name, "1.0.0");
  auto versions = fake_.versions(result.pipeline.id);
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[1].id, result.version.id);
}

// The listing did not show the pipeline (another upload won the race): the 409 leads to a
// lookup and a version, not to the same upload again. Also with KFP 1.8's 500.
TEST_F(ClientFlows, AConflictOnUploadBecomesAVersion) {
  for (bool legacy : {false, true}) {
    SCOPED_TRACE(legacy ? "1.8" : "HEAD");
    FakeKfp fake;
    fake.legacy = legacy;
    std::string id = fake.add_pipeline("train", yaml_);
    fake.fail("GET /apis/v1beta1/pipelines?", 200, 1, "{}");
    KfpApi client(transport_, test_connection(fake.url()), fast_retries());
    UploadResult result;
    ASSERT_TRUE(upload(client, package_from(yaml_), {}, result));
    EXPECT_EQ(result.pipeline.id, id);
    EXPECT_EQ(fake.count("POST /apis/v1beta1/pipelines/upload?"), 1);
    EXPECT_EQ(fake.count("POST /apis/v1beta1/pipelines/upload_version?"), 1);
    EXPECT_EQ(fake.versions(id).size(), 2u);
  }
}

TEST_F(ClientFlows, APackageOver32MiBIsRefusedBeforeAnyRequest) {
  KfpApi client = api();
  std::string big = yaml_ + "# " + std::string(std::size_t{32} << 20, 'x') + "\n";
  LocalPackage package = package_from(big, "big.yaml");
  UploadResult result;
  ApiStatus status = upload(client, package, {}, result);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message, fmt::format("cannot upload 'big.yaml': the package has {} bytes; the "
                                        "server takes at most 33554432 (32 MiB)",
                                        big.size()));
  EXPECT_TRUE(fake_.requests().empty());
}

TEST_F(ClientFlows, WaitFollowsTheRunToSuccessWithMetrics) {
  fake_.script_runs({"Pending", "Running", "Running", "Succeeded"},
                    json::array({{{"name", "accuracy"}, {"node_id", "train-1234"},
                                  {"number_value", 0.912}, {"format", "PERCENTAGE"}},
                                 {{"name", "loss"}, {"node_id", "train-1234"},
                                  {"number_value", 0.25}, {"format", "RAW"}}}));
  std::string id = fake_.add_pipeline("train", yaml_);
  KfpApi client = api();
  ExperimentInfo experiment;
  ASSERT_TRUE(client.create_experiment("e", experiment));
  RunInfo run;
  ASSERT_TRUE(client.create_run(RunRequest{"r", "", experiment.id, id, "", {}}, run));
  std::ostringstream progress;
  RunInfo last;
  RunEnd end = RunEnd::TimedOut;
  ASSERT_TRUE(wait_for_run(client, run.id, {std::chrono::seconds(20), std::chrono::milliseconds(5)},
                           progress, last, end));
  EXPECT_EQ(end, RunEnd::Succeeded);
  EXPECT_EQ(progress.str(), "run state: Pending\nrun state: Running\nrun state: Succeeded\n");
  EXPECT_EQ(metrics_table(last.metrics),
            "  step        metric    value\n"
            "  train-1234  accuracy  91.2%\n"
            "  train-1234  loss      0.25\n");
}

class ClientCommands : public ClientFlows {
 protected:
  int run(const std::optional<LocalPackage>& package, const std::string& pipeline_id,
          RunArgs args) {
    args.poll = std::chrono::milliseconds(5);
    args.retry = fast_retries();
    out_.str("");
    err_.str("");
    return run_command(package, pipeline_id, args, test_connection(fake_.url()), transport_, out_,
                       err_);
  }
  std::ostringstream out_, err_;
};

TEST_F(ClientCommands, RunUploadsCreatesTheExperimentAndSendsCanonicalStrings) {
  RunArgs args;
  args.params = {"data=s3://b/x", "lr=1e-4", "layers=[ 3, 2 ]", "shuffle=false",
                 "message=it's \"$(id)\"\n{{workflow.uid}}"};
  args.experiment = "nightly";
  args.run_name = "first";
  ASSERT_EQ(run(package_from(yaml_), "", args), 0) << err_.str();
  json body = fake_.last_run_request();
  EXPECT_EQ(body["name"], "first");
  EXPECT_EQ(body["pipeline_spec"]["parameters"],
            json::parse(R"([{"name":"data","value":"s3://b/x"},{"name":"lr","value":"0.0001"},
                            {"name":"shuffle","value":"false"},{"name":"layers","value":"[3,2]"},
                            {"name":"message","value":"it's \"$(id)\"\n{{workflow.uid}}"}])"));
  auto experiments = fake_.experiments();
  ASSERT_EQ(experiments.size(), 1u);
  EXPECT_EQ(experiments[0]["name"], "nightly");
  json refs = body["resource_references"];
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0], (json{{"key", {{"type", "EXPERIMENT"}, {"id", experiments[0]["id"]}}},
                           {"relationship", "OWNER"}}));
  EXPECT_EQ(refs[1]["key"]["type"], "PIPELINE_VERSION");
  EXPECT_EQ(refs[1]["relationship"], "CREATOR");
  EXPECT_TRUE(err_.str().empty()) << err_.str();
  EXPECT_NE(out_.str().find("started run 'first' (id run-"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find(fake_.url() + "/#/runs/details/run-"), std::string::npos);

  // Again: the experiment is found, the content is already a version; only the run is new.
  args.run_name = "second";
  ASSERT_EQ(run(package_from(yaml_), "", args), 0) << err_.str();
  EXPECT_EQ(fake_.count("POST /apis/v1beta1/experiments"), 1);
  EXPECT_EQ(fake_.count("POST /apis/v1beta1/pipelines/upload"), 2);  // pipeline, then one version
  EXPECT_EQ(fake_.count("POST /apis/v1beta1/runs"), 2);
  // The v2beta1 runs API ignores overrides for Argo pipelines: never used.
  EXPECT_EQ(fake_.count("POST /apis/v2beta1"), 0);
}

TEST_F(ClientCommands, EveryOverrideErrorIsCaughtBeforeAnyRequest) {
  const std::vector<std::vector<std::string>> bad = {
      {"data=x", "batchsize=1"},          // unknown, did-you-mean
      {"data=x", "workers=many"},         // not an int
      {"data=x", "lr=0.1.2"},             // not a float
      {"data=x", "shuffle=yes"},          // not a bool
      {"data=x", "layers=[1, \"a\"]"},    // list element
      {"data=x", "tags=[1]"},             // map given a list
      {"data=x", "optimizer=adagrad"},    // outside the enum
      {"data=x", "workers=65"},           // above the range
      {"data=x", "batch_size=0"},         // below the range
      {"workers=2"},                      // required 'data' missing
      {"data=x", "data=y"},               // twice
      {"data"},                           // no '='
  };
  for (const auto& params : bad) {
    SCOPED_TRACE(params.back());
    RunArgs args;
    args.params = params;
    EXPECT_EQ(run(package_from(yaml_), "", args), 1);
    EXPECT_NE(err_.str().find("pipec: error: "), std::string::npos);
    EXPECT_TRUE(fake_.requests().empty()) << fake_.requests().front();
  }
  EXPECT_EQ(err_.str(), "pipec: error: -p 'data': expected NAME=VALUE (e.g. -p batch_size=64)\n");
  RunArgs args;
  args.params = {"data=x", "optimizer=adagrad"};
  EXPECT_EQ(run(package_from(yaml_), "", args), 1);
  EXPECT_EQ(err_.str(),
            "pipec: error: parameter 'optimizer': 'adagrad' is not one of 'adam', 'sgd'\n"
            "pipec: nothing was sent: 1 problem with the parameters\n");
  args.params_file = "/nonexistent/params.yaml";
  EXPECT_EQ(run(package_from(yaml_), "", args), 1);
  EXPECT_TRUE(fake_.requests().empty());
}

// For a pipeline given by id, the types come from its uploaded workflow: only the GETs that
// fetch it happen before the check; nothing is created.
TEST_F(ClientCommands, PipelineByIdIsCheckedAgainstItsUploadedWorkflow) {
  std::string id = fake_.add_pipeline("sdk", read_data("kfp-sdk.yaml"));
  RunArgs args;
  args.params = {"epochs=ten", "dropot=0.1"};
  EXPECT_EQ(run(std::nullopt, id, args), 1);
  EXPECT_EQ(err_.str(),
            "pipec: error: parameter 'epochs' (int): 'ten' is not an integer (e.g. 42)\n"
            "pipec: error: unknown parameter 'dropot'; did you mean 'dropout'?\n"
            "pipec: nothing was sent: 2 problems with the parameters\n");
  EXPECT_EQ(fake_.count("POST"), 0);
  EXPECT_EQ(fake_.requests(),
            (std::vector<std::string>{"GET /apis/v1beta1/pipelines/" + id,
                                      "GET /apis/v1beta1/pipeline_versions/" +
                                          fake_.versions(id)[0].id + "/templates"}));
  args.params = {"epochs=10", "dropout=0.25"};
  ASSERT_EQ(run(std::nullopt, id, args), 0) << err_.str();
  EXPECT_EQ(fake_.last_run_request()["pipeline_spec"]["parameters"],
            json::parse(R"([{"name":"epochs","value":"10"},{"name":"dropout","value":"0.25"}])"));
  EXPECT_EQ(fake_.last_run_request()["pipeline_spec"]["pipeline_id"], id);

  args.version = "nope";
  EXPECT_EQ(run(std::nullopt, id, args), 1);
  EXPECT_EQ(err_.str(), "pipec: error: pipeline 'sdk' (id " + id + ") has no version 'nope'\n");
}

TEST_F(ClientCommands, WaitReportsFailureAndTimeoutByExitStatus) {
  RunArgs args;
  args.params = {"data=x"};
  args.wait = true;
  args.run_name = "r";
  fake_.script_runs({"Pending", "Running", "Failed"}, json::array(),
                    "child 'train-1' failed: exit code 3");
  EXPECT_EQ(run(package_from(yaml_), "", args), kExitRunFailed);
  EXPECT_NE(out_.str().find("run state: Pending\nrun state: Running\nrun state: Failed\n"),
            std::string::npos)
      << out_.str();
  EXPECT_EQ(err_.str(), "pipec: error: run 'r' Failed: child 'train-1' failed: exit code 3\n");

  fake_.script_runs({"Pending", "Running"});
  args.timeout = std::chrono::milliseconds(200);
  EXPECT_EQ(run(package_from(yaml_), "", args), kExitRunTimedOut);
  EXPECT_EQ(err_.str().rfind("pipec: error: run 'r' is still Running after the --timeout; it "
                             "goes on: " + fake_.url() + "/#/runs/details/run-",
                             0),
            0u)
      << err_.str();

  fake_.script_runs({"Running", "Succeeded"},
                    json::array({{{"name", "auc"}, {"node_id", "eval"}, {"number_value", 0.5}}}));
  args.timeout = std::chrono::milliseconds(0);
  EXPECT_EQ(run(package_from(yaml_), "", args), 0) << err_.str();
  EXPECT_NE(out_.str().find("metrics:\n  step  metric  value\n  eval  auc     0.5\n"
                            "series: absent from the server's answer (it holds no workflow status, which lists each step's artifact metric-series)\nrun 'r' Succeeded\n"),
            std::string::npos)
      << out_.str();
}

TEST_F(ClientCommands, AFailedRunCreationIsReportedAndNotRepeated) {
  fake_.fail("POST /apis/v1beta1/runs", 500, 1,
             R"({"code":13,"message":"Internal error: Failed to create a workflow","details":[]})");
  RunArgs args;
  args.params = {"data=x"};
  args.run_name = "r";
  EXPECT_EQ(run(package_from(yaml_), "", args), 1);
  EXPECT_EQ(err_.str(), "pipec: error: cannot create run 'r': HTTP 500 Internal Server Error: "
                        "Internal error: Failed to create a workflow\n");
  EXPECT_EQ(fake_.count("POST /apis/v1beta1/runs"), 1);
}

TEST(ClientDuration, Parses) {
  std::chrono::milliseconds d{};
  ASSERT_TRUE(parse_duration("90", d));
  EXPECT_EQ(d, std::chrono::seconds(90));
  ASSERT_TRUE(parse_duration("1h30m", d));
  EXPECT_EQ(d, std::chrono::minutes(90));
  ASSERT_TRUE(parse_duration("250ms", d));
  EXPECT_EQ(d, std::chrono::milliseconds(250));
  EXPECT_FALSE(parse_duration("", d));
  EXPECT_FALSE(parse_duration("10x", d));
  EXPECT_FALSE(parse_duration("m", d));
}

// A KFP v2 pipeline spec goes through the v2beta1 API only, and its run takes typed
// values: numbers as numbers, lists and maps as JSON, strings exactly as given.
TEST_F(ClientCommands, AV2SpecIsUploadedAndRunThroughV2beta1WithTypedValues) {
  std::string spec = read_data("typed_v2.yaml");
  LocalPackage package = package_from(spec, "train.yaml");
  ASSERT_TRUE(package.v2);
  EXPECT_EQ(package.signature.name, "train");
  ASSERT_NE(package.signature.find("layers"), nullptr);
  EXPECT_EQ(package.signature.find("layers")->type.kind, ParamKind::List);
  EXPECT_EQ(package.signature.find("epochs")->default_value, "3");

  RunArgs args;
  args.params = {"lr=0.5", "layers=[3, 4]", "epochs=7", "dry=true", "flags={\"x\": \"y\"}",
                 "message=it's \"$(id)\"\n{{workflow.uid}} {{$.inputs.parameters['lr']}}"};
  args.run_name = "v2 run";
  args.wait = true;
  ASSERT_EQ(run(package, "", args), 0) << err_.str();
  json body = fake_.last_run_request();
  EXPECT_EQ(body["display_name"], "v2 run");
  EXPECT_EQ(body["runtime_config"]["parameters"],
            json::parse(R"({"lr": 0.5, "layers": [3, 4], "epochs": 7, "dry": true,
                            "flags": {"x": "y"},
                            "message": "it's \"$(id)\"\n{{workflow.uid}} {{$.inputs.parameters['lr']}}"})"));
  EXPECT_FALSE(body["pipeline_version_reference"].value("pipeline_version_id", "").empty());
  EXPECT_FALSE(body.value("experiment_id", "").empty());
  EXPECT_EQ(fake_.experiments().at(0)["display_name"], "Default");
  EXPECT_EQ(fake_.count("POST /apis/v1beta1"), 0);
  EXPECT_EQ(fake_.count("GET /apis/v1beta1"), 0);
  EXPECT_NE(out_.str().find("run state: SUCCEEDED"), std::string::npos) << out_.str();

  // As on v1: the same content again becomes a version named after it (the first version
  // is named after the pipeline); a third time that version is found, nothing is uploaded.
  ASSERT_EQ(run(package, "", args), 0) << err_.str();
  std::string pipeline_id = fake_.last_run_request()["pipeline_version_reference"]["pipeline_id"];
  auto versions = fake_.versions(pipeline_id);
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[1].name, content_version_name(package));
  EXPECT_EQ(fake_.last_run_request()["pipeline_version_reference"]["pipeline_version_id"], versions[1].id);
  int uploads = fake_.count("POST /apis/v2beta1/pipelines/upload");
  ASSERT_EQ(run(package, "", args), 0) << err_.str();
  EXPECT_EQ(fake_.count("POST /apis/v2beta1/pipelines/upload"), uploads);
  EXPECT_NE(out_.str().find("has this content already"), std::string::npos) << out_.str();
  EXPECT_EQ(fake_.last_run_request()["pipeline_version_reference"]["pipeline_version_id"], versions[1].id);
}

TEST_F(ClientCommands, AV2PipelineByIdIsCheckedAgainstItsNewestVersionsSpec) {
  std::string id = fake_.add_pipeline("train", read_data("typed_v2.yaml"));
  RunArgs args;
  args.v2 = true;
  args.params = {"epochs=many", "lr=0.25"};
  EXPECT_EQ(run(std::nullopt, id, args), 1);
  EXPECT_NE(err_.str().find("epochs"), std::string::npos) << err_.str();
  EXPECT_EQ(fake_.count("POST"), 0);

  args.params = {"epochs=12", "lr=0.25"};
  ASSERT_EQ(run(std::nullopt, id, args), 0) << err_.str();
  EXPECT_EQ(fake_.last_run_request()["runtime_config"]["parameters"],
            json::parse(R"({"epochs": 12, "lr": 0.25})"));
}

TEST_F(ClientCommands, AFailedV2RunSaysWhyAndExits4) {
  fake_.script_runs({"Running", "Failed"}, json::array(), "task train failed: exit 1");
  RunArgs args;
  args.wait = true;
  EXPECT_EQ(run(package_from(read_data("typed_v2.yaml"), "train.yaml"), "", args), kExitRunFailed);
  EXPECT_NE(err_.str().find("FAILED: task train failed: exit 1"), std::string::npos) << err_.str();
}

TEST_F(ClientCommands, AServerWithoutTheV2ApiGetsOneClearMessage) {
  fake_.legacy = true;  // KFP 1.8: no /apis/v2beta1 routes
  EXPECT_EQ(run(package_from(read_data("typed_v2.yaml"), "train.yaml"), "", RunArgs{}), 1);
  EXPECT_NE(err_.str().find("has no KFP v2 API (/apis/v2beta1 answered HTTP 404)"), std::string::npos)
      << err_.str();
  EXPECT_NE(err_.str().find("needs a KFP 2.x server"), std::string::npos);
  EXPECT_EQ(err_.str().find("Not Found"), std::string::npos) << err_.str();
  EXPECT_EQ(fake_.count("GET /apis/v2beta1/pipelines"), 1);  // a 404 is not retried
}

}  // namespace
}  // namespace pipec::client::kfp
