// The TrainJob made of a PyTorchJob (runtime "trainer-v2"): its shape, and its command run
// by the real /bin/sh with the PET_* variables Trainer's torch plugin sets: a command
// written for the PyTorchJob sees the same MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK.

#include "runtime/trainer_v2.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pipec::runtime {
namespace {

using nlohmann::json;

// Runs argv with exactly `env`, returns its stdout (and its exit status in `status`).
std::string run(const std::vector<std::string>& argv, const std::vector<std::string>& env, int& status) {
  int fds[2];
  if (::pipe(fds) != 0) return "";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    std::vector<char*> a, e;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
    e.push_back(nullptr);
    ::execve("/bin/sh", a.data(), e.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, &status, 0);
  return out;
}

json pytorchjob(const json& command, const std::string& dir) {
  json pod = {{"containers",
               json::array({{{"name", "pytorch"},
                             {"image", "pytorch/pytorch:2.3.0"},
                             {"command", command},
                             {"workingDir", dir},
                             {"env", json::array({{{"name", "PIPEC_msg"}, {"value", "it's \"$(id)\"\n`x`"}}})},
                             {"resources", {{"limits", {{"cpu", "2"}}}}}}})}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", "train"}}},
          {"spec",
           {{"nprocPerNode", "4"},
            {"pytorchReplicaSpecs",
             {{"Master", {{"replicas", 1}, {"template", {{"spec", pod}}}}},
              {"Worker", {{"replicas", 2}, {"template", {{"spec", pod}}}}}}}}}};
}

std::vector<std::string> command_of(const json& trainjob) {
  std::vector<std::string> argv;
  for (const auto& w : trainjob["spec"]["trainer"]["command"]) argv.push_back(w.get<std::string>());
  return argv;
}

class RuntimeTrainerV2 : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("pipec-trainer-v2-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::vector<std::string> pet_env(const json& trainjob) {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "PET_NNODES=3", "PET_NODE_RANK=2",
                                    "PET_MASTER_ADDR=train-node-0-0.train", "PET_MASTER_PORT=29500",
                                    "PET_NPROC_PER_NODE=4"};
    for (const auto& e : trainjob["spec"]["trainer"]["env"])
      env.push_back(e["name"].get<std::string>() + "=" + e["value"].get<std::string>());
    return env;
  }
  std::filesystem::path dir_;
};

TEST_F(RuntimeTrainerV2, AShellCommandSeesThePyTorchJobsVariablesInItsWorkingDirectory) {
  json source = pytorchjob(
      json::array({"sh", "-c", "printf '%s|' \"$WORLD_SIZE\" \"$RANK\" \"$MASTER_ADDR\" \"$MASTER_PORT\" \"$(pwd)\" \"${PIPEC_msg}\""}),
      dir_.string());
  auto t = pytorchjob_to_trainjob(source.dump(), "");
  ASSERT_TRUE(t.ok) << t.error;
  json job = json::parse(t.job);
  EXPECT_EQ(job["spec"]["trainer"]["numNodes"], 3);
  EXPECT_EQ(job["spec"]["trainer"]["numProcPerNode"], 4);
  EXPECT_EQ(job["spec"]["runtimeRef"]["name"], "torch-distributed");
  EXPECT_EQ(job["spec"]["trainer"]["resourcesPerNode"]["limits"]["cpu"], "2");
  EXPECT_FALSE(job["spec"].contains("runtimePatches"));  // nothing to patch
  int status = -1;
  std::string out = run(command_of(job), pet_env(job), status);
  EXPECT_EQ(status, 0);
  // WORLD_SIZE as the operator counts: 3 nodes x 4 processes.
  EXPECT_EQ(out, "12|2|train-node-0-0.train|29500|" + dir_.string() + "|it's \"$(id)\"\n`x`|");
}

TEST_F(RuntimeTrainerV2, AnExecCommandRunsWithItsWordsUnchanged) {
  json source = pytorchjob(json::array({"printf", "%s|", "a b", "$RANK", "it's"}), dir_.string());
  source["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["args"] =
      json::array({"--x=$(y)"});
  auto t = pytorchjob_to_trainjob(source.dump(), "my-runtime");
  ASSERT_TRUE(t.ok) << t.error;
  json job = json::parse(t.job);
  EXPECT_EQ(job["spec"]["runtimeRef"]["name"], "my-runtime");
  std::vector<std::string> argv = command_of(job);
  for (const auto& a : job["spec"]["trainer"]["args"]) argv.push_back(a.get<std::string>());
  int status = -1;
  EXPECT_EQ(run(argv, pet_env(job), status), "a b|$RANK|it's|--x=$(y)|");
  EXPECT_EQ(status, 0);
}

TEST_F(RuntimeTrainerV2, ANonNumericProcessCountCountsOne) {
  json source = pytorchjob(json::array({"sh", "-c", "echo \"$WORLD_SIZE\""}), dir_.string());
  auto t = pytorchjob_to_trainjob(source.dump(), "");
  ASSERT_TRUE(t.ok);
  json job = json::parse(t.job);
  std::vector<std::string> env = pet_env(job);
  for (auto& e : env)
    if (e.rfind("PET_NPROC_PER_NODE=", 0) == 0) e = "PET_NPROC_PER_NODE=auto";
  int status = -1;
  EXPECT_EQ(run(command_of(job), env, status), "3\n");
}

TEST_F(RuntimeTrainerV2, AMissingWorkingDirectoryStopsTheCommand) {
  json source = pytorchjob(json::array({"sh", "-c", "echo ran"}), (dir_ / "absent").string());
  auto t = pytorchjob_to_trainjob(source.dump(), "");
  ASSERT_TRUE(t.ok);
  int status = 0;
  EXPECT_EQ(run(command_of(json::parse(t.job)), pet_env(json::parse(t.job)), status), "");
  EXPECT_NE(status, 0);
}

TEST(RuntimeTrainerV2Rules, APyTorchJobOrAnMpiJobGoesToTrainerV2) {
  EXPECT_TRUE(is_training_runtime("PyTorchJob", "trainer-v2"));
  EXPECT_TRUE(is_training_runtime("MPIJob", "trainer-v2"));
  EXPECT_TRUE(is_training_runtime("MPIJob", "operator"));
  EXPECT_TRUE(is_training_runtime("TFJob", ""));
  EXPECT_FALSE(is_training_runtime("TFJob", "trainer-v2"));
  EXPECT_FALSE(is_training_runtime("PyTorchJob", "Trainer-V2"));
  EXPECT_FALSE(pytorchjob_to_trainjob(R"({"kind":"MPIJob"})", "").ok);
  EXPECT_FALSE(mpijob_to_trainjob(R"({"kind":"PyTorchJob"})", "").ok);
  EXPECT_EQ(default_trainer_runtime("MPIJob"), "deepspeed-distributed");
}

// An MPIJob's launcher command (shell form, as mpi_job renders it) runs after the git
// clone and in the working directory, with the values still only in the environment.
TEST_F(RuntimeTrainerV2, AnMpiJobsLauncherCommandRunsUnchangedInItsWorkingDirectory) {
  json launcher = {{"containers", json::array({{{"name", "mpi"},
                                                {"image", "horovod/horovod:0.28.1"},
                                                {"command", json::array({"sh", "-c", "printf '%s|' \"$(pwd)\" \"${PIPEC_msg}\""})},
                                                {"workingDir", dir_.string()},
                                                {"env", json::array({{{"name", "PIPEC_msg"}, {"value", "it's \"$(id)\"\n`x`"}}})}}})},
                   {"volumes", json::array({{{"name", "data-0"}, {"persistentVolumeClaim", {{"claimName", "c"}}}}})}};
  json worker = {{"containers", json::array({{{"name", "mpi"},
                                              {"image", "horovod/horovod:0.28.1"},
                                              {"command", json::array({"/usr/sbin/sshd", "-De"})},
                                              {"resources", {{"limits", {{"nvidia.com/gpu", "8"}}}}}}})}};
  json source = {{"apiVersion", "kubeflow.org/v2beta1"},
                 {"kind", "MPIJob"},
                 {"metadata", {{"name", "mpi"}}},
                 {"spec",
                  {{"slotsPerWorker", 8},
                   {"mpiReplicaSpecs",
                    {{"Launcher", {{"replicas", 1}, {"template", {{"spec", launcher}}}}},
                     {"Worker", {{"replicas", 16}, {"template", {{"spec", worker}}}}}}}}}};
  auto t = to_trainjob(source.dump(), "my-mpi");
  ASSERT_TRUE(t.ok) << t.error;
  json job = json::parse(t.job);
  EXPECT_EQ(job["spec"]["runtimeRef"]["name"], "my-mpi");
  EXPECT_EQ(job["spec"]["trainer"]["image"], "horovod/horovod:0.28.1");
  EXPECT_EQ(job["spec"]["trainer"]["numNodes"], 16);
  EXPECT_EQ(job["spec"]["trainer"]["numProcPerNode"], 8);
  EXPECT_EQ(job["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"], "8");
  int status = 0;
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  for (const auto& e : job["spec"]["trainer"]["env"])
    env.push_back(e["name"].get<std::string>() + "=" + e["value"].get<std::string>());
  EXPECT_EQ(run(command_of(job), env, status), dir_.string() + "|it's \"$(id)\"\n`x`|");
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace pipec::runtime
