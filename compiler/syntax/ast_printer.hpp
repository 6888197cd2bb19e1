#pragma once

#include <string>

#include "compiler/syntax/ast.hpp"

namespace pipec::syntax {

/// The tree as indented text, one node per line, for `--dump-ast` and tests:
/// `(step train = mpi_job)`, `(arg workers (ref workers))`, `(string "a" ${b} "c")`.
/// Ranges are left out so that the dump does not change with spacing.
std::string print_ast(const ast::Module& module);

}  // namespace pipec::syntax
