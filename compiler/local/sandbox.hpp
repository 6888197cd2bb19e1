#pragma once
// The sandbox of a local step's process (bubblewrap; docs/local.md "Container steps").

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace pipec::local {

/// Where a step's sandbox binds the host's / read-only, once (the entries of the step's own
/// directories are symlinks into it); the spawner's helper reads bwrap's words for it.
inline constexpr const char* kHostView = "/.pipec-host";

struct Sandbox {
  std::string bwrap = "bwrap";                  // the program
  std::string dir;                              // the step's directory on the host
  std::string root;                             // the process's root on the host; "" = dir/fs
  /// Directories the step may create or write in (the directories of its outputs, its
  /// working directory, mount paths, input files' directories): the host directories on
  /// their way are made writable for the step, as an image's are in a container.
  std::vector<std::string> writable_dirs;
  std::vector<std::pair<std::string, std::string>> volume_binds;  // host dir, mount path
  std::vector<std::pair<std::string, std::string>> file_binds;    // host file, path (read-only)
  std::vector<std::string> own_files;  // paths the step's root already holds (input files placed before it starts)
  std::vector<std::string> visible_dirs;        // host directories kept visible under /tmp
  std::string working_dir;                      // where dir/work appears; "" = at its own path
  std::vector<std::string> read_only_mounts;    // mount paths of volume_binds bound read-only
};

/// The bwrap command line running `argv`: the root is the step's own directory `root`
/// (dir/fs unless given; so `mkdir /data` works, stays private and is kept in the run dir;
/// /tmp is root/tmp),
/// holding the host's top-level directories, each a directory of the step's own holding
/// the host's entries read-only as symlinks into one read-only bind of the host's / at
/// /.pipec-host (its /tmp, /proc and /dev hidden under empty read-only tmpfs mounts; so a
/// step can make /data/x, /opt/app or /srv/app whether or not the host has /data: what it
/// sees does not depend on which top-level directories the host has), as is every host
/// directory on the way to a writable directory, so the step can create what a container
/// could under /usr/local/app. /sys and the host's top-level files are such symlinks too
/// (read-only). Then a fresh /dev and /proc, the volume directories read-write at their
/// mount paths, the file binds read-only, the visible directories under /tmp read-only,
/// and dir/work as the working directory (at its own path, or at the op's `working_dir`).
/// Nothing else is created: a directory a step writes into must be made by the step, as
/// in a pod. A new PID namespace: every process of the step ends with it.
[[nodiscard]] std::vector<std::string> sandbox_argv(const Sandbox& sandbox,
                                                    const std::vector<std::string>& argv);

/// The symlinks of one run's step roots, one inode per target text (in `dir`, the run dir's
/// sandbox-links/): each step's entry is a hard link to it. A new inode costs far more than
/// a directory entry on ext4 (its allocator scans the bitmaps for a free one: most of a
/// step's set-up time, docs/local.md "Scheduling"); a symlink cannot be written through,
/// so the steps share nothing they can change but its times.
class LinkStore {
 public:
  explicit LinkStore(std::string dir) : dir_(std::move(dir)) {}
  /// Makes `path` (on the host) a symlink to `target`: a hard link to the run's one, or a
  /// symlink of its own when no hard link can be made. false: neither could be made.
  bool make(const std::string& target, const std::string& path);

 private:
  std::mutex mu_;
  std::string dir_;
  std::map<std::string, std::string> made_;  // target -> its symlink in dir_ ("" = none)
};

/// Makes the entries that sandbox_argv's `--dir` and `--symlink` would have bwrap make in
/// the step's root `root` on the host before bwrap starts (the same entries; the symlinks
/// from `links`), and returns `argv` without them (with any it could not make, for bwrap).
[[nodiscard]] std::vector<std::string> make_root_entries(const std::string& root,
                                                         const std::vector<std::string>& argv,
                                                         LinkStore& links);

}  // namespace pipec::local
