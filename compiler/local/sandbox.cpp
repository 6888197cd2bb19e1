#include "compiler/local/sandbox.hpp"

#include <algorithm>
#include <filesystem>

namespace pipec::local {

namespace fs = std::filesystem;

// The sandbox (bubblewrap): an empty writable root holding the host's top-level
// directories read-only, so `mkdir /data` works and stays private; /tmp, the output
// directories and the working directory are the step's own (under its dir/fs and
// dir/work, kept after the run).
std::vector<std::string> sandbox_argv(const Sandbox& p, const std::vector<std::string>& argv) {
  std::vector<std::string> a = {p.bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc",
                                "--tmpfs", "/"};
  std::error_code ec;
  std::vector<fs::directory_entry> top;
  for (const auto& e : fs::directory_iterator("/", ec)) top.push_back(e);
  std::sort(top.begin(), top.end(), [](const auto& x, const auto& y) { return x.path() < y.path(); });
  for (const auto& e : top) {
    std::string path = e.path().string();
    if (path == "/proc" || path == "/dev" || path == "/tmp") continue;
    if (e.is_symlink(ec)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(e.path(), ec).string(), path});
    } else if (e.is_directory(ec)) {
      a.insert(a.end(), {"--ro-bind", path, path});
    }
  }
  a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc", "--bind", p.dir + "/fs/tmp", "/tmp"});
  for (const auto& d : p.output_dirs) {
    if (d == "/tmp" || d.rfind("/tmp/", 0) == 0) continue;  // inside dir/fs/tmp already
    a.insert(a.end(), {"--bind", p.dir + "/fs" + d, d});
  }
  for (const auto& [host, mount] : p.volume_binds) a.insert(a.end(), {"--bind", host, mount});
  // The .pipe file's directory and the current directory stay visible (read-only) when
  // they are under /tmp, which is the step's own: scripts beside a pipeline keep working.
  for (const auto& d : p.visible_dirs)
    if (d.rfind("/tmp/", 0) == 0) a.insert(a.end(), {"--ro-bind", d, d});
  const std::string cwd = p.working_dir.empty() ? p.dir + "/work" : p.working_dir;
  a.insert(a.end(), {"--bind", p.dir + "/work", cwd, "--chdir", cwd, "--"});
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

}  // namespace pipec::local
