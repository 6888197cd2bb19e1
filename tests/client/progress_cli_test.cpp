// Issue 41: `run --wait` and `runs wait` draw a progress line on a terminal (state, steps
// done, time), redrawn in place and erased before every other line; through a pipe, or with
// -q, the output is what it was without one.

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/client/cli_support.hpp"

namespace pipec::client {
namespace {

using testing::ClientCli;
using testing::Result;

// Runs pipec with a pseudo-terminal as its standard output and error (TERM=xterm): `out`
// holds all it wrote there (the terminal turns "\n" into "\r\n").
Result on_terminal(std::vector<std::string> args) {
  args.insert(args.begin(), PIPEC_BINARY);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string env[] = {"PATH=/usr/bin:/bin", "NO_COLOR=1", "TERM=xterm"};
  char* envp[] = {env[0].data(), env[1].data(), env[2].data(), nullptr};
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  Result r;
  if (pid < 0) return r;
  if (pid == 0) {
    execve(PIPEC_BINARY, argv.data(), envp);
    _exit(127);
  }
  char buffer[4096];
  while (true) {
    ssize_t n = read(master, buffer, sizeof buffer);
    if (n > 0) r.out.append(buffer, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;  // EIO: the child closed the terminal
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(ClientCli, RunsWaitDrawsAProgressLineOnATerminalOnly) {
  fake_.script_runs({"Pending", "Running", "Running", "Running", "Succeeded"});
  const std::string erase = "\r\033[K";
  std::vector<std::string> run = {"run", data("typed.yaml"), "--host", fake_.url(), "-p", "data=x",
                                  "--run-name", "r1", "--wait", "--poll", "10ms"};
  Result tty = on_terminal(run);
  EXPECT_EQ(tty.exit, 0) << tty.out;
  // Drawn at each poll that did not end the run, and erased before the next line.
  EXPECT_GE(count(tty.out, erase + "-- Running, 0/"), 2u) << tty.out;
  EXPECT_NE(tty.out.find(erase + "-- Pending, "), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(" steps done, 0 s"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(erase + "run state: Running\r\n"), std::string::npos) << tty.out;
  // The last line drawn is erased: what stays on the screen is the lines of a pipe.
  EXPECT_NE(tty.out.find(erase + "run state: Succeeded\r\n"), std::string::npos) << tty.out;

  // Through a pipe: no progress line, no control characters.
  fake_.script_runs({"Pending", "Running", "Running", "Running", "Succeeded"});
  Result piped = pipec(run);
  EXPECT_EQ(piped.exit, 0) << piped.err;
  EXPECT_EQ(piped.out.find('\r'), std::string::npos) << piped.out;
  EXPECT_EQ(piped.out.find('\033'), std::string::npos) << piped.out;
  EXPECT_NE(piped.out.find("run state: Pending\nrun state: Running\nrun state: Succeeded\n"),
            std::string::npos)
      << piped.out;

  // runs wait: the same line; with -q none, even on a terminal.
  // A run started without --wait ("started run 'NAME' (id ID) in ..."): its id.
  auto start = [&](const std::string& name) {
    Result started = pipec({"run", data("typed.yaml"), "--host", fake_.url(), "-p", "data=x",
                            "--run-name", name});
    std::string head = "started run '" + name + "' (id ";
    auto at = started.out.find(head);
    if (at == std::string::npos) return std::string();
    at += head.size();
    return started.out.substr(at, started.out.find(')', at) - at);
  };
  fake_.script_runs({"Running", "Running", "Succeeded"});
  std::string id = start("r2");
  ASSERT_FALSE(id.empty());
  Result waited = on_terminal({"runs", "wait", id, "--host", fake_.url(), "--poll", "10ms"});
  EXPECT_EQ(waited.exit, 0) << waited.out;
  EXPECT_NE(waited.out.find(erase + "-- Running, "), std::string::npos) << waited.out;
  id = start("r3");
  Result quiet = on_terminal({"runs", "wait", id, "--host", fake_.url(), "--poll", "10ms", "-q"});
  EXPECT_EQ(quiet.exit, 0) << quiet.out;
  EXPECT_EQ(quiet.out.find('\033'), std::string::npos) << quiet.out;
  EXPECT_NE(quiet.out.find("run state: Running\r\nrun state: Succeeded\r\n"), std::string::npos)
      << quiet.out;
}

}  // namespace
}  // namespace pipec::client
