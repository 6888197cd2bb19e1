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

/// Writes `content` to `path` through a temporary file in the same folder (mode 0644),
/// written whole, fsync'd and renamed over `path`: readers see the old file or the whole
/// new one, and after a crash the new file is not empty. On failure nothing is left
/// behind, false is returned and `error` says "cannot write 'PATH': REASON".
[[nodiscard]] bool write_file_atomically(const std::string& path, std::string_view content, std::string& error,
                                         Folders folders = Folders::MustExist);

}  // namespace pipec::fileio
