#include "input/read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pipec::input {

namespace {

constexpr std::size_t kPiece = 64 * 1024;

// Opens `path` for reading if it is a regular file; returns -1 with `error` set otherwise.
int open_regular(const std::string& path, struct stat& st, std::string& error) {
  // O_NONBLOCK: opening a FIFO without a writer must not wait; it is refused just below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  if (::fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error = S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file";
    ::close(fd);
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

std::string larger_than(std::uint64_t max_bytes) { return "it is larger than " + size_text(max_bytes); }

// Reads `fd` to its end in pieces, each handed to `piece` (false stops, its `error` set),
// and closes it.
bool read_pieces(int fd, const std::function<bool(std::string_view)>& piece, std::string& error) {
  char buffer[kPiece];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::strerror(errno);
      ok = false;
      break;
    }
    if (n == 0 || !piece(std::string_view(buffer, static_cast<std::size_t>(n)))) {
      ok = n == 0;
      break;
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1u << 30) && bytes % (1u << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

bool read_file(const std::string& path, std::uint64_t max_bytes, std::string& out, std::string& error) {
  struct stat st {};
  int fd = open_regular(path, st, error);
  if (fd < 0) return false;
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    error = larger_than(max_bytes);
    return false;
  }
  out.clear();
  out.reserve(static_cast<std::size_t>(st.st_size));
  // The file may grow while it is read: the cap holds for what is read, not only for
  // what fstat said.
  return read_pieces(fd, [&](std::string_view piece) {
    if (out.size() + piece.size() > max_bytes) {
      error = larger_than(max_bytes);
      return false;
    }
    out.append(piece);
    return true;
  }, error);
}

bool read_stream(std::istream& in, std::uint64_t max_bytes, std::string& out, std::string& error) {
  out.clear();
  char buffer[kPiece];
  while (in) {
    in.read(buffer, sizeof buffer);
    auto n = static_cast<std::size_t>(in.gcount());
    if (out.size() + n > max_bytes) {
      error = larger_than(max_bytes);
      return false;
    }
    out.append(buffer, n);
  }
  if (in.bad()) {
    error = "a read failed";
    return false;
  }
  return true;
}

bool read_file_in_pieces(const std::string& path, const std::function<void(std::string_view)>& piece,
                         std::string& error) {
  struct stat st {};
  int fd = open_regular(path, st, error);
  if (fd < 0) return false;
  return read_pieces(fd, [&](std::string_view text) {
    piece(text);
    return true;
  }, error);
}

}  // namespace pipec::input
