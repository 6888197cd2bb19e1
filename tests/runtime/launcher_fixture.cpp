#include "tests/runtime/launcher_fixture.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "kube/client.hpp"

namespace pipec::runtime::testing {
using kube::KubeClient;
using kube::KubeConfig;

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void put_needs(FakeKube& kube) {
  for (const char* claim : {"user-susan", "runs", "ds"})
    kube.put_object(std::string("/api/v1/namespaces/team/persistentvolumeclaims/") + claim,
                    {{"metadata", {{"name", claim}, {"namespace", "team"}}},
                     {"spec", {{"accessModes", {"ReadWriteMany"}}}},
                     {"status", {{"phase", "Bound"}}}});
  for (auto [runtime, policy] : {std::pair{"torch-distributed", "torch"}, std::pair{"my-torch", "torch"},
                                 std::pair{"deepspeed-distributed", "mpi"}})
    kube.put_object(std::string("/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/") + runtime,
                    {{"kind", "ClusterTrainingRuntime"},
                     {"metadata", {{"name", runtime}}},
                     {"spec", {{"mlPolicy", {{"numNodes", 1}, {policy, nlohmann::json::object()}}}}}});
}

void RuntimeLauncher::SetUp() {
  put_needs(kube_);
  dir_ = fs::temp_directory_path() /
         ("pipec-launcher-test-" + std::to_string(::getpid()) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir_);
  fs::create_directories(dir_);
}

void RuntimeLauncher::TearDown() { fs::remove_all(dir_); }

LauncherOptions RuntimeLauncher::options(const char* manifest) {
  LauncherOptions o;
  o.manifest = manifest;
  o.step_name = "wf-train-123";
  o.workflow_name = "wf";
  o.pod_uid = "pod-uid-1";
  o.namespace_name = "team";
  o.metrics_file = (dir_ / "out" / "metrics.json").string();
  o.ui_metadata_file = (dir_ / "out" / "ui.json").string();
  o.poll_interval = 50ms;
  o.retry_delay = 20ms;
  o.log_grace = 3s;
  return o;
}

Result RuntimeLauncher::run(const LauncherOptions& o, std::function<void(const std::string&)> script,
                            std::atomic<bool>* stop) {
  std::function<void()> drive;
  if (script)
    drive = [&] {
      auto name = kube_.wait_for_job(5s);
      if (!name.empty()) script(name);
    };
  return launch(o, drive, stop);
}

Result RuntimeLauncher::launch(const LauncherOptions& o, const std::function<void()>& drive,
                               std::atomic<bool>* stop) {
  KubeConfig config;
  config.server = kube_.url();
  KubeClient client(config);
  std::thread driver;
  if (drive) driver = std::thread(drive);
  std::ostringstream out, err;
  std::atomic<bool> never{false};
  auto began = std::chrono::steady_clock::now();
  Result r;
  r.code = run_launcher(o, client, out, err, stop ? *stop : never);
  r.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
  if (driver.joinable()) driver.join();
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string RuntimeLauncher::read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void RuntimeLauncher::wait_for(const std::function<bool()>& condition) {
  auto until = std::chrono::steady_clock::now() + 5s;
  while (!condition() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
}

}  // namespace pipec::runtime::testing
