// KfpApi against the stateful fake: retries of GETs only, error bodies as the servers
// send them, and the token kept out of every message.

#include "compiler/client/kfp/api.hpp"

#include <gtest/gtest.h>

#include "tests/client/fake_kfp.hpp"
#include "tests/client/test_support.hpp"

namespace pipec::client::kfp {
namespace {

using testing::FakeKfp;
using testing::fast_retries;
using testing::read_data;
using testing::test_connection;

PackageUpload package_of(const std::string& yaml, const std::string& name) {
  return PackageUpload{yaml, "pipeline.yaml", name, ""};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class ClientApi : public ::testing::Test {
 protected:
  FakeKfp fake_;
  CurlTransport transport_{TransportOptions{}};
  std::string yaml_ = read_data("typed.yaml");
};

TEST_F(ClientApi, GetRetriesServerErrorsWithBackoff) {
  std::string id = fake_.add_pipeline("train", yaml_);
  fake_.fail("GET /apis/v1beta1/pipelines/" + id, 503, 2);
  std::vector<std::chrono::milliseconds> sleeps;
  KfpApi api(transport_, test_connection(fake_.url()), fast_retries(4),
             [&](std::chrono::milliseconds d) { sleeps.push_back(d); });
  PipelineInfo info;
  ASSERT_TRUE(api.get_pipeline(id, info));
  EXPECT_EQ(info.name, "train");
  EXPECT_EQ(fake_.count("GET /apis/v1beta1/pipelines/" + id), 3);
  EXPECT_EQ(sleeps, (std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(10),
                                                            std::chrono::milliseconds(20)}));
}

TEST_F(ClientApi, GetGivesUpAfterABoundedNumberOfAttempts) {
  fake_.fail("GET /apis/v1beta1/runs/", 500, 100);
  KfpApi api(transport_, test_connection(fake_.url()), fast_retries(3));
  RunInfo run;
  ApiStatus status = api.get_run("r1", run);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.http_status, 500);
  EXPECT_EQ(status.message,
            "cannot get run 'r1': HTTP 500 Internal Server Error: injected failure\n"
            "  (after 3 attempts)");
  EXPECT_EQ(fake_.count("GET"), 3);
}

TEST_F(ClientApi, GetDoesNotRetryClientErrors) {
  KfpApi api(transport_, test_connection(fake_.url()), fast_retries(3));
  PipelineInfo info;
  ApiStatus status = api.get_pipeline("nope", info);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message,
            "cannot get pipeline 'nope': HTTP 404 Not Found: Failed to get pipeline: "
            "ResourceNotFoundError: Pipeline nope not found.");
  EXPECT_EQ(fake_.count("GET"), 1);
}

TEST_F(ClientApi, GetRetriesDroppedConnections) {
  std::string id = fake_.add_pipeline("train", yaml_);
  fake_.drop("GET /apis/v1beta1/pipelines/" + id + "/templates", 2);
  KfpApi api(transport_, test_connection(fake_.url()), fast_retries(3));
  std::string yaml;
  ASSERT_TRUE(api.get_pipeline_template(id, yaml));
  EXPECT_EQ(yaml, yaml_);
  EXPECT_EQ(fake_.count("GET"), 3);
}

// Issue 42: a request that timed out is not sent again: each try would hold the command
// for the whole timeout (120 s x 5 before). A dropped connection still is retried.
TEST_F(ClientApi, GetReportsATimeoutWithoutRetrying) {
  std::string id = fake_.add_pipeline("train", yaml_);
  Connection connection = test_connection(fake_.url());
  connection.transport.timeout = std::chrono::milliseconds(300);
  CurlTransport transport(connection.transport);
  KfpApi api(transport, connection, fast_retries(3));
  fake_.delay("GET /apis/v1beta1/pipelines/" + id, std::chrono::milliseconds(2000), 1);
  PipelineInfo info;
  ApiStatus status = api.get_pipeline(id, info);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.http_status, 0);
  EXPECT_TRUE(status.reached);
  EXPECT_TRUE(contains(status.message, "cannot get pipeline '" + id + "': no answer from " +
                                           fake_.url() + ": "))
      << status.message;
  EXPECT_TRUE(contains(status.message,
                       "hint: the server accepted the connection but did not answer in time"))
      << status.message;
  EXPECT_FALSE(contains(status.message, "attempts")) << status.message;
  EXPECT_EQ(fake_.count("GET"), 1);

  fake_.drop("GET /apis/v1beta1/pipelines/" + id, 1);
  ASSERT_TRUE(api.get_pipeline(id, info));
  EXPECT_EQ(fake_.count("GET"), 3);
}

TEST_F(ClientApi, PostsAreSentOnceWhateverHappens) {
  KfpApi api(transport_, test_connection(fake_.url()), fast_retries(5));
  PipelineInfo created;
  fake_.fail("POST /apis/v1beta1/pipelines/upload", 503, 1);
  ApiStatus status = api.upload_pipeline(package_of(yaml_, "train"), created);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message,
            "cannot upload pipeline 'train': HTTP 503 Service Unavailable: injected failure");
  EXPECT_EQ(fake_.count("POST"), 1);

  fake_.drop("POST /apis/v1beta1/experiments", 1);
  ExperimentInfo experiment;
  status = api.create_experiment("e", experiment);
  ASSERT_FALSE(status);
  EXPECT_TRUE(contains(status.message,
                       "hint: the request may have reached the server; check before repeating "
                       "it (pipec does not resend it)"))
      << status.message;
  EXPECT_EQ(fake_.count("POST /apis/v1beta1/experiments"), 1);

  Connection slow = test_connection(fake_.url());
  slow.transport.timeout = std::chrono::milliseconds(300);
  CurlTransport slow_transport(slow.transport);
  KfpApi slow_api(slow_transport, slow, fast_retries(5));
  fake_.delay("POST /apis/v1beta1/runs", std::chrono::milliseconds(2000), 1);
  RunInfo run;
  status = slow_api.create_run(RunRequest{"r", "", "", "p", "", {}}, run);
  ASSERT_FALSE(status);
  EXPECT_EQ(fake_.count("POST /apis/v1beta1/runs"), 1);
  EXPECT_EQ(fake_.pipeline_count(), 0);
}

TEST_F(ClientApi, UploadErrorBodiesOfHeadAnd18) {
  KfpApi api(transport_, test_connection(fake_.url()));
  PipelineInfo created;
  ASSERT_TRUE(api.upload_pipeline(package_of(yaml_, "train"), created));
  ApiStatus status = api.upload_pipeline(package_of(yaml_, "train"), created);
  ASSERT_FALSE(status);
  EXPECT_TRUE(status.conflict);
  EXPECT_EQ(status.message,
            "cannot upload pipeline 'train': HTTP 409 Conflict: Failed to create a pipeline and "
            "a pipeline version (Already exist error: Failed to create a new pipeline. The name "
            "train already exist. Please specify a new name)");
  fake_.legacy = true;
  status = api.upload_pipeline(package_of(yaml_, "train"), created);
  ASSERT_FALSE(status);
  EXPECT_TRUE(status.conflict);
  EXPECT_EQ(status.http_status, 500);
  status = api.upload_pipeline(PackageUpload{"not a package", "p.txt", "x", ""}, created);
  EXPECT_EQ(status.message,
            "cannot upload pipeline 'x': HTTP 400 Bad Request: Error read pipeline file.: "
            "Unexpected pipeline file format. Support .zip, .tar.gz, .json or YAML.");
  EXPECT_FALSE(status.conflict);
}

TEST_F(ClientApi, GrpcGatewayErrorBodiesOfHeadAnd18) {
  KfpApi api(transport_, test_connection(fake_.url()));
  RunInfo run;
  fake_.legacy = true;
  ApiStatus status = api.get_run("missing", run);
  EXPECT_EQ(status.message, "cannot get run 'missing': HTTP 404 Not Found: Run missing not found.");
  fake_.legacy = false;
  status = api.create_run(RunRequest{"", "", "", "p", "", {}}, run);
  EXPECT_EQ(status.message,
            "cannot create run '': HTTP 400 Bad Request: Invalid input error: The run name is "
            "empty. Please specify a valid name.");
}

TEST_F(ClientApi, UnauthenticatedAndForbidden) {
  fake_.require_token("right-token");
  KfpApi anonymous(transport_, test_connection(fake_.url()));
  std::optional<PipelineInfo> found;
  ApiStatus status = anonymous.find_pipeline("train", found);
  EXPECT_EQ(status.http_status, 401);
  EXPECT_EQ(status.message,
            "cannot look up pipeline 'train': HTTP 401 Unauthorized: Unauthenticated: Request "
            "header error: there is no user identity header.: Failed to authenticate\n"
            "  hint: the server wants credentials: give --token, set KF_PIPELINES_TOKEN or "
            "KF_PIPELINES_SA_TOKEN_PATH, or --user behind the auth proxy");

  Connection connection = test_connection(fake_.url(), "right-token");
  connection.namespace_name = "team-b";
  connection.user = "alice@example.com";
  fake_.forbid_namespace("team-b");
  KfpApi api(transport_, connection);
  ExperimentInfo experiment;
  status = api.create_experiment("e", experiment);
  EXPECT_EQ(status.http_status, 403);
  EXPECT_TRUE(contains(status.message, "HTTP 403 Forbidden: PermissionDenied: User "
                                       "'someone@example.com' is not authorized"))
      << status.message;
  EXPECT_TRUE(contains(status.message, "hint: the identity may not do this in namespace 'team-b'"));
  auto auth = fake_.header_values("Authorization");
  auto user = fake_.header_values("kubeflow-userid");
  EXPECT_EQ(auth.front(), "");
  EXPECT_EQ(auth.back(), "Bearer right-token");
  EXPECT_EQ(user.back(), "alice@example.com");
}

TEST_F(ClientApi, TheTokenNeverAppearsInMessages) {
  const std::string token = "eyJhbGciOiJSUzI1NiJ9.secret-part";
  fake_.require_token("another");
  fake_.echo_auth = true;  // a careless proxy quoting the header back
  KfpApi api(transport_, test_connection(fake_.url(), token), fast_retries(2));
  RunInfo run;
  ApiStatus status = api.get_run("r", run);
  ASSERT_FALSE(status);
  EXPECT_FALSE(contains(status.message, token)) << status.message;
  EXPECT_FALSE(contains(status.message, "secret-part")) << status.message;
  EXPECT_TRUE(contains(status.message, "Bearer [redacted]")) << status.message;
  EXPECT_TRUE(contains(status.message, "the server refused the token from --token"));
  PipelineInfo created;
  status = api.upload_pipeline(package_of(yaml_, "t"), created);  // uploads answer 400
  EXPECT_FALSE(contains(status.message, token)) << status.message;
}

TEST_F(ClientApi, TheCookieIsSentAndNeverAppearsInMessages) {
  const std::string session = "MTcwMDAwMDAwMHxzZWNyZXQtc2Vzc2lvbg";
  fake_.require_token("another");
  fake_.echo_auth = true;  // a careless proxy quoting the headers back
  Connection connection = test_connection(fake_.url());
  connection.cookie = "authservice_session=" + session + "; lang=en";
  KfpApi api(transport_, connection, fast_retries(2));
  RunInfo run;
  ApiStatus status = api.get_run("r", run);
  ASSERT_FALSE(status);
  EXPECT_EQ(fake_.header_values("Cookie").back(), connection.cookie);
  EXPECT_FALSE(contains(status.message, session)) << status.message;
  EXPECT_TRUE(contains(status.message, "Cookie: [redacted]")) << status.message;
  EXPECT_TRUE(contains(status.message, "hint: the server refused the cookie")) << status.message;
}

TEST_F(ClientApi, NoServerAtAll) {
  std::string url;
  {
    FakeKfp gone;
    url = gone.url();
  }
  KfpApi api(transport_, test_connection(url), fast_retries(2));
  RunInfo run;
  ApiStatus status = api.get_run("r", run);
  ASSERT_FALSE(status);
  EXPECT_TRUE(contains(status.message, "cannot get run 'r': no answer from " + url + ": "))
      << status.message;
}

TEST_F(ClientApi, TheServerTakesAtMost32MiB) {
  KfpApi api(transport_, test_connection(fake_.url()));
  std::string big = yaml_ + "# " + std::string((std::size_t{32} << 20) - yaml_.size() - 3, 'x') + "\n";
  ASSERT_EQ(big.size(), std::size_t{32} << 20);
  PipelineInfo created;
  ASSERT_TRUE(api.upload_pipeline(package_of(big, "at-limit"), created));
  big += "\n";
  ApiStatus status = api.upload_pipeline(package_of(big, "over-limit"), created);
  EXPECT_EQ(status.message,
            "cannot upload pipeline 'over-limit': HTTP 400 Bad Request: Failed to read a "
            "pipeline spec file");
}

}  // namespace
}  // namespace pipec::client::kfp
