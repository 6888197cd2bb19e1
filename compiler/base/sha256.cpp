// SHA-256 by GNU Nettle, which pipec already loads for libarchive: the one digest the
// compiler and the client use.
#include "compiler/base/sha256.hpp"

#include <nettle/sha2.h>

#include <cstdint>
#include <new>

namespace pipec {

namespace {

std::string digest_hex(sha256_ctx& ctx) {
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_SIZE);
  for (std::uint8_t byte : digest) {
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

static_assert(sizeof(sha256_ctx) <= 128 && alignof(sha256_ctx) <= 8, "Sha256::state_ holds a sha256_ctx");

sha256_ctx& context(unsigned char* state) { return *std::launder(reinterpret_cast<sha256_ctx*>(state)); }

}  // namespace

std::string sha256_hex(std::string_view data) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  return digest_hex(ctx);
}

Sha256::Sha256() { sha256_init(::new (state_) sha256_ctx); }

void Sha256::update(std::string_view piece) {
  sha256_update(&context(state_), piece.size(), reinterpret_cast<const std::uint8_t*>(piece.data()));
}

std::string Sha256::hex() { return digest_hex(context(state_)); }

}  // namespace pipec
