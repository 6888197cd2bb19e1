// print_ast(): a stable text form of the tree. Strings are shown decoded (after
// escapes and dedent), with references as ${...}.
#include "compiler/syntax/ast_printer.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace pipec::syntax {

namespace {

namespace x3 = boost::spirit::x3;

std::string quote(const std::string& text) { return nlohmann::json(text).dump(); }

class Printer {
 public:
  std::string out;

  void line(int depth, const std::string& text) {
    out.append(static_cast<std::size_t>(depth) * 2, ' ');
    out += text;
    out += '\n';
  }

  std::string expr(const ast::Expression& e) {
    return boost::apply_visitor([&](const auto& n) { return this->node(n); }, e.get());
  }

  std::string node(const ast::StringLit& s) {
    std::string text = "(string";
    for (const auto& p : s.parts) {
      text += ' ';
      if (!p.is_ref) {
        text += quote(p.text);
      } else {
        text += "${" + p.head.name + (p.field ? "." + p.field->name : "") + "}";
      }
    }
    return text + ")";
  }
  std::string node(const ast::NumberLit& n) { return "(number " + n.text + ")"; }
  std::string node(const ast::BoolLit& b) { return b.value ? "true" : "false"; }
  std::string node(const ast::Reference& r) {
    return "(ref " + r.head.name + (r.field ? "." + r.field->name : "") + ")";
  }
  std::string node(const x3::forward_ast<ast::ListExpr>& f) {
    std::string text = "(list";
    for (const auto& e : f.get().items) text += " " + expr(e);
    return text + ")";
  }
  std::string node(const x3::forward_ast<ast::MapExpr>& f) {
    std::string text = "(map";
    for (const auto& e : f.get().entries) {
      const auto* id = boost::get<ast::Identifier>(&e.key.get());
      std::string key = id ? id->name : quote(boost::get<ast::StringLit>(e.key.get()).text());
      text += " " + key + ": " + expr(e.value);
    }
    return text + ")";
  }
  // One-operand levels are the operand itself.
  std::string node(const x3::forward_ast<ast::OrExpr>& f) { return chain("or", f.get()); }
  std::string node(const x3::forward_ast<ast::AndExpr>& f) { return chain("and", f.get()); }
  std::string node(const x3::forward_ast<ast::NotExpr>& f) {
    return "(not " + expr(f.get().operand) + ")";
  }
  std::string node(const x3::forward_ast<ast::CompareExpr>& f) {
    const auto& c = f.get();
    if (!c.tail) return expr(c.lhs);
    return "(" + c.tail->op + " " + expr(c.lhs) + " " + expr(c.tail->rhs) + ")";
  }
  template <class T>
  std::string chain(const char* op, const T& e) {
    if (e.rest.empty()) return expr(e.first);
    std::string text = std::string("(") + op + " " + expr(e.first);
    for (const auto& r : e.rest) text += " " + expr(r);
    return text + ")";
  }

  std::string type(const ast::TypeExpr& t) {
    if (t.args.empty()) return t.name.name;
    std::string text = t.name.name + "<";
    for (std::size_t i = 0; i < t.args.size(); ++i) text += (i ? ", " : "") + type(t.args[i]);
    return text + ">";
  }

  void block(int depth, const ast::Block& b) {
    for (const auto& s : b.statements) statement(depth, s);
  }

  void statement(int depth, const ast::Statement& s) {
    if (const auto* d = boost::get<ast::Description>(&s.get())) {
      line(depth, "(description " + node(d->text) + ")");
    } else if (const auto* f = boost::get<x3::forward_ast<ast::ParamDecl>>(&s.get())) {
      const ast::ParamDecl* p = &f->get();
      std::string text = "(param " + p->name.name + ": " + type(p->type);
      if (p->constraint) {
        text += " in " + expr(p->constraint->low);
        if (p->constraint->high) text += ".." + expr(*p->constraint->high);
      }
      if (p->default_value) text += " = " + expr(*p->default_value);
      line(depth, text + ")");
    } else if (const auto* st = boost::get<ast::StepDecl>(&s.get())) {
      std::string text = "(step " + st->name.name + " = " + st->op.name;
      if (!st->after.empty()) {
        text += " after";
        for (const auto& a : st->after) text += " " + a.step.name + (a.outcome ? "." + a.outcome->name : "");
      }
      if (st->allow_failure) text += " allow_failure";
      line(depth, text + ")");
      for (const auto& a : st->args)
        line(depth + 1, "(arg " + a.name.name + " " + expr(a.value) + ")");
    } else if (const auto* i = boost::get<x3::forward_ast<ast::IfStmt>>(&s.get())) {
      line(depth, "(if " + expr(i->get().condition) + ")");
      block(depth + 1, i->get().then_block);
      if (i->get().else_block) {
        line(depth, "(else)");
        block(depth + 1, *i->get().else_block);
      }
    } else if (const auto* f = boost::get<x3::forward_ast<ast::ForStmt>>(&s.get())) {
      line(depth, "(for " + f->get().var.name + " in " + expr(f->get().items) +
                      (f->get().limit ? " limit " + expr(*f->get().limit) : "") +
                      (f->get().max_failures ? " max_failures " + expr(*f->get().max_failures) : "") +
                      (f->get().min_success ? " min_success " + expr(*f->get().min_success) : "") + ")");
      block(depth + 1, f->get().body);
    } else if (const auto* fin = boost::get<x3::forward_ast<ast::FinallyStmt>>(&s.get())) {
      line(depth, "(finally)");
      block(depth + 1, fin->get().body);
    } else if (const auto* set = boost::get<x3::forward_ast<ast::SettingsStmt>>(&s.get())) {
      line(depth, "(settings)");
      for (const auto& f : set->get().body.fields)
        line(depth + 1, "(" + f.name.name + " " + expr(f.value) + ")");
    } else if (const auto* o = boost::get<x3::forward_ast<ast::OutputStmt>>(&s.get())) {
      line(depth, "(output " + o->get().name.name + " = " + expr(o->get().value) + ")");
    }
  }

  void top(const ast::TopDecl& d) {
    if (const auto* u = boost::get<ast::UseDecl>(&d.get())) {
      const auto* id = boost::get<ast::Identifier>(&u->target.get());
      line(0, "(use " +
                  (id ? id->name : quote(boost::get<ast::StringLit>(u->target.get()).text())) +
                  ")");
    } else if (const auto* op = boost::get<ast::OpDecl>(&d.get())) {
      line(0, std::string("(op ") + op->name.name + (op->body ? "" : " builtin") + ")");
      for (const auto& p : op->params)
        line(1, "(param " + p.name.name + ": " + type(p.type) +
                    (p.default_value ? " = " + expr(*p.default_value) : "") + ")");
      for (const auto& o : op->outputs)
        line(1, "(output " + o.name.name + ": " + type(o.type) + ")");
      if (op->body)
        for (const auto& f : op->body->fields)
          line(1, "(" + f.name.name + " " + expr(f.value) + ")");
    } else if (const auto* p = boost::get<ast::PipelineDecl>(&d.get())) {
      line(0, "(pipeline " + p->name.name + ")");
      for (const auto& o : p->outputs)
        line(1, "(output " + o.name.name + ": " + type(o.type) + ")");
      block(1, p->body);
    }
  }
};

}  // namespace

std::string print_ast(const ast::Module& module) {
  Printer printer;
  for (const auto& d : module.decls) printer.top(d);
  return printer.out;
}

}  // namespace pipec::syntax
