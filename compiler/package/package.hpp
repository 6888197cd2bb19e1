#pragma once

#include <string>
#include <string_view>

#include "compiler/base/status.hpp"

namespace pipec::package {

enum class Format { TarGz, Zip, Yaml };

/// The format for an output path by its extension (.tar.gz/.tgz, .zip, .yaml/.yml).
/// Returns false for any other extension.
[[nodiscard]] bool format_for_path(std::string_view path, Format& format);

/// The bytes of a package holding `yaml` as its one member `pipeline.yaml`, with fixed
/// metadata (mtime 0, uid/gid 0, mode 0644), so equal input gives equal bytes.
std::string make_package(Format format, std::string_view yaml);

/// Writes the package to `path` atomically (temporary file + rename).
Status write_package(const std::string& path, Format format, std::string_view yaml);

}  // namespace pipec::package
