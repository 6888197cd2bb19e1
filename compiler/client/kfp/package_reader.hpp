#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "compiler/base/status.hpp"

namespace pipec::client::kfp {

/// The most the KFP API server accepts as an uploaded file (`MaxFileLength`, 32 MiB).
inline constexpr std::size_t kMaxUploadBytes = std::size_t{32} << 20;

/// Finds the workflow in package bytes the way the KFP server does: by the file name's
/// extension (.yaml/.yml/.json: the bytes as they are), else by content (`PK`: zip,
/// `1F 8B`: gzip'd tar). In an archive, the entry named exactly `pipeline.yaml`, else
/// the first entry, which must end in .yaml/.yml. Any other shape is an error that says
/// what the server would answer.
Status read_workflow_from_package(std::string_view bytes, std::string_view filename,
                                  std::string& yaml);

}  // namespace pipec::client::kfp
