#include "compiler/local/sandbox.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

namespace pipec::local {

namespace fs = std::filesystem;

namespace {

// The relative symlink from `path` to its host view: relative, so that bwrap, which makes
// the mounts below its new root before entering it, finds the view when a mount point lies
// under the link (the working directory under the host's /work/project/...).
std::string host_view(const std::string& path) {
  const fs::path rel = fs::path(path).relative_path();
  std::string up;
  for (auto it = std::next(rel.begin()); it != rel.end(); ++it) up += "../";
  return up + std::string(kHostView).substr(1) + path;
}

// The kernel's and the step's own top-level directories: never the host's to open.
bool kernel_or_own(const std::string& top) {
  return top == "/tmp" || top == "/proc" || top == "/dev" || top == "/sys";
}

// The host directories the view of the host's / hides (each under an empty read-only
// tmpfs): its /tmp, its processes (/proc: the step has a PID namespace of its own) and its
// devices and shared memory (/dev, /dev/shm). /sys is the step's to read, as before.
constexpr const char* kHidden[] = {"/tmp", "/proc", "/dev"};

// The host directories that must become the step's own (writable, holding the host's
// entries read-only): every top-level host directory, so that a step can make a new entry
// in any of them whatever the host holds (as an image's directories are writable: a step
// writing /data/x works whether or not the host has a /data), and every existing host
// directory on the way to a writable directory, outside the step's own /tmp and the
// kernel's /proc, /dev and /sys.
std::set<std::string> directories_to_open(const std::vector<std::string>& writable) {
  std::set<std::string> open;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/", ec)) {
    std::string top = e.path().string();
    if (!kernel_or_own(top) && !e.is_symlink(ec) && e.is_directory(ec)) open.insert(top);
  }
  for (const auto& w : writable) {
    fs::path path = fs::path(w).lexically_normal();
    if (!path.is_absolute()) continue;
    fs::path prefix = "/";
    bool first = true;
    for (const auto& part : path.relative_path()) {
      prefix /= part;
      if (first) {
        std::string top = prefix.string();
        if (kernel_or_own(top)) break;
        first = false;
      }
      if (fs::is_symlink(prefix, ec) || !fs::is_directory(prefix, ec)) break;  // made by the step
      open.insert(prefix.string());
    }
  }
  return open;
}

// The host's entries of `dir` in the sandbox: a directory to open is made and filled the
// same way, a symlink is copied, anything else is a symlink to its read-only host view under
// kHostView (a symlink is made, not mounted: about 210 mounts cost 250-300 ms a step, the
// views one per top-level directory), except what the step's own tree holds there already
// (an input file placed before the start). A top-level entry not opened (/sys, a file) is
// such a symlink too: a mount costs more (bwrap reads the whole mount table after each).
void add_entries(std::vector<std::string>& a, const std::string& dir, const std::set<std::string>& open,
                 const std::vector<std::string>& own) {
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e);
  std::sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) { return x.path() < y.path(); });
  for (const auto& e : entries) {
    std::string path = e.path().string();
    if (path == "/proc" || path == "/dev" || path == "/tmp") continue;
    if (open.count(path)) {
      a.insert(a.end(), {"--dir", path});
      add_entries(a, path, open, own);
    } else if (std::find(own.begin(), own.end(), path) != own.end()) {
      continue;  // the step's own file
    } else if (e.is_symlink(ec)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(e.path(), ec).string(), path});
    } else {
      a.insert(a.end(), {"--symlink", host_view(path), path});
    }
  }
}

}  // namespace

std::vector<std::string> sandbox_argv(const Sandbox& p, const std::vector<std::string>& argv) {
  const std::string root = p.root.empty() ? p.dir + "/fs" : p.root;
  std::vector<std::string> a = {p.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc",
                                "--bind", root, "/"};
  const std::set<std::string> open = directories_to_open(p.writable_dirs);
  // One read-only view of the host's /, its /tmp, /proc and /dev hidden: bwrap reads the
  // whole mount table after every bind (to make its submounts read-only too), so one bind
  // of / costs less than one per top-level directory (docs/local.md "Scheduling").
  a.insert(a.end(), {"--ro-bind", "/", kHostView});
  for (const char* hidden : kHidden) {
    // Where the host keeps it (a /tmp that is a symlink to /var/tmp: that is hidden).
    std::error_code ec;
    const std::string real = fs::canonical(hidden, ec).string();
    if (!ec && real != "/" && fs::is_directory(real, ec))
      a.insert(a.end(), {"--tmpfs", kHostView + real, "--remount-ro", kHostView + real});
  }
  add_entries(a, "/", open, p.own_files);
  a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc"});
  for (const auto& [host, mount] : p.volume_binds) {
    bool ro = std::find(p.read_only_mounts.begin(), p.read_only_mounts.end(), mount) != p.read_only_mounts.end();
    a.insert(a.end(), {ro ? "--ro-bind" : "--bind", host, mount});
  }
  for (const auto& [host, path] : p.file_binds) a.insert(a.end(), {"--ro-bind", host, path});
  // The .pipe file's directory and the current directory stay visible (read-only) when
  // they are under /tmp, which is the step's own: scripts beside a pipeline keep working.
  for (const auto& d : p.visible_dirs)
    if (d.rfind("/tmp/", 0) == 0) a.insert(a.end(), {"--ro-bind", d, d});
  const std::string cwd = p.working_dir.empty() ? p.dir + "/work" : p.working_dir;
  a.insert(a.end(), {"--bind", p.dir + "/work", cwd, "--chdir", cwd, "--"});
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

bool LinkStore::make(const std::string& target, const std::string& path) {
  std::string source;
  {
    std::lock_guard lock(mu_);
    auto it = made_.find(target);
    if (it == made_.end()) {
      std::string made = dir_ + "/" + std::to_string(made_.size());
      if (symlink(target.c_str(), made.c_str()) != 0) made.clear();
      it = made_.emplace(target, made).first;
    }
    source = it->second;
  }
  // link() makes a link to the symlink itself, never to what it names.
  if (!source.empty() && link(source.c_str(), path.c_str()) == 0) return true;
  return symlink(target.c_str(), path.c_str()) == 0;
}

std::vector<std::string> make_root_entries(const std::string& root, const std::vector<std::string>& argv,
                                           LinkStore& links) {
  // How many words each option sandbox_argv writes takes; another one: leave argv as it is.
  static const std::map<std::string, std::size_t> kWords = {
      {"--die-with-parent", 0}, {"--unshare-pid", 0}, {"--unshare-ipc", 0}, {"--dir", 1},
      {"--dev", 1},             {"--proc", 1},        {"--chdir", 1},       {"--bind", 2},
      {"--ro-bind", 2},         {"--ro-bind-try", 2}, {"--symlink", 2},     {"--tmpfs", 1},
      {"--remount-ro", 1}};
  std::vector<std::string> out;
  if (argv.empty()) return argv;
  out.push_back(argv[0]);
  std::size_t i = 1;
  for (; i < argv.size() && argv[i] != "--"; ++i) {
    auto words = kWords.find(argv[i]);
    if (words == kWords.end() || i + words->second >= argv.size()) return argv;
    bool made = false;
    if (argv[i] == "--dir") {
      const std::string dir = root + argv[i + 1];
      std::error_code ec;
      made = mkdir(dir.c_str(), 0755) == 0 || (errno == EEXIST && fs::is_directory(dir, ec));
    } else if (argv[i] == "--symlink") {
      made = links.make(argv[i + 1], root + argv[i + 2]);
    }
    if (!made) out.insert(out.end(), argv.begin() + static_cast<std::ptrdiff_t>(i),
                          argv.begin() + static_cast<std::ptrdiff_t>(i + words->second + 1));
    i += words->second;
  }
  out.insert(out.end(), argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
  return out;
}

}  // namespace pipec::local
