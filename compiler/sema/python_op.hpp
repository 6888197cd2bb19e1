#pragma once

// Python function ops: an op whose body has a `python` field holding a function's source
// (a raw block) becomes an ordinary container op whose command runs that function, as
// KFP's lightweight components do. Everything after sema sees only the container op.

#include <map>
#include <string>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/sema/host.hpp"
#include "compiler/syntax/ast.hpp"

namespace pipec::sema {

/// The image a Python op runs in when it names none.
inline constexpr const char* kPythonDefaultImage = "python:3.11";

/// For an op with a `python` field: checks the function (its syntax and its signature
/// against `c.params` and `outputs`, with `host`'s interpreter; a warning when there is
/// none) and `packages`, then lowers the op into `c`: the command that runs the function,
/// `python:3.11` when the body names no image, and each output's path in `output_paths`.
/// Reports every problem in `diags`. Returns false, changing nothing, for any other op.
bool lower_python_op(const Host& host, const syntax::ast::OpDecl& op, const std::vector<ir::OpOutput>& outputs,
                     ir::ContainerOp& c, std::map<std::string, std::string>& output_paths,
                     Diagnostics& diags);

}  // namespace pipec::sema
