// `pipec logs`: through the KFP UI server's endpoint (GET /k8s/pod/logs, the kubeflow/
// pipelines mirror's frontend/server/app.ts and handlers/pod-logs.ts; answers scripted
// here as that handler sends them: the log as text/plain, or an error text), and through
// the Kubernetes API stand-in tests/runtime/fake_kube.cpp (the launcher's, with its pods,
// logs and followed streams). Run answers are the recorded fixtures of operate_test.cpp
// (tests/client/data/run_v1_failed.json, run_v2_failed.json; sources named there).

#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "compiler/client/kfp/logs.hpp"
#include "tests/client/test_support.hpp"
#include "tests/runtime/fake_kube.hpp"

namespace pipec::client::kfp {
namespace {

namespace fs = std::filesystem;
using testing::fast_retries;
using testing::read_data;
using testing::test_connection;
using FakeKube = runtime::testing::FakeKube;

// Answers from a script: "METHOD /path" (no query) -> the body; other paths get 404.
class Scripted final : public HttpTransport {
 public:
  void answer(const std::string& key, std::string body, long status = 200) {
    answers_[key] = {status, std::move(body), {}};
  }
  Status send(const HttpRequest& request, HttpResponse& response) override {
    requests.push_back(request);
    std::string path = request.url.substr(request.url.find('/', 8));
    auto it = answers_.find(request.method + " " + path.substr(0, path.find('?')));
    response = it == answers_.end() ? HttpResponse{404, "404 page not found\n", {}} : it->second;
    return Status::ok();
  }
  std::vector<HttpRequest> requests;

 private:
  std::map<std::string, HttpResponse> answers_;
};

class ClientLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pipec-logs-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // The endpoint has a path prefix, as through the Kubeflow ingress.
    transport_.answer("GET /pipeline/apis/v1beta1/runs/r1", read_data("run_v1_failed.json"));
    transport_.answer("GET /pipeline/apis/v2beta1/runs/r2", read_data("run_v2_failed.json"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  OperateArgs args(bool v2 = false) {
    OperateArgs a;
    a.v2 = v2;
    a.retry = fast_retries(1);
    return a;
  }
  // A kubeconfig for the stand-in, with a token and a default namespace.
  std::string kubeconfig(const FakeKube& kube) {
    fs::path path = dir_ / "config";
    std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                           "contexts: [{name: c, context: {cluster: k, user: u, namespace: team}}]\n"
                           "clusters: [{name: k, cluster: {server: '" + kube.url() + "'}}]\n"
                           "users: [{name: u, user: {token: kube-token}}]\n";
    return path.string();
  }
  int logs(const LogsArgs& logs, bool v2 = false) {
    out_.str("");
    err_.str("");
    return logs_command(logs, args(v2), connection_, transport_, out_, err_);
  }

  fs::path dir_;
  Connection connection_ = test_connection("https://kfp.test/pipeline", "t0ken");
  Scripted transport_;
  std::ostringstream out_, err_;
};

std::string query(const std::string& url, const std::string& name) {
  std::size_t at = url.find(name + "=");
  if (at == std::string::npos) return {};
  std::string value = url.substr(at + name.size() + 1);
  return value.substr(0, value.find('&'));
}

TEST_F(ClientLogs, AStepsLogThroughTheUiServerWithTheKfpCredentials) {
  transport_.answer("GET /pipeline/k8s/pod/logs", "loading data\nepoch 1 loss=0.7");
  LogsArgs args;
  args.run_id = "r1";
  args.step = "fit";
  ASSERT_EQ(logs(args), 0) << err_.str();
  EXPECT_EQ(out_.str(), "loading data\nepoch 1 loss=0.7\n");
  const HttpRequest& request = transport_.requests.back();
  EXPECT_EQ(request.url.substr(0, request.url.find('?')), "https://kfp.test/pipeline/k8s/pod/logs");
  EXPECT_EQ(query(request.url, "podname"), "train-x7k2p-fit-3721646052");
  EXPECT_EQ(query(request.url, "runid"), "r1");
  EXPECT_EQ(query(request.url, "podnamespace"), "kubeflow");
  bool bearer = false;
  for (const auto& [name, value] : request.headers) bearer |= name == "Authorization" && value == "Bearer t0ken";
  EXPECT_TRUE(bearer);
}

TEST_F(ClientLogs, EveryStepInOrderWithoutAStepName) {
  transport_.answer("GET /pipeline/k8s/pod/logs", "a line\n");
  LogsArgs args;
  args.run_id = "r1";
  ASSERT_EQ(logs(args), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "==> step 'prepare' (pod train-x7k2p-prepare-1787723858) <==\na line\n"
            "==> step 'fit' (pod train-x7k2p-fit-3721646052) <==\na line\n");
}

TEST_F(ClientLogs, AV2TaskIsReadByItsPodName) {
  transport_.answer("GET /pipeline/k8s/pod/logs", "v2 log\n");
  LogsArgs args;
  args.run_id = "r2";
  args.step = "fit";
  ASSERT_EQ(logs(args, true), 0) << err_.str();
  EXPECT_EQ(out_.str(), "v2 log\n");
  EXPECT_EQ(query(transport_.requests.back().url, "podname"),
            "train-v2-abcde-system-container-impl-2222222222");
  EXPECT_EQ(query(transport_.requests.back().url, "podnamespace"), "");
}

// A step named as in the source (upper case, '_') finds its task, named as the workflow
// writer names tasks (to_dns1123).
TEST_F(ClientLogs, AStepNamedAsInTheSourceFindsItsTask) {
  transport_.answer("GET /pipeline/k8s/pod/logs", "prepared\n");
  LogsArgs args;
  args.run_id = "r1";
  args.step = "Pre_pare";
  EXPECT_EQ(logs(args), 1);  // "pre-pare" is no task of the run
  args.step = "PREPARE";
  ASSERT_EQ(logs(args), 0) << err_.str();
  EXPECT_EQ(out_.str(), "prepared\n");
  EXPECT_EQ(query(transport_.requests.back().url, "podname"), "train-x7k2p-prepare-1787723858");
}

TEST_F(ClientLogs, AnUnknownStepNamesTheSteps) {
  LogsArgs args;
  args.run_id = "r1";
  args.step = "fitt";
  EXPECT_EQ(logs(args), 1);
  EXPECT_EQ(err_.str(), "pipec: error: run 'r1' has no step 'fitt'; its steps: 'prepare', 'fit'\n");
}

// The UI is not there (in-cluster, the API server alone answers 404): the Kubernetes API.
TEST_F(ClientLogs, FallsBackToTheKubernetesApi) {
  FakeKube kube;
  kube.add_pod("train-x7k2p-fit-3721646052", "train", "Worker", 0, "main");
  kube.log("train-x7k2p-fit-3721646052", "from the kubelet");
  kube.log("train-x7k2p-fit-3721646052", "it's \"$(id)\" {{x}}");
  LogsArgs args;
  args.run_id = "r1";
  args.step = "fit";
  args.kubeconfig = kubeconfig(kube);
  ASSERT_EQ(logs(args), 0) << err_.str();
  EXPECT_EQ(out_.str(), "from the kubelet\nit's \"$(id)\" {{x}}\n");
}

TEST_F(ClientLogs, FollowStreamsUntilTheContainerEnds) {
  FakeKube kube;
  const std::string pod = "train-x7k2p-fit-3721646052";
  kube.add_pod(pod, "train", "Worker", 0, "main");
  kube.log(pod, "first");
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kube.log(pod, "second");
    kube.end_pod(pod, 0);
  });
  LogsArgs args;
  args.run_id = "r1";
  args.step = "fit";
  args.follow = true;
  args.kubeconfig = kubeconfig(kube);
  int status = logs(args);
  later.join();
  EXPECT_EQ(status, 0) << err_.str();
  EXPECT_EQ(out_.str(), "first\nsecond\n");
  // --follow goes to the Kubernetes API directly: the UI's endpoint does not stream.
  for (const HttpRequest& r : transport_.requests) EXPECT_EQ(r.url.find("/k8s/pod/logs"), std::string::npos);
}

TEST_F(ClientLogs, AGarbageCollectedPodSaysSoAndWhereArchivesWouldBe) {
  FakeKube kube;  // no such pod
  transport_.answer("GET /pipeline/k8s/pod/logs",
                    "Could not get main container logs: Error: Unable to retrieve workflow status: "
                    "Error: pods \"train-x7k2p-fit-3721646052\" not found.",
                    500);
  LogsArgs args;
  args.run_id = "r1";
  args.step = "fit";
  args.kubeconfig = kubeconfig(kube);
  EXPECT_EQ(logs(args), 1);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(),
            "pipec: error: the pod 'train-x7k2p-fit-3721646052' of step 'fit' is gone "
            "(garbage-collected: Argo's podGC or the workflow's TTL removed it, or the node was "
            "cleaned up)\n"
            "  the KFP UI did not have it either: cannot read the log of pod "
            "'train-x7k2p-fit-3721646052' from the KFP UI at 'https://kfp.test/pipeline': HTTP 500 "
            "Internal Server Error: Could not get main container logs: Error: Unable to retrieve "
            "workflow status: Error: pods \"train-x7k2p-fit-3721646052\" not found.\n"
            "  hint: an installation that archives logs (Argo's archiveLogs, and the KFP UI "
            "server's ARGO_ARCHIVE_LOGS=true) keeps them in its artifact store, by default "
            "mlpipeline/artifacts/train-x7k2p/YYYY/MM/DD/train-x7k2p-fit-3721646052/main.log, and "
            "the UI's endpoint reads them from there\n");
}

TEST_F(ClientLogs, WithoutUiOrKubeconfigBothReasonsAreGiven) {
  LogsArgs args;
  args.run_id = "r1";
  args.step = "fit";
  args.kubeconfig = (dir_ / "missing").string();
  EXPECT_EQ(logs(args), 1);
  std::string err = err_.str();
  EXPECT_EQ(err.rfind("pipec: error: cannot read the log of step 'fit' (pod train-x7k2p-fit-3721646052)\n"
                      "  cannot read the log of pod 'train-x7k2p-fit-3721646052' from the KFP UI at "
                      "'https://kfp.test/pipeline': HTTP 404 Not Found: 404 page not found\n"
                      "  and no Kubernetes API to ask: ",
                      0),
            0u)
      << err;
  EXPECT_NE(err.find("hint: give --ui-host with the KFP UI's address, or --kubeconfig"), std::string::npos);
}

}  // namespace
}  // namespace pipec::client::kfp
