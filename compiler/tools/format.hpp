#pragma once
// `pipec fmt`: one canonical layout for a .pipe file, from the tokens of the parser's own
// lexer (syntax/lexer.hpp), so comments and doc comments stay where they are and every
// string keeps its exact text.

#include <string>
#include <string_view>

#include "compiler/base/source_manager.hpp"

namespace pipec {
class Diagnostics;
}

namespace pipec::tools {

/// The canonical layout of `text` (a program the parser accepts):
///  * each line indented 2 spaces per bracket (`{`, `[`, `(`) open at its start, a line
///    that starts with closing brackets one level less for each;
///  * one space between tokens where the source had any, none before `,` `:` `)` `]` and
///    after `(` `[`, one after `,` and `:` and around `=` and `->` where a token follows on
///    the line; `#` comments one space after the code before them;
///  * no trailing spaces, tabs in indentation gone, at most one blank line in a row, none
///    right after an opening or before a closing bracket, none at the start or end, one
///    final newline;
///  * the lines of a triple-quoted string (and so its value) exactly as written.
/// Idempotent: formatting the result changes nothing.
[[nodiscard]] std::string format_source(std::string_view text);

/// The canonical layout of the file `id` of `sources`, checked as `pipec fmt` and the LSP's
/// formatting both need it: a text with a syntax error is not laid out (its errors go to
/// `diags`), and a layout that would parse to another program (a defect of format_source)
/// is refused. The layout is added to `sources` under the file's name, for the check.
struct Layout {
  enum Status { Formatted, SyntaxError, WouldChangeProgram } status = SyntaxError;
  std::string text;  // Formatted: the layout
};
[[nodiscard]] Layout format_file(SourceManager& sources, FileId id, Diagnostics& diags);

}  // namespace pipec::tools
