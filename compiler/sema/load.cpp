// load_modules(): follows `use` declarations. Expects nothing of the files; reports
// every problem at the `use` that caused it. Invents the display name of a used
// file: the using file's directory joined with the path, lexically normalised.
#include "compiler/sema/load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

#include "compiler/base/spellcheck.hpp"
#include "compiler/syntax/parser.hpp"
#include "stdlib/embedded_stdlib.hpp"

namespace pipec::sema {

namespace ast = syntax::ast;
namespace fs = std::filesystem;

namespace {

class Loader {
 public:
  Loader(SourceManager& sources, Diagnostics& diags, const Host& host, std::vector<LoadedModule>& out,
         std::map<std::string, std::string> renames = {})
      : sources_(sources), diags_(diags), host_(host), out_(out), renames_(std::move(renames)) {}

  // The ops of components that graph components call (by key) whose names another module's
  // ops have too, each with the name it takes instead: NAME_<8 hex digits of its digest>.
  // (A program that also `use`s another version of a component a graph component calls
  // keeps both, so no name is refused.)
  std::map<std::string, std::string> clashing_refs() const {
    std::map<std::string, std::vector<std::pair<FileId, const ast::OpDecl*>>> by_name;
    for (const auto& m : out_)
      for (const auto& decl : m.module.decls)
        if (const auto* op = boost::get<ast::OpDecl>(&decl.get())) by_name[op->name.name].emplace_back(m.file, op);
    std::map<std::string, std::string> renames;
    for (const auto& [name, decls] : by_name) {
      if (decls.size() < 2) continue;
      bool user = std::any_of(decls.begin(), decls.end(), [&](const auto& d) { return !ref_keys_.count(d.first); });
      for (std::size_t i = user ? 0 : 1; i < decls.size(); ++i) {
        auto key = ref_keys_.find(decls[i].first);
        if (key == ref_keys_.end()) continue;
        std::string hex = key->second.substr(key->second.find(':') + 1, 8);
        renames.emplace(key->second, fmt::format("{}_{}", name, hex));
      }
    }
    return renames;
  }

  bool load(FileId file, const std::string& key, bool is_stdlib, bool is_main) {
    auto parsed = syntax::parse(sources_, file, diags_);
    if (!parsed) return false;
    loaded_.emplace(key, file);
    stack_.push_back({key, std::string(sources_.name(file))});
    bool ok = true;
    std::vector<std::pair<SourceRange, FileId>> uses;
    for (const auto& decl : parsed->decls) {
      const auto* use = boost::get<ast::UseDecl>(&decl.get());
      if (!use) continue;
      FileId used = kNoFile;
      ok = follow(*use, file, used) && ok;
      if (used != kNoFile) uses.emplace_back(use->range, used);
    }
    stack_.pop_back();
    out_.push_back({file, std::move(*parsed), is_stdlib, is_main, std::move(uses)});
    return ok;
  }

 private:
  // Loads what `use` names (once); `used` is its file, also when it was loaded before.
  bool follow(const ast::UseDecl& use, FileId from, FileId& used) {
    std::string key, display;
    FileId file = kNoFile;
    bool is_stdlib = false;
    SourceRange at = use.range;
    if (const auto* name = boost::get<ast::Identifier>(&use.target.get())) {
      at = name->range;
      const auto* module = stdlib::find(name->name);
      if (!module) {
        diags_.error(at, fmt::format("unknown stdlib module '{}'", name->name));
        std::vector<std::string> names;
        for (const auto& m : stdlib::modules()) names.emplace_back(m.name);
        std::string near = spellcheck(name->name, names);
        if (!near.empty()) diags_.note(at, fmt::format("did you mean '{}'?", near));
        return false;
      }
      key = "stdlib:" + name->name;
      display = fmt::format("stdlib/{}.pipe", name->name);
      is_stdlib = true;
      if (in_cycle(key, display, at)) return false;
      if (auto it = loaded_.find(key); it != loaded_.end()) {
        used = it->second;
        return true;
      }
      file = sources_.add(display, std::string(module->text));
    } else {
      const auto& lit = boost::get<ast::StringLit>(use.target.get());
      at = lit.range;
      std::string rel = lit.text();
      if (!lit.is_plain() || rel.empty()) {
        diags_.error(at, "the path after 'use' must be a plain, non-empty string");
        return false;
      }
      fs::path base = fs::path(std::string(sources_.name(from))).parent_path();
      display = (base / rel).lexically_normal().generic_string();
      std::error_code ec;
      fs::path canonical = fs::weakly_canonical(display, ec);
      key = ec ? display : canonical.generic_string();
      if (in_cycle(key, display, at)) return false;
      if (auto it = loaded_.find(key); it != loaded_.end()) {
        used = it->second;
        return true;
      }
      if (is_component_path(display)) return load_component(display, key, at, used);
      std::string error;
      file = sources_.load(display, error);
      if (file == kNoFile) {
        diags_.error(at, fmt::format("cannot read '{}': {}", display, error));
        return false;
      }
    }
    used = file;
    return load(file, key, is_stdlib, false);
  }

  static bool is_component_path(const std::string& path) {
    auto ends = [&](std::string_view tail) {
      return path.size() >= tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
    };
    return ends(".yaml") || ends(".yml");
  }

  // A KFP component: read (bounded) and made the module of its op's declaration, which
  // the parser reads as any other file (shown as "PATH (op)").
  bool load_component(const std::string& display, const std::string& key, SourceRange at,
                      FileId& used) {
    std::string error;
    FileId yaml = component::load_file(sources_, display, error);
    if (yaml == kNoFile) {
      diags_.error(at, fmt::format("cannot read '{}': {}", display, error));
      return false;
    }
    auto c = std::make_shared<component::Component>();
    if (!component::read(sources_, yaml, diags_, *c) || !component::resolve_refs(sources_, *c, diags_, host_)) {
      diags_.note(at, fmt::format("'{}' is used here", display));
      return false;
    }
    return add_component(std::move(c), display, key, used);
  }

  // The module of a component read: its op's declaration, or a graph component's pipeline
  // after the modules of the components its tasks call (each once, by its key).
  bool add_component(std::shared_ptr<component::Component> c, const std::string& display,
                     const std::string& key, FileId& used) {
    for (const auto& t : c->tasks)  // the names its tasks' components take (clashing_refs)
      if (auto it = renames_.find(t.key); it != renames_.end()) t.component->name = it->second;
    std::vector<std::pair<SourceRange, FileId>> uses;  // the graph's pipeline calls them
    if (c->graph) {  // and the op that writes a value as a file (component.hpp)
      const std::string helper = std::string("pipec:") + component::kValueAsFileOp;
      FileId helper_file = kNoFile;
      if (auto it = loaded_.find(helper); it != loaded_.end()) {
        helper_file = it->second;
      } else {
        helper_file = sources_.add(std::string(component::kValueAsFileOp) + ".pipe (pipec)",
                                   component::value_as_file_source());
        if (!load(helper_file, helper, false, false)) return false;
      }
      uses.emplace_back(c->range, helper_file);
    }
    for (const auto& t : c->tasks) {
      FileId task_file = kNoFile;
      if (auto it = loaded_.find(t.key); it != loaded_.end()) {
        task_file = it->second;
      } else if (!add_component(t.component, t.url.empty() ? t.key : t.url, t.key, task_file)) {
        return false;
      } else {
        ref_keys_.emplace(task_file, t.key);
      }
      uses.emplace_back(t.ref_range, task_file);
    }
    FileId file = sources_.add(display + " (op)", component::declaration(*c));
    used = file;
    if (!load(file, key, false, false)) return false;
    out_.back().component = std::move(c);
    out_.back().uses = std::move(uses);
    return true;
  }

  // Reports `use a -> b -> a` when `key` is being loaded further up. Returns true then.
  bool in_cycle(const std::string& key, const std::string& display, SourceRange at) {
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i].first != key) continue;
      std::string path;
      for (std::size_t k = i; k < stack_.size(); ++k) path += stack_[k].second + " -> ";
      diags_.error(at, fmt::format("files use each other in a cycle: {}{}", path, display));
      return true;
    }
    return false;
  }

  SourceManager& sources_;
  Diagnostics& diags_;
  const Host& host_;
  std::vector<LoadedModule>& out_;
  std::map<std::string, FileId> loaded_;
  std::vector<std::pair<std::string, std::string>> stack_;  // key, display name
  std::map<std::string, std::string> renames_;  // by key: the op names clashing_refs() chose
  std::map<FileId, std::string> ref_keys_;      // the modules of components graph components call
};

}  // namespace

bool load_modules(SourceManager& sources, FileId main, Diagnostics& diags, const Host& host,
                  std::vector<LoadedModule>& out) {
  Loader loader(sources, diags, host, out);
  std::string name(sources.name(main));
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(name, ec);
  std::string key = ec ? name : canonical.generic_string();
  bool ok = loader.load(main, key, false, true);
  if (!ok || diags.has_errors()) return ok;
  // A component a graph component calls whose op name another op has: loaded again, the
  // graph's op renamed (the files are read again; nothing was reported the first time).
  auto renames = loader.clashing_refs();
  if (renames.empty()) return true;
  out.clear();
  Loader again(sources, diags, host, out, std::move(renames));
  return again.load(main, key, false, true);
}

}  // namespace pipec::sema
