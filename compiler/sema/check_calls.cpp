// Pipelines as steps: which pipeline a file builds, the pipelines it calls (in the order
// they are checked: callees first), calls that come back to their caller, each called
// pipeline's signature (its params and `->` outputs, as an op's), and `output` statements.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/sema/checker.hpp"

namespace pipec::sema::detail {

namespace {

// Every step of `body` (in branches, loops and `finally` too), in source order.
void steps_of(const std::vector<ast::Statement>& body, std::vector<const ast::StepDecl*>& out) {
  for (const auto& s : body) {
    if (const auto* step = boost::get<ast::StepDecl>(&s.get())) {
      out.push_back(step);
    } else if (const auto* f = boost::get<x3::forward_ast<ast::IfStmt>>(&s.get())) {
      steps_of(f->get().then_block.statements, out);
      if (f->get().else_block) steps_of(f->get().else_block->statements, out);
    } else if (const auto* l = boost::get<x3::forward_ast<ast::ForStmt>>(&s.get())) {
      steps_of(l->get().body.statements, out);
    } else if (const auto* fin = boost::get<x3::forward_ast<ast::FinallyStmt>>(&s.get())) {
      steps_of(fin->get().body.statements, out);
    }
  }
}

}  // namespace

// Finds every pipeline, reports calls that come back to their caller, picks the one to
// build and checks, callees first, every pipeline it calls; each becomes an op
// (OpKind::Pipeline) its callers' steps are checked against. Returns the one to build,
// nullptr after an error that leaves none.
const ast::PipelineDecl* Checker::check_pipelines(FileId main) {
  struct Decl {
    const ast::PipelineDecl* decl = nullptr;
    bool main = false;
    std::vector<const ast::StepDecl*> calls;  // its steps that call a pipeline
  };
  std::map<std::string, Decl, std::less<>> decls;
  std::vector<std::string> order;  // declaration order
  for (const auto& m : modules_) {
    for (const auto& decl : m.module.decls) {
      const auto* p = boost::get<ast::PipelineDecl>(&decl.get());
      if (!p) continue;
      if (symbols_) index_pipeline(*p);
      if (auto it = decls.find(p->name.name); it != decls.end()) {
        diags_.error(p->name.range, fmt::format("duplicate pipeline '{}'", p->name.name));
        diags_.note(it->second.decl->name.range, "previous declaration here");
        continue;
      }
      decls.emplace(p->name.name, Decl{p, m.is_main, {}});
      order.push_back(p->name.name);
    }
  }
  std::set<std::string, std::less<>> called;  // by a pipeline of the main file
  for (auto& [name, d] : decls) {
    std::vector<const ast::StepDecl*> steps;
    steps_of(d.decl->body.statements, steps);
    for (const auto* s : steps) {
      // A name both an op and a pipeline have is the op's (as before pipelines could be
      // called): a step calls the op.
      if (!decls.count(s->op.name) || program_.ops.count(s->op.name)) continue;
      d.calls.push_back(s);
      if (d.main && s->op.name != name) called.insert(s->op.name);
    }
  }
  // Calls that come back: each reported once, at the call that closes the cycle.
  std::map<std::string, int, std::less<>> state;  // 1: on the path, 2: done
  std::vector<std::string> path;
  bool cycles = false;
  auto visit = [&](auto&& self, const std::string& name) -> void {
    state[name] = 1;
    path.push_back(name);
    for (const auto* call : decls.at(name).calls) {
      int st = state[call->op.name];
      if (st == 1) {
        auto from = std::find(path.begin(), path.end(), call->op.name);
        std::string chain;
        for (auto it = from; it != path.end(); ++it) chain += *it + " -> ";
        chain += call->op.name;
        diags_.error(call->op.range,
                     fmt::format("pipeline '{}' calls itself ({}); a pipeline cannot call "
                                 "itself, directly or through others",
                                 call->op.name, chain));
        cycles = true;
      } else if (st == 0) {
        self(self, call->op.name);
      }
    }
    path.pop_back();
    state[name] = 2;
  };
  for (const auto& name : order)
    if (!state[name]) visit(visit, name);
  if (cycles && !symbols_) return nullptr;
  // The pipeline built: the one of the main file that no other pipeline of it calls.
  std::vector<const ast::PipelineDecl*> roots;
  for (const auto& name : order) {
    const Decl& d = decls.at(name);
    if (!d.main || called.count(name)) continue;
    if (!wanted_.empty() && name != wanted_) continue;
    roots.push_back(d.decl);
  }
  if (!wanted_.empty() && roots.empty() && !diags_.has_errors()) {
    auto it = decls.find(wanted_);
    diags_.error(it == decls.end() ? SourceRange{main, 0, 0} : it->second.decl->name.range,
                 it == decls.end() || !it->second.main
                     ? fmt::format("'{}' declares no pipeline '{}'", sources_.name(main), wanted_)
                     : fmt::format("pipeline '{}' is called by another pipeline of '{}'; build "
                                   "the one that calls it",
                                   wanted_, sources_.name(main)));
    return nullptr;
  }
  if (roots.size() > 1) {
    std::vector<std::string> names;
    for (const auto* r : roots) names.push_back(r->name.name);
    diags_.error(roots[1]->name.range,
                 fmt::format("'{}' declares {} pipelines that no other pipeline calls ({}); "
                             "choose the one to build with --pipeline NAME",
                             sources_.name(main), roots.size(), join_quoted(names)));
    for (const auto* r : roots) diags_.note(r->name.range, fmt::format("'{}' declared here", r->name.name));
    if (!symbols_) return nullptr;
  }
  if (roots.empty()) {
    if (!diags_.has_errors())
      diags_.error(SourceRange{main, 0, 0},
                   fmt::format("'{}' declares no pipeline (e.g. pipeline NAME {{ ... }})",
                               sources_.name(main)));
    if (!symbols_) return nullptr;
  }
  // Callees first: the order of a depth-first walk from the root, each once.
  std::vector<const ast::PipelineDecl*> callees;
  std::set<std::string, std::less<>> seen;
  auto post = [&](auto&& self, const std::string& name) -> void {
    if (!seen.insert(name).second) return;
    for (const auto* call : decls.at(name).calls) self(self, call->op.name);
    if (name != roots.front()->name.name) callees.push_back(decls.at(name).decl);
  };
  if (!roots.empty()) post(post, roots.front()->name.name);
  if (symbols_)  // the editor indexes every pipeline, called or not
    for (const auto& name : order)
      if (!seen.count(name) && (roots.empty() || name != roots.front()->name.name))
        callees.push_back(decls.at(name).decl);
  for (const auto* callee : callees) {
    root_ = false;
    reset_pipeline();
    check_pipeline(*callee);
    if (!diags_.has_errors() && !symbols_) (void)check_graph(step_graph(), diags_);
    add_callee(*callee);
  }
  root_ = true;
  reset_pipeline();
  return roots.empty() ? nullptr : roots.front();
}

// The state one pipeline's check leaves, cleared for the next.
void Checker::reset_pipeline() {
  static_cast<PipelineDef&>(program_) = PipelineDef{};
  description_seen_ = false;
  settings_seen_ = false;
  params_.clear();
  param_types_.clear();
  steps_.clear();
  step_ids_.clear();
  next_step_ = 0;
  step_dns_.clear();
  edges_.clear();
  scope_kinds_.clear();
  loop_scopes_.clear();
  scope_loops_.clear();
  loop_labels_.clear();
  if_scopes_.clear();
  finally_scope_ = -1;
  scope_path_.clear();
  loop_vars_.clear();
  inherited_.clear();
  uses_ = nullptr;
  if (symbols_) {
    symbols_->steps.clear();
    symbols_->params.clear();
  }
}

// A checked called pipeline: kept for lowering, and an op its callers' steps call.
void Checker::add_callee(const ast::PipelineDecl& p) {
  OpInfo info;
  info.name = p.name.name;
  info.kind = ir::OpKind::Pipeline;
  info.range = p.name.range;
  for (const auto& param : program_.params) {
    ir::OpParam op_param;
    op_param.name = param.name;
    op_param.type = param.type;
    op_param.default_value = param.default_value;
    op_param.doc = param.doc;
    info.params.push_back(std::move(op_param));
    info.param_ranges.push_back(param.range);
  }
  for (const auto& o : p.outputs) {
    ir::OpOutput out;
    out.name = o.name.name;
    out.doc = o.doc;
    if (auto type = resolve_type(o.type)) out.type = *type;
    info.outputs.push_back(std::move(out));
  }
  callee_params_[info.name] = program_.params;
  program_.ops.emplace(info.name, std::move(info));
  program_.callees.push_back(std::move(static_cast<PipelineDef&>(program_)));
}

// `-> (NAME: TYPE, ...)` and the `output NAME = STEP.OUTPUT` statements that give them:
// each output given once, by a step output of its type (fan-in: a list per loop crossed).
void Checker::check_outputs(const ast::PipelineDecl& p) {
  std::map<std::string, SourceRange> declared;
  std::map<std::string, const ast::OutputStmt*> given;
  for (const auto& o : p.outputs) declare(declared, o.name, "output");
  for (const auto& s : p.body.statements) {
    const auto* f = boost::get<x3::forward_ast<ast::OutputStmt>>(&s.get());
    if (!f) continue;
    const ast::OutputStmt& o = f->get();
    auto decl = std::find_if(p.outputs.begin(), p.outputs.end(),
                             [&](const ast::OpOutputDecl& d) { return d.name.name == o.name.name; });
    if (decl == p.outputs.end()) {
      diags_.error(o.name.range,
                   p.outputs.empty()
                       ? fmt::format("pipeline '{}' declares no outputs; declare '{}' in its "
                                     "signature: pipeline {} -> ({}: TYPE) {{ ... }}",
                                     p.name.name, o.name.name, p.name.name, o.name.name)
                       : fmt::format("pipeline '{}' declares no output '{}'", p.name.name,
                                     o.name.name));
      continue;
    }
    if (auto [it, added] = given.emplace(o.name.name, &o); !added) {
      diags_.error(o.name.range, fmt::format("output '{}' is given twice", o.name.name));
      diags_.note(it->second->name.range, "first given here");
      continue;
    }
    auto v = value(o.value, Context::Arg);
    if (!v) continue;
    const ir::Ref* r = ir::whole_ref(*v);
    if (!r || r->kind != ir::Ref::Kind::StepOutput) {
      diags_.error(v->range, fmt::format("output '{}' must be a step's output (e.g. "
                                         "'output {} = STEP.OUTPUT')",
                                         o.name.name, o.name.name));
      continue;
    }
    auto type = resolve_type(decl->type);
    if (!type || !check_assign(*v, *type, [&] { return fmt::format("output '{}'", o.name.name); }))
      continue;
    ir::PipelineOutput out;
    out.name = o.name.name;
    out.type = *type;
    out.ref = *r;
    out.doc = decl->doc;
    out.range = o.name.range;
    program_.outputs.push_back(std::move(out));
  }
  // In signature order; each one given.
  std::vector<ir::PipelineOutput> ordered;
  for (const auto& d : p.outputs) {
    auto it = std::find_if(program_.outputs.begin(), program_.outputs.end(),
                           [&](const ir::PipelineOutput& o) { return o.name == d.name.name; });
    if (it != program_.outputs.end()) {
      ordered.push_back(std::move(*it));
    } else if (!given.count(d.name.name)) {
      diags_.error(d.name.range, fmt::format("output '{}' of pipeline '{}' is never given; add "
                                             "'output {} = STEP.OUTPUT' to its body",
                                             d.name.name, p.name.name, d.name.name));
    }
  }
  program_.outputs = std::move(ordered);
}

}  // namespace pipec::sema::detail
