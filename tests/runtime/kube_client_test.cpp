#include "kube/client.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/runtime/fake_kube.hpp"
#include "tests/runtime/test_pki.hpp"

namespace pipec::runtime {
using kube::InClusterPaths;
using kube::KubeClient;
using kube::KubeConfig;
using kube::in_cluster_config;
using kube::kubeconfig_from_file;
using kube::load_kube_config;
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
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  auto v6 = in_cluster_config(paths, error);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(v6) << error;
  EXPECT_EQ(v6->server, "https://[fd00::1]:443");
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

TEST_F(RuntimeKubeClient, FindsTheKubeconfigAndRefusesPlugins) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  auto a = dir_ / "a" / "config", b = dir_ / "b" / "config";
  fs::create_directories(a.parent_path());
  fs::create_directories(b.parent_path());
  auto config = [&](const std::string& server, const std::string& user) {
    return "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
           "clusters: [{name: k, cluster: {server: '" + server + "'}}]\n"
           "users: [{name: u, user: {" + user + "}}]\n";
  };
  write(a, config("https://a:6443", "tokenFile: sa/token"));
  write(b, config("https://b:6443", "token: b"));
  // $KUBECONFIG is a list: its first entry is used; a relative tokenFile is beside it.
  ::setenv("KUBECONFIG", (a.string() + ":" + b.string()).c_str(), 1);
  std::string error;
  auto c = load_kube_config("", InClusterPaths{}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->server, "https://a:6443");
  EXPECT_EQ(c->token_file, (dir_ / "a" / "sa" / "token").string());
  // An explicit path wins.
  c = load_kube_config(b.string(), InClusterPaths{}, error);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->token, "b");
  // Then ~/.kube/config.
  ::unsetenv("KUBECONFIG");
  const char* home = std::getenv("HOME");
  std::string saved_home = home ? home : "";
  fs::create_directories(dir_ / "home" / ".kube");
  write(dir_ / "home" / ".kube" / "config", config("https://home:6443", "token: h"));
  ::setenv("HOME", (dir_ / "home").c_str(), 1);
  c = load_kube_config("", InClusterPaths{}, error);
  ::setenv("HOME", saved_home.c_str(), 1);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->server, "https://home:6443");
  // exec and auth-provider users are not run.
  write(b, config("https://b:6443", "exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}"));
  EXPECT_FALSE(kubeconfig_from_file(b.string(), error));
  EXPECT_EQ(error, "kubeconfig '" + b.string() + "': user 'u' uses an exec or auth-provider plugin, "
                   "which the launcher does not run; use a token or a client certificate");
}

// Issue 25: a kubeconfig is read through input/: a regular file, bounded YAML.
TEST_F(RuntimeKubeClient, KubeconfigReadingIsBounded) {
  std::string error;
  EXPECT_FALSE(kubeconfig_from_file(dir_.string(), error));
  EXPECT_EQ(error, "cannot read kubeconfig '" + dir_.string() + "': it is a directory");
  EXPECT_FALSE(kubeconfig_from_file("/dev/zero", error));
  EXPECT_EQ(error, "cannot read kubeconfig '/dev/zero': it is not a regular file");
  fs::path laughs = dir_ / "laughs";
  std::string text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    text += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) text += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    text += "]\n";
  }
  write(laughs, text);
  EXPECT_FALSE(kubeconfig_from_file(laughs.string(), error));
  EXPECT_EQ(error, "cannot read kubeconfig '" + laughs.string() +
                       "': line 6, column 8: aliases expand to more than 100000 nodes");
}

TEST_F(RuntimeKubeClient, RereadsARotatedTokenFile) {
  testing::FakeKube kube;
  kube.accept_tokens({"first"});
  write(dir_ / "token", "first\n");
  KubeConfig config;
  config.server = kube.url();
  config.token_file = (dir_ / "token").string();
  KubeClient client(config);
  EXPECT_EQ(client.request("GET", "/api/v1/namespaces/team/pods").status, 200);
  write(dir_ / "token", "second\n");
  kube.accept_tokens({"second"});
  EXPECT_EQ(client.request("GET", "/api/v1/namespaces/team/pods").status, 200);
  kube.accept_tokens({"third"});
  EXPECT_EQ(client.request("GET", "/api/v1/namespaces/team/pods").status, 401);
}

// HTTPS with a CA from the service-account folder; the token file re-read as it rotates.
TEST_F(RuntimeKubeClient, InClusterConfigSpeaksTlsWithTheServiceAccountCa) {
  auto pki = testing::make_test_pki();
  write(dir_ / "server.crt", pki.server_cert);
  write(dir_ / "server.key", pki.server_key);
  testing::FakeKube kube(testing::FakeKubeTls{(dir_ / "server.crt").string(),
                                              (dir_ / "server.key").string(), ""});
  kube.accept_tokens({"t1"});
  InClusterPaths paths{(dir_ / "token").string(), (dir_ / "ca.crt").string(),
                       (dir_ / "namespace").string()};
  write(paths.token, "t1\n");
  write(paths.ca, pki.ca_cert);
  write(paths.namespace_file, "team");
  ::setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", std::to_string(kube.port()).c_str(), 1);
  std::string error;
  auto config = load_kube_config("", paths, error);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config) << error;
  EXPECT_EQ(config->server, kube.url());
  KubeClient client(*config);
  auto r = client.request("GET", "/api/v1/namespaces/team/pods");
  EXPECT_EQ(r.status, 200) << r.error;
  write(paths.token, "t2\n");
  kube.accept_tokens({"t2"});
  r = client.request("GET", "/api/v1/namespaces/team/pods");
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(kube.tokens_seen(), (std::vector<std::string>{"Bearer t1", "Bearer t2"}));
  // A server whose certificate the CA did not sign is refused.
  write(paths.ca, pki.other_ca_cert);
  r = client.request("GET", "/api/v1/namespaces/team/pods");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("certificate"), std::string::npos) << r.error;
  EXPECT_EQ(kube.tokens_seen().size(), 2u);
}

// A kubeconfig user with a client certificate (and a token) against a server that
// requires one: inline `*-data` fields and files relative to the kubeconfig both work.
TEST_F(RuntimeKubeClient, KubeconfigClientCertificateOverMutualTls) {
  auto pki = testing::make_test_pki();
  write(dir_ / "server.crt", pki.server_cert);
  write(dir_ / "server.key", pki.server_key);
  write(dir_ / "ca.crt", pki.ca_cert);
  testing::FakeKube kube(testing::FakeKubeTls{(dir_ / "server.crt").string(),
                                              (dir_ / "server.key").string(),
                                              (dir_ / "ca.crt").string()});
  auto kubeconfig = [&](const std::string& cluster, const std::string& user) {
    auto path = dir_ / "kube" / "config";
    fs::create_directories(path.parent_path());
    write(path, "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                "contexts: [{name: c, context: {cluster: k, user: u, namespace: team}}]\n"
                "clusters: [{name: k, cluster: {server: '" + kube.url() + "', " + cluster + "}}]\n"
                "users: [{name: u, user: {" + user + "}}]\n");
    std::string error;
    auto c = kubeconfig_from_file(path.string(), error);
    EXPECT_TRUE(c) << error;
    return c ? *c : KubeConfig{};
  };
  auto get = [&](const KubeConfig& c) { return KubeClient(c).request("GET", "/api/v1/namespaces/team/pods"); };

  auto inline_data = kubeconfig("certificate-authority-data: " + testing::base64(pki.ca_cert),
                                "client-certificate-data: " + testing::base64(pki.client_cert) +
                                    ", client-key-data: " + testing::base64(pki.client_key) + ", token: tk");
  auto r = get(inline_data);
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(kube.tokens_seen().back(), "Bearer tk");

  write(dir_ / "kube" / "client.crt", pki.client_cert);
  write(dir_ / "kube" / "client.key", pki.client_key);
  write(dir_ / "kube" / "ca.crt", pki.ca_cert);
  auto files = kubeconfig("certificate-authority: ca.crt",
                          "client-certificate: client.crt, client-key: client.key");
  r = get(files);
  EXPECT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(kube.tokens_seen().back(), "");

  auto insecure = kubeconfig("insecure-skip-tls-verify: true",
                             "client-certificate: client.crt, client-key: client.key");
  r = get(insecure);
  EXPECT_EQ(r.status, 200) << r.error;

  // Without the client certificate the handshake fails; so it does with an unknown CA.
  int before = static_cast<int>(kube.requests().size());
  r = get(kubeconfig("certificate-authority: ca.crt", "token: tk"));
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(r.error.empty());
  write(dir_ / "kube" / "other-ca.crt", pki.other_ca_cert);
  r = get(kubeconfig("certificate-authority: other-ca.crt",
                     "client-certificate: client.crt, client-key: client.key"));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("certificate"), std::string::npos) << r.error;
  EXPECT_EQ(static_cast<int>(kube.requests().size()), before);
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
