// The symbol table (symbols.hpp): the checker records each declaration and each name it
// resolves while it checks, so the table says what check_program() decided and nothing
// else. index() runs the same passes with nothing reported.
#include "compiler/sema/symbols.hpp"

#include <algorithm>
#include <tuple>

#include "compiler/sema/checker.hpp"

namespace pipec::sema {

const char* kind_name(Symbol::Kind kind) {
  switch (kind) {
    case Symbol::Kind::Parameter:
      return "parameter";
    case Symbol::Kind::Op:
      return "op";
    case Symbol::Kind::OpParameter:
      return "op parameter";
    case Symbol::Kind::Output:
      return "output";
    case Symbol::Kind::Step:
      return "step";
    case Symbol::Kind::LoopVariable:
      return "loop variable";
  }
  return "";
}

std::optional<std::size_t> SymbolTable::at(FileId file, std::uint32_t offset) const {
  for (const auto& [range, symbol] : refs)
    if (range.file == file && range.begin <= offset && offset <= range.end) return symbol;
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const auto& r = symbols[i].range;
    if (r.file == file && r.begin <= offset && offset <= r.end) return i;
  }
  return std::nullopt;
}

SymbolTable index_program(SourceManager& sources, FileId main, const Host& host) {
  SymbolTable table;
  table.main = main;
  Diagnostics quiet;
  detail::Checker checker(sources, quiet, host);
  checker.index(main, table);
  return table;
}

namespace detail {

namespace {

// A type as the source writes it: `map<list<string>>`.
std::string type_text(const ast::TypeExpr& t) {
  std::string s = t.name.name;
  if (!t.args.empty()) {
    s += "<";
    for (std::size_t i = 0; i < t.args.size(); ++i) s += (i ? ", " : "") + type_text(t.args[i]);
    s += ">";
  }
  return s;
}

}  // namespace

void Checker::index(FileId main, SymbolTable& table) {
  symbols_ = &table;
  // A `use` that failed to load leaves the rest loaded: index what there is.
  (void)load_modules(sources_, main, diags_, host_, modules_);
  auto m = std::find_if(modules_.begin(), modules_.end(),
                        [](const LoadedModule& x) { return x.is_main; });
  if (m == modules_.end()) return;
  table.loaded = true;
  for (const auto& [range, file] : m->uses) {
    FileId used = file;  // not a structured binding: clang 14 cannot capture one
    bool stdlib = std::any_of(modules_.begin(), modules_.end(),
                              [&](const LoadedModule& x) { return x.file == used && x.is_stdlib; });
    table.uses.push_back({range, used, stdlib});
  }
  collect_ops();
  if (const ast::PipelineDecl* p = check_pipelines(main)) check_pipeline(*p);
}

std::size_t Checker::declare_symbol(Symbol::Kind kind, const ast::Identifier& id, std::string type,
                                    std::string doc, std::string op) {
  symbols_->symbols.push_back(
      {kind, id.name, std::move(type), std::move(doc), std::move(op), id.range});
  return symbols_->symbols.size() - 1;
}

namespace {

// `NAME(p: T, ...) -> (o: T, ...)` as the source writes the types: an op's or a pipeline's.
std::string signature(std::string head, const std::vector<std::pair<const ast::Identifier*, const ast::TypeExpr*>>& params,
                      const std::vector<ast::OpOutputDecl>& outputs) {
  head += "(";
  for (std::size_t i = 0; i < params.size(); ++i)
    head += (i ? ", " : "") + params[i].first->name + ": " + type_text(*params[i].second);
  head += ")";
  if (!outputs.empty()) {
    head += " -> (";
    for (std::size_t i = 0; i < outputs.size(); ++i)
      head += (i ? ", " : "") + outputs[i].name.name + ": " + type_text(outputs[i].type);
    head += ")";
  }
  return head;
}

}  // namespace

// An op or a pipeline, as steps call it; returns whether it is the first of its name (the
// one steps call: collect_ops() keeps it), whose members uses resolve to.
bool Checker::index_callable(const ast::Identifier& name, std::string sig, const std::string& doc) {
  bool first = !symbols_->ops.count(name.name);
  std::size_t id = declare_symbol(Symbol::Kind::Op, name, std::move(sig), doc, "");
  if (first) symbols_->ops.emplace(name.name, id);
  return first;
}

void Checker::index_outputs(const ast::Identifier& owner, const std::vector<ast::OpOutputDecl>& outputs, bool first) {
  for (const auto& o : outputs) {
    std::size_t id = declare_symbol(Symbol::Kind::Output, o.name, type_text(o.type), o.doc, owner.name);
    if (first) members_.emplace(std::make_tuple(Symbol::Kind::Output, owner.name, o.name.name), id);
  }
}

void Checker::index_op(const ast::OpDecl& op) {
  std::vector<std::pair<const ast::Identifier*, const ast::TypeExpr*>> params;
  for (const auto& p : op.params) params.emplace_back(&p.name, &p.type);
  bool first = index_callable(op.name, signature(op.name.name, params, op.outputs), op.doc);
  for (const auto& p : op.params) {
    std::size_t id = declare_symbol(Symbol::Kind::OpParameter, p.name, type_text(p.type), p.doc, op.name.name);
    if (first) index_argument(op.name, p.name, id);
  }
  index_outputs(op.name, op.outputs, first);
}

// A parameter a call of `callee` names in its arguments: the symbol the argument's name
// means, and one the call's completion offers.
void Checker::index_argument(const ast::Identifier& callee, const ast::Identifier& param, std::size_t id) {
  members_.emplace(std::make_tuple(Symbol::Kind::OpParameter, callee.name, param.name), id);
  symbols_->arguments[callee.name].push_back(id);
}

// A pipeline is called as an op is: its symbol is an op's, its signature its params and
// outputs (`pipeline train_eval(lr: float) -> (model: file)`). Its params are declared
// here, for every pipeline (also one no pipeline calls yet), as the pipeline's own
// parameters: what its callers' arguments of that name mean, and what index_param() finds
// when the pipeline is checked.
void Checker::index_pipeline(const ast::PipelineDecl& p) {
  std::vector<const ast::ParamDecl*> decls;
  std::vector<std::pair<const ast::Identifier*, const ast::TypeExpr*>> params;
  for (const auto& s : p.body.statements)
    if (const auto* param = boost::get<x3::forward_ast<ast::ParamDecl>>(&s.get())) {
      decls.push_back(&param->get());
      params.emplace_back(&param->get().name, &param->get().type);
    }
  bool first = index_callable(p.name, signature("pipeline " + p.name.name, params, p.outputs), p.doc);
  for (const auto* param : decls) {
    std::size_t id = declare_symbol(Symbol::Kind::Parameter, param->name, type_text(param->type), param->doc, "");
    if (first) index_argument(p.name, param->name, id);
  }
  index_outputs(p.name, p.outputs, first);
}

void Checker::index_param(const ast::ParamDecl& p) {
  // The symbol index_pipeline() declared for it, when this pipeline is the first of its name.
  auto it = members_.find(std::make_tuple(Symbol::Kind::OpParameter, program_.name, p.name.name));
  const bool declared = it != members_.end() && symbols_->symbols[it->second].range.file == p.name.range.file &&
                        symbols_->symbols[it->second].range.begin == p.name.range.begin;
  std::size_t id =
      declared ? it->second : declare_symbol(Symbol::Kind::Parameter, p.name, type_text(p.type), p.doc, "");
  symbols_->params.emplace(p.name.name, id);
}

void Checker::index_step(const ast::StepDecl& s) {
  std::size_t id = declare_symbol(Symbol::Kind::Step, s.name, s.op.name, "", "");
  symbols_->steps.emplace(s.name.name, id);
}

void Checker::use_symbol(SourceRange at,
                         const std::map<std::string, std::size_t, std::less<>>& names,
                         std::string_view name) {
  if (auto it = names.find(name); it != names.end()) symbols_->refs.emplace_back(at, it->second);
}

void Checker::use_member(SourceRange at, Symbol::Kind kind, const std::string& op,
                         const std::string& name) {
  if (auto it = members_.find(std::make_tuple(kind, op, name)); it != members_.end())
    symbols_->refs.emplace_back(at, it->second);
}

}  // namespace detail

}  // namespace pipec::sema
