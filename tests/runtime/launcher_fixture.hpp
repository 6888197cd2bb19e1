#pragma once
// The launcher against FakeKube, run in-process: the fixture the launcher_*_test.cpp files
// share and the manifests more than one of them runs. One scenario per test, driven from a
// second thread.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "runtime/launcher.hpp"
#include "tests/runtime/fake_kube.hpp"

namespace pipec::runtime::testing {

inline constexpr char kMpiJob[] = R"({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
  "metadata": {"name": "placeholder", "labels": {"app": "train"}},
  "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
    "Launcher": {"replicas": 1, "template": {"spec": {
      "containers": [{"name": "main", "image": "img", "args": ["python", "train.py"],
                      "volumeMounts": [{"name": "data-0", "mountPath": "/training"}]}],
      "volumes": [{"name": "data-0", "persistentVolumeClaim": {"claimName": "user-susan"}}]}}},
    "Worker": {"replicas": 2, "template": {"spec": {
      "containers": [{"name": "main", "image": "img"}]}}}}}})";

inline constexpr char kTfJobWithChief[] = R"({"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
  "metadata": {"name": "x"}, "spec": {"tfReplicaSpecs": {
    "Chief": {"replicas": 1, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
    "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}}}}})";

inline constexpr char kTfJobWorkers[] = R"({"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
  "metadata": {"name": "x"}, "spec": {"tfReplicaSpecs": {
    "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}}}}})";

inline constexpr char kPyTorchJob[] = R"({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
  "metadata": {"name": "x"}, "spec": {"pytorchReplicaSpecs": {
    "Master": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "i"}]}}},
    "Worker": {"replicas": 3, "template": {"spec": {"containers": [{"name": "pytorch", "image": "i"}]}}}}}})";
/// What the manifests above and the tests need in namespace team, present and well (the
/// launcher's pre-check asks for them): the claims user-susan, runs and ds (Bound,
/// ReadWriteMany) and the ClusterTrainingRuntimes torch-distributed, my-torch (torch) and
/// deepspeed-distributed (mpi).
void put_needs(FakeKube& kube);

struct Result {
  int code = -1;
  std::string out, err;
  std::chrono::milliseconds took{0};
};

/// A temporary directory per test (dir_) and a fresh FakeKube (kube_) with put_needs.
class RuntimeLauncher : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  /// Options for step "wf-train-123" of workflow "wf" in namespace "team", its metrics and
  /// UI metadata files under dir_, with short poll, retry and log-grace intervals.
  LauncherOptions options(const char* manifest);

  // Runs the launcher here while `script` drives the fake from another thread once the
  // job exists (no script: nothing drives it).
  Result run(const LauncherOptions& o, std::function<void(const std::string&)> script = {},
             std::atomic<bool>* stop = nullptr);

  // Runs the launcher here while `drive` (if any) runs on a second thread; `stop`, if
  // given, is the launcher's stop flag. What run() and the tests' own runners share.
  Result launch(const LauncherOptions& o, const std::function<void()>& drive,
                std::atomic<bool>* stop);

  std::string read(const std::filesystem::path& p);

  /// Waits (at most 5 s) until `condition` holds.
  void wait_for(const std::function<bool()>& condition);

  std::filesystem::path dir_;
  FakeKube kube_;
};

/// How many times `what` occurs in `text` (overlapping ones counted).
inline std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace pipec::runtime::testing
