#pragma once

#include <string>
#include <string_view>

#include "compiler/base/status.hpp"

namespace pipec {

/// Writes `data` to `path` through a temporary file in the same directory and a
/// rename, so a reader sees the old file or the whole new one, never a part.
/// On failure nothing is left behind.
Status write_file_atomically(const std::string& path, std::string_view data);

}  // namespace pipec
