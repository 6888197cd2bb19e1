#include "compiler/base/atomic_file.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace pipec {
namespace {

std::string make_temp_dir() {
  char templ[] = "/tmp/pipec-atomic-XXXXXX";
  const char* dir = mkdtemp(templ);
  return dir ? dir : "";
}

int count_entries(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
    closedir(d);
  }
  return n;
}

TEST(AtomicFile, WritesWholeFileAndReplacesOldOne) {
  std::string dir = make_temp_dir();
  std::string path = dir + "/out.tar.gz";
  ASSERT_TRUE(write_file_atomically(path, "old").is_ok());
  ASSERT_TRUE(write_file_atomically(path, std::string(100000, 'x')).is_ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_EQ(buf.str(), std::string(100000, 'x'));
  EXPECT_EQ(count_entries(dir), 1);  // no temporary left behind
  std::system(("rm -rf " + dir).c_str());
}

TEST(AtomicFile, FailureLeavesNothingBehind) {
  std::string dir = make_temp_dir();
  // The target is a directory: rename fails after the temporary was written.
  std::string path = dir + "/taken";
  ASSERT_EQ(mkdir(path.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((path + "/x").c_str(), 0755), 0);
  Status s = write_file_atomically(path, "data");
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("cannot write '" + path + "'"), std::string::npos) << s.message();
  EXPECT_EQ(count_entries(dir), 1);
  Status missing = write_file_atomically(dir + "/no/such/dir/f", "data");
  EXPECT_FALSE(missing.is_ok());
  EXPECT_EQ(count_entries(dir), 1);
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace pipec
