// The pipec-launcher binary and its command line: options and durations, job names, the
// real binary's argument checks and signals, the in-cluster configuration over TLS with a
// rotated token, and the RBAC Role every request it makes needs.
#include "runtime/launcher.hpp"

#include <algorithm>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "kube/client.hpp"
#include "tests/runtime/launcher_fixture.hpp"
#include "tests/runtime/test_pki.hpp"

namespace pipec::runtime::testing {
using kube::InClusterPaths;
using kube::KubeClient;
using kube::load_kube_config;

using rules::job_name_for_step;
using rules::kMaxJobName;
using rules::parse_duration;
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// An executor input of another shape is refused before anything runs (exit 2).
TEST(RuntimeLauncherOptions, ExecutorInputMustNameItsOutputFile) {
  std::string error, help;
  EXPECT_FALSE(parse_options({"--manifest", "{}", "--step-name", "s", "--executor-input", "{\"outputs\":{}}"},
                             error, help));
  EXPECT_NE(error.find("outputs.outputFile"), std::string::npos) << error;
  EXPECT_TRUE(parse_options({"--manifest", "{}", "--step-name", "s", "--executor-input",
                             "{\"outputs\":{\"outputFile\":\"/tmp/o.json\"}}"},
                            error, help))
      << error;
}

TEST(RuntimeLauncherNames, JobNamesAreShortStableDnsLabels) {
  EXPECT_EQ(job_name_for_step("wf-train-123"), "wf-train-123");
  EXPECT_EQ(job_name_for_step("My_Step.1"), "my-step-1");
  EXPECT_EQ(job_name_for_step("123abc"), "abc");
  auto long1 = job_name_for_step(std::string(80, 'a') + "-1");
  auto long2 = job_name_for_step(std::string(80, 'a') + "-2");
  EXPECT_EQ(long1.size(), kMaxJobName);
  EXPECT_NE(long1, long2);
  EXPECT_EQ(long1, job_name_for_step(std::string(80, 'a') + "-1"));
}

TEST(RuntimeLauncherOptions, ParsesDurationsAndRejectsUnknownOptions) {
  EXPECT_EQ(parse_duration("90s"), std::chrono::milliseconds(90'000));
  EXPECT_EQ(parse_duration("2d"), std::chrono::milliseconds(172'800'000));
  EXPECT_EQ(parse_duration("250ms"), std::chrono::milliseconds(250));
  EXPECT_EQ(parse_duration("0"), std::chrono::milliseconds(0));
  EXPECT_EQ(parse_duration("90"), std::chrono::milliseconds(90'000));
  EXPECT_EQ(parse_duration("1h30m"), std::chrono::milliseconds(5'400'000));
  EXPECT_EQ(parse_duration("1d2h3m4s5ms"), std::chrono::milliseconds(93'784'005));
  EXPECT_FALSE(parse_duration("30m1h"));  // largest unit first
  EXPECT_FALSE(parse_duration("1m1m"));
  EXPECT_FALSE(parse_duration("1h30"));
  EXPECT_FALSE(parse_duration(""));
  EXPECT_FALSE(parse_duration("1.5h"));
  EXPECT_FALSE(parse_duration("-1s"));
  EXPECT_FALSE(parse_duration("s"));
  std::string error, help;
  auto o = parse_options({"--manifest", "{}", "--step-name=s", "--value", "a=b=c", "--keep-job",
                          "--pending-timeout", "30m"},
                         error, help);
  ASSERT_TRUE(o) << error;
  EXPECT_EQ(o->value_args, std::vector<std::string>{"a=b=c"});
  EXPECT_TRUE(o->keep_job);
  EXPECT_EQ(o->pending_timeout, std::chrono::minutes(30));
  EXPECT_FALSE(parse_options({"--manifest", "{}", "--step-name", "s", "--bogus"}, error, help));
  EXPECT_EQ(error, "unknown option '--bogus'");
  EXPECT_FALSE(parse_options({"--manifest", "{}", "--step-name", "s", "--running-timeout", "soon"},
                             error, help));
  EXPECT_EQ(error, "--running-timeout expects a duration (e.g. 90s, 30m, 4h, 2d, 0), got 'soon'");
  // A timeout chosen at run time may be left empty: none.
  o = parse_options({"--manifest", "{}", "--step-name", "s", "--running-timeout", "", "--pending-timeout", ""},
                    error, help);
  ASSERT_TRUE(o) << error;
  EXPECT_EQ(o->running_timeout, std::chrono::milliseconds(0));
  EXPECT_EQ(o->pending_timeout, std::chrono::milliseconds(0));
  ::unsetenv("POD_NAME");
  EXPECT_FALSE(parse_options({"--manifest", "{}"}, error, help));
  EXPECT_EQ(error, "missing --step-name (and POD_NAME is not set)");
  // The kfp-v2 target sets POD_NAME from the downward API instead of --step-name.
  ::setenv("POD_NAME", "pipeline-abc-system-container-impl-123", 1);
  o = parse_options({"--manifest", "{}"}, error, help);
  ::unsetenv("POD_NAME");
  ASSERT_TRUE(o) << error;
  EXPECT_EQ(o->step_name, "pipeline-abc-system-container-impl-123");
}

// Runs the real binary to its end; returns the exit code, stdout and stderr.
Result run_binary(std::vector<std::string> args, const fs::path& dir) {
  args.insert(args.begin(), PIPEC_LAUNCHER_PATH);
  std::string out_path = (dir / "bin.out").string(), err_path = (dir / "bin.err").string();
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen(out_path.c_str(), "w", stdout) || !freopen(err_path.c_str(), "w", stderr)) _exit(126);
    unsetenv("KUBERNETES_SERVICE_HOST");
    setenv("KUBECONFIG", "/nonexistent/kubeconfig", 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream o(out_path), e(err_path);
  std::stringstream so, se;
  so << o.rdbuf();
  se << e.rdbuf();
  r.out = so.str();
  r.err = se.str();
  return r;
}

TEST_F(RuntimeLauncher, BinaryChecksArgumentsBeforeTheCluster) {
  auto r = run_binary({"--bogus"}, dir_);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_EQ(r.err, "pipec-launcher: error: unknown option '--bogus'\n"
                   "Try 'pipec-launcher --help' for more information.\n");
  r = run_binary({"--help"}, dir_);
  EXPECT_EQ(r.code, kExitSucceeded);
  EXPECT_EQ(r.out.rfind("usage: pipec-launcher --manifest JSON --step-name NAME [OPTIONS]\n", 0), 0u);
  // A bad value is reported (exit 2) even though there is no cluster configuration here.
  r = run_binary({"--manifest", kMpiJob, "--step-name", "s", "--bind",
                  "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0/image=img:quantity",
                  "--value", "img=lots"},
                 dir_);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_EQ(r.err, "pipec-launcher: error: value 'img' must be a Kubernetes quantity (e.g. 2, "
                   "500m, 10Gi), got \"lots\"\n");
  EXPECT_FALSE(fs::exists(dir_ / "m.json"));
  r = run_binary({"--manifest", kMpiJob, "--step-name", "s", "--metrics-file",
                  (dir_ / "m.json").string()},
                 dir_);
  EXPECT_EQ(r.code, kExitApiError);
  EXPECT_EQ(r.err, "pipec-launcher: warning: POD_UID is not set: the job will not be deleted with "
                   "the workflow\n"
                   "pipec-launcher: error: no Kubernetes configuration: not in a cluster and no "
                   "kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config)\n");
  EXPECT_EQ(read(dir_ / "m.json"), "{\"metrics\":[]}\n");  // KFP still finds its output
  // A kubeconfig context without a namespace, and no --namespace.
  std::ofstream(dir_ / "kubeconfig") << "current-context: c\n"
                                     << "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                                     << "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:1'}}]\n";
  fs::remove(dir_ / "m.json");
  r = run_binary({"--manifest", kMpiJob, "--step-name", "s", "--kubeconfig",
                  (dir_ / "kubeconfig").string(), "--metrics-file", (dir_ / "m.json").string()},
                 dir_);
  EXPECT_EQ(r.code, kExitBadArguments);
  EXPECT_NE(r.err.find("pipec-launcher: error: no namespace: give --namespace\n"), std::string::npos) << r.err;
  EXPECT_EQ(read(dir_ / "m.json"), "{\"metrics\":[]}\n");
}

// The real binary: kubeconfig with a token, SIGTERM mid-run.
TEST_F(RuntimeLauncher, BinaryDeletesTheJobOnSigterm) {
  kube_.accept_tokens({"s3cret"});
  auto kubeconfig = dir_ / "kubeconfig";
  {
    std::ofstream f(kubeconfig);
    f << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
      << "clusters: [{name: fake, cluster: {server: '" << kube_.url() << "'}}]\n"
      << "contexts: [{name: test, context: {cluster: fake, user: me, namespace: team}}]\n"
      << "users: [{name: me, user: {token: s3cret}}]\n";
  }
  std::string metrics = (dir_ / "m.json").string();
  std::vector<std::string> args = {PIPEC_LAUNCHER_PATH, "--kubeconfig", kubeconfig.string(),
                                   "--manifest", kMpiJob, "--step-name", "wf-sig-1",
                                   "--metric", "loss", "--metrics-file", metrics,
                                   "--retry-delay", "20ms", "--poll-interval", "50ms"};
  std::string out_path = (dir_ / "stdout").string(), err_path = (dir_ / "stderr").string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen(out_path.c_str(), "w", stdout) || !freopen(err_path.c_str(), "w", stderr)) _exit(126);
    setenv("POD_UID", "uid-sig", 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  auto job = kube_.wait_for_job(10s);
  ASSERT_EQ(job, "wf-sig-1");
  EXPECT_EQ(kube_.job(job)->at("metadata").at("ownerReferences")[0].at("uid"), "uid-sig");
  kube_.add_pod(job + "-launcher", job, "launcher", 0);
  kube_.log(job + "-launcher", "loss=0.75");
  kube_.set_condition(job, "Running");
  wait_for([&] { return kube_.count("GET /api/v1/namespaces/team/pods/" + job + "-launcher/log") >= 1; });
  std::this_thread::sleep_for(100ms);
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (waitpid(pid, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(WIFEXITED(status)) << read(err_path);
  EXPECT_EQ(WEXITSTATUS(status), kExitStopped) << read(err_path);
  EXPECT_EQ(kube_.count("DELETE /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs/wf-sig-1"), 1);
  EXPECT_FALSE(kube_.job(job));
  EXPECT_EQ(read(out_path), "loss=0.75\n");
  EXPECT_EQ(read(metrics), R"({"metrics":[{"format":"RAW","name":"loss","numberValue":0.75}]})" "\n");
  for (const auto& t : kube_.tokens_seen()) EXPECT_EQ(t, "Bearer s3cret");
}

// The real binary: SIGTERM while a create is being retried (the API answers 500) sends
// nothing more, not even a DELETE (there is no job), writes the metrics file and exits 5.
TEST_F(RuntimeLauncher, BinarySigtermDuringCreateRetriesSendsNothingMore) {
  kube_.create_500s = 1000;
  auto kubeconfig = dir_ / "kubeconfig";
  {
    std::ofstream f(kubeconfig);
    f << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
      << "clusters: [{name: fake, cluster: {server: '" << kube_.url() << "'}}]\n"
      << "contexts: [{name: test, context: {cluster: fake, user: me, namespace: team}}]\n"
      << "users: [{name: me, user: {token: t}}]\n";
  }
  std::string metrics = (dir_ / "m.json").string();
  // A long retry delay: the signal comes while the launcher waits to send the next POST.
  std::vector<std::string> args = {PIPEC_LAUNCHER_PATH, "--kubeconfig", kubeconfig.string(),
                                   "--manifest", kMpiJob, "--step-name", "wf-sig-2",
                                   "--metric", "loss", "--metrics-file", metrics,
                                   "--retry-delay", "30s"};
  std::string err_path = (dir_ / "stderr").string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen("/dev/null", "w", stdout) || !freopen(err_path.c_str(), "w", stderr)) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  wait_for([&] { return kube_.creates() >= 1; });
  ASSERT_EQ(kube_.creates(), 1);
  std::this_thread::sleep_for(50ms);
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (waitpid(pid, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(WIFEXITED(status)) << read(err_path);
  EXPECT_EQ(WEXITSTATUS(status), kExitStopped) << read(err_path);
  // The pre-check's reads came before it; the create is the last request.
  EXPECT_EQ(kube_.requests().back(), "POST /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs")
      << read(err_path);
  EXPECT_EQ(kube_.creates(), 1) << read(err_path);
  EXPECT_NE(read(err_path).find("stopped by a signal before the job was created"), std::string::npos)
      << read(err_path);
  EXPECT_EQ(read(metrics), "{\"metrics\":[]}\n");
}

// In a pod: HTTPS to $KUBERNETES_SERVICE_HOST:PORT with the service account's CA, the
// namespace from its file, and the token re-read after the kubelet rotates it mid-run.
TEST_F(RuntimeLauncher, InClusterOverTlsPicksUpTheRotatedToken) {
  auto pki = testing::make_test_pki();
  auto put = [](const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  };
  put(dir_ / "tls" / "server.crt", pki.server_cert);
  put(dir_ / "tls" / "server.key", pki.server_key);
  FakeKube kube(testing::FakeKubeTls{(dir_ / "tls" / "server.crt").string(),
                                     (dir_ / "tls" / "server.key").string(), ""});
  kube.accept_tokens({"t1"});
  put_needs(kube);
  InClusterPaths paths{(dir_ / "sa" / "token").string(), (dir_ / "sa" / "ca.crt").string(),
                       (dir_ / "sa" / "namespace").string()};
  put(paths.token, "t1\n");
  put(paths.ca, pki.ca_cert);
  put(paths.namespace_file, "team\n");
  ::setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", std::to_string(kube.port()).c_str(), 1);
  std::unique_ptr<KubeClient> client;
  ConnectFn connect = [&](std::string& why) -> KubeClient* {
    auto config = load_kube_config("", paths, why);
    if (!config) return nullptr;
    client = std::make_unique<KubeClient>(std::move(*config));
    return client.get();
  };
  auto o = options(kMpiJob);
  o.namespace_name.clear();
  std::thread driver([&] {
    auto job = kube.wait_for_job(5s);
    if (job.empty()) return;
    auto pod = job + "-launcher";
    kube.add_pod(pod, job, "launcher", 0);
    kube.set_condition(job, "Running");
    kube.log(pod, "loss=0.5");
    wait_for([&] { return kube.log_lines_sent >= 1; });
    kube.accept_tokens({"t1", "t2"});
    put(paths.token, "t2\n");
    kube.accept_tokens({"t2"});
    kube.log(pod, "loss=0.25");
    kube.end_pod(pod, 0);
    kube.set_condition(job, "Succeeded");
  });
  std::ostringstream out, err;
  std::atomic<bool> never{false};
  int code = run_launcher(o, connect, out, err, never);
  driver.join();
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  EXPECT_EQ(code, kExitSucceeded) << err.str();
  EXPECT_EQ(out.str(), "loss=0.5\nloss=0.25\n");
  auto requests = kube.requests();
  auto tokens = kube.tokens_seen();
  ASSERT_EQ(requests.size(), tokens.size());
  ASSERT_FALSE(requests.empty());
  // The pre-check's reads, then the create, all with the first token.
  auto create = std::find(requests.begin(), requests.end(),
                          "POST /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs");
  ASSERT_NE(create, requests.end());
  for (auto i = 0; i <= create - requests.begin(); ++i) EXPECT_EQ(tokens[i], "Bearer t1") << requests[i];
  EXPECT_EQ(requests.back(), "DELETE /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs/wf-train-123");
  EXPECT_EQ(tokens.back(), "Bearer t2");
}

TEST_F(RuntimeLauncher, BinaryDeletesTheJobOnSigint) {
  auto kubeconfig = dir_ / "kubeconfig";
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                            << "clusters: [{name: fake, cluster: {server: '" << kube_.url() << "'}}]\n"
                            << "contexts: [{name: test, context: {cluster: fake, user: me, namespace: team}}]\n"
                            << "users: [{name: me, user: {}}]\n";
  std::string metrics = (dir_ / "m.json").string();
  std::vector<std::string> args = {PIPEC_LAUNCHER_PATH, "--kubeconfig", kubeconfig.string(),
                                   "--manifest", kMpiJob, "--step-name", "wf-int-1", "--keep-job",
                                   "--metric", "loss", "--metrics-file", metrics,
                                   "--retry-delay", "20ms"};
  std::string err_path = (dir_ / "stderr").string();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen("/dev/null", "w", stdout) || !freopen(err_path.c_str(), "w", stderr)) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  auto job = kube_.wait_for_job(10s);
  EXPECT_EQ(job, "wf-int-1");
  // Still pending: the launcher is watching the job.
  wait_for([&] { return kube_.count("GET /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs?") >= 1; });
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (waitpid(pid, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(WIFEXITED(status)) << read(err_path);
  EXPECT_EQ(WEXITSTATUS(status), kExitStopped) << read(err_path);
  EXPECT_EQ(kube_.count("DELETE /apis/kubeflow.org/v2beta1/namespaces/team/mpijobs/wf-int-1"), 1);
  EXPECT_FALSE(kube_.job("wf-int-1"));
  EXPECT_EQ(read(metrics), "{\"metrics\":[]}\n");
  auto err = read(err_path);
  auto stopped = err.find("pipec-launcher: stopped by a signal; deleting the job\n");
  EXPECT_NE(stopped, std::string::npos) << err;
  EXPECT_NE(err.find("pipec-launcher: deleted job wf-int-1\n", stopped), std::string::npos) << err;
}

// Every request the launcher makes in a success, a failure (log tail) and a stop is granted
// by the Role in runtime/deploy/rbac.yaml: (API group, resource, verb) as the API server
// authorises it.
TEST_F(RuntimeLauncher, RbacRoleGrantsEveryRequestTheLauncherMakes) {
  auto role = YAML::LoadAllFromFile(PIPEC_SOURCE_DIR "/runtime/deploy/rbac.yaml");
  ASSERT_EQ(role.size(), 2u);
  ASSERT_EQ(role[0]["kind"].as<std::string>(), "Role");
  ASSERT_EQ(role[1]["kind"].as<std::string>(), "RoleBinding");
  EXPECT_EQ(role[1]["roleRef"]["name"].as<std::string>(), role[0]["metadata"]["name"].as<std::string>());
  auto granted = [&](const std::string& group, const std::string& resource, const std::string& verb) {
    for (const auto& rule : role[0]["rules"]) {
      auto has = [](const YAML::Node& list, const std::string& v) {
        for (const auto& x : list)
          if (x.as<std::string>() == v) return true;
        return false;
      };
      if (has(rule["apiGroups"], group) && has(rule["resources"], resource) && has(rule["verbs"], verb))
        return true;
    }
    return false;
  };
  // Only what the launcher needs: no list/watch on logs, no update or patch of jobs.
  EXPECT_FALSE(granted("kubeflow.org", "mpijobs", "update"));
  EXPECT_FALSE(granted("kubeflow.org", "mpijobs", "patch"));
  EXPECT_FALSE(granted("", "pods", "update"));
  EXPECT_FALSE(granted("", "services", "list"));
  EXPECT_FALSE(granted("", "events", "create"));
  EXPECT_FALSE(granted("", "events", "watch"));

  auto watched = [&](const std::string& job) {
    wait_for([&] {
      for (const auto& req : kube_.requests())
        if (req.find("watch=true") != std::string::npos &&
            req.find("metadata.name=" + job) != std::string::npos)
          return true;
      return false;
    });
  };
  // A failure with logs, then a stop, for each kind.
  int n = 0;
  for (const char* manifest : {kMpiJob, kTfJobWithChief, kPyTorchJob}) {
    auto o = options(manifest);
    o.step_name = "wf-rbac-" + std::to_string(++n);
    auto r = run(o, [&](const std::string& job) {
      auto pod = job + "-leader";
      std::string type = manifest == kMpiJob ? "launcher" : manifest == kPyTorchJob ? "master" : "chief";
      kube_.add_pod(pod, job, type, 0);
      watched(job);
      kube_.set_condition(job, "Running");
      kube_.log(pod, "boom");
      kube_.end_pod(pod, 1);
      kube_.set_condition(job, "Failed", "Failed", "it failed");
    });
    EXPECT_EQ(r.code, kExitFailed) << r.err;
  }
  std::atomic<bool> stop{false};
  auto o = options(kMpiJob);
  o.step_name = "wf-rbac-stop";
  EXPECT_EQ(run(o, [&](const std::string& job) { watched(job); stop = true; }, &stop).code, kExitStopped);
  // Runtime "pods": its pods and services, created, followed and deleted.
  {
    auto p = options(kTfJobWithChief);
    p.runtime = "pods";
    p.step_name = "wf-rbac-pods";
    std::thread driver([&] {
      const std::vector<std::string> pods = {"wf-rbac-pods-chief-0", "wf-rbac-pods-worker-0",
                                             "wf-rbac-pods-worker-1"};
      wait_for([&] { return kube_.pod_object(pods.back()).has_value(); });
      for (const auto& name : pods) kube_.start_pod(name);
      kube_.end_pod(pods.front(), 0);
    });
    EXPECT_EQ(run(p).code, kExitSucceeded);
    driver.join();
  }

  // Trainer v2: a TrainJob whose nodes run before its pending timeout ends, then fail.
  {
    kube_.install_trainer();
    auto t = options(kMpiJob);
    t.runtime = "trainer-v2";
    t.step_name = "wf-rbac-trainer";
    t.pending_timeout = 300ms;
    auto r = run(t, [&](const std::string& job) {
      auto pods = kube_.jobset_pods(job, 1);
      kube_.start_pod_unready(pods.front());
      std::this_thread::sleep_for(600ms);
      kube_.start_pod(pods.front());
      auto launcher = kube_.jobset_pods(job, 2).back();
      kube_.start_pod(launcher);
      kube_.log(launcher, "boom");
      kube_.end_pod(launcher, 1);
    });
    EXPECT_EQ(r.code, kExitFailed) << r.err;
  }

  std::set<std::string> seen;
  for (const auto& req : kube_.requests()) {
    // "METHOD /apis/GROUP/VERSION/namespaces/NS/RESOURCE[/NAME][?QUERY]" or
    // "METHOD /api/v1/namespaces/NS/(pods|services|events)[/NAME[/log]][?QUERY]"
    auto space = req.find(' ');
    std::string method = req.substr(0, space), path = req.substr(space + 1);
    bool watch = path.find("watch=true") != std::string::npos;
    path = path.substr(0, path.find('?'));
    std::vector<std::string> parts;
    for (std::size_t at = 1; at <= path.size();) {
      auto slash = std::min(path.find('/', at), path.size());
      parts.push_back(path.substr(at, slash - at));
      at = slash + 1;
    }
    std::string group, resource, verb;
    // The pre-check's discovery and SelfSubjectAccessReviews are every user's (the default
    // ClusterRoles system:discovery and system:basic-user); its reads of cluster-scoped
    // objects are outside any Role (a 403 there is an unknown, not an error).
    if ((parts.size() == 3 && parts[0] == "apis") ||
        path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" ||
        (parts.size() == 5 && parts[0] == "apis" && method == "GET" &&
         (parts[3] == "clustertrainingruntimes" || parts[3] == "priorityclasses")))
      continue;
    if (parts.size() >= 6 && parts[0] == "apis" && parts[3] == "namespaces") {
      group = parts[1];
      resource = parts[5];
      verb = method == "POST" ? "create" : method == "DELETE" ? "delete"
             : watch ? "watch" : parts.size() == 7 ? "get" : "list";
    } else if (parts.size() >= 5 && parts[0] == "api" && parts[2] == "namespaces" &&
               (parts[4] == "pods" || parts[4] == "services" || parts[4] == "events" ||
                parts[4] == "persistentvolumeclaims")) {
      resource = parts.size() == 7 && parts[6] == "log" ? "pods/log" : parts[4];
      verb = method == "POST" ? "create" : method == "DELETE" ? "delete" : parts.size() == 5 ? "list" : "get";
    } else {
      ADD_FAILURE() << "unexpected request " << req;
      continue;
    }
    seen.insert(group + "/" + resource + ":" + verb);
    EXPECT_TRUE(granted(group, resource, verb)) << req << " needs " << verb << " on " << resource;
  }
  for (const char* needed : {"kubeflow.org/mpijobs:create", "kubeflow.org/mpijobs:get",
                             "kubeflow.org/mpijobs:watch", "kubeflow.org/mpijobs:delete",
                             "kubeflow.org/tfjobs:create", "kubeflow.org/pytorchjobs:watch",
                             "/pods:list", "/pods/log:get", "/events:list", "/pods:create", "/pods:delete",
                             "/services:create", "/services:delete", "/persistentvolumeclaims:get",
                             "trainer.kubeflow.org/trainjobs:create",
                             "trainer.kubeflow.org/trainjobs:watch", "trainer.kubeflow.org/trainjobs:delete"})
    EXPECT_TRUE(seen.count(needed)) << needed;
}

}  // namespace
}  // namespace pipec::runtime::testing
