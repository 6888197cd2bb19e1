#pragma once
// The sandbox of a local step's process (bubblewrap; docs/local.md "Container steps").

#include <string>
#include <utility>
#include <vector>

namespace pipec::local {

struct Sandbox {
  std::string bwrap = "bwrap";                  // the program
  std::string dir;                              // the step's directory on the host
  std::vector<std::string> output_dirs;         // sandbox directories mapped to dir/fs/...
  std::vector<std::pair<std::string, std::string>> volume_binds;  // host dir, mount path
  std::vector<std::string> visible_dirs;        // host directories kept visible under /tmp
  std::string working_dir;                      // where dir/work appears; "" = at its own path
};

/// The bwrap command line running `argv`: a writable in-memory root holding the host's
/// top-level directories read-only (so `mkdir /data` works and stays private), a fresh
/// /dev and /proc, dir/fs/tmp as /tmp, dir/fs/D for each output directory D outside /tmp,
/// the volume directories read-write at their mount paths, the visible directories under
/// /tmp read-only, and dir/work as the working directory (at its own path, or at the op's
/// `working_dir`). A new PID
/// namespace: every process of the step ends with it.
[[nodiscard]] std::vector<std::string> sandbox_argv(const Sandbox& sandbox,
                                                    const std::vector<std::string>& argv);

}  // namespace pipec::local
