#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pipec {

/// Index of a file held by a SourceManager.
using FileId = std::uint32_t;
inline constexpr FileId kNoFile = 0xffffffffu;

/// A half-open byte range [begin, end) in one file.
struct SourceRange {
  FileId file = kNoFile;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  bool valid() const { return file != kNoFile; }
};

/// 1-based line and column (columns counted in bytes).
struct LineCol {
  std::uint32_t line = 1;
  std::uint32_t column = 1;
};

/// Owns the text of every file a compilation reads: the user's files and the
/// embedded stdlib. Files are never removed, so FileIds and string_views stay valid.
class SourceManager {
 public:
  /// Adds a file with the given display name (as the user wrote it) and text.
  FileId add(std::string name, std::string text);
  /// Reads a file from disk. Returns kNoFile and sets `error` on failure.
  FileId load(const std::string& path, std::string& error);

  std::string_view name(FileId id) const { return files_[id].name; }
  std::string_view text(FileId id) const { return files_[id].text; }
  std::size_t file_count() const { return files_.size(); }

  LineCol line_col(FileId id, std::uint32_t offset) const;
  /// The text of the 1-based line `line`, without its newline.
  std::string_view line_text(FileId id, std::uint32_t line) const;
  std::string_view slice(SourceRange range) const;

 private:
  struct File {
    std::string name;
    std::string text;
    std::vector<std::uint32_t> line_starts;  // filled lazily
  };
  const std::vector<std::uint32_t>& line_starts(FileId id) const;
  mutable std::vector<File> files_;
};

}  // namespace pipec
