#pragma once
// Standard base64 (RFC 4648 §4) read back: a kubeconfig's `*-data` fields, and the bytes of
// an artifact in a KFP ReadArtifact answer (`{"data": BASE64}`).

#include <optional>
#include <string>
#include <string_view>

namespace pipec::input {

/// The bytes `text` encodes; padding (`=`), line breaks and spaces are skipped. nullopt
/// when a character is outside the alphabet.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

}  // namespace pipec::input
