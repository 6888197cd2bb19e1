#include "compiler/local/sandbox.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace pipec::local {
namespace {

// Whether `argv` holds the words `words` one after the other.
bool has(const std::vector<std::string>& argv, const std::vector<std::string>& words) {
  return std::search(argv.begin(), argv.end(), words.begin(), words.end()) != argv.end();
}

TEST(LocalSandbox, TheHostIsReadOnlyTheStepsDirectoriesAreItsOwn) {
  Sandbox box;
  box.dir = "/runs/r/steps/s";
  box.writable_dirs = {"/outputs", "/tmp/out"};
  box.volume_binds = {{"/home/me/data", "/data"}};
  box.file_binds = {{"/runs/r/steps/s/hostfile", "/etc/mpi/hostfile"}};
  box.visible_dirs = {"/tmp/project", "/home/me"};
  std::vector<std::string> argv = sandbox_argv(box, {"sh", "-c", "echo $1", "x", "a b"});
  EXPECT_EQ(argv.front(), "bwrap");
  // The root is the step's own directory; /tmp is in it; nothing is made for an output.
  EXPECT_TRUE(has(argv, {"--bind", "/runs/r/steps/s/fs", "/"}));
  EXPECT_TRUE(has(argv, {"--ro-bind-try", "/usr", "/usr"}) || has(argv, {"--symlink", "usr/bin", "/bin"}));
  EXPECT_FALSE(has(argv, {"--ro-bind-try", "/tmp", "/tmp"}));
  for (const auto& w : argv) EXPECT_EQ(w.find("/outputs"), std::string::npos) << w;
  EXPECT_TRUE(has(argv, {"--bind", "/home/me/data", "/data"}));
  EXPECT_TRUE(has(argv, {"--ro-bind", "/runs/r/steps/s/hostfile", "/etc/mpi/hostfile"}));
  EXPECT_TRUE(has(argv, {"--ro-bind", "/tmp/project", "/tmp/project"}));
  EXPECT_FALSE(has(argv, {"--ro-bind", "/home/me", "/home/me"}));  // not under /tmp: visible anyway
  EXPECT_TRUE(has(argv, {"--chdir", "/runs/r/steps/s/work"}));
  EXPECT_TRUE(has(argv, {"--unshare-pid"}));
  // The command, word for word, after "--".
  EXPECT_TRUE(has(argv, {"--", "sh", "-c", "echo $1", "x", "a b"}));
  EXPECT_EQ(argv.back(), "a b");
}

// A host directory on the way to a declared path is the step's own, holding the host's
// entries read-only: /usr/local/app can be made, /usr/bin stays the host's.
TEST(LocalSandbox, HostDirectoriesOnTheWayToADeclaredPathAreOpened) {
  Sandbox box;
  box.dir = "/runs/r/steps/s";
  box.writable_dirs = {"/usr/local/app/x"};
  std::vector<std::string> argv = sandbox_argv(box, {"true"});
  EXPECT_TRUE(has(argv, {"--dir", "/usr"}));
  EXPECT_TRUE(has(argv, {"--dir", "/usr/local"}));
  EXPECT_FALSE(has(argv, {"--ro-bind-try", "/usr", "/usr"}));
  EXPECT_FALSE(has(argv, {"--ro-bind-try", "/usr/local", "/usr/local"}));
  // The host's entries are relative symlinks into one read-only view of the host's /, not
  // a mount each: bwrap reads the whole mount table after every bind. Its /tmp, /proc and
  // /dev are hidden under empty read-only tmpfs mounts.
  EXPECT_TRUE(has(argv, {"--ro-bind", "/", "/.pipec-host"}));
  for (const char* hidden : {"/tmp", "/proc", "/dev"})
    EXPECT_TRUE(has(argv, {"--tmpfs", std::string("/.pipec-host") + hidden, "--remount-ro",
                           std::string("/.pipec-host") + hidden}))
        << hidden;
  EXPECT_TRUE(has(argv, {"--symlink", "../.pipec-host/usr/bin", "/usr/bin"}));
  EXPECT_TRUE(has(argv, {"--symlink", "../../.pipec-host/usr/local/bin", "/usr/local/bin"}));
  EXPECT_TRUE(has(argv, {"--symlink", ".pipec-host/sys", "/sys"}));
  EXPECT_FALSE(has(argv, {"--ro-bind-try", "/usr/bin", "/usr/bin"}));
  // Binds: the root, the view, the working directory; nothing per host directory.
  std::size_t mounts = std::count_if(argv.begin(), argv.end(), [](const std::string& w) {
    return w.rfind("--", 0) == 0 && w.find("bind") != std::string::npos;
  });
  EXPECT_EQ(mounts, 3u);
  EXPECT_FALSE(has(argv, {"--dir", "/usr/local/app"}));  // made by the step, not for it
}

// The entries of a step's root are made before bwrap starts, each symlink a hard link to
// the run's one with that target: two steps' /etc/passwd are one inode, no new one each.
TEST(LocalSandbox, RootEntriesAreMadeBeforeBwrapSymlinksAsHardLinks) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("pipec-links-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "links");
  LinkStore links((dir / "links").string());
  const std::vector<std::string> argv = {"bwrap", "--bind", "ROOT", "/", "--dir", "/etc",
                                         "--symlink", "../.pipec-host/etc/passwd", "/etc/passwd",
                                         "--dev", "/dev", "--", "sh", "--dir", "/x"};
  for (const char* step : {"a", "b"}) {
    const std::string root = (dir / step).string();
    fs::create_directories(root);
    std::vector<std::string> rest = make_root_entries(root, argv, links);
    EXPECT_EQ(rest, (std::vector<std::string>{"bwrap", "--bind", "ROOT", "/", "--dev", "/dev", "--", "sh",
                                              "--dir", "/x"}));
    EXPECT_TRUE(fs::is_directory(root + "/etc"));
    EXPECT_EQ(fs::read_symlink(root + "/etc/passwd").string(), "../.pipec-host/etc/passwd");
  }
  struct stat a{}, b{};
  ASSERT_EQ(lstat((dir / "a/etc/passwd").c_str(), &a), 0);
  ASSERT_EQ(lstat((dir / "b/etc/passwd").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_nlink, 3u);  // the run's and the two steps'
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipec::local
