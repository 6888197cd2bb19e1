#include "compiler/local/sandbox.hpp"

#include <algorithm>
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
  box.output_dirs = {"/outputs", "/tmp/out"};
  box.volume_binds = {{"/home/me/data", "/data"}};
  box.visible_dirs = {"/tmp/project", "/home/me"};
  std::vector<std::string> argv = sandbox_argv(box, {"sh", "-c", "echo $1", "x", "a b"});
  EXPECT_EQ(argv.front(), "bwrap");
  EXPECT_TRUE(has(argv, {"--tmpfs", "/"}));
  EXPECT_TRUE(has(argv, {"--ro-bind", "/usr", "/usr"}) || has(argv, {"--symlink", "usr/bin", "/bin"}));
  EXPECT_FALSE(has(argv, {"--ro-bind", "/tmp", "/tmp"}));
  EXPECT_TRUE(has(argv, {"--bind", "/runs/r/steps/s/fs/tmp", "/tmp"}));
  EXPECT_TRUE(has(argv, {"--bind", "/runs/r/steps/s/fs/outputs", "/outputs"}));
  EXPECT_FALSE(has(argv, {"--bind", "/runs/r/steps/s/fs/tmp/out", "/tmp/out"}));  // in fs/tmp already
  EXPECT_TRUE(has(argv, {"--bind", "/home/me/data", "/data"}));
  EXPECT_TRUE(has(argv, {"--ro-bind", "/tmp/project", "/tmp/project"}));
  EXPECT_FALSE(has(argv, {"--ro-bind", "/home/me", "/home/me"}));  // not under /tmp: visible anyway
  EXPECT_TRUE(has(argv, {"--chdir", "/runs/r/steps/s/work"}));
  EXPECT_TRUE(has(argv, {"--unshare-pid"}));
  // The command, word for word, after "--".
  EXPECT_TRUE(has(argv, {"--", "sh", "-c", "echo $1", "x", "a b"}));
  EXPECT_EQ(argv.back(), "a b");
}

}  // namespace
}  // namespace pipec::local
