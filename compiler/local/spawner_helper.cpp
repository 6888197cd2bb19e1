// The spawner's helper (spawner.hpp): one process per run in a user and mount namespace of
// its own, holding the run's read-only view of the host's / and a /dev made once, that
// starts each step as the init of a new mount, PID and IPC namespace. The step's sandbox is
// the one bwrap would make from the same command line (sandbox.cpp), read here: bwrap's
// exec, its reading of the mount table after each bind, and the view's and /dev's ~15
// mounts per step are gone (docs/local.md "Scheduling", bench/README.md).
#include "compiler/local/spawner.hpp"
#include "compiler/local/sandbox.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

extern char** environ;

namespace pipec::local {

namespace {

bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool write_file(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// mkdir -p, in the current root.
bool make_dirs(const std::string& path) {
  for (std::size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/') continue;
    std::string prefix = path.substr(0, at);
    struct stat st {};
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
    if (stat(prefix.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  }
  return true;
}

// The run's view of the host and its /dev, in `scratch` (a tmpfs of the helper's mount
// namespace): the host's / bound read-only with every submount, its /tmp, /proc and /dev
// hidden under empty read-only tmpfs mounts (as sandbox_argv asks bwrap for), and a /dev
// as bwrap's --dev makes it, read-only but for a /dev/shm of each step's own.
bool prepare(const std::string& scratch, std::string& error) {
  auto fail = [&](const std::string& what) {
    error = what + ": " + std::strerror(errno);
    return false;
  };
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return fail("unshare");
  write_file("/proc/self/setgroups", "deny");
  if (!write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n"))
    return fail("uid_map");
  if (!write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n"))
    return fail("gid_map");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("make / private");
  if (mount("tmpfs", scratch.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) return fail("scratch tmpfs");
  const std::string view = scratch + "/view", dev = scratch + "/dev";
  mkdir(view.c_str(), 0755);
  mkdir(dev.c_str(), 0755);
  if (mount("/", view.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return fail("bind /");
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY;
  if (mount_setattr(AT_FDCWD, view.c_str(), AT_RECURSIVE, &ro, sizeof ro) != 0) return fail("read-only view");
  for (const char* hidden : {"/tmp", "/proc", "/dev"}) {
    char real[4096];
    if (!realpath(hidden, real) || std::string(real) == "/") continue;
    struct stat st {};
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    const std::string at = view + real;
    if (mount("tmpfs", at.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755") != 0)
      return fail("hide " + std::string(real));
  }
  // The scratch tmpfs itself, where the run dir is not under the hidden /tmp.
  mount("tmpfs", (view + scratch).c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755");
  if (mount("tmpfs", dev.c_str(), "tmpfs", MS_NOSUID, "mode=0755") != 0) return fail("dev tmpfs");
  for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
    const std::string to = dev + "/" + node, from = std::string("/dev/") + node;
    int fd = open(to.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0) close(fd);
    if (mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0) return fail("bind " + from);
  }
  const std::pair<const char*, const char*> links[] = {{"/proc/self/fd", "fd"},      {"/proc/self/fd/0", "stdin"},
                                                       {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
                                                       {"/proc/kcore", "core"},      {"pts/ptmx", "ptmx"}};
  for (const auto& [target, name] : links) symlink(target, (dev + "/" + name).c_str());
  mkdir((dev + "/shm").c_str(), 01777);
  mkdir((dev + "/pts").c_str(), 0755);
  // As bwrap: a devpts of the run's own (none where the kernel refuses one).
  mount("devpts", (dev + "/pts").c_str(), "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620");
  if (mount(nullptr, dev.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, nullptr) != 0)
    return fail("read-only dev");
  return true;
}

// One mount of the step's, done after pivot_root (in the step's root, so its symlinks
// resolve there, as bwrap resolves them in its new root).
struct Later {
  std::string op, a, b;
  int tree = -1;         // an open_tree clone made before pivot_root (a bind)
  bool source_dir = true;
};

bool bind_target(const Later& l) {
  if (l.source_dir) return make_dirs(l.b);
  std::size_t slash = l.b.rfind('/');
  if (slash != std::string::npos && slash > 0 && !make_dirs(l.b.substr(0, slash))) return false;
  int fd = open(l.b.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
  if (fd >= 0) close(fd);
  return fd >= 0 || errno == EISDIR || errno == EROFS || errno == ETXTBSY || access(l.b.c_str(), F_OK) == 0;
}

// A detached copy of the tree at `path` with every submount (read-only: every mount).
int clone_tree(const std::string& path, bool read_only) {
  int tree = open_tree(AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  mount_attr ro{};
  ro.attr_set = MOUNT_ATTR_RDONLY;
  if (tree >= 0 && read_only && mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof ro) != 0) {
    close(tree);
    return -1;
  }
  return tree;
}

// How many words follow option `op` of a bwrap command line sandbox_argv writes.
std::size_t option_words(const std::string& op) {
  if (op == "--symlink" || op == "--bind" || op == "--ro-bind" || op == "--ro-bind-try") return 2;
  if (op == "--dir" || op == "--dev" || op == "--proc" || op == "--chdir" || op == "--tmpfs" || op == "--remount-ro")
    return 1;
  return 0;
}

// The run's trees of step roots (docs/local.md "Scheduling"): the `--dir`s and
// `--symlink`s of a step's command line (its own top-level directories holding the host's
// entries as symlinks into the view) are made once per distinct set, on the helper's
// tmpfs, and each step's root is an overlay with that tree below and its own directory
// (steps/STEP/fs) above: a step makes only the inodes it writes, where it made about 20
// directories and 230 links before.
class Trees {
 public:
  explicit Trees(std::string scratch) : scratch_(std::move(scratch)) {}
  /// The tree of the entries (`--dir`, `--symlink`) of the step's command line `argv`, made
  /// if new; "" when it cannot be made (the step's init then makes them in its root).
  std::string tree(const std::vector<std::string>& argv) {
    std::vector<std::string> entries;
    for (std::size_t i = 1; i < argv.size() && argv[i] != "--"; ++i) {
      const std::string& op = argv[i];
      const std::size_t words = option_words(op);
      if (i + words >= argv.size()) return "";
      if (op == "--dir" || op == "--symlink")
        for (std::size_t k = 0; k <= words; ++k) entries.push_back(argv[i + k]);
      i += words;
    }
    std::string spec;
    for (const auto& e : entries) spec.append(e).push_back('\0');
    auto it = made_.find(spec);
    if (it == made_.end()) {
      std::string tree = scratch_ + "/tree-" + std::to_string(made_.size());
      if (!make(tree, entries)) tree.clear();
      it = made_.emplace(spec, tree).first;
    }
    return it->second;
  }

 private:
  static bool make(const std::string& tree, const std::vector<std::string>& entries) {
    if (mkdir(tree.c_str(), 0755) != 0) return false;
    // The mount points every step's init uses, so that they are no inode of the step's.
    for (const char* at : {kHostView, "/dev", "/proc"})
      if (mkdir((tree + at).c_str(), 0755) != 0) return false;
    for (std::size_t k = 0; k < entries.size();) {
      const bool dir = entries[k] == "--dir";
      const bool ok = dir ? mkdir((tree + entries[k + 1]).c_str(), 0755) == 0 || errno == EEXIST
                          : symlink(entries[k + 1].c_str(), (tree + entries[k + 2]).c_str()) == 0;
      if (!ok) return false;
      k += dir ? 2 : 3;
    }
    return true;
  }

  std::string scratch_;
  std::map<std::string, std::string> made_;  // the entries -> their tree ("" = cannot be made)
};

// The overlay work directory of the step whose root is `root`: beside it, on its file system.
std::string overlay_work(const std::string& root) { return root + ".work"; }

// An overlay for the step's root, detached: `lower` below, `root` (the step's own) above.
// -1 where the kernel refuses one (the step's entries are then made in its root).
int overlay_root(const std::string& lower, const std::string& root) {
  const std::string work = overlay_work(root);
  if (mkdir(work.c_str(), 0700) != 0 && errno != EEXIST) return -1;
  int fs = fsopen("overlay", FSOPEN_CLOEXEC);
  if (fs < 0) return -1;
  int mnt = -1;
  std::string layers;  // one layer: its ':' (the layers' separator) and '\\' escaped
  for (char c : lower) layers += c == ':' || c == '\\' ? std::string{'\\', c} : std::string{c};
  if (fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", layers.c_str(), 0) == 0 &&
      fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", root.c_str(), 0) == 0 &&
      fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work.c_str(), 0) == 0 &&
      fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) == 0 &&
      fsconfig(fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0)
    mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
  close(fs);
  if (mnt < 0) rmdir(work.c_str());
  return mnt;
}

// Removes the overlay work directory of an ended step (its `work` is mode 0 and may hold
// the overlay's whiteout), so the run dir holds nothing but what the step made.
void remove_overlay_work(const std::string& root) {
  const std::string work = overlay_work(root), inner = work + "/work";
  if (chmod(inner.c_str(), 0700) == 0)
    if (DIR* d = opendir(inner.c_str())) {
      while (dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
          unlinkat(dirfd(d), e->d_name, 0);
      closedir(d);
    }
  rmdir(inner.c_str());
  rmdir(work.c_str());
}

// The step's namespace from bwrap's command line `argv` (sandbox_argv's options, up to
// "--"): returns the index of the command's first word, 0 on failure (`error` says why).
// Every tree bound is copied first, before the step's root has mounts of its own and
// without the run's scratch (a bind of a directory holding the run dir would hold them),
// as bwrap binds from the host's tree; the binds that name paths in the step's root are
// made after pivot_root, so their symlinks resolve there, as in bwrap's new root.
std::size_t setup(const std::vector<std::string>& argv, const std::string& scratch, const std::string& lower,
                  std::string& error) {
  auto fail = [&](const std::string& what) {
    error = what + ": " + std::strerror(errno);
    return std::size_t{0};
  };
  std::string root, view_at, dev_at, proc_at;
  std::vector<Later> later;
  std::size_t i = 1;
  for (; i < argv.size() && argv[i] != "--"; ++i) {
    const std::string& op = argv[i];
    const std::string a = i + 1 < argv.size() ? argv[i + 1] : "", b = i + 2 < argv.size() ? argv[i + 2] : "";
    if (op == "--die-with-parent" || op == "--unshare-pid" || op == "--unshare-ipc") continue;
    const bool two = op == "--symlink" || op == "--bind" || op == "--ro-bind" || op == "--ro-bind-try";
    if (root.empty() && op == "--bind" && b == "/") root = a;
    else if (op == "--ro-bind" && a == "/" && b == kHostView) view_at = b;
    else if (op == "--dev") dev_at = a;
    else if (op == "--proc") proc_at = a;
    else if ((op == "--tmpfs" || op == "--remount-ro") && a.rfind(std::string(kHostView) + "/", 0) == 0) {
      // the view's hidden directories: prepared
    } else if (two || op == "--dir" || op == "--chdir" || op == "--tmpfs" || op == "--remount-ro") {
      later.push_back({op, a, b});
    } else {
      errno = EINVAL;
      return fail("option " + op);
    }
    i += two ? 2 : op == "--dir" || op == "--chdir" || op == "--tmpfs" || op == "--remount-ro" || op == "--dev" ||
                           op == "--proc"
                       ? 1
                       : 2;
  }
  if (i >= argv.size() || root.empty()) {
    errno = EINVAL;
    return fail("no root or no command");
  }
  int view = view_at.empty() ? -1 : clone_tree(scratch + "/view", false);
  int dev = dev_at.empty() ? -1 : clone_tree(scratch + "/dev", false);
  if ((!view_at.empty() && view < 0) || (!dev_at.empty() && dev < 0)) return fail("copy the view");
  // The root: an overlay of the run's tree of its entries and the step's own directory (made
  // before the scratch, which holds the tree, goes), else the directory bound.
  const int overlay = lower.empty() ? -1 : overlay_root(lower, root);
  if (umount2(scratch.c_str(), MNT_DETACH) != 0) return fail("unmount " + scratch);
  for (Later& l : later) {
    if (l.op != "--bind" && l.op != "--ro-bind" && l.op != "--ro-bind-try") continue;
    struct stat st {};
    if (stat(l.a.c_str(), &st) != 0) {
      if (l.op == "--ro-bind-try") continue;
      return fail("bind " + l.a);
    }
    l.source_dir = S_ISDIR(st.st_mode);
    l.tree = clone_tree(l.a, l.op != "--bind");
    if (l.tree < 0) return fail("bind " + l.a);
  }
  if (overlay >= 0 ? move_mount(overlay, "", AT_FDCWD, root.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0
                   : mount(root.c_str(), root.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
    return fail("bind " + root);
  auto attach = [&](int tree, const std::string& at) {
    mkdir(at.c_str(), 0755);
    return move_mount(tree, "", AT_FDCWD, at.c_str(), MOVE_MOUNT_F_EMPTY_PATH) == 0;
  };
  if (view >= 0 && !attach(view, root + view_at)) return fail("bind the host view");
  if (dev >= 0 && (!attach(dev, root + dev_at) ||
                   mount("tmpfs", (root + dev_at + "/shm").c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=01777") != 0))
    return fail("mount " + dev_at);
  // Before pivot_root: the kernel mounts a proc only where a whole one is visible.
  if (!proc_at.empty() && (mkdir((root + proc_at).c_str(), 0755), true) &&
      mount("proc", (root + proc_at).c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return fail("mount " + proc_at);
  if (chdir(root.c_str()) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0 ||
      chdir("/") != 0)
    return fail("pivot_root");
  for (const Later& l : later) {
    bool ok = true;
    if (overlay >= 0 && (l.op == "--dir" || l.op == "--symlink")) continue;  // the tree holds them
    if (l.op == "--dir") ok = make_dirs(l.a);
    else if (l.op == "--symlink") ok = symlink(l.a.c_str(), l.b.c_str()) == 0 || errno == EEXIST;
    else if (l.op == "--chdir") ok = chdir(l.a.c_str()) == 0;
    else if (l.op == "--tmpfs")
      ok = make_dirs(l.a) && mount("tmpfs", l.a.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0;
    else if (l.op == "--remount-ro")
      ok = mount(nullptr, l.a.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0;
    else if (l.tree >= 0)
      ok = bind_target(l) && move_mount(l.tree, "", AT_FDCWD, l.b.c_str(), MOVE_MOUNT_F_EMPTY_PATH) == 0;
    if (!ok) return fail(l.op + " " + (l.b.empty() ? l.a : l.b));
  }
  return i + 1;
}

// The command, in the step's namespaces: no capabilities left (as bwrap), the signals as
// a new process gets them, its environment `env`.
[[noreturn]] void exec_command(char** cargv, char** cenv, int out_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0 && null_fd != 0) {
    dup2(null_fd, 0);
    close(null_fd);
  }
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  syscall(SYS_capset, &header, data);
  environ = cenv;  // execvp looks the command up in the step's PATH
  execvp(cargv[0], cargv);
  dprintf(2, "pipec: execvp %s: %s\n", cargv[0], std::strerror(errno));
  _exit(1);
}

// The init of the step's PID namespace: makes the sandbox, starts the command, reaps
// whatever ends in the namespace and exits as the command did (128 + N after signal N, as
// bwrap): its end ends every process left in the namespace.
[[noreturn]] void step_init(std::vector<std::string>& argv, std::vector<std::string>& env, int out_fd,
                            const std::string& scratch, const std::string& lower) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::string error;
  std::size_t first = setup(argv, scratch, lower, error);
  if (first == 0) {
    dprintf(out_fd, "pipec: the step's sandbox: %s\n", error.c_str());
    _exit(1);
  }
  std::vector<char*> cargv, cenv;
  for (std::size_t k = first; k < argv.size(); ++k) cargv.push_back(argv[k].data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  // vfork: the child only sets up its descriptors, signals and capabilities and execs.
  pid_t command = vfork();
  if (command == 0) exec_command(cargv.data(), cenv.data(), out_fd);
  close(out_fd);
  if (command < 0) _exit(1);
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) _exit(1);
    if (pid != command) continue;
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    _exit(128 + WTERMSIG(status));
  }
}

// The step's root on the host: the source of the command line's first `--bind X /`.
std::string root_of(const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i + 2 < argv.size() && argv[i] != "--"; i += option_words(argv[i]) + 1)
    if (argv[i] == "--bind" && argv[i + 2] == "/") return argv[i + 1];
  return "";
}

// A request: u32 size, then u32 counts and (u32 size, bytes) strings: argv, env; the
// step's output descriptor rides with its first bytes.
bool read_request(int sock, std::vector<std::string>& argv, std::vector<std::string>& env, int& out_fd) {
  std::uint32_t size = 0;
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&size, sizeof size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (n < 0 && errno == EINTR);
  if (n != sizeof size) return false;
  out_fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&out_fd, CMSG_DATA(c), sizeof(int));
  std::string body(size, '\0');
  if (!read_all(sock, body.data(), size)) return false;
  std::size_t at = 0;
  auto u32 = [&](std::uint32_t& v) {
    if (at + 4 > body.size()) return false;
    std::memcpy(&v, body.data() + at, 4);
    at += 4;
    return true;
  };
  for (auto* list : {&argv, &env}) {
    std::uint32_t count = 0;
    if (!u32(count)) return false;
    list->clear();
    for (std::uint32_t k = 0; k < count; ++k) {
      std::uint32_t len = 0;
      if (!u32(len) || at + len > body.size()) return false;
      list->emplace_back(body.data() + at, len);
      at += len;
    }
  }
  return out_fd >= 0;
}

}  // namespace

int spawner_main(int sock, const char* scratch_dir) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 1;
  fcntl(sock, F_SETFD, FD_CLOEXEC);
  const std::string scratch = scratch_dir;
  std::string error;
  bool ready = prepare(scratch, error);
  Reply hello{0, ready ? static_cast<std::int32_t>(getpid()) : 0, 0, ready ? 0 : errno};
  if (!write_all(sock, &hello, sizeof hello) || !ready) {
    std::fprintf(stderr, "pipec: the run's sandbox spawner: %s\n", error.c_str());
    return 1;
  }
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child, nullptr);
  int sigfd = signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
  std::map<pid_t, std::string> inits;  // each running step's init -> its root
  Trees trees(scratch);
  bool open_socket = true;
  while (open_socket || !inits.empty()) {
    pollfd fds[2] = {{sigfd, POLLIN, 0}, {open_socket ? sock : -1, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[0].revents) {
      signalfd_siginfo info;
      while (read(sigfd, &info, sizeof info) > 0) {
      }
      int status;
      for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
        // Its namespace, and the overlay on its root, ended with it.
        if (auto it = inits.find(pid); it != inits.end()) {
          remove_overlay_work(it->second);
          inits.erase(it);
        }
        Reply ended{1, pid, status, 0};
        if (open_socket) write_all(sock, &ended, sizeof ended);
      }
    }
    if (open_socket && fds[1].revents) {
      std::vector<std::string> argv, env;
      int out_fd = -1;
      if (!read_request(sock, argv, env, out_fd)) {
        // The run ended (or died): nothing of its steps may outlive it.
        open_socket = false;
        for (const auto& [pid, root] : inits) kill(pid, SIGKILL);
        continue;
      }
      const std::string lower = trees.tree(argv);
      const long flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | SIGCHLD;
      pid_t pid = static_cast<pid_t>(syscall(SYS_clone, flags, 0, 0, 0, 0));
      if (pid == 0) {
        close(sock);
        close(sigfd);
        step_init(argv, env, out_fd, scratch, lower);
      }
      int err = pid < 0 ? errno : 0;
      if (pid > 0) {
        setpgid(pid, pid);  // before the run may signal the group
        inits[pid] = root_of(argv);
      }
      close(out_fd);
      Reply started{0, pid > 0 ? pid : 0, 0, err};
      write_all(sock, &started, sizeof started);
    }
  }
  return 0;
}

}  // namespace pipec::local
