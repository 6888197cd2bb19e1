#pragma once
// `pipec component export FILE.pipe OP`: a pipec container op as a KFP v1 ComponentSpec
// (what kfp.components.load_component_from_file reads in kfp 1.8 and 2.x), so a KFP SDK
// user can reuse it. Parameters are inputs (`inputValue`; a `file` parameter an input the
// container finds at its path), outputs are outputs (`outputPath`), and the op's own paths
// are kept by a small shell prologue that places input files and copies outputs.
// docs/language.md "Exporting an op as a KFP component".

#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::tools {

/// The ComponentSpec of `op` as YAML (deterministic). What the format cannot hold
/// (resources, retries, volumes, ...) is reported as a warning naming the field; an op it
/// cannot express at all (only `args`, with files to place) is an error. Returns false if
/// it reported an error.
bool export_component(const ir::ContainerOp& op, std::string& yaml, Diagnostics& diags);

/// Checks the program in `file` (a pipeline file, or a file of ops that declares none) and
/// exports its op `op`. Returns false if it reported an error.
bool export_component_of(SourceManager& sources, const std::string& file, const std::string& op,
                         std::string& yaml, Diagnostics& diags);

}  // namespace pipec::tools
