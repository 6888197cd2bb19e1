#include "compiler/base/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

namespace pipec {

Status write_file_atomically(const std::string& path, std::string_view data) {
  std::string templ = path + ".tmp-XXXXXX";
  std::vector<char> name(templ.begin(), templ.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) return Status::error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  auto fail = [&](const char* what) {
    int err = errno;
    close(fd);
    unlink(name.data());
    return Status::error(fmt::format("cannot write '{}': {}: {}", path, what, std::strerror(err)));
  };
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (fchmod(fd, 0644) != 0) return fail("chmod");
  // No fsync: the rename already guarantees that readers see the old file or the whole
  // new one; durability across a power cut is not worth the milliseconds it costs every
  // build (it was most of the time of a small pipeline's build).
  if (close(fd) != 0) {
    int err = errno;
    unlink(name.data());
    return Status::error(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
  if (std::rename(name.data(), path.c_str()) != 0) {
    int err = errno;
    unlink(name.data());
    return Status::error(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
  }
  return Status::ok();
}

}  // namespace pipec
