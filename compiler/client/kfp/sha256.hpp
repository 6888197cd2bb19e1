#pragma once

#include <string>
#include <string_view>

namespace pipec::client::kfp {

/// SHA-256 of `data` as 64 lower-case hex digits (FIPS 180-4). Used to name a pipeline
/// version after its content, so uploading the same workflow twice finds the first one.
std::string sha256_hex(std::string_view data);

}  // namespace pipec::client::kfp
