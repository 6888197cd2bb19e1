// libFuzzer target for `pipec fmt` (format_source): for any program the parser accepts,
// the formatted text parses to the same AST (print_ast equal) and formatting it again
// changes nothing. Either failing is a finding (abort), as is any crash or hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/tools/format.hpp"
#include "compiler/syntax/ast_printer.hpp"
#include "compiler/syntax/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  pipec::SourceManager sources;
  pipec::Diagnostics diags;
  auto module = pipec::syntax::parse(sources, sources.add("/nonexistent-pipec-fuzz/input.pipe", text), diags);
  if (!module || diags.has_errors()) return 0;  // fmt leaves a file with errors alone
  std::string once = pipec::tools::format_source(text);
  pipec::Diagnostics again;
  auto reparsed = pipec::syntax::parse(sources, sources.add("/nonexistent-pipec-fuzz/once.pipe", once), again);
  if (!reparsed || again.has_errors()) {
    std::fprintf(stderr, "fmt: the formatted text does not parse\n");
    std::abort();
  }
  if (pipec::syntax::print_ast(*reparsed) != pipec::syntax::print_ast(*module)) {
    std::fprintf(stderr, "fmt: the formatted text parses to another program\n");
    std::abort();
  }
  if (pipec::tools::format_source(once) != once) {
    std::fprintf(stderr, "fmt: formatting is not idempotent\n");
    std::abort();
  }
  return 0;
}
