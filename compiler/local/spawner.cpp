// The run's side of the sandbox spawner (spawner.hpp; the helper is spawner_helper.cpp).
#include "compiler/local/spawner.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace pipec::local {

namespace {

bool read_reply(int fd, Reply& r) {
  char* p = reinterpret_cast<char*>(&r);
  for (std::size_t got = 0; got < sizeof r;) {
    ssize_t n = read(fd, p + got, sizeof r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

void put(std::string& out, const std::string& s) {
  auto size = static_cast<std::uint32_t>(s.size());
  out.append(reinterpret_cast<const char*>(&size), 4);
  out += s;
}

}  // namespace

bool Spawner::start(const std::string& scratch, std::string& error) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error = std::strerror(errno);
    return false;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    error = "cannot find the running program";
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  self[n] = '\0';
  // The helper's end of the socket is its FD (dup2 onto itself clears close-on-exec).
  const std::string fd_text = std::to_string(sv[1]);
  std::vector<std::string> words = {self, "--local-spawner", fd_text, scratch};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], sv[1]);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // A process group of its own, as each bwrap's: Ctrl-C reaches the run (which stops the
  // steps with SIGTERM and runs `finally`), not the helper.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  int spawned = posix_spawn(&helper_, self, &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  close(sv[1]);
  fd_ = sv[0];
  Reply hello{};
  if (spawned != 0 || !read_reply(fd_, hello) || hello.pid <= 0) {
    error = spawned != 0 ? std::strerror(spawned)
                         : std::string("no user namespace: ") + std::strerror(hello.err ? hello.err : EPERM);
    if (spawned != 0) helper_ = -1;
    return false;
  }
  reader_ = std::thread([this] { read_replies(); });
  return true;
}

Spawner::~Spawner() {
  if (fd_ >= 0) shutdown(fd_, SHUT_WR);  // the helper kills what still runs, reaps, exits
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) close(fd_);
  if (helper_ > 0)
    while (waitpid(helper_, nullptr, 0) < 0 && errno == EINTR) {
    }
}

void Spawner::read_replies() {
  Reply r{};
  while (read_reply(fd_, r)) {
    std::lock_guard lock(mu_);
    if (r.kind == 0) started_ = r.pid > 0 ? r.pid : -(r.err ? r.err : EAGAIN);
    else ended_[r.pid] = r.status;
    cv_.notify_all();
  }
  std::lock_guard lock(mu_);
  gone_ = true;
  cv_.notify_all();
}

bool Spawner::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int out_fd,
                    pid_t& pid, std::string& error) {
  std::string body;
  for (const auto* list : {&argv, &env}) {
    auto count = static_cast<std::uint32_t>(list->size());
    body.append(reinterpret_cast<const char*>(&count), 4);
    for (const auto& s : *list) put(body, s);
  }
  auto size = static_cast<std::uint32_t>(body.size());
  std::string message(reinterpret_cast<const char*>(&size), 4);
  message += body;
  std::unique_lock lock(request_mu_);
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{message.data(), message.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &out_fd, sizeof(int));
  {
    std::lock_guard state(mu_);
    started_ = 0;
  }
  ssize_t sent;
  do sent = sendmsg(fd_, &msg, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  std::size_t off = sent > 0 ? static_cast<std::size_t>(sent) : 0;
  while (sent > 0 && off < message.size()) {
    ssize_t w = write(fd_, message.data() + off, message.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  std::unique_lock state(mu_);
  if (off == message.size()) cv_.wait(state, [&] { return started_ != 0 || gone_; });
  if (started_ <= 0) {
    error = started_ < 0 ? std::strerror(-started_) : "the run's sandbox spawner ended";
    return false;
  }
  pid = started_;
  return true;
}

int Spawner::wait(pid_t pid) {
  std::unique_lock state(mu_);
  cv_.wait(state, [&] { return ended_.count(pid) || gone_; });
  auto it = ended_.find(pid);
  if (it == ended_.end()) return W_EXITCODE(1, 0);
  int status = it->second;
  ended_.erase(it);
  return status;
}

}  // namespace pipec::local
