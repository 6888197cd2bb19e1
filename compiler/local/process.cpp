// The processes of a local run: started under the sandbox, waited for, their output and
// the progress line.
#include "compiler/local/runner.hpp"

#include <cstdlib>

#include "compiler/base/progress.hpp"
#include "compiler/local/sandbox.hpp"

namespace pipec::local::detail {

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// --- output ----------------------------------------------------------------------------

// "-- 3/20 done, 2 running, 15 waiting, 12 s: train, eval": the steps known so far (a
// loop's items are known when it starts), the ones running now, and the time since the run
// began; cut to the terminal's width.
void Runner::progress_locked() {
  if (!o_.progress) return;
  int running, done, waiting;
  std::string names;
  {
    std::lock_guard lock(mu_);
    running = running_;
    done = done_;
    waiting = waiting_;
    for (const Record& r : records_)
      if (r.outcome == Outcome::Running) names += (names.empty() ? ": " : ", ") + r.name;
  }
  auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start_).count();
  out_ << progress_line(STDOUT_FILENO, fmt::format("-- {}/{} done, {} running, {} waiting, {} s{}", done,
                                                   done + running + waiting, running, waiting, elapsed,
                                                   names))
       << std::flush;
  progress_shown_ = true;
}

void Runner::print_line(const std::string& label, std::string_view line) {
  std::lock_guard lock(out_mu_);
  if (progress_shown_) out_ << kProgressErase;
  out_ << '[' << label << "] " << line << '\n';
  progress_locked();
  if (!o_.progress) out_.flush();
}

std::size_t Runner::new_record(Record rec) {
  std::lock_guard lock(mu_);
  rec.started = std::chrono::duration<double>(Clock::now() - start_).count();
  records_.push_back(std::move(rec));
  return records_.size() - 1;
}

void Runner::finish_record(std::size_t index, const Record& rec) {
  std::lock_guard lock(mu_);
  double started = records_[index].started;
  records_[index] = rec;
  records_[index].started = started;
}

// --- processes -------------------------------------------------------------------------

// The run's sandbox spawner (spawner.hpp), unless PIPEC_LOCAL_SANDBOX=bwrap asks for one
// bwrap per step; where it cannot start (no user namespaces for this user), the steps run
// under bwrap as before, and PIPEC_LOCAL_SANDBOX=spawner says why.
void Runner::start_spawner() {
  const char* choice = std::getenv("PIPEC_LOCAL_SANDBOX");
  const std::string mode = choice ? choice : "";
  if (mode == "bwrap" || o_.bwrap != "bwrap") return;
  std::error_code ec;
  const std::string scratch = fs::absolute(o_.run_dir + "/sandbox-spawner", ec).string();
  fs::create_directories(scratch, ec);
  auto spawner = std::make_unique<Spawner>();
  std::string error;
  if (spawner->start(scratch, error)) spawner_ = std::move(spawner);
  else if (mode == "spawner")
    err_ << fmt::format("pipec: note: the sandbox spawner did not start ({}): each step runs under bwrap\n", error);
}

bool Runner::start(Proc& p, std::string& error) {
  std::error_code ec;
  // The step's root and /tmp, and its working directory; nothing else: a directory the
  // step writes into is made by the step, as in a pod.
  const std::string root = p.root.empty() ? p.dir + "/fs" : p.root;
  fs::create_directories(root + "/tmp", ec);
  fs::create_directories(p.dir + "/work", ec);
  std::vector<std::string> writable = p.writable_dirs;
  if (!p.working_dir.empty()) writable.push_back(p.working_dir);
  for (const auto& [host, mount] : p.volume_binds) writable.push_back(mount);
  for (const auto& [host, path] : p.file_binds) writable.push_back(fs::path(path).parent_path().string());
  Sandbox box{o_.bwrap,       p.dir,          root,          writable,       p.volume_binds, p.file_binds,
              p.own_files,    o_.visible_dirs, p.working_dir, p.read_only_mounts};
  // Under bwrap, the step's own directories and symlinks are made here, the symlinks as
  // hard links to the run's (LinkStore): bwrap would make a new inode for each. The
  // spawner makes them once per run, below an overlay root (spawner_helper.cpp).
  std::vector<std::string> argv = sandbox_argv(box, p.argv);
  if (links_ && !spawner_) argv = make_root_entries(root, argv, *links_);
  std::vector<char*> cargv, cenv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  for (auto& s : p.env) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  std::string log_path = p.dir + "/" + p.log;
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int fds[2];
  if (log_fd < 0 || pipe2(fds, O_CLOEXEC) != 0) {
    error = fmt::format("cannot create the log of {}: {}", p.label, std::strerror(errno));
    if (log_fd >= 0) close(log_fd);
    return false;
  }
  // posix_spawn (a vfork): a fork would copy the page tables of this large, threaded
  // process for every step, and its threads' writes would then fault on every shared page.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, pipe_signal;
  sigemptyset(&none);
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &pipe_signal);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  if (spawner_) {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    bool ok = spawner_->spawn(argv, p.env, fds[1], pid, error);
    close(fds[1]);
    if (!ok) {
      error = fmt::format("cannot start {}: {}", p.label, error);
      close(fds[0]);
      close(log_fd);
      return false;
    }
  } else if (int spawned = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), cenv.data()); spawned != 0) {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    error = fmt::format("cannot run {} for {}: {}", cargv[0], p.label, std::strerror(spawned));
    close(fds[0]);
    close(fds[1]);
    close(log_fd);
    return false;
  } else {
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    setpgid(pid, pid);
    close(fds[1]);
  }
  p.pid = pid;
  // The log: raw bytes to the file, lines prefixed to the terminal, the leader's to the
  // metric scraper; then the exit status.
  std::thread([this, &p, in = fds[0], log_fd] {
    std::string partial;
    char buf[16384];
    for (;;) {
      ssize_t n = read(in, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::string_view chunk(buf, static_cast<std::size_t>(n));
      for (std::size_t off = 0; off < chunk.size();) {
        ssize_t w = write(log_fd, chunk.data() + off, chunk.size() - off);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
      }
      if (p.scraper) {
        std::lock_guard lock(mu_);
        p.scraper->feed(chunk);
      }
      partial.append(chunk);
      std::size_t start = 0, nl;
      while ((nl = partial.find('\n', start)) != std::string::npos) {
        print_line(p.label, std::string_view(partial).substr(start, nl - start));
        start = nl + 1;
      }
      partial.erase(0, start);
    }
    if (!partial.empty()) print_line(p.label, partial);
    if (p.scraper) {
      std::lock_guard lock(mu_);
      p.scraper->finish();
    }
    close(in);
    close(log_fd);
    int status = 0;
    if (spawner_) {
      // The spawner's helper reaps the step's init (the command's status).
      status = spawner_->wait(p.pid);
      std::lock_guard lock(mu_);
      p.status = status;
      p.done = true;
      cv_.notify_all();
      return;
    }
    while (waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
    }
    // bwrap returns as soon as the step's command has ended, without waiting for the PID
    // namespace's init (which reaped the command): the run is a child subreaper
    // (run_pipeline), so that init is now ours, in bwrap's process group; reaping it here
    // counts the step's CPU time among the run's children (getrusage, /usr/bin/time) and
    // leaves no zombie. It ends at once: --die-with-parent kills it with bwrap.
    for (int ignored = 0;;)
      if (waitpid(-p.pid, &ignored, 0) < 0 && errno != EINTR) break;
    std::lock_guard lock(mu_);
    p.status = status;
    p.done = true;
    cv_.notify_all();
  }).detach();
  return true;
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exit code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return "ended";
}

rules::Failure failure_of(int status, const std::string& message) {
  rules::Failure f;
  // As a container's exit code: a signal N ends it with 128 + N (SIGKILL: 137, OOM-like).
  if (WIFEXITED(status)) f.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) f.exit_code = 128 + WTERMSIG(status);
  f.message = message;
  return f;
}

bool exit_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

Outcome Runner::wait_all(std::vector<std::unique_ptr<Proc>>& procs, int phase, long long timeout_s,
                         std::string& message) {
  auto started = Clock::now();
  std::optional<Clock::time_point> term_sent;
  bool stopped = false, timed_out = false, failed = false;
  auto signal_all = [&](int sig, bool only_ps) {
    for (auto& p : procs)
      if (!p->done && p->pid > 0 && (!only_ps || p->stop_when_others_end)) kill(-p->pid, sig);
  };
  std::unique_lock lock(mu_);
  for (;;) {
    bool all_done = true, others_done = true;
    for (auto& p : procs) {
      if (!p->done) all_done = false;
      if (!p->done && !p->stop_when_others_end) others_done = false;
      if (p->done && !p->stop_when_others_end && !exit_ok(p->status) && !failed && !term_sent) {
        failed = true;
        message = fmt::format("{}: {}", p->label, exit_text(p->status));
      }
    }
    if (all_done) break;
    bool stop_now = g_stop.load() >= (phase == 0 ? 1 : 2);
    if (!term_sent && (stop_now || failed || others_done ||
                       (timeout_s > 0 && Clock::now() - started > std::chrono::seconds(timeout_s)))) {
      if (stop_now) stopped = true;
      else if (!failed && !others_done) timed_out = true;
      lock.unlock();
      signal_all(SIGTERM, others_done && !stop_now && !failed && !timed_out);
      lock.lock();
      term_sent = Clock::now();
    } else if (term_sent && Clock::now() - *term_sent > std::chrono::seconds(5)) {
      lock.unlock();
      signal_all(SIGKILL, false);
      lock.lock();
      term_sent = Clock::now() + std::chrono::hours(1);
    }
    // Woken by a child's end, a signal (wake) or the next deadline: the step's timeout or
    // the SIGKILL after SIGTERM. No timed polling otherwise.
    std::optional<Clock::time_point> deadline;
    if (term_sent) deadline = *term_sent + std::chrono::seconds(5);
    else if (timeout_s > 0) deadline = started + std::chrono::seconds(timeout_s);
    if (deadline) cv_.wait_until(lock, *deadline + std::chrono::milliseconds(1));
    else cv_.wait(lock);
  }
  if (stopped) {
    message = "stopped";
    return Outcome::Stopped;
  }
  if (timed_out) {
    message = fmt::format("timed out after {} s", timeout_s);
    return Outcome::Failed;
  }
  if (failed) return Outcome::Failed;
  for (auto& p : procs)
    if (!p->stop_when_others_end && !exit_ok(p->status)) {
      message = fmt::format("{}: {}", p->label, exit_text(p->status));
      return Outcome::Failed;
    }
  return Outcome::Succeeded;
}

// The environment of a container: only what it declares, with the PATH and HOME an image
// usually has (the host's PATH, e.g. a pyenv shim, is not the container's).
std::vector<std::string> base_env(const std::string& home) {
  return {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + home};
}

void set_env(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  for (auto& e : env)
    if (e.compare(0, name.size() + 1, name + "=") == 0) {
      e = name + "=" + value;
      return;
    }
  env.push_back(name + "=" + value);
}

}  // namespace pipec::local::detail
