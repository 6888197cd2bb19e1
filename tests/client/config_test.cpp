#include "compiler/client/kfp/config.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

namespace pipec::client::kfp {
namespace {

class ClientConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pipec-client-config-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  GetEnv env() {
    return [this](const char* name) -> const char* {
      auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    };
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream((dir_ / name).string()) << text;
    return (dir_ / name).string();
  }

  std::filesystem::path dir_;
  std::map<std::string, std::string> env_;
};

TEST_F(ClientConfig, HostFromFlagThenEnvironment) {
  Connection c;
  ConnectionFlags flags;
  Status status = resolve_connection(flags, env(), c, "");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message(),
            "no Kubeflow Pipelines server: give --host URL or set KF_PIPELINES_ENDPOINT");
  env_["KF_PIPELINES_ENDPOINT"] = "https://kf.example.com/pipeline/";
  ASSERT_TRUE(resolve_connection(flags, env(), c, ""));
  EXPECT_EQ(c.host, "https://kf.example.com/pipeline");
  flags.host = "localhost:8888";
  ASSERT_TRUE(resolve_connection(flags, env(), c, ""));
  EXPECT_EQ(c.host, "http://localhost:8888");
  flags.host = "ftp://x";
  EXPECT_FALSE(resolve_connection(flags, env(), c, ""));
  EXPECT_TRUE(c.transport.verify_tls);  // on unless asked otherwise
}

TEST_F(ClientConfig, TokenFromFlagEnvironmentOrFile) {
  ConnectionFlags flags;
  flags.host = "http://h";
  Connection c;
  std::string default_file = write("default-token", "from-default\n");
  ASSERT_TRUE(resolve_connection(flags, env(), c, default_file));
  EXPECT_EQ(c.token, "from-default");
  env_["KF_PIPELINES_SA_TOKEN_PATH"] = write("token", "  from-file\n");
  ASSERT_TRUE(resolve_connection(flags, env(), c, default_file));
  EXPECT_EQ(c.token, "from-file");
  EXPECT_EQ(c.token_source, (dir_ / "token").string());
  env_["KF_PIPELINES_TOKEN"] = "from-env";
  ASSERT_TRUE(resolve_connection(flags, env(), c, default_file));
  EXPECT_EQ(c.token, "from-env");
  flags.token = "from-flag";
  ASSERT_TRUE(resolve_connection(flags, env(), c, default_file));
  EXPECT_EQ(c.token, "from-flag");
  EXPECT_EQ(c.token_source, "--token");
}

TEST_F(ClientConfig, UnreadableTokenFileIsAnError) {
  ConnectionFlags flags;
  flags.host = "http://h";
  env_["KF_PIPELINES_SA_TOKEN_PATH"] = (dir_ / "missing").string();
  Connection c;
  Status status = resolve_connection(flags, env(), c, "");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message(), "cannot read the token file '" + (dir_ / "missing").string() +
                                  "' (KF_PIPELINES_SA_TOKEN_PATH): No such file or directory");
}

TEST_F(ClientConfig, UserNamespaceAndTls) {
  ConnectionFlags flags;
  flags.host = "https://h";
  flags.user = "alice@example.com";
  flags.namespace_name = "team-a";
  flags.ca_file = "/etc/ca.pem";
  flags.insecure_skip_tls_verify = true;
  Connection c;
  ASSERT_TRUE(resolve_connection(flags, env(), c, ""));
  EXPECT_EQ(c.user, "alice@example.com");
  EXPECT_EQ(c.namespace_name, "team-a");
  EXPECT_EQ(c.transport.ca_file, "/etc/ca.pem");
  EXPECT_FALSE(c.transport.verify_tls);
}

TEST(ClientRedact, ReplacesEveryOccurrence) {
  EXPECT_EQ(redact("a SECRET b SECRET", "SECRET"), "a [redacted] b [redacted]");
  EXPECT_EQ(redact("nothing", ""), "nothing");
}

}  // namespace
}  // namespace pipec::client::kfp
