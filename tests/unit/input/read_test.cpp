#include "input/read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <streambuf>

#include <gtest/gtest.h>

#include "input/limits.hpp"

namespace pipec::input {
namespace {

namespace fs = std::filesystem;

class ReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pipec-read-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(ReadTest, ReadsARegularFile) {
  std::ofstream(path("a.txt"), std::ios::binary) << "hello\n";
  std::string text, error;
  ASSERT_TRUE(read_file(path("a.txt"), 100, text, error)) << error;
  EXPECT_EQ(text, "hello\n");
}

TEST_F(ReadTest, RefusesADirectoryByName) {
  std::string text, error;
  EXPECT_FALSE(read_file(dir_.string(), 100, text, error));
  EXPECT_EQ(error, "it is a directory");
}

TEST_F(ReadTest, RefusesDevicesAndFifosWithoutReading) {
  std::string text, error;
  EXPECT_FALSE(read_file("/dev/zero", kMaxSourceBytes, text, error));
  EXPECT_EQ(error, "it is not a regular file");
  // A FIFO without a writer: opening it must not wait.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_FALSE(read_file(path("fifo"), 100, text, error));
  EXPECT_EQ(error, "it is not a regular file");
  EXPECT_FALSE(read_file_in_pieces(path("fifo"), [](std::string_view) {}, error));
}

TEST_F(ReadTest, RefusesAFileOverTheLimitBeforeReadingIt) {
  // 5 GiB, sparse: checked by its size alone, at once.
  int fd = ::open(path("big").c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, std::int64_t{5} << 30), 0);
  ::close(fd);
  std::string text, error;
  auto began = std::chrono::steady_clock::now();
  EXPECT_FALSE(read_file(path("big"), kMaxSourceBytes, text, error));
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(1));
  EXPECT_EQ(error, "it is larger than 256 MiB");
  EXPECT_TRUE(text.empty());
}

TEST_F(ReadTest, TheLimitIsInclusive) {
  std::ofstream(path("ten"), std::ios::binary) << "0123456789";
  std::string text, error;
  EXPECT_TRUE(read_file(path("ten"), 10, text, error));
  EXPECT_FALSE(read_file(path("ten"), 9, text, error));
  EXPECT_EQ(error, "it is larger than 9 bytes");
}

TEST_F(ReadTest, MissingFileGivesTheSystemsReason) {
  std::string text, error;
  EXPECT_FALSE(read_file(path("none"), 10, text, error));
  EXPECT_EQ(error, "No such file or directory");
}

// A stream that never ends, as /dev/zero on standard input.
class Endless : public std::streambuf {
 public:
  Endless() { setg(block_, block_, block_ + sizeof block_); }
  std::uint64_t served = 0;

 protected:
  int_type underflow() override {
    served += sizeof block_;
    setg(block_, block_, block_ + sizeof block_);
    return traits_type::to_int_type(block_[0]);
  }

 private:
  char block_[4096] = {};
};

TEST(ReadStream, StopsAnEndlessStreamAtTheLimit) {
  Endless source;
  std::istream in(&source);
  std::string text, error;
  EXPECT_FALSE(read_stream(in, 1 << 20, text, error));
  EXPECT_EQ(error, "it is larger than 1 MiB");
  EXPECT_LE(source.served, std::uint64_t{2} << 20);  // it stopped reading
}

TEST(ReadStream, ReadsAShortStreamWhole) {
  std::istringstream in(std::string(100000, 'x'));
  std::string text, error;
  ASSERT_TRUE(read_stream(in, 100000, text, error)) << error;
  EXPECT_EQ(text.size(), 100000u);
}

TEST_F(ReadTest, ReadsInPiecesOfAtMost64KiB) {
  std::string content(200000, 'y');
  std::ofstream(path("log"), std::ios::binary) << content;
  std::string joined, error;
  std::size_t largest = 0;
  ASSERT_TRUE(read_file_in_pieces(path("log"), [&](std::string_view piece) {
    largest = std::max(largest, piece.size());
    joined.append(piece);
  }, error));
  EXPECT_EQ(joined, content);
  EXPECT_LE(largest, 65536u);
}

TEST(SizeText, SpellsLimits) {
  EXPECT_EQ(size_text(256 * kMiB), "256 MiB");
  EXPECT_EQ(size_text(8192), "8 KiB");
  EXPECT_EQ(size_text(std::uint64_t{4} << 30), "4 GiB");
  EXPECT_EQ(size_text(1000), "1000 bytes");
}

}  // namespace
}  // namespace pipec::input
