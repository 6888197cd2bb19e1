#pragma once
// What the client's two archive readers (package_reader.cpp: a package's pipeline.yaml;
// series.cpp: a run artifact's one member) share of libarchive.

#include <archive.h>

#include <string>

namespace pipec::client::kfp {

/// Frees a reader (std::unique_ptr<archive, ArchiveReadDeleter>).
struct ArchiveReadDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};

/// libarchive's message for its last error; it may give none (archive_error_string: null).
inline std::string archive_problem(archive* a) {
  const char* text = archive_error_string(a);
  return text && *text ? text : "libarchive gives no reason";
}

}  // namespace pipec::client::kfp
