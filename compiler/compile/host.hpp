#pragma once

// machine_host(): the sema::Host of the machine pipec runs on. Its Python interpreter
// checks Python ops' functions (PIPEC_CHECK_PYTHON, else /usr/bin/python3, started with
// posix_spawn and its answer read with a bound; none is an error at each Python op, and
// PIPEC_CHECK_PYTHON=off checks none, with a warning at each); its component cache is
// $PIPEC_COMPONENT_CACHE, else $XDG_CACHE_HOME/pipec/components, else
// ~/.cache/pipec/components, and saving there is one atomic write.

#include <string>

#include "compiler/sema/host.hpp"

namespace pipec::compile {

/// The interpreter that checks a Python op's function when PIPEC_CHECK_PYTHON names none.
inline constexpr const char* kCheckPython = "/usr/bin/python3";
/// The PIPEC_CHECK_PYTHON that checks no function.
inline constexpr const char* kCheckPythonOff = "off";

/// The component cache's folder as the environment names it ("" without $HOME).
std::string component_cache_dir();

/// Read once, on first use: the environment of a pipec process does not change.
const sema::Host& machine_host();

}  // namespace pipec::compile
