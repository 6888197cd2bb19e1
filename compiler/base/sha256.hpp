#pragma once

#include <string>
#include <string_view>

namespace pipec {

/// SHA-256 of `data` as 64 lower-case hex digits (FIPS 180-4), by GNU Nettle.
/// Names a pipeline version after its content (the KFP client) and checks a KFP
/// componentRef's `digest` against the component it names (compiler/sema).
std::string sha256_hex(std::string_view data);

/// SHA-256 of data given in pieces (a file read piece by piece): update() each piece in
/// order, then hex() once. `pipec run --local` keys a step by the digest of its input files.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view piece);
  /// The digest of everything given, as 64 lower-case hex digits.
  std::string hex();

 private:
  alignas(8) unsigned char state_[128];  // nettle's sha256_ctx (checked in sha256.cpp)
};

}  // namespace pipec
