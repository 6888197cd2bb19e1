#pragma once

#include <optional>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/syntax/ast.hpp"

namespace pipec::syntax {

/// Deepest nesting of brackets, `not`s and `else if`s the parser accepts; deeper
/// input is an error instead of a stack overflow.
inline constexpr int kMaxNesting = 256;

/// Parses one file: checks that it is valid UTF-8 without NUL bytes and not nested
/// too deeply, runs the grammar, decodes string literals (escapes, dedent, `${...}`)
/// and attaches `##` doc comments. Reports syntax errors as located diagnostics.
/// Returns nullopt if it reported an error.
[[nodiscard]] std::optional<ast::Module> parse(const SourceManager& sources, FileId file,
                                               Diagnostics& diags);

}  // namespace pipec::syntax
