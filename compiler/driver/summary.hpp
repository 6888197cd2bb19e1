#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include "compiler/ir/ir.hpp"

namespace pipec::driver {

/// The one-screen report `pipec build` prints: pipeline, steps, parameters with
/// types and defaults, output path and size.
void print_summary(const ir::Pipeline& pipeline, const std::string& output, std::size_t bytes,
                   std::ostream& out);

}  // namespace pipec::driver
