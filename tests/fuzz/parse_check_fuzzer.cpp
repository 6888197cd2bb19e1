// libFuzzer target over the whole compiler: parse, check, lower and write the workflow
// YAML for one input (the YAML is parsed back with yaml-cpp when it is written).
// Any input must give diagnostics or a pipeline, never a crash, a leak, a sanitizer
// report or a hang. The file is named under a directory that does not exist, so a
// `use "x.pipe"` in the input cannot read real files.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/emit/argo/workflow_writer.hpp"
#include "compiler/lower/lower.hpp"
#include "compiler/sema/check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pipec::SourceManager sources;
  pipec::FileId file = sources.add("/nonexistent-pipec-fuzz/input.pipe",
                                   std::string(reinterpret_cast<const char*>(data), size));
  pipec::Diagnostics diags;
  auto program = pipec::sema::check_program(sources, file, diags, pipec::sema::Host{});
  if (program && !diags.has_errors()) {
    auto pipeline = pipec::lower::lower(std::move(*program), diags);
    std::string yaml;
    if (pipeline && !diags.has_errors())
      (void)pipec::emit::argo::write_workflow(*pipeline, pipec::emit::argo::WriteOptions{}, yaml, diags);
  }
  // Rendering reads every range back, so a bad range shows up here too.
  std::ostringstream out;
  pipec::render(diags, sources, out, pipec::RenderOptions{});
  pipec::render(diags, sources, out, pipec::RenderOptions{pipec::DiagnosticFormat::Json, false});
  return 0;
}
