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

AtomicFile::~AtomicFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(tmp_.c_str());
}

bool AtomicFile::fail(int err, std::string& error) {
  error = "cannot write '" + path_ + "': " + std::strerror(err);
  return false;
}

bool AtomicFile::open(const std::string& path, std::string& error, Folders folders) {
  path_ = path;
  if (folders == Folders::Create) {
    std::filesystem::path target(path);
    std::error_code ec;
    if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  }
  tmp_ = path + ".tmp-XXXXXX";
  fd_ = ::mkstemp(tmp_.data());
  return fd_ >= 0 || fail(errno, error);
}

void AtomicFile::write(std::string_view data) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (error_ == 0 && left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n == 0 ? EIO : errno;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
    size_ += static_cast<std::size_t>(n);
  }
}

bool AtomicFile::commit(std::string& error) {
  if (fd_ < 0) return fail(EBADF, error);
  int saved = error_;
  if (saved == 0 && (::fchmod(fd_, 0644) != 0 || ::fsync(fd_) != 0)) saved = errno;
  if (::close(fd_) != 0 && saved == 0) saved = errno;
  fd_ = -1;
  if (saved == 0 && std::rename(tmp_.c_str(), path_.c_str()) != 0) saved = errno;
  if (saved == 0) return true;
  ::unlink(tmp_.c_str());
  return fail(saved, error);
}

bool write_file_atomically(const std::string& path, std::string_view content, std::string& error, Folders folders) {
  AtomicFile file;
  if (!file.open(path, error, folders)) return false;
  file.write(content);
  return file.commit(error);
}

}  // namespace pipec::fileio
