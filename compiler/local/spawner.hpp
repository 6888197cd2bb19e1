#pragma once
// The per-run sandbox spawner (docs/local.md "Scheduling"): one helper process per run, in a
// user and mount namespace of its own, that starts each step in a mount, PID and IPC
// namespace made from the run's prepared view of the host, instead of one bwrap per step.

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pipec::local {

/// What the helper writes back to the run, one record per event: kind 0, started (the pid, or
/// an errno in `err`; the first record is the helper's own hello); kind 1, ended (the pid and
/// its wait status).
struct Reply {
  std::int32_t kind;
  std::int32_t pid;
  std::int32_t status;
  std::int32_t err;
};

/// The helper's entry point: `pipec --local-spawner FD SCRATCH` (main.cpp), FD the socket
/// to the run, SCRATCH an empty directory of the run dir it mounts its tmpfs on. Returns
/// the exit code.
int spawner_main(int fd, const char* scratch);

/// The run's side of the helper.
class Spawner {
 public:
  /// Starts the helper (the running program again, with --local-spawner), its scratch
  /// directory at `scratch`. false: it could not be started or prepared (no user
  /// namespaces); `error` says why.
  bool start(const std::string& scratch, std::string& error);
  /// Ends the helper (closing its socket kills what still runs) and reaps it, so that every
  /// step's CPU time is the run's children's.
  ~Spawner();

  /// Starts `argv` (the bwrap command line sandbox_argv wrote, made entries already taken
  /// out) with `env`, its standard output and error `out_fd`; its PID namespace's init is
  /// `pid`, the leader of the step's process group. false: `error` says why.
  bool spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int out_fd,
             pid_t& pid, std::string& error);
  /// Waits for the end of the step whose init is `pid`: its wait status.
  int wait(pid_t pid);

 private:
  void read_replies();

  int fd_ = -1;
  pid_t helper_ = -1;
  std::thread reader_;
  std::mutex request_mu_;  // one request at a time
  std::mutex mu_;          // the replies below
  std::condition_variable cv_;
  std::map<pid_t, int> ended_;  // init -> wait status
  pid_t started_ = 0;           // the last request's init (-errno: it failed)
  bool gone_ = false;           // the helper ended
};

}  // namespace pipec::local
