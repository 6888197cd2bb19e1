// Mirrors the KFP server's ReadPipelineFile (backend/src/apiserver/server/util.go, same at
// 1.8 and HEAD), so that a package the server would refuse is refused here first, with
// no request made.

#include "compiler/client/kfp/package_reader.hpp"
#include "compiler/client/kfp/libarchive.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <memory>

#include <fmt/format.h>

#include "input/limits.hpp"
#include "input/read.hpp"

namespace pipec::client::kfp {

namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_yaml_name(std::string_view name) { return ends_with(name, ".yaml") || ends_with(name, ".yml"); }

// Reads entries until `pipeline.yaml`; else the first entry if it is YAML.
Status read_archive(std::string_view bytes, bool zip, std::string& yaml) {
  std::unique_ptr<archive, ArchiveReadDeleter> reader(archive_read_new());
  if (!reader) return Status::error("cannot initialise libarchive");
  if (zip) {
    archive_read_support_format_zip(reader.get());
  } else {
    archive_read_support_filter_gzip(reader.get());
    archive_read_support_format_tar(reader.get());
  }
  const char* kind = zip ? "zip" : "tar.gz";
  if (archive_read_open_memory(reader.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    return Status::error(fmt::format("not a readable {} archive: {}", kind,
                                     archive_problem(reader.get())));
  std::string first_name;
  std::string first_content;
  bool have_first = false;
  archive_entry* entry = nullptr;
  while (true) {
    int rc = archive_read_next_header(reader.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
      return Status::error(
          fmt::format("broken {} archive: {}", kind, archive_problem(reader.get())));
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    bool wanted = name == "pipeline.yaml";
    if (!wanted && have_first) continue;
    std::string content;
    char buffer[65536];
    la_ssize_t n;
    while ((n = archive_read_data(reader.get(), buffer, sizeof buffer)) > 0) {
      // Unpacked, an entry may be far larger than the archive (a zip bomb).
      if (content.size() + static_cast<std::size_t>(n) > input::kMaxPackageBytes)
        return Status::error(fmt::format("'{}' in the {} archive is larger than {} once unpacked",
                                         name, kind, input::size_text(input::kMaxPackageBytes)));
      content.append(buffer, static_cast<std::size_t>(n));
    }
    if (n < 0)
      return Status::error(
          fmt::format("broken {} archive: {}", kind, archive_problem(reader.get())));
    if (wanted) {
      yaml = std::move(content);
      return Status::ok();
    }
    have_first = true;
    first_name = std::move(name);
    first_content = std::move(content);
  }
  if (!have_first) return Status::error(fmt::format("the {} archive is empty", kind));
  if (!is_yaml_name(first_name))
    return Status::error(fmt::format(
        "expecting a pipeline.yaml file inside the {} archive, got '{}' (the server takes the "
        "entry named exactly 'pipeline.yaml', else a first entry ending in .yaml)",
        kind, first_name));
  yaml = std::move(first_content);
  return Status::ok();
}

}  // namespace

Status read_workflow_from_package(std::string_view bytes, std::string_view filename,
                                  std::string& yaml) {
  if (is_yaml_name(filename) || ends_with(filename, ".json")) {
    yaml.assign(bytes);
    return Status::ok();
  }
  if (bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K') return read_archive(bytes, true, yaml);
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b)
    return read_archive(bytes, false, yaml);
  return Status::error(
      "unexpected pipeline file format: the server takes .zip, .tar.gz, .json or YAML");
}

}  // namespace pipec::client::kfp
