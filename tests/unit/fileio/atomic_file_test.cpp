#include "fileio/atomic_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace pipec::fileio {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  std::string templ = (fs::temp_directory_path() / "pipec-fileio-XXXXXX").string();
  return fs::path(::mkdtemp(templ.data()));
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AtomicFile, ReplacesTheWholeFileWithMode0644) {
  fs::path dir = temp_dir();
  std::string path = (dir / "out.yaml").string();
  std::string error;
  ASSERT_TRUE(write_file_atomically(path, "old", error)) << error;
  ASSERT_TRUE(write_file_atomically(path, std::string(300000, 'x'), error)) << error;
  EXPECT_EQ(read(path), std::string(300000, 'x'));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temporary left
  fs::remove_all(dir);
}

TEST(AtomicFile, FoldersMustExistUnlessAsked) {
  fs::path dir = temp_dir();
  std::string path = (dir / "a" / "b" / "metrics.json").string();
  std::string error;
  EXPECT_FALSE(write_file_atomically(path, "{}", error));
  EXPECT_EQ(error, "cannot write '" + path + "': No such file or directory");
  ASSERT_TRUE(write_file_atomically(path, "{}", error, Folders::Create)) << error;
  EXPECT_EQ(read(path), "{}");
  fs::remove_all(dir);
}

TEST(AtomicFile, AFailedRenameLeavesNothingBehind) {
  fs::path dir = temp_dir();
  fs::create_directories(dir / "taken" / "x");  // the target is a non-empty folder
  std::string error;
  EXPECT_FALSE(write_file_atomically((dir / "taken").string(), "data", error));
  EXPECT_EQ(error.rfind("cannot write '" + (dir / "taken").string() + "': ", 0), 0u) << error;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

// `out.yaml` in `dir`, holding "old": a previous output.
std::string previous_output(const fs::path& dir) {
  std::string path = (dir / "out.yaml").string();
  std::string error;
  EXPECT_TRUE(write_file_atomically(path, "old", error)) << error;
  return path;
}

TEST(AtomicFile, PiecesAppearWholeOnlyAtCommit) {
  fs::path dir = temp_dir();
  std::string path = previous_output(dir);
  std::string error;
  {
    AtomicFile file;
    ASSERT_TRUE(file.open(path, error)) << error;
    file.write("apiVersion: v1\n");
    file.write(std::string(2 << 20, 'y'));  // larger than a piece the compiler hands over
    file.write("");
    file.write("\nend\n");
    EXPECT_EQ(file.size(), 15 + (2u << 20) + 5);
    EXPECT_EQ(read(path), "old");  // nothing shows before the commit
    ASSERT_TRUE(file.commit(error)) << error;
  }
  EXPECT_EQ(read(path), "apiVersion: v1\n" + std::string(2 << 20, 'y') + "\nend\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, DroppedWithoutCommitLeavesTheOldFileAndNoTemporary) {
  fs::path dir = temp_dir();
  std::string path = previous_output(dir);
  std::string error;
  {
    AtomicFile file;
    ASSERT_TRUE(file.open(path, error)) << error;
    file.write("half of a document");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);  // the temporary
  }  // a failed build: no commit
  EXPECT_EQ(read(path), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, OpenInAMissingFolderSaysWhy) {
  fs::path dir = temp_dir();
  std::string path = (dir / "no" / "out.yaml").string();
  std::string error;
  AtomicFile file;
  EXPECT_FALSE(file.open(path, error));
  EXPECT_EQ(error, "cannot write '" + path + "': No such file or directory");
  std::string again;
  EXPECT_FALSE(file.commit(again));  // nothing was opened
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipec::fileio
