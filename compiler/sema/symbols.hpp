#pragma once

// What the checker found each name of a program to mean: every declaration (the
// pipeline's parameters, steps and loop variables; every op the program can call, with
// its parameters and outputs, from the main file and the files it `use`s) and every use
// of one, with their places. The editor's hover, go-to-definition and completion read it
// (compiler/tools/lsp.cpp), so they resolve names exactly as `pipec check` does.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/base/source_manager.hpp"
#include "compiler/sema/host.hpp"

namespace pipec::sema {

/// One declared name.
struct Symbol {
  enum class Kind { Parameter, Op, OpParameter, Output, Step, LoopVariable };
  Kind kind = Kind::Parameter;
  std::string name;
  /// A parameter's, op parameter's or output's type as written (`list<string>`), a loop
  /// variable's item type, a step's op, an op's signature (`f(x: int) -> (y: file)`).
  std::string type;
  std::string doc;    ///< the doc comment (an op's, a parameter's, an output's)
  std::string op;     ///< for op parameters and outputs: their op
  SourceRange range;  ///< of the declared name
};

/// "parameter", "op", "op parameter", "output", "step", "loop variable".
const char* kind_name(Symbol::Kind kind);

struct SymbolTable {
  FileId main = kNoFile;
  /// False when the main file did not parse: then the table is empty.
  bool loaded = false;
  std::vector<Symbol> symbols;  ///< in the order the checker met them
  /// Each use of a name (a reference, a step's op, an argument's name, an `after` entry)
  /// and the symbol the checker resolved it to.
  std::vector<std::pair<SourceRange, std::size_t>> refs;
  /// Each `use` of the main file: where it is, the file it loaded, whether that is a
  /// stdlib module (which has no file on disk).
  struct Use {
    SourceRange range;
    FileId file = kNoFile;
    bool stdlib = false;
  };
  std::vector<Use> uses;
  /// The symbol each name means where the checker looks it up: the first declaration.
  std::map<std::string, std::size_t, std::less<>> ops, steps, params;
  /// The parameters a step that calls each op or pipeline (by name: the one `ops` means)
  /// passes by name, in declaration order: an op's op parameters, a pipeline's parameters.
  std::map<std::string, std::vector<std::size_t>, std::less<>> arguments;

  /// The symbol at `offset` in `file`: the one a use there means, else the one declared
  /// there.
  [[nodiscard]] std::optional<std::size_t> at(FileId file, std::uint32_t offset) const;
};

/// Loads and checks `main` as check_program() does, reporting nothing, and returns what
/// every name means. Passes that check_program() would skip after an error still run
/// here, so the table covers all that parsed.
[[nodiscard]] SymbolTable index_program(SourceManager& sources, FileId main, const Host& host);

}  // namespace pipec::sema
