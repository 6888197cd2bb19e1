#pragma once
// The real `pipec` binary against the stateful fake KFP: the fixture of the client.cli.*
// tests (cli_test.cpp, answers_cli_test.cpp). PIPEC_BINARY, PIPEC_SOURCE_DIR and
// PIPEC_CLIENT_TEST_DATA come from tests/client/CMakeLists.txt.

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/client/fake_kfp.hpp"

namespace pipec::client::testing {

struct Result {
  int exit = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ClientCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) c = c == '/' ? '_' : c;  // a parameterised test's name holds '/'
    dir_ = std::filesystem::temp_directory_path() /
           ("pipec-client-cli-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs pipec with `args` and only the environment given (plus PATH).
  Result pipec(std::vector<std::string> args, std::vector<std::string> env = {}) {
    return std::move(pipec_all({std::move(args)}, std::move(env)).front());
  }

  // Runs each command at once (in parallel), and waits for all of them.
  std::vector<Result> pipec_all(std::vector<std::vector<std::string>> commands,
                                std::vector<std::string> env = {}) {
    env.push_back("PATH=/usr/bin:/bin");
    env.push_back("NO_COLOR=1");
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<pid_t> pids(commands.size(), 0);
    for (std::size_t i = 0; i < commands.size(); ++i) {
      std::vector<std::string>& args = commands[i];
      args.insert(args.begin(), PIPEC_BINARY);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      std::string out = output(i, "stdout"), err = output(i, "stderr");
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
      posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
      posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
      if (posix_spawn(&pids[i], PIPEC_BINARY, &actions, nullptr, argv.data(), envp.data()) != 0)
        pids[i] = 0;
      posix_spawn_file_actions_destroy(&actions);
    }
    std::vector<Result> results(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) {
      if (pids[i] > 0) {
        int status = 0;
        ::waitpid(pids[i], &status, 0);
        results[i].exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      results[i].out = slurp(output(i, "stdout"));
      results[i].err = slurp(output(i, "stderr"));
    }
    return results;
  }
  std::string data(const std::string& name) {
    return std::string(PIPEC_CLIENT_TEST_DATA) + "/" + name;
  }
  std::string example(const std::string& name) {
    return std::string(PIPEC_SOURCE_DIR) + "/dsl-examples/" + name;
  }

  FakeKfp fake_;
  std::filesystem::path dir_;

 private:
  std::string output(std::size_t i, const char* stream) {
    return (dir_ / (std::string(stream) + (i == 0 ? "" : "." + std::to_string(i)))).string();
  }
};

}  // namespace pipec::client::testing
