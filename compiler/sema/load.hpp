#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/sema/component.hpp"
#include "compiler/syntax/ast.hpp"

namespace pipec::sema {

/// One parsed file of a program.
struct LoadedModule {
  FileId file = kNoFile;
  syntax::ast::Module module;
  bool is_stdlib = false;
  bool is_main = false;
  std::vector<std::pair<SourceRange, FileId>> uses;  ///< each `use` here and the file it loaded
  /// Set for a `use`d KFP component (`.yaml`/`.yml`): `module` is its declaration().
  std::shared_ptr<const component::Component> component;
};

/// Parses `main` and, depth first, every file and stdlib module it `use`s, each once.
/// `use NAME` reads the embedded stdlib/NAME.pipe (shown as "stdlib/NAME.pipe");
/// `use "path"` reads a file relative to the file that says it; a path ending in `.yaml`
/// or `.yml` is a KFP component, made an op (component.hpp). Reports syntax
/// errors, unknown modules, unreadable files and `use` cycles. Returns false on error.
/// A component's componentRefs are read from `host`'s component cache.
[[nodiscard]] bool load_modules(SourceManager& sources, FileId main, Diagnostics& diags, const Host& host,
                                std::vector<LoadedModule>& out);

}  // namespace pipec::sema
