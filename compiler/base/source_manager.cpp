#include "compiler/base/source_manager.hpp"

#include <algorithm>

#include "input/limits.hpp"
#include "input/read.hpp"

namespace pipec {

namespace {

// CRLF and a lone CR end a line as LF does, inside strings too: the text is kept with LF
// only, so every later pass sees one kind of line end.
void normalize_line_ends(std::string& text) {
  std::size_t cr = text.find('\r');
  if (cr == std::string::npos) return;
  std::size_t out = cr;
  for (std::size_t i = cr; i < text.size(); ++i) {
    if (text[i] == '\r') {
      text[out++] = '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      text[out++] = text[i];
    }
  }
  text.resize(out);
}

}  // namespace

FileId SourceManager::add(std::string name, std::string text) {
  // A UTF-8 byte order mark at the start is not part of the program (as for clang,
  // javac and Python's tokenizer).
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
  normalize_line_ends(text);
  files_.push_back(File{std::move(name), std::move(text), {}});
  return static_cast<FileId>(files_.size() - 1);
}

FileId SourceManager::load(const std::string& path, std::string& error) {
  // Only regular files (a directory reads as empty, a device or FIFO may never end), and
  // their size is checked before reading (offsets are 32-bit, memory grows with the text).
  std::string text;
  if (!input::read_file(path, input::kMaxSourceBytes, text, error)) return kNoFile;
  return add(path, std::move(text));
}

const std::vector<std::uint32_t>& SourceManager::line_starts(FileId id) const {
  File& file = files_[id];
  if (file.line_starts.empty()) {
    file.line_starts.push_back(0);
    std::string_view text = file.text;
    for (std::size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1))
      file.line_starts.push_back(static_cast<std::uint32_t>(i + 1));
  }
  return file.line_starts;
}

LineCol SourceManager::line_col(FileId id, std::uint32_t offset) const {
  const auto& starts = line_starts(id);
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  auto line = static_cast<std::uint32_t>(it - starts.begin());
  return LineCol{line, offset - starts[line - 1] + 1};
}

std::string_view SourceManager::line_text(FileId id, std::uint32_t line) const {
  const auto& starts = line_starts(id);
  std::string_view text = files_[id].text;
  if (line == 0 || line > starts.size()) return {};
  std::uint32_t begin = starts[line - 1];
  std::uint32_t end = line < starts.size() ? starts[line] - 1 : static_cast<std::uint32_t>(text.size());
  if (end > begin && text[end - 1] == '\r') --end;
  return text.substr(begin, end - begin);
}

std::string_view SourceManager::slice(SourceRange range) const {
  std::string_view text = files_[range.file].text;
  return text.substr(range.begin, range.end - range.begin);
}

}  // namespace pipec
