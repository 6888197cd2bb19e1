#pragma once
// Writing a file so that a reader sees the old file or the whole new one, never a part:
// the compiler's outputs (`pipec build -o`, `pipec fmt -w`, packages) and the launcher's
// and pipec-metrics' metrics files. One implementation, one durability.

#include <string>
#include <string_view>

namespace pipec::fileio {

/// Whether write_file_atomically() makes the folder of `path` first (the launcher's
/// `/tmp/outputs/`), or fails when it is missing (the compiler's `-o`).
enum class Folders { MustExist, Create };

/// A file written in pieces that appears at `path` whole or not at all: the pieces go to
/// a temporary file in the same folder (mode 0644); commit() fsyncs it and renames it over
/// `path`. Destroyed without a commit (an error, a failed build), the temporary file is
/// removed and `path` is left as it was. A failed write is remembered: later writes do
/// nothing and commit() reports it. For outputs too large to hold in memory at once.
class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  /// Creates the temporary file for `path`. False, with `error` set as commit() sets it,
  /// if it cannot.
  [[nodiscard]] bool open(const std::string& path, std::string& error, Folders folders = Folders::MustExist);
  /// Appends `data` (nothing after an error).
  void write(std::string_view data);
  /// Makes the file appear at `path`. On failure nothing is left behind, false is
  /// returned and `error` says "cannot write 'PATH': REASON".
  [[nodiscard]] bool commit(std::string& error);
  /// The bytes written so far.
  std::size_t size() const { return size_; }

 private:
  bool fail(int err, std::string& error);

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  int error_ = 0;  // the first write's errno
  std::size_t size_ = 0;
};

/// Writes `content` to `path` through an AtomicFile: readers see the old file or the whole
/// new one, and after a crash the new file is not empty. On failure nothing is left
/// behind, false is returned and `error` says "cannot write 'PATH': REASON".
[[nodiscard]] bool write_file_atomically(const std::string& path, std::string_view content, std::string& error,
                                         Folders folders = Folders::MustExist);

}  // namespace pipec::fileio
