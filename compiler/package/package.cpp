// KFP packages: a gzip tar or a zip holding one member `pipeline.yaml`, or the YAML
// itself. Every byte that could vary between two builds of the same source is fixed:
// entry mtime 0, uid/gid 0, no user or group names, mode 0644, no gzip timestamp or
// file name, so the same YAML always gives the same package.
#include "compiler/package/package.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "compiler/base/atomic_file.hpp"

namespace pipec::package {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

la_ssize_t append_to_string(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

struct ArchiveDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryDeleter {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

// libarchive only fails here on out-of-memory or a broken build of itself.
void check(archive* a, int rc, const char* what) {
  if (rc != ARCHIVE_OK)
    throw std::runtime_error(fmt::format("libarchive: {}: {}", what,
                                         archive_error_string(a) ? archive_error_string(a) : "failed"));
}

}  // namespace

bool format_for_path(std::string_view path_as_given, Format& format) {
  // The extension in any case: OUT.YAML, Model.TGZ.
  std::string lower(path_as_given);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  std::string_view path = lower;
  if (ends_with(path, ".tar.gz") || ends_with(path, ".tgz")) {
    format = Format::TarGz;
  } else if (ends_with(path, ".zip")) {
    format = Format::Zip;
  } else if (ends_with(path, ".yaml") || ends_with(path, ".yml")) {
    format = Format::Yaml;
  } else {
    return false;
  }
  return true;
}

std::string make_package(Format format, std::string_view yaml) {
  if (format == Format::Yaml) return std::string(yaml);
  std::string out;
  std::unique_ptr<archive, ArchiveDeleter> a(archive_write_new());
  if (!a) throw std::bad_alloc();
  if (format == Format::TarGz) {
    check(a.get(), archive_write_add_filter_gzip(a.get()), "gzip");
    // No timestamp in the gzip header (a null value turns the option off).
    check(a.get(), archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr),
          "gzip timestamp");
    check(a.get(), archive_write_set_format_ustar(a.get()), "ustar");
  } else {
    check(a.get(), archive_write_set_format_zip(a.get()), "zip");
    check(a.get(), archive_write_set_format_option(a.get(), "zip", "compression", "deflate"),
          "zip deflate");
  }
  check(a.get(), archive_write_set_bytes_per_block(a.get(), 0), "block size");
  check(a.get(), archive_write_open2(a.get(), &out, nullptr, append_to_string, nullptr, nullptr),
        "open");
  std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
  if (!entry) throw std::bad_alloc();
  archive_entry_set_pathname(entry.get(), "pipeline.yaml");
  archive_entry_set_filetype(entry.get(), AE_IFREG);
  archive_entry_set_perm(entry.get(), 0644);
  archive_entry_set_size(entry.get(), static_cast<la_int64_t>(yaml.size()));
  archive_entry_set_mtime(entry.get(), 0, 0);
  archive_entry_set_uid(entry.get(), 0);
  archive_entry_set_gid(entry.get(), 0);
  check(a.get(), archive_write_header(a.get(), entry.get()), "header");
  std::size_t done = 0;
  while (done < yaml.size()) {
    la_ssize_t n = archive_write_data(a.get(), yaml.data() + done, yaml.size() - done);
    if (n <= 0) check(a.get(), ARCHIVE_FATAL, "data");
    done += static_cast<std::size_t>(n);
  }
  check(a.get(), archive_write_close(a.get()), "close");
  return out;
}

Status write_package(const std::string& path, Format format, std::string_view yaml) {
  return write_file_atomically(path, make_package(format, yaml));
}

}  // namespace pipec::package
