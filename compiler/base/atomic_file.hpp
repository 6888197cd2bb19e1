#pragma once
// The compiler's outputs are written by the one atomic write (fileio/atomic_file.hpp), as
// the launcher's metrics files are; this gives its result as a Status.

#include <string>
#include <string_view>

#include "compiler/base/status.hpp"
#include "fileio/atomic_file.hpp"

namespace pipec {

/// Writes `data` to `path` through a temporary file in the same directory, fsync and a
/// rename, so a reader sees the old file or the whole new one, never a part. On failure
/// nothing is left behind. The directory must exist.
inline Status write_file_atomically(const std::string& path, std::string_view data) {
  std::string error;
  if (!fileio::write_file_atomically(path, data, error)) return Status::error(std::move(error));
  return Status::ok();
}

}  // namespace pipec
