// invocation_of(): what a container op's container receives (ir/invocation.hpp), decided
// once here for the Argo and KFP v2 writers and the local run.
#include "compiler/lower/plan.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/shell/shell_script.hpp"
#include "rules/names.hpp"

namespace pipec::lower {

using namespace pipec::ir;  // the vocabulary lowering speaks

namespace {

// A reference to op parameter `r` as a piece: its value, or a `file` parameter's path.
Piece piece_of(const Ref& r, const ContainerOp& op) {
  for (const auto& p : op.params)
    if (p.name == r.name && p.type.kind == TypeKind::File) return {Piece::Kind::File, p.path, p.name};
  return {Piece::Kind::Param, {}, r.name};
}

Word word_of(const Value& v, const ContainerOp& op) {
  Word w;
  w.range = v.range;
  if (const Ref* r = whole_ref(v)) {
    w.pieces.push_back(piece_of(*r, op));
    return w;
  }
  switch (v.kind) {
    case Value::Kind::Literal: w.pieces.push_back({Piece::Kind::Text, literal_text(v.literal), {}}); break;
    case Value::Kind::Interpolation:
      for (const auto& part : v.parts)
        w.pieces.push_back(part.ref ? piece_of(*part.ref, op) : Piece{Piece::Kind::Text, part.text, {}, part.kfp_v2});
      break;
    case Value::Kind::Ref: break;  // a whole ref, above
    case Value::Kind::List:
    case Value::Kind::Map: w.invalid = true; break;
  }
  return w;
}

}  // namespace

Invocation invocation_of(const ContainerOp& op, Diagnostics& diags) {
  Invocation call;
  call.image = word_of(op.image, op);
  call.shell = op.shell;
  if (op.shell) {
    // The script is the op's own text; each `${p}` an environment variable placed by the
    // quoting context it stands in (compiler/shell).
    call.script_range = op.range;
    std::vector<Part> parts = shell::command_parts(op.command, call.script_range);
    std::vector<std::string> used;
    auto variable = [&](const Ref& r) {
      if (std::find(used.begin(), used.end(), r.name) == used.end()) {
        used.push_back(r.name);
        call.script_values.push_back(piece_of(r, op));
      }
      return shell::script_variable(r.name);
    };
    (void)shell::write_script(parts, variable, call.script_range, call.script, diags);
    call.name = to_dns1123(op.name);
  } else {
    for (const auto& w : op.command) call.command.push_back(word_of(w, op));
  }
  for (const auto& w : op.args) call.args.push_back(word_of(w, op));
  for (const auto& [name, value] : op.env) call.env.emplace_back(name, word_of(value, op));
  for (const auto& m : op.metrics) call.metrics.push_back(word_of(m, op));
  for (const auto& p : op.params)
    if (p.type.kind == TypeKind::File) call.inputs.push_back({p.name, p.path, true, p.kfp_reads});
  for (const auto& out : op.outputs)
    call.outputs.push_back({out.name, out.path, out.type.kind == TypeKind::File, out.kfp_writes});
  return call;
}

}  // namespace pipec::lower
