// check_program(): every semantic check of a program, in passes that stop between
// them (load, ops, pipeline, graph) and report everything they find within one.
// Expects nothing of the input. Guarantees, when it returns a Program: every name
// resolves, every value has the type its use declares (ints widened to floats),
// constraints hold on defaults, the step graph is acyclic and every step, op and
// pipeline name is a distinct DNS-1123 label once sanitised.
// The checker's parts live in the check_*.cpp files that checker.hpp lists.
#include "compiler/sema/check.hpp"

#include <fmt/format.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "rules/names.hpp"
#include "compiler/sema/checker.hpp"

namespace pipec::sema {

namespace detail {

std::shared_ptr<Program> Checker::run(FileId main) {
  if (!load_modules(sources_, main, diags_, host_, modules_)) return nullptr;
  collect_ops();
  if (diags_.has_errors()) return nullptr;
  const ast::PipelineDecl* pipeline = check_pipelines(main);
  if (!pipeline) return nullptr;
  check_pipeline(*pipeline);
  check_workspace_users();
  if (diags_.has_errors()) return nullptr;
  if (!check_graph(step_graph(), diags_)) return nullptr;
  return std::make_shared<Program>(std::move(program_));
}

// The steps that mount the run's workspace (a container op's "workspace" volume, a training
// op's `workspace` argument), in the pipeline built and those it calls: the pipeline built
// must declare it (settings of a called pipeline do not apply), and a training step's
// mount path is a literal (whether the job mounts the run's claim is fixed at build).
void Checker::check_workspace_users() {
  const bool declared = program_.settings.workspace.has_value();
  auto visit = [&](auto&& self, const std::vector<Stmt>& body) -> void {
    for (const auto& s : body) {
      self(self, s.then_body);
      self(self, s.else_body);
      self(self, s.body);
      if (s.kind != Stmt::Kind::Step) continue;
      auto op = program_.ops.find(s.op);
      if (op == program_.ops.end()) continue;
      bool asks = false;
      if (op->second.container)
        for (const auto& v : op->second.container->volumes)
          asks = asks || v.kind == ir::ContainerOp::Volume::Kind::Workspace;
      for (const auto& [name, v] : s.args) {
        if (name != "workspace" || op->second.kind == ir::OpKind::Container || op->second.kind == ir::OpKind::Pipeline)
          continue;
        if (!v.is_literal())
          diags_.error(v.range, fmt::format("'workspace' of {} must be a literal mount path (whether the job "
                                            "mounts the run's workspace is decided when the workflow is built)",
                                            s.op));
        else asks = asks || !ir::literal_text(v.literal).empty();
      }
      if (asks && !declared)
        diags_.error(s.range, fmt::format("step '{}' mounts the run's workspace, but pipeline '{}' (the one built) "
                                          "declares none: add settings {{ workspace \"10Gi\" }}",
                                          s.name, program_.name));
    }
  };
  visit(visit, program_.body);
  visit(visit, program_.finally_body);
  for (const auto& callee : program_.callees) visit(visit, callee.body);
}

// The graph the cycle check walks. A dependency that crosses a loop's boundary is the
// loop's (Argo runs a loop as one task that ends when every iteration has): A -> B
// becomes (the outermost loop around A that is not around B, else A) -> (the
// outermost loop around B that is not around A, else B). So a step after a loop
// whose body runs after that step is a cycle through the loop, reported as `for VAR`.
StepGraph Checker::step_graph() {
  StepGraph graph;
  const auto steps = static_cast<std::uint32_t>(steps_.size());
  graph.steps.reserve(steps);
  for (const auto& entry : steps_)
    graph.steps.push_back(
        {entry.decl->name.name, entry.decl->name.range, entry.first_dep, entry.dep_count});
  std::vector<std::vector<int>> chains(steps);  // each step's loops, outermost first
  bool crossing = false;
  for (std::uint32_t i = 0; i < steps; ++i) {
    for (int scope : steps_[i].scopes)
      if (scope_kinds_[scope] == ScopeKind::Loop) chains[i].push_back(scope);
    if (!chains[i].empty()) crossing = true;
  }
  if (!crossing) {
    graph.deps = std::move(edges_);
    return graph;
  }
  std::unordered_map<int, std::uint32_t> loop_node;  // loop scope -> node index
  auto node_of = [&](int scope) {
    auto [it, added] = loop_node.emplace(scope, static_cast<std::uint32_t>(graph.steps.size()));
    if (added) {
      const ast::ForStmt* loop = scope_loops_.at(scope);
      graph.steps.push_back({loop_labels_.emplace_back("for " + loop->var.name),
                             loop->var.range, 0, 0});
    }
    return it->second;
  };
  std::vector<std::vector<std::uint32_t>> adjacent(steps);
  for (std::uint32_t i = 0; i < steps; ++i) {
    const auto& entry = steps_[i];
    for (std::uint32_t k = 0; k < entry.dep_count; ++k) {
      std::uint32_t j = edges_[entry.first_dep + k];
      const auto& a = chains[i];
      const auto& b = chains[j];
      std::size_t common = 0;
      while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
      std::uint32_t from = common < a.size() ? node_of(a[common]) : i;
      std::uint32_t to = common < b.size() ? node_of(b[common]) : j;
      if (adjacent.size() < graph.steps.size()) adjacent.resize(graph.steps.size());
      adjacent[from].push_back(to);
    }
  }
  adjacent.resize(graph.steps.size());
  for (std::size_t n = 0; n < adjacent.size(); ++n) {
    graph.steps[n].first_dep = static_cast<std::uint32_t>(graph.deps.size());
    graph.steps[n].dep_count = static_cast<std::uint32_t>(adjacent[n].size());
    graph.deps.insert(graph.deps.end(), adjacent[n].begin(), adjacent[n].end());
  }
  return graph;
}

// Where an op is declared, for a message: a component's op at its `name:` in the YAML (the
// op's text is generated, in no file an editor opens), with the `use` that loaded it.
void Checker::note_op_place(const LoadedModule& m, SourceRange op_range, bool error, const std::string& message) {
  SourceRange at = m.component ? m.component->range : op_range;
  if (error) diags_.error(at, message);
  else diags_.note(at, message);
  if (!m.component) return;
  for (const auto& other : modules_)
    for (const auto& [use, file] : other.uses)
      if (file == m.file) {
        diags_.note(use, "the component is used here");
        return;
      }
}

void Checker::collect_ops() {
  DnsNames dns_names;
  std::map<std::string, const LoadedModule*, std::less<>> declared_in;  // each op's module
  for (const auto& m : modules_) {
    for (const auto& decl : m.module.decls) {
      const auto* op = boost::get<ast::OpDecl>(&decl.get());
      if (!op) continue;
      if (symbols_) index_op(*op);
      if (auto it = program_.ops.find(op->name.name); it != program_.ops.end()) {
        const LoadedModule* first = declared_in.count(op->name.name) ? declared_in.at(op->name.name) : nullptr;
        std::string what = m.component || (first && first->component)
                               ? " (a component's op is named after its 'name:'; rename one of them)"
                               : "";
        note_op_place(m, op->name.range, true, fmt::format("duplicate op '{}'{}", op->name.name, what));
        if (first) note_op_place(*first, it->second.range, false, "previous declaration here");
        else diags_.note(it->second.range, "previous declaration here");
        continue;
      }
      declared_in.emplace(op->name.name, &m);
      OpInfo info = check_op(*op, m);
      if (info.kind == ir::OpKind::Container) check_dns_name(op->name, "op", dns_names);
      program_.ops.emplace(op->name.name, std::move(info));
    }
  }
}

OpInfo Checker::check_op(const ast::OpDecl& op, const LoadedModule& m) {
  OpInfo info;
  info.name = op.name.name;
  info.range = op.name.range;
  std::map<std::string, SourceRange> seen;
  for (const auto& p : op.params) {
    if (!declare(seen, p.name, "parameter")) continue;
    ir::OpParam param;
    param.name = p.name.name;
    param.doc = p.doc;
    auto type = resolve_type(p.type);
    if (type && !visual_param_ok(p.type, *type)) type.reset();
    if (type) param.type = *type;
    if (type && type->kind == TypeKind::File && p.default_value) {
      diags_.error(range_of(*p.default_value), "a 'file' parameter has no default: a step passes it an "
                                                 "op's file output");
    } else if (p.default_value && type) {
      if (auto v = value(*p.default_value, Context::Default)) {
        if (check_assign(*v, *type, [&] { return fmt::format("default for '{}'", p.name.name); }))
          param.default_value = v->literal;
      }
    }
    info.params.push_back(std::move(param));
    info.param_ranges.push_back(p.name.range);
  }
  std::map<std::string, SourceRange> seen_outputs;
  for (const auto& o : op.outputs) {
    if (!declare(seen_outputs, o.name, "output")) continue;
    ir::OpOutput out;
    out.name = o.name.name;
    out.doc = o.doc;
    if (auto type = resolve_type(o.type)) out.type = *type;
    info.outputs.push_back(std::move(out));
  }
  if (!op.body && m.component) {
    info.component = m.component;
    component_sigs_.emplace(info.name, info);
    return info;
  }
  if (!op.body) {
    if (!m.is_stdlib) {
      diags_.error(op.name.range,
                   fmt::format("op '{}' has no body; give it one with at least 'image' (only "
                               "stdlib modules declare built-in ops)",
                               op.name.name));
    } else if (op.name.name == "mpi_job") {
      info.kind = ir::OpKind::MpiJob;
    } else if (op.name.name == "tf_job") {
      info.kind = ir::OpKind::TfJob;
    } else if (op.name.name == "pytorch_job") {
      info.kind = ir::OpKind::PyTorchJob;
    } else if (op.name.name == "train_job") {
      info.kind = ir::OpKind::TrainJob;
    } else {
      diags_.error(op.name.range, fmt::format("unknown built-in op '{}'", op.name.name));
    }
    return info;
  }
  info.container = check_body(op, info);
  return info;
}

void Checker::check_pipeline(const ast::PipelineDecl& p) {
  program_.name = p.name.name;
  program_.range = p.name.range;
  (void)dns_name_ok(p.name.name, p.name.range, "pipeline");
  // Top-level declarations first: params, description, finally.
  const ast::FinallyStmt* finally = nullptr;
  for (const auto& s : p.body.statements) {
    if (const auto* d = boost::get<ast::Description>(&s.get())) {
      if (description_seen_) {
        diags_.error(d->range, "duplicate description");
      } else if (!d->text.is_plain()) {
        diags_.error(d->text.range, "the description must be a plain string (no '${...}')");
      }
      description_seen_ = true;
      program_.description = d->text.text();
    } else if (const auto* param = boost::get<x3::forward_ast<ast::ParamDecl>>(&s.get())) {
      check_param(param->get());
    } else if (const auto* set = boost::get<x3::forward_ast<ast::SettingsStmt>>(&s.get())) {
      if (settings_seen_) diags_.error(set->get().range, "a pipeline has only one 'settings' block");
      settings_seen_ = true;
      check_settings(set->get());
      if (!root_)
        diags_.warning(set->get().range,
                       fmt::format("the settings of pipeline '{}' apply only when it is built; "
                                   "called as a step, it runs with the settings of the pipeline built",
                                   p.name.name));
    } else if (const auto* f = boost::get<x3::forward_ast<ast::FinallyStmt>>(&s.get())) {
      if (!root_) {
        diags_.error(f->get().range,
                     fmt::format("pipeline '{}' is called as a step, so it cannot have 'finally' "
                                 "(an exit handler runs at the end of the whole run); move the "
                                 "steps to the 'finally' of the pipeline built",
                                 p.name.name));
        continue;
      }
      if (finally) {
        diags_.error(f->get().range, "a pipeline has only one 'finally' block");
        diags_.note(finally->range, "first 'finally' here");
      }
      finally = &f->get();
    }
  }
  // Most steps are usually at the top level; sizing the tables for them up front
  // saves rehashing them as they grow.
  steps_.reserve(p.body.statements.size());
  step_ids_.reserve(p.body.statements.size());
  step_dns_.reserve(p.body.statements.size());
  collect_steps(p.body.statements, {}, true);
  program_.body = statements(p.body.statements);
  check_outputs(p);
  if (finally) {
    scope_path_ = {finally_scope_};
    program_.finally_body = statements(finally->body.statements);
    scope_path_.clear();
  }
}

}  // namespace detail

std::shared_ptr<Program> check_program(SourceManager& sources, FileId main, Diagnostics& diags, const Host& host,
                                       std::string_view pipeline) {
  detail::Checker checker(sources, diags, host);
  checker.choose(std::string(pipeline));
  return checker.run(main);
}

}  // namespace pipec::sema
