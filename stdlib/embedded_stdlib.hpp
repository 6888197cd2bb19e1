#pragma once

#include <string_view>
#include <vector>

namespace pipec::stdlib {

/// One stdlib module: `use NAME` brings in the ops of stdlib/NAME.pipe.
struct Module {
  std::string_view name;
  std::string_view text;
};

/// Every module, sorted by name. The texts are embedded at build time.
const std::vector<Module>& modules();
/// The module called `name`, or nullptr.
const Module* find(std::string_view name);

}  // namespace pipec::stdlib
