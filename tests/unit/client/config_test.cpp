#include "compiler/client/kfp/config.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
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

TEST_F(ClientConfig, CookieFromFlagThenEnvironment) {
  ConnectionFlags flags;
  flags.host = "https://h";
  Connection c;
  ASSERT_TRUE(resolve_connection(flags, env(), c, ""));
  EXPECT_EQ(c.cookie, "");
  env_["KF_PIPELINES_COOKIE"] = " authservice_session=from-env\n";
  ASSERT_TRUE(resolve_connection(flags, env(), c, ""));
  EXPECT_EQ(c.cookie, "authservice_session=from-env");
  flags.cookie = "authservice_session=from-flag; other=1";
  ASSERT_TRUE(resolve_connection(flags, env(), c, ""));
  EXPECT_EQ(c.cookie, "authservice_session=from-flag; other=1");
}

TEST_F(ClientConfig, HeaderValuesWithLineBreaksAreRefusedWithoutShowingThem) {
  // A CR or LF inside a value would end its header line and start another one.
  struct Case {
    const char* what;
    std::function<void(ConnectionFlags&)> set;
    const char* message;
  };
  const Case cases[] = {
      {"cookie", [](ConnectionFlags& f) { f.cookie = "s=abc\r\nX-Admin: 1"; },
       "--cookie holds a line break or a NUL byte; it cannot be sent in an HTTP header"},
      {"user", [](ConnectionFlags& f) { f.user = "alice\nkubeflow-userid: admin"; },
       "--user holds a line break or a NUL byte; it cannot be sent in an HTTP header"},
      {"token", [](ConnectionFlags& f) { f.token = "tok\r\nen"; },
       "the token from --token holds a line break or a NUL byte; it cannot be sent in an HTTP "
       "header"},
      {"namespace", [](ConnectionFlags& f) { f.namespace_name = std::string("a\nb", 3); },
       "--namespace \"a\\nb\": not a Kubernetes namespace (lowercase letters, digits and '-', "
       "at most 63)"},
      {"namespace", [](ConnectionFlags& f) { f.namespace_name = "Team_A"; },
       "--namespace \"Team_A\": not a Kubernetes namespace (lowercase letters, digits and '-', "
       "at most 63)"},
  };
  for (const auto& c : cases) {
    ConnectionFlags flags;
    flags.host = "https://h";
    c.set(flags);
    Connection out;
    Status status = resolve_connection(flags, env(), out, "");
    ASSERT_FALSE(status) << c.what;
    EXPECT_EQ(status.message(), c.message) << c.what;
  }
  env_["KF_PIPELINES_COOKIE"] = "s=a\rb";
  ConnectionFlags flags;
  flags.host = "https://h";
  Connection out;
  Status status = resolve_connection(flags, env(), out, "");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message(),
            "KF_PIPELINES_COOKIE holds a line break or a NUL byte; it cannot be sent in an HTTP "
            "header");
}

TEST(ClientRedact, ReplacesEveryOccurrence) {
  EXPECT_EQ(redact("a SECRET b SECRET", "SECRET"), "a [redacted] b [redacted]");
  EXPECT_EQ(redact("nothing", ""), "nothing");
}

}  // namespace
}  // namespace pipec::client::kfp
