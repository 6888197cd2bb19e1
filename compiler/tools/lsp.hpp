#pragma once
// `pipec lsp`: a Language Server Protocol server over stdio (docs/lsp.md): diagnostics as
// `pipec check` reports them, hover, go to definition, completion, document symbols.

#include <istream>
#include <ostream>

namespace pipec::tools {

/// Serves JSON-RPC 2.0 messages (Content-Length framed) from `in`, answering on `out`,
/// until `exit`. Returns 0 after shutdown then exit, 1 on exit without shutdown or at the
/// end of the input (as the protocol says).
int run_lsp(std::istream& in, std::ostream& out);

}  // namespace pipec::tools
