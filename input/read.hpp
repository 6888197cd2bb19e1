#pragma once
// Bounded reading of files and streams: the size is checked by fstat before anything is
// read where there is one, and reads are capped where there is not (a pipe, a terminal).
// Only regular files are read as files: a directory or a device is refused by name.

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>

namespace pipec::input {

/// "256 MiB", "8192 bytes": a limit as the messages and docs spell it.
std::string size_text(std::uint64_t bytes);

/// Reads the regular file at `path` whole, refusing one larger than `max_bytes` before
/// reading it. On failure sets `error` to the reason, to follow "cannot read 'PATH': ":
/// "it is a directory", "it is not a regular file", "it is larger than 256 MiB", or the
/// system's message.
[[nodiscard]] bool read_file(const std::string& path, std::uint64_t max_bytes, std::string& out,
                             std::string& error);

/// Reads `in` to its end, at most `max_bytes`: a longer stream is refused as soon as it
/// passes the limit ("it is larger than 256 MiB"), without reading the rest.
[[nodiscard]] bool read_stream(std::istream& in, std::uint64_t max_bytes, std::string& out,
                               std::string& error);

/// Reads the regular file at `path` in pieces of at most 64 KiB, handing each to `piece`:
/// for logs, which are scanned as they are read and may be of any size.
[[nodiscard]] bool read_file_in_pieces(const std::string& path,
                                       const std::function<void(std::string_view)>& piece,
                                       std::string& error);

}  // namespace pipec::input
