// libFuzzer target for the LSP message loop (run_lsp): the input is the byte stream a
// client sends on stdin (Content-Length framed JSON-RPC, or anything else). Any stream
// must end in an exit status, never a crash, a leak, a sanitizer report or a hang.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "compiler/tools/lsp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::ostringstream out;
  (void)pipec::tools::run_lsp(in, out);
  return 0;
}
