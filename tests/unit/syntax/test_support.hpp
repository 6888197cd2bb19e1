#pragma once

// Test hooks for the front end (STYLE §9): run parse / check / lower over text held
// in an in-memory SourceManager and get the rendered diagnostics back.

#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/lower/lower.hpp"
#include "compiler/sema/check.hpp"
#include "compiler/sema/program.hpp"
#include "compiler/syntax/parser.hpp"

namespace pipec::testing {

inline std::string render_text(const Diagnostics& diags, const SourceManager& sources) {
  std::ostringstream out;
  render(diags, sources, out, RenderOptions{});
  return out.str();
}

struct ParseOutcome {
  std::optional<syntax::ast::Module> module;
  std::string diagnostics;
};

inline ParseOutcome parse_string(std::string text, std::string name = "input") {
  SourceManager sources;
  FileId file = sources.add(std::move(name), std::move(text));
  Diagnostics diags;
  ParseOutcome out;
  out.module = syntax::parse(sources, file, diags);
  out.diagnostics = render_text(diags, sources);
  return out;
}

struct CheckOutcome {
  std::shared_ptr<const sema::Program> program;
  std::optional<ir::Pipeline> pipeline;  // set when the program checked
  std::string diagnostics;
};

/// Checks (and, when that succeeds, lowers) `text` as the main file.
inline CheckOutcome check_string(std::string text, std::string name = "input") {
  SourceManager sources;
  FileId file = sources.add(std::move(name), std::move(text));
  Diagnostics diags;
  CheckOutcome out;
  out.program = sema::check_program(sources, file, diags, sema::Host{});
  // Lowering takes the program it is given: a copy, as the tests read the program too.
  if (out.program) out.pipeline = lower::lower(sema::Program(*out.program), diags);
  out.diagnostics = render_text(diags, sources);
  return out;
}

}  // namespace pipec::testing
