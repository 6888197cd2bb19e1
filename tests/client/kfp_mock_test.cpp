// The client against shared/tools/kfp-mock: Prism serving the upstream KFP swagger on
// loopback, which answers 422 to any request that breaks the spec (a missing
// `uploadfile` part, parameters of the wrong shape, a bad enum) and 401 without an
// Authorization header. It is stateless: ids in its answers are placeholders.

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "compiler/client/kfp/api.hpp"
#include "compiler/client/kfp/flows.hpp"
#include "compiler/client/kfp/resources.hpp"
#include "tests/client/fake_kfp.hpp"
#include "tests/client/test_support.hpp"

namespace pipec::client::kfp {
namespace {

using testing::read_data;
using testing::test_connection;

// Runs a command; returns its standard output, trimmed, and sets `status`.
std::string run(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) {
    status = -1;
    return out;
  }
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  status = ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

class ClientKfpMock : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    int status = 0;
    url_ = run(fmt::format("'{}/start' --port auto --api {}", PIPEC_KFP_MOCK_DIR, GetParam()), status);
    ASSERT_EQ(status, 0) << "kfp-mock did not start (see its log under /tmp/kfp-mock-$UID)";
    ASSERT_EQ(url_.rfind("http://127.0.0.1:", 0), 0u) << url_;
    port_ = url_.substr(url_.rfind(':') + 1);
  }
  void TearDown() override {
    if (port_.empty()) return;
    int status = 0;
    (void)run(fmt::format("'{}/stop' {} 2>&1", PIPEC_KFP_MOCK_DIR, port_), status);
  }
  KfpApi api(const std::string& token = "mock-token") {
    connection_ = test_connection(url_, token);
    connection_.transport.timeout = std::chrono::seconds(60);  // Prism parses multipart slowly
    transport_ = std::make_unique<CurlTransport>(connection_.transport);
    return KfpApi(*transport_, connection_, testing::fast_retries(1));
  }

  std::string url_, port_;
  Connection connection_;
  std::unique_ptr<CurlTransport> transport_;
  std::string yaml_ = read_data("typed.yaml");
};

TEST_P(ClientKfpMock, EveryCallPipecMakesIsAccepted) {
  KfpApi client = api();
  std::string package = testing::make_archive({{"pipeline.yaml", yaml_}});
  PipelineInfo pipeline;
  ApiStatus status = client.upload_pipeline({package, "train.tar.gz", "train", "a description"}, pipeline);
  ASSERT_TRUE(status) << status.message;
  EXPECT_FALSE(pipeline.id.empty());
  VersionInfo version;
  status = client.upload_version("some-pipeline-id", {package, "train.tar.gz", "v2", ""}, version);
  ASSERT_TRUE(status) << status.message;
  EXPECT_FALSE(version.id.empty());

  // The flow: a lookup by name (the mock's answer names "string", so: not found), upload,
  // and the named first version.
  LocalPackage local;
  ASSERT_TRUE(load_package_bytes(yaml_, "train.yaml", local));
  UploadResult result;
  status = upload(client, local, {"", "", "1.0"}, result);
  ASSERT_TRUE(status) << status.message;

  std::optional<ExperimentInfo> found;
  status = client.find_experiment("nightly", found);
  ASSERT_TRUE(status) << status.message;
  ExperimentInfo experiment;
  status = client.create_experiment("nightly", experiment);
  ASSERT_TRUE(status) << status.message;
  RunRequest request{"run 1", "", "exp-id", "pipeline-id", "version-id",
                     {{"layers", "[3,2]"}, {"message", "it's \"$(id)\"\n"}}};
  RunInfo run;
  status = client.create_run(request, run);
  ASSERT_TRUE(status) << status.message;
  status = client.get_run("run-id", run);
  ASSERT_TRUE(status) << status.message;
  std::string template_yaml;
  status = client.get_pipeline_template("pipeline-id", template_yaml);
  ASSERT_TRUE(status) << status.message;
  status = client.get_version_template("version-id", template_yaml);
  ASSERT_TRUE(status) << status.message;
  std::optional<VersionInfo> found_version;
  status = client.find_version("pipeline-id", "v1", found_version);
  ASSERT_TRUE(status) << status.message;

  // Multi-user: namespace references and the kubeflow-userid header.
  connection_.namespace_name = "team-a";
  connection_.user = "alice@example.com";
  KfpApi namespaced(*transport_, connection_, testing::fast_retries(1));
  std::optional<PipelineInfo> found_pipeline;
  status = namespaced.find_pipeline("train", found_pipeline);
  ASSERT_TRUE(status) << status.message;
  status = namespaced.create_experiment("nightly", experiment);
  ASSERT_TRUE(status) << status.message;
  status = namespaced.upload_pipeline({yaml_, "train.yaml", "train", ""}, pipeline);
  ASSERT_TRUE(status) << status.message;
}

// The operating commands' calls (resources.hpp): every listing with a page token, a sort
// and a filter, every get, every action and both kinds of schedule, against the spec.
void every_operating_call(KfpApi& client) {
  const ApiVersion version = client.api_version();
  const bool v2 = version == ApiVersion::V2beta1;
  for (Kind kind : {Kind::Run, Kind::Experiment, Kind::Pipeline, Kind::Version, Kind::Schedule}) {
    SCOPED_TRACE(std::string(collection(kind, version)));
    ListOptions options;
    options.page_size = 5;
    options.page_token = "next-page";
    options.sort_by = "created_at desc";
    options.filters = {{v2 ? "state" : "status", "EQUALS", "Running", {}},
                       {"storage_state", "IN", "", {"ARCHIVED", "STORAGESTATE_ARCHIVED"}}};
    options.experiment_id = "experiment-id";
    options.pipeline_id = "pipeline-id";
    ListPage page;
    ApiStatus status = list(client, kind, options, page);
    ASSERT_TRUE(status) << status.message;
    Record record;
    status = get(client, kind, "some-id", record, "pipeline-id");
    ASSERT_TRUE(status) << status.message;
  }
  const std::vector<std::pair<Kind, Action>> actions = {
      {Kind::Run, Action::Terminate},        {Kind::Run, Action::Retry},
      {Kind::Run, Action::Archive},          {Kind::Run, Action::Unarchive},
      {Kind::Run, Action::Delete},           {Kind::Experiment, Action::Archive},
      {Kind::Experiment, Action::Unarchive}, {Kind::Experiment, Action::Delete},
      {Kind::Pipeline, Action::Delete},      {Kind::Version, Action::Delete},
      {Kind::Schedule, Action::Enable},      {Kind::Schedule, Action::Disable},
      {Kind::Schedule, Action::Delete}};
  for (const auto& [kind, action] : actions) {
    SCOPED_TRACE(std::string(collection(kind, version)) + " action " +
                 std::to_string(static_cast<int>(action)));
    ApiStatus status = act(client, kind, action, "some-id", "pipeline-id");
    ASSERT_TRUE(status) << status.message;
  }
  ScheduleRequest schedule;
  schedule.name = "nightly";
  schedule.description = "every night";
  schedule.experiment_id = "experiment-id";
  schedule.pipeline_id = "pipeline-id";
  schedule.version_id = "version-id";
  schedule.cron = "0 0 2 * * *";
  schedule.start_time = "2026-12-01T00:00:00Z";
  schedule.end_time = "2027-12-01T00:00:00Z";
  schedule.max_concurrency = 3;
  schedule.no_catchup = true;
  schedule.parameters = {{"layers", "[3,2]"}, {"message", "it's \"$(id)\"\n"}};
  schedule.json_parameters = {{"layers", "[3,2]"}, {"message", "\"it's $(id)\\n\""}};
  Record created;
  ApiStatus status = create_schedule(client, schedule, created);
  ASSERT_TRUE(status) << status.message;
  schedule.cron.clear();
  schedule.interval_seconds = 21600;
  schedule.enabled = false;
  status = create_schedule(client, schedule, created);
  ASSERT_TRUE(status) << status.message;
  ExperimentInfo experiment;
  status = client.create_experiment("nightly", experiment, "every night");
  ASSERT_TRUE(status) << status.message;
}

// Asks Prism for the spec's error answer (`Prefer: code=...`), to see what a user reads.
class PreferStatus final : public HttpTransport {
 public:
  PreferStatus(HttpTransport& inner, std::string code) : inner_(inner), code_(std::move(code)) {}
  Status send(const HttpRequest& request, HttpResponse& response) override {
    HttpRequest copy = request;
    copy.headers.emplace_back("Prefer", "code=" + code_);
    return inner_.send(copy, response);
  }

 private:
  HttpTransport& inner_;
  std::string code_;
};

TEST_P(ClientKfpMock, EveryOperatingCallIsAccepted) {
  KfpApi client = api();
  every_operating_call(client);
  connection_.namespace_name = "team-a";
  KfpApi namespaced(*transport_, connection_, testing::fast_retries(1));
  every_operating_call(namespaced);
}

// The spec's error body (`default`: a googleRpcStatus / apiStatus with placeholders): the
// message names what was being done, the status and the server's text.
TEST_P(ClientKfpMock, AnErrorAnswerIsShownWithTheServersText) {
  (void)api();
  PreferStatus failing(*transport_, "404");
  KfpApi client(failing, connection_, testing::fast_retries(1));
  ApiStatus status = act(client, Kind::Run, Action::Terminate, "r1");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.http_status, 404);
  EXPECT_EQ(status.message, "cannot stop run 'r1': HTTP 404 Not Found: string");
  ListPage page;
  status = list(client, Kind::Schedule, {}, page);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message, "cannot list schedules: HTTP 404 Not Found: string");
}

// The spec requires the Authorization header; the mock's 401 comes back as an error
// with its status, and GETs are not retried on it.
TEST_P(ClientKfpMock, WithoutATokenTheMockSays401) {
  KfpApi client = api("");
  RunInfo run;
  ApiStatus status = client.get_run("r", run);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.http_status, 401);
  EXPECT_EQ(status.message.rfind("cannot get run 'r': HTTP 401 Unauthorized", 0), 0u)
      << status.message;
}

// The v2beta1 calls pipec makes for a KFP v2 pipeline spec, against the v2beta1 spec:
// Prism refuses a request that breaks it (422), e.g. parameters as a list, or a wrong type.
class ClientKfpMockV2 : public ClientKfpMock {};

TEST_P(ClientKfpMockV2, EveryV2CallPipecMakesIsAccepted) {
  KfpApi client = api();
  client.set_api_version(ApiVersion::V2beta1);
  std::string spec = read_data("typed_v2.yaml");
  PipelineInfo pipeline;
  ApiStatus status = client.upload_pipeline({spec, "train.yaml", "train", "a description"}, pipeline);
  ASSERT_TRUE(status) << status.message;
  VersionInfo version;
  status = client.upload_version("some-pipeline-id", {spec, "train.yaml", "v2", ""}, version);
  ASSERT_TRUE(status) << status.message;
  std::optional<PipelineInfo> found_pipeline;
  status = client.find_pipeline("train", found_pipeline);
  ASSERT_TRUE(status) << status.message;
  std::optional<VersionInfo> found_version;
  status = client.find_version("pipeline-id", "v1", found_version);
  ASSERT_TRUE(status) << status.message;
  status = client.latest_version("pipeline-id", found_version);
  ASSERT_TRUE(status) << status.message;
  PipelineInfo got;
  status = client.get_pipeline("pipeline-id", got);
  ASSERT_TRUE(status) << status.message;
  std::string template_json;
  status = client.get_version_template("version-id", template_json, "pipeline-id");
  ASSERT_TRUE(status) << status.message;

  std::optional<ExperimentInfo> found;
  status = client.find_experiment("nightly", found);
  ASSERT_TRUE(status) << status.message;
  ExperimentInfo experiment;
  status = client.create_experiment("nightly", experiment);
  ASSERT_TRUE(status) << status.message;
  RunRequest request;
  request.name = "run 1";
  request.experiment_id = "exp-id";
  request.pipeline_id = "pipeline-id";
  request.version_id = "version-id";
  request.json_parameters = {{"layers", "[3,2]"}, {"lr", "0.5"}, {"message", "\"it's $(id)\\n\""}};
  RunInfo run;
  status = client.create_run(request, run);
  ASSERT_TRUE(status) << status.message;
  status = client.get_run("run-id", run);
  ASSERT_TRUE(status) << status.message;

  connection_.namespace_name = "team-a";
  KfpApi namespaced(*transport_, connection_, testing::fast_retries(1));
  namespaced.set_api_version(ApiVersion::V2beta1);
  status = namespaced.create_experiment("nightly", experiment);
  ASSERT_TRUE(status) << status.message;
  status = namespaced.find_pipeline("train", found_pipeline);
  ASSERT_TRUE(status) << status.message;
}

TEST_P(ClientKfpMockV2, EveryOperatingCallIsAccepted) {
  KfpApi client = api();
  client.set_api_version(ApiVersion::V2beta1);
  every_operating_call(client);
  connection_.namespace_name = "team-a";
  KfpApi namespaced(*transport_, connection_, testing::fast_retries(1));
  namespaced.set_api_version(ApiVersion::V2beta1);
  every_operating_call(namespaced);
}

TEST_P(ClientKfpMockV2, AnErrorAnswerIsShownWithTheServersText) {
  (void)api();
  PreferStatus failing(*transport_, "404");
  KfpApi client(failing, connection_, testing::fast_retries(1));
  client.set_api_version(ApiVersion::V2beta1);
  ApiStatus status = act(client, Kind::Schedule, Action::Disable, "s1");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.http_status, 404);
  EXPECT_EQ(status.message, "cannot disable schedule 's1': HTTP 404 Not Found: string");
}

INSTANTIATE_TEST_SUITE_P(Specs, ClientKfpMockV2, ::testing::Values("v2beta1"),
                         [](const auto&) { return std::string("V2beta1"); });

INSTANTIATE_TEST_SUITE_P(Specs, ClientKfpMock, ::testing::Values("v1beta1", "v1beta1-1.8"),
                         [](const auto& info) {
                           return std::string(info.param) == "v1beta1" ? "Head" : "Kfp18";
                         });

}  // namespace
}  // namespace pipec::client::kfp
