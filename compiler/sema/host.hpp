#pragma once

// sema::Host: what checking asks of the machine it runs on, passed in by the caller so that
// sema itself starts no process, reads no environment variable and writes no file. The
// one implementation for a real machine is compile::machine_host() (compiler/compile);
// a default Host is a machine with no Python interpreter and no component cache, as the
// fuzz targets and the tests that need neither use it.

#include <functional>
#include <optional>
#include <string>

namespace pipec::sema {

struct Host {
  /// Runs a Python program that reads what it is given and writes an answer, for the check
  /// of a Python op's function: `program` (passed as `-I -c program arg`), `input` on
  /// standard input; returns what it printed (bounded). `missing` set: there is no
  /// interpreter where there should be one (an error at the op: its function cannot be
  /// checked, and nothing is built from an unchecked one); nullopt with `error` set: it
  /// could not be run (a warning: the function is not checked). Empty: the caller checks
  /// no function (a warning at each Python op, `python_unchecked` saying why).
  using RunPython = std::function<std::optional<std::string>(const std::string& program, const std::string& arg,
                                                             const std::string& input, bool& missing,
                                                             std::string& error)>;
  RunPython run_python;
  /// The interpreter run_python starts, as messages name it ("/usr/bin/python3").
  std::string python_name = "python3";
  /// How to get the interpreter, as the error for a missing one ends.
  std::string python_missing_hint = "Debian's python3";
  /// Why no function is checked when run_python is empty.
  std::string python_unchecked = "no Python interpreter was given to check it with";

  /// The component cache: the folder where a KFP component file is named by its SHA-256
  /// (read through the SourceManager, as every source is), "" when there is none, and how
  /// messages name it when there is none.
  std::string component_cache;
  std::string component_cache_missing = "(no component cache)";
  /// Saves a fetched component file in the cache (`pipec component fetch`); false with
  /// `error` set when it cannot.
  std::function<bool(const std::string& digest, const std::string& bytes, std::string& error)> save_component;
};

}  // namespace pipec::sema
