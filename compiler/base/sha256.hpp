#pragma once

#include <string>
#include <string_view>

namespace pipec {

/// SHA-256 of `data` as 64 lower-case hex digits (FIPS 180-4), by GNU Nettle.
/// Names a pipeline version after its content (the KFP client) and checks a KFP
/// componentRef's `digest` against the component it names (compiler/sema).
std::string sha256_hex(std::string_view data);

}  // namespace pipec
