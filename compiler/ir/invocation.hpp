#pragma once

// What a container op's container receives, decided once by the lowering (lower::lower,
// compiler/lower/invocation.cpp) and printed by each back end: its argv words as pieces of
// literal text, op parameters and file parameters' paths; its environment; the files placed
// for it and the files it writes. A target prints a Param piece its own way (Argo's
// `{{inputs.parameters.p}}`, KFP's `{{$.inputs.parameters['p']}}`, the local run's value).

#include <string>
#include <utility>
#include <vector>

#include "compiler/base/source_manager.hpp"

namespace pipec::ir {

struct Piece {
  enum class Kind {
    Text,   // `text` as it is
    Param,  // the value of op parameter `name`
    File,   // `file` parameter `name`: the path `text` it is placed at
  };
  Kind kind = Kind::Text;
  std::string text;
  std::string name;  // Param, File: the op parameter
  /// Text from a KFP component's placeholder (ir::Part::kfp_v2): its KFP v2 spelling, which
  /// the kfp-v2 target prints instead of `text` (never a user's text).
  std::string kfp_v2;
};

/// One argv word (or an environment variable's value): its pieces in order. A literal is
/// one Text piece; `${p}` alone is one Param or File piece.
struct Word {
  std::vector<Piece> pieces;
  SourceRange range;
  /// A list or map built from run-time values: no word (each target says so at `range`).
  bool invalid = false;
  [[nodiscard]] bool literal() const { return pieces.size() == 1 && pieces[0].kind == Piece::Kind::Text; }
};

struct Invocation {
  Word image;
  /// Shell form (`command "..."`): `sh -c SCRIPT NAME ARGS...`, where each `${p}` of the
  /// script is the environment variable `PIPEC_<p>` quoted by its context (compiler/shell), so
  /// a value never becomes script text.
  bool shell = false;
  std::string script;
  std::string name;  // the script's $0: the op's name as a DNS-1123 name
  std::vector<Piece> script_values;  // shell form: PIPEC_<p> for each, first use first
  SourceRange script_range;
  /// Exec form: the command's words (none: the image's entrypoint). Shell form: none.
  std::vector<Word> command;
  /// After the command (shell form: the script's "$1", "$2", ...).
  std::vector<Word> args;
  std::vector<std::pair<std::string, Word>> env;  // in source order
  std::vector<Word> metrics;  // metric specs pipec-metrics checks and collects
  struct File {
    std::string name, path;
    bool file = false;  // an output of type `file` (else a value read from the file)
    /// A KFP component's input or output that its container reads or writes where KFP says
    /// (ir::OpParam::kfp_reads, ir::OpOutput::kfp_writes): the kfp-v2 target neither places
    /// nor copies it.
    bool kfp = false;
  };
  std::vector<File> inputs;   // `file` parameters: placed at `path` before the command runs
  std::vector<File> outputs;  // every output: the command writes it at `path`
};

}  // namespace pipec::ir
