#include "fileio/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace pipec::fileio {

bool write_file_atomically(const std::string& path, std::string_view content, std::string& error, Folders folders) {
  auto fail = [&](int err) {
    error = "cannot write '" + path + "': " + std::strerror(err);
    return false;
  };
  if (folders == Folders::Create) {
    std::filesystem::path target(path);
    std::error_code ec;
    if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  }
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return fail(errno);
  const char* p = content.data();
  std::size_t left = content.size();
  int saved = 0;  // the first error
  while (saved == 0 && left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      saved = n == 0 ? EIO : errno;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (saved == 0 && (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0)) saved = errno;
  if (::close(fd) != 0 && saved == 0) saved = errno;
  if (saved == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) saved = errno;
  if (saved == 0) return true;
  ::unlink(tmp.c_str());
  return fail(saved);
}

}  // namespace pipec::fileio
