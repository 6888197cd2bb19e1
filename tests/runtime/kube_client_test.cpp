#include "runtime/kube_client.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/runtime/fake_kube.hpp"

namespace pipec::runtime {
namespace {

namespace fs = std::filesystem;

class RuntimeKubeClient : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pipec-kube-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path dir_;
};

TEST_F(RuntimeKubeClient, InClusterConfigFromEnvironmentAndFiles) {
  InClusterPaths paths{(dir_ / "token").string(), (dir_ / "ca.crt").string(),
                       (dir_ / "namespace").string()};
  std::string error;
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(in_cluster_config(paths, error));
  EXPECT_EQ(error, "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
  ::setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  EXPECT_FALSE(in_cluster_config(paths, error));
  EXPECT_EQ(error, "cannot read the service-account token '" + paths.token + "'");
  write(paths.token, "tok\n");
  write(paths.namespace_file, "team\n");
  auto c = in_cluster_config(paths, error);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->namespace_name, "team");
  EXPECT_EQ(c->token_file, paths.token);
  EXPECT_EQ(c->ca_file, paths.ca);
}

TEST_F(RuntimeKubeClient, KubeconfigCurrentContextWithCertificates) {
  auto path = dir_ / "config";
  write(path,
        "apiVersion: v1\n"
        "current-context: prod\n"
        "clusters:\n"
        "- name: dev\n  cluster: {server: 'https://dev:6443'}\n"
        "- name: prod\n  cluster:\n    server: https://prod:6443/\n    certificate-authority: ca.pem\n"
        "contexts:\n"
        "- name: dev\n  context: {cluster: dev, user: dev}\n"
        "- name: prod\n  context: {cluster: prod, user: admin, namespace: ml}\n"
        "users:\n"
        "- name: admin\n  user:\n    client-certificate-data: Q0VSVA==\n    client-key: /keys/k.pem\n");
  std::string error;
  auto c = kubeconfig_from_file(path.string(), error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->server, "https://prod:6443");
  EXPECT_EQ(c->namespace_name, "ml");
  EXPECT_EQ(c->ca_file, (dir_ / "ca.pem").string());
  EXPECT_EQ(c->client_cert_data, "CERT");
  EXPECT_EQ(c->client_key_file, "/keys/k.pem");
  EXPECT_TRUE(c->token.empty());

  write(path, "current-context: nowhere\ncontexts: []\n");
  EXPECT_FALSE(kubeconfig_from_file(path.string(), error));
  EXPECT_EQ(error, "kubeconfig '" + path.string() + "': current context 'nowhere' is not defined");
  EXPECT_FALSE(kubeconfig_from_file((dir_ / "missing").string(), error));
  EXPECT_NE(error.find("cannot read kubeconfig"), std::string::npos);
}

TEST_F(RuntimeKubeClient, RereadsARotatedTokenFile) {
  testing::FakeKube kube;
  kube.required_token = "first";
  write(dir_ / "token", "first\n");
  KubeConfig config;
  config.server = kube.url();
  config.token_file = (dir_ / "token").string();
  KubeClient client(config);
  EXPECT_EQ(client.request("GET", "/api/v1/namespaces/team/pods").status, 200);
  write(dir_ / "token", "second\n");
  kube.required_token = "second";
  EXPECT_EQ(client.request("GET", "/api/v1/namespaces/team/pods").status, 200);
  kube.required_token = "third";
  EXPECT_EQ(client.request("GET", "/api/v1/namespaces/team/pods").status, 401);
}

TEST_F(RuntimeKubeClient, ReportsConnectionFailures) {
  KubeConfig config;
  config.server = "http://127.0.0.1:1";
  KubeClient client(config);
  auto r = client.request("GET", "/api");
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace pipec::runtime
