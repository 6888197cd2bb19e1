#pragma once
// A shell-form command (`command "..."`, a training op's `command`) as the script `sh -c`
// runs: the user's text, with each `${x}` placed where the shell reads the value back
// whole and literally, whatever quoting context the user wrote it in
// (docs/language.md, "Quoting in shell-form commands"). Used by the Argo writer for
// container ops and by the training-op lowering, so both follow one rule.

#include <functional>
#include <string>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::shell {

/// Writes the script for `parts` (text and references, as the string was written).
/// `variable(ref)` names the environment variable that carries the reference's value.
/// Each reference becomes, by the context it stands in:
///   - bare, or inside a word:              "${VAR}"
///   - inside "...":                        ${VAR}
///   - inside '...':                        '"${VAR}"'   (the quote is closed and reopened)
///   - inside `${...}` of the user's script: as its enclosing context
///   - inside `$(...)`:                     as bare (a new context)
///   - in an unquoted here-document body:   ${VAR}
///   - in a `#` comment:                    "${VAR}" (the shell never expands it there)
/// and it is an error (at the reference) inside backticks, inside `$((...))`, or in a
/// here-document whose delimiter is quoted. A line that starts with `-`
/// right after a line that ended without `\` gets a warning: it runs as a command of its
/// own. Returns false if it reported an error.
[[nodiscard]] bool write_script(const std::vector<ir::Part>& parts,
                                const std::function<std::string(const ir::Ref&)>& variable,
                                SourceRange whole, std::string& script, Diagnostics& diags);

/// The text and references of a shell-form command (`op.command` when `op.shell`), in
/// order, for write_script; `whole` is set to the range of the command.
std::vector<ir::Part> command_parts(const std::vector<ir::Value>& command, SourceRange& whole);

/// The environment variable that carries op parameter `name` into a shell-form script.
inline std::string script_variable(const std::string& name) { return "PIPEC_" + name; }

}  // namespace pipec::shell
