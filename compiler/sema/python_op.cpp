// lower_python_op(): a Python function op becomes a container op. Expects an op whose body
// sema is checking (check.cpp calls this after the common fields). Guarantees: the command
// holds the function's source and a fixed wrapper program as literal argv words and each
// argument as one whole-value word, so no value is ever part of the program; the function
// parses and its signature matches the op's wherever the checking interpreter exists.
#include "compiler/sema/python_op.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/syntax/raw_block.hpp"
#include "input/json.hpp"
#include "input/limits.hpp"


namespace pipec::sema {

namespace ast = syntax::ast;
namespace x3 = boost::spirit::x3;
using nlohmann::json;

namespace {

// Runs in the op's container as `python3 -u -c WRAPPER SOURCE SPEC VALUE...`: installs
// the missing `packages` (unless PIPEC_PYTHON_INSTALL=0, which a local run sets; then a
// missing one is an error naming it), turns each value's text into its declared type,
// calls the function by keyword, and writes what it returns to the outputs' files.
constexpr std::string_view kWrapper = R"PY(import json, os, sys


def _pipec_run():
    source, spec, texts = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
    if spec.get("encoding") == "base64":
        import base64
        source = base64.b64decode(source).decode("utf-8")
    op = spec["op"]

    def fail(message):
        sys.stderr.write("pipec: op '%s': %s\n" % (op, message))
        sys.exit(1)

    def absent():
        try:
            from importlib import metadata
        except ImportError:
            return []
        missing = []
        for requirement, name in spec["packages"]:
            try:
                metadata.distribution(name)
            except metadata.PackageNotFoundError:
                missing.append((requirement, name))
        return missing

    missing = absent()
    if missing and os.environ.get("PIPEC_PYTHON_INSTALL") != "0":
        import importlib, site, subprocess
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-warn-script-location"]
        pip += [requirement for requirement, _ in missing]
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
        if subprocess.call(pip, env=env) != 0:
            subprocess.call(pip + ["--user"], env=env)
            site.addsitedir(site.getusersitepackages())
        importlib.invalidate_caches()
        missing = absent()
    if missing:
        names = ", ".join("'%s'" % name for _, name in missing)
        how = ("a local run installs no packages: install it on this host"
               if os.environ.get("PIPEC_PYTHON_INSTALL") == "0" else "pip could not install it")
        fail("the Python package%s %s (in 'packages') %s not installed for %s (%s)"
             % ("s" if len(missing) > 1 else "", names, "are" if len(missing) > 1 else "is",
                sys.executable, how))

    def convert(kind, value, what):
        if kind in ("string", "file"):
            if isinstance(value, str):
                return value
        elif kind == "int":
            if isinstance(value, str):
                try:
                    return int(value)
                except ValueError:
                    try:
                        number = float(value)
                    except ValueError:
                        number = None
                    if number is not None and number.is_integer():
                        return int(number)
            elif isinstance(value, int) and not isinstance(value, bool):
                return value
            elif isinstance(value, float) and value.is_integer():
                return int(value)
        elif kind == "float":
            if isinstance(value, str):
                try:
                    return float(value)
                except ValueError:
                    pass
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
        elif kind == "bool":
            if isinstance(value, bool):
                return value
            if value in ("true", "True", "false", "False"):
                return value in ("true", "True")
        elif kind.startswith(("list<", "map<")):
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    pass
            item = kind[kind.index("<") + 1:-1]
            if kind.startswith("list<") and isinstance(value, list):
                return [convert(item, v, what) for v in value]
            if kind.startswith("map<") and isinstance(value, dict):
                return dict((k, convert(item, v, what)) for k, v in value.items())
        fail("%s cannot be read as %s: %r" % (what, kind, value))

    kwargs = {}
    for (name, kind), text in zip(spec["params"], texts):
        kwargs[name] = convert(kind, text, "the argument of '%s'" % name)

    import linecache, types
    filename = "<op %s>" % op
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType("pipec_op")
    module.__file__ = filename
    sys.modules["pipec_op"] = module
    exec("from typing import *", module.__dict__)
    exec(compile(source, filename, "exec"), module.__dict__)
    result = getattr(module, spec["function"])(**kwargs)

    outputs = spec["outputs"]
    if not outputs:
        return
    if hasattr(result, "_asdict"):
        fields = result._asdict()
        values = [fields[name] if name in fields else fail("the result has no field '%s'" % name)
                  for name, _, _ in outputs]
    elif len(outputs) == 1:
        values = [result]
    elif isinstance(result, dict):
        values = [result[name] if name in result else fail("the result has no key '%s'" % name)
                  for name, _, _ in outputs]
    elif isinstance(result, (tuple, list)) and len(result) == len(outputs):
        values = list(result)
    else:
        fail("the function returned %r; it must return %d values (%s)"
             % (result, len(outputs), ", ".join(name for name, _, _ in outputs)))

    def text(kind, value, what):
        if kind == "file":
            if isinstance(value, (bytes, bytearray)):
                return bytes(value)
            if isinstance(value, (str, os.PathLike)):
                with open(value, "rb") as f:
                    return f.read()
        elif kind == "string":
            if isinstance(value, str):
                return value.encode("utf-8")
        elif kind == "int":
            if not isinstance(value, (bool, float, str)):
                try:
                    import operator
                    return str(operator.index(value)).encode()
                except TypeError:
                    pass
        elif kind == "float":
            if not isinstance(value, (bool, str)):
                try:
                    return repr(float(value)).encode()
                except (TypeError, ValueError):
                    pass
        elif kind == "bool":
            if isinstance(value, bool) or type(value).__name__ == "bool_":
                return b"true" if value else b"false"
        else:
            try:
                return json.dumps(convert(kind, value, what), ensure_ascii=False,
                                  separators=(",", ":"), allow_nan=False).encode("utf-8")
            except (TypeError, ValueError):
                pass
        fail("%s must be %s, got %r" % (what, "a path or bytes" if kind == "file" else kind, value))

    for (name, kind, path), value in zip(outputs, values):
        data = text(kind, value, "output '%s'" % name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


try:
    _pipec_run()
except (SystemExit, KeyboardInterrupt):
    raise
except BaseException:
    # The traceback module reads the function's lines from linecache (the interpreter's
    # own printer would look for a file).
    import traceback
    traceback.print_exc()
    sys.exit(1)
)PY";

// Run at check time as `PYTHON -I -c CHECKER NAME` with the source on standard input:
// parses it (nothing of it runs) and prints the function's signature, or the syntax
// error, as JSON, with lines and byte columns of the source.
constexpr std::string_view kChecker = R"PY(import ast, json, sys

source = sys.stdin.buffer.read().decode("utf-8")
name = sys.argv[1]
lines = source.split("\n")


def emit(result):
    sys.stdout.write(json.dumps(result))
    sys.exit(0)


def byte_col(line, col):
    if 1 <= line <= len(lines):
        return len(lines[line - 1][:col].encode("utf-8"))
    return col


try:
    tree = ast.parse(source, "<python>")
except SyntaxError as e:
    line = e.lineno or 1
    col = byte_col(line, max((e.offset or 1) - 1, 0))
    emit({"syntax": e.msg, "line": line, "col": col})
except (RecursionError, MemoryError, ValueError) as e:
    emit({"syntax": "the source cannot be parsed: %s" % (str(e) or type(e).__name__), "line": 1, "col": 0})

SIMPLE = {"int": "int", "float": "float", "bool": "bool", "str": "string", "bytes": "bytes",
          "list": "list", "List": "list", "dict": "map", "Dict": "map", "Path": "path",
          "PathLike": "path", "None": "none", "NoneType": "none"}


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return head and head + "." + node.attr
    return None


def last(node):
    d = dotted(node)
    return d.rsplit(".", 1)[-1] if d else None


def args_of(node):
    s = node.slice
    if isinstance(s, ast.Index):  # Python 3.8
        s = s.value
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def kind(node):
    if isinstance(node, ast.Constant):
        if node.value is None:
            return "none"
        if isinstance(node.value, str):
            try:
                return kind(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return "?"
        return "?"
    if isinstance(node, (ast.Name, ast.Attribute)):
        return SIMPLE.get(last(node), "?")
    if isinstance(node, ast.Subscript):
        base, args = SIMPLE.get(last(node.value)), args_of(node)
        if base == "list" and len(args) == 1:
            return "list<%s>" % kind(args[0])
        if base == "map" and len(args) == 2 and kind(args[0]) == "string":
            return "map<%s>" % kind(args[1])
    return "?"


def place(node):
    return {"line": node.lineno, "col": node.col_offset,
            "end_line": getattr(node, "end_lineno", node.lineno),
            "end_col": getattr(node, "end_col_offset", node.col_offset + 1)}


def text(node):
    return ast.get_source_segment(source, node) or "?"


def annotation(node):
    if node is None:
        return None
    out = place(node)
    out.update({"kind": kind(node), "text": text(node)})
    return out


classes = dict((n.name, n) for n in tree.body if isinstance(n, ast.ClassDef))


def returns(node):
    if node is None:
        return None
    out = place(node)
    out["text"] = text(node)
    fields = None
    if isinstance(node, ast.Call) and last(node.func) == "NamedTuple" and len(node.args) == 2 \
            and isinstance(node.args[1], (ast.List, ast.Tuple)):
        fields = []
        for item in node.args[1].elts:
            if not (isinstance(item, (ast.Tuple, ast.List)) and len(item.elts) == 2
                    and isinstance(item.elts[0], ast.Constant) and isinstance(item.elts[0].value, str)):
                fields = None
                break
            fields.append([item.elts[0].value, annotation(item.elts[1])])
    elif isinstance(node, ast.Name) and node.id in classes and \
            any(last(b) == "NamedTuple" for b in classes[node.id].bases):
        fields = [[n.target.id, annotation(n.annotation)] for n in classes[node.id].body
                  if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    if fields is not None:
        out["fields"] = fields
    elif isinstance(node, ast.Subscript) and last(node.value) in ("tuple", "Tuple"):
        out["tuple"] = [annotation(a) for a in args_of(node)]
    else:
        out["type"] = annotation(node)
    return out


functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
found = [f for f in functions if f.name == name]
if not found:
    emit({"functions": [f.name for f in functions]})
f = found[-1]
a = f.args
params = []
positional = getattr(a, "posonlyargs", []) + a.args
defaults = [False] * (len(positional) - len(a.defaults)) + [True] * len(a.defaults)
for i, arg in enumerate(positional):
    params.append((arg, "posonly" if i < len(getattr(a, "posonlyargs", [])) else "normal", defaults[i]))
if a.vararg:
    params.append((a.vararg, "varargs", True))
for arg, default in zip(a.kwonlyargs, a.kw_defaults):
    params.append((arg, "kwonly", default is not None))
if a.kwarg:
    params.append((a.kwarg, "varkw", True))
out = place(f)
out.update({"async": isinstance(f, ast.AsyncFunctionDef), "returns": returns(f.returns), "params": []})
for arg, how, default in params:
    p = place(arg)
    p.update({"name": arg.arg, "how": how, "default": default, "annotation": annotation(arg.annotation)})
    out["params"].append(p)
emit({"function": out})
)PY";

const ast::BodyField* field(const ast::OpDecl& op, std::string_view name) {
  for (const auto& f : op.body->fields)
    if (f.name.name == name) return &f;
  return nullptr;
}

const ast::StringLit* string_lit(const ast::Expression& e) {
  return boost::get<ast::StringLit>(&e.get());
}

// What `pip install` is given, and the distribution whose presence importlib checks:
// PEP 508's name first (letters, digits, '.', '_', '-', alphanumeric at both ends), then
// nothing or extras, a version, a marker or `@ URL`. Never an option (`--index-url=...`).
std::optional<std::string> distribution_name(std::string_view requirement) {
  auto alnum = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
  };
  std::size_t n = 0;
  while (n < requirement.size() && (alnum(requirement[n]) || requirement[n] == '.' ||
                                    requirement[n] == '_' || requirement[n] == '-'))
    ++n;
  if (n == 0 || !alnum(requirement[0]) || !alnum(requirement[n - 1])) return std::nullopt;
  std::size_t next = requirement.find_first_not_of(' ', n);
  if (next != std::string_view::npos && std::string_view("[(<>=!~;@").find(requirement[next]) == std::string_view::npos)
    return std::nullopt;
  for (char ch : requirement)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return std::nullopt;
  return std::string(requirement.substr(0, n));
}

std::string base64(std::string_view in) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < in.size() ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

// The checking interpreter's answer for (function name, source), or nullopt with
// `missing` set when there is none. Answers are kept: the LSP checks the same source on
// every change.
std::optional<json> ask_python(const Host& host, const std::string& name, const std::string& source, bool& missing,
                               std::string& error) {
  static std::mutex mutex;
  static std::map<std::string, json> answers;
  missing = !host.run_python;
  if (missing) return std::nullopt;
  std::string key = host.python_name + '\0' + name + '\0' + source;
  {
    std::lock_guard lock(mutex);
    if (auto it = answers.find(key); it != answers.end()) return it->second;
  }
  auto text = host.run_python(std::string(kChecker), name, source, missing, error);
  if (missing) return std::nullopt;
  json answer;
  std::string why;
  if (!text || !input::parse_json(*text, answer, why) || !answer.is_object()) {
    if (error.empty()) error = "it gave no answer";
    return std::nullopt;
  }
  std::lock_guard lock(mutex);
  if (answers.size() >= 1024) answers.clear();
  answers.emplace(std::move(key), answer);
  return answer;
}

// Checks one Python op: its fields, its function (by the interpreter), and lowers it.
class PythonOp {
 public:
  PythonOp(const Host& host, const ast::OpDecl& op, const std::vector<ir::OpOutput>& outputs, ir::ContainerOp& c,
           Diagnostics& diags)
      : host_(host), op_(op), outputs_(outputs), c_(c), diags_(diags) {}

  void run(const ast::BodyField& python, std::map<std::string, std::string>& output_paths) {
    for (const char* name : {"command", "args", "outputs"})
      if (const auto* f = field(op_, name))
        diags_.error(f->name.range, fmt::format("a Python op's command, arguments and outputs come from its "
                                                "function; remove '{}'",
                                                name));
    const auto* lit = string_lit(python.value);
    if (!lit || !syntax::raw_block_at(lit->raw, 0)) {
      diags_.error(python.name.range, "'python' takes the function's source as a raw block: a line "
                                           "ending in ```, the source, then a line of only ```");
      return;
    }
    lit_ = lit;
    block_ = syntax::scan_raw_block(lit->raw, 0);
    lines_ = syntax::raw_block_lines(lit->raw, block_);
    source_ = lit->text();
    packages();
    check_function();
    lower(output_paths);
  }

 private:
  void packages() {
    const auto* f = field(op_, "packages");
    if (!f) return;
    const auto* list = boost::get<x3::forward_ast<ast::ListExpr>>(&f->value.get());
    if (!list) {
      diags_.error(f->name.range, "'packages' must be a list of strings such as [\"numpy==1.26.4\"]");
      return;
    }
    for (const auto& item : list->get().items) {
      const auto* s = string_lit(item);
      std::optional<std::string> name;
      if (s && s->is_plain()) name = distribution_name(s->text());
      if (!name) {
        diags_.error(s ? s->range : list->get().range, "a package is a literal requirement such as \"numpy\", \"numpy==1.26.4\" "
                                     "or \"pandas[excel]>=2\" (pip's form, starting with the name)");
        continue;
      }
      packages_.push_back({s->text(), *name});
    }
  }

  // The place in the .pipe file of `line` (from 1) and byte `col` (from 0) of the source.
  std::uint32_t offset(long line, long col) const {
    std::size_t at = block_.content_end;
    if (line >= 1 && static_cast<std::size_t>(line) <= lines_.size()) {
      const auto& l = lines_[static_cast<std::size_t>(line - 1)];
      at = l.begin + std::min<std::size_t>(static_cast<std::size_t>(std::max(col, 0L)), l.size);
    }
    return lit_->range.begin + static_cast<std::uint32_t>(at);
  }
  SourceRange place(const json& node) const {
    std::uint32_t begin = offset(node.value("line", 1L), node.value("col", 0L));
    std::uint32_t end = node.value("end_line", 0L) == node.value("line", 1L)
                            ? offset(node.value("end_line", 1L), node.value("end_col", 0L))
                            : begin + 1;
    return SourceRange{lit_->range.file, begin, std::max(end, begin + 1)};
  }

  const ast::OpParamDecl* op_param(const std::string& name) const {
    for (const auto& p : op_.params)
      if (p.name.name == name) return &p;
    return nullptr;
  }

  // Whether an annotation's kind (the checker's spelling: "int", "string", "list<int>",
  // "list", "map", "path", "bytes", "?") fits the declared type; `output`: a returned
  // value's (a file output is a path written, or bytes).
  static bool fits(const std::string& kind, const ir::Type& type, bool output) {
    switch (type.kind) {
      case ir::TypeKind::File:
        return kind == "string" || kind == "path" || (output && kind == "bytes");
      case ir::TypeKind::List:
      case ir::TypeKind::Map: {
        std::string head = type.kind == ir::TypeKind::List ? "list" : "map";
        if (kind == head) return true;
        if (kind.rfind(head + "<", 0) != 0 || kind.back() != '>' || type.element.empty()) return false;
        return fits(kind.substr(head.size() + 1, kind.size() - head.size() - 2), type.element[0], output);
      }
      default:
        return kind == type.str();
    }
  }

  void check_annotation(const json& ann, const ir::Type& type, const std::string& what, bool output) {
    if (!ann.is_object() || fits(ann.value("kind", "?"), type, output)) return;
    std::string expected = type.kind == ir::TypeKind::File ? (output ? "str, a path, or bytes" : "str")
                           : type.kind == ir::TypeKind::String ? "str"
                           : type.kind == ir::TypeKind::List  ? "list"
                           : type.kind == ir::TypeKind::Map   ? "dict"
                                                              : type.str();
    diags_.error(place(ann), fmt::format("{} is annotated '{}', but op '{}' declares it {} (annotate it "
                                         "'{}')",
                                         what, ann.value("text", "?"), op_.name.name, type.str(), expected));
  }

  void check_function() {
    const std::string& interpreter = host_.python_name;
    bool missing = false;
    std::string error;
    if (!host_.run_python) {
      diags_.warning(lit_->range, fmt::format("the Python function of op '{}' is not checked: {}", op_.name.name,
                                              host_.python_unchecked));
      return;
    }
    auto answer = ask_python(host_, op_.name.name, source_, missing, error);
    if (!answer && missing) {
      diags_.error(lit_->range, fmt::format("the Python function of op '{}' cannot be checked: there is no {} here "
                                            "to parse it ({})",
                                            op_.name.name, interpreter, host_.python_missing_hint));
      return;
    }
    if (!answer) {
      diags_.warning(lit_->range, fmt::format("the Python function of op '{}' is not checked: {} {}", op_.name.name,
                                              interpreter, error));
      return;
    }
    // The answer is read with at(), which throws on a shape other than the checker's: an
    // interpreter that printed something else is reported, not trusted.
    try {
      compare(*answer);
    } catch (const json::exception&) {
      diags_.warning(lit_->range, fmt::format("the Python function of op '{}' is not checked: {} gave an answer "
                                              "pipec cannot read",
                                              op_.name.name, interpreter));
    }
  }

  void compare(const json& a) {
    if (a.contains("syntax")) {
      diags_.error(SourceRange{lit_->range.file, offset(a.value("line", 1L), a.value("col", 0L)),
                               offset(a.value("line", 1L), a.value("col", 0L)) + 1},
                   fmt::format("Python syntax error in op '{}': {}", op_.name.name, a.value("syntax", "")));
      return;
    }
    if (!a.contains("function")) {
      auto names = a.at("functions").get<std::vector<std::string>>();
      diags_.error(lit_->range, fmt::format("the Python source of op '{}' defines no top-level function '{}'{}",
                                            op_.name.name, op_.name.name,
                                            names.empty() ? std::string()
                                                          : " (it defines '" + fmt::format("{}", fmt::join(names, "', '")) + "')"));
      return;
    }
    const json& f = a.at("function");
    SourceRange def = place(f);
    def.end = def.begin + 1;
    if (f.value("async", false))
      diags_.error(def, fmt::format("function '{}' is async; a Python op calls a plain 'def'", op_.name.name));
    bool varkw = false;
    for (const auto& p : f.at("params")) varkw = varkw || p.value("how", "") == "varkw";
    for (const auto& p : f.at("params")) {
      std::string name = p.value("name", ""), how = p.value("how", "");
      if (how == "varargs" || how == "varkw") continue;
      const ast::OpParamDecl* declared = op_param(name);
      if (!declared) {
        if (!p.value("default", false))
          diags_.error(place(p), fmt::format("function '{}' has a parameter '{}' that op '{}' does not declare; "
                                             "declare it in the op or give it a default",
                                             op_.name.name, name, op_.name.name));
        continue;
      }
      if (how == "posonly") {
        diags_.error(place(p), fmt::format("parameter '{}' is positional-only; a Python op passes its "
                                           "arguments by name",
                                           name));
        continue;
      }
      auto it = std::find_if(c_.params.begin(), c_.params.end(), [&](const ir::OpParam& q) { return q.name == name; });
      if (it != c_.params.end())
        check_annotation(p.at("annotation"), it->type, fmt::format("parameter '{}'", name), false);
    }
    for (const auto& p : op_.params) {
      bool found = std::any_of(f.at("params").begin(), f.at("params").end(), [&](const json& q) {
        return q.value("name", "") == p.name.name && q.value("how", "") != "varargs" && q.value("how", "") != "varkw";
      });
      if (found || varkw) continue;
      diags_.error(p.name.range, fmt::format("op '{}' passes '{}', but its Python function has no parameter '{}'",
                                             op_.name.name, p.name.name, p.name.name));
      diags_.note(def, fmt::format("function '{}' is defined here", op_.name.name));
    }
    check_returns(f.at("returns"));
  }

  static bool names_no_fields(const json& t) {  // a bare dict or tuple (typing's Dict, Tuple)
    std::string text = t.value("text", ""), head = text.substr(0, text.find('['));
    head.erase(0, head.rfind('.') + 1);  // typing.Dict: Dict (npos + 1 is 0: nothing)
    return t.value("kind", "") == "map" || head == "dict" || head == "Dict" || head == "tuple" || head == "Tuple";
  }
  void check_returns(const json& r) {
    if (!r.is_object()) return;  // no annotation: whatever it returns is checked when it runs
    std::vector<std::string> names;
    for (const auto& o : outputs_) names.push_back(o.name);
    std::string declared = names.empty() ? "no outputs" : fmt::format("the outputs ({})", fmt::join(names, ", "));
    if (r.contains("fields") || r.contains("tuple")) {
      bool named = r.contains("fields");
      const json& items = named ? r.at("fields") : r.at("tuple");
      std::vector<std::string> got;
      for (const auto& item : items) got.push_back(named ? item.at(0).get<std::string>() : "_");
      if (items.size() != outputs_.size() || (named && got != names)) {
        diags_.error(place(r), fmt::format("function '{}' returns {}, but op '{}' declares {}{}", op_.name.name,
                                           named ? fmt::format("the fields ({})", fmt::join(got, ", "))
                                                 : fmt::format("{} values", items.size()),
                                           op_.name.name, declared,
                                           named && items.size() == outputs_.size() ? " in this order" : ""));
        return;
      }
      for (std::size_t i = 0; i < items.size(); ++i)
        check_annotation(named ? items.at(i).at(1) : items.at(i), outputs_[i].type,
                         fmt::format("output '{}'", outputs_[i].name), true);
      return;
    }
    const json& t = r.at("type");
    if (t.value("kind", "") == "none") {
      if (!outputs_.empty())
        diags_.error(place(r), fmt::format("function '{}' returns None, but op '{}' declares {}", op_.name.name,
                                           op_.name.name, declared));
      return;
    }
    if (outputs_.size() > 1 && names_no_fields(t)) {  // the NamedTuple to write instead
      constexpr const char* kPython[] = {"str", "int", "float", "bool", "list", "dict", "str"};  // ir::TypeKind
      std::vector<std::string> fields;
      for (const auto& o : outputs_)
        fields.push_back(fmt::format("('{}', {})", o.name, kPython[static_cast<int>(o.type.kind)]));
      std::string fix = fmt::format("annotate it -> NamedTuple('Outputs', [{}])", fmt::join(fields, ", "));
      return diags_.error(place(r), fmt::format("function '{}' is annotated '{}', which names no fields, but op "
                                                "'{}' declares {}: {} and return the values in this order",
                                                op_.name.name, t.value("text", "?"), op_.name.name, declared, fix));
    }
    if (outputs_.size() != 1) {
      diags_.error(place(r), fmt::format("function '{}' returns one value, but op '{}' declares {}{}",
                                         op_.name.name, op_.name.name, declared,
                                         outputs_.empty() ? "" : "; return them as a NamedTuple of these fields"));
      return;
    }
    check_annotation(t, outputs_[0].type, fmt::format("output '{}'", outputs_[0].name), true);
  }

  ir::Value literal(std::string text) const {
    ir::Value v;
    v.type = ir::Type::scalar(ir::TypeKind::String);
    v.literal = std::move(text);
    v.range = lit_->range;
    return v;
  }

  void lower(std::map<std::string, std::string>& output_paths) {
    json spec = json::object();
    spec["op"] = op_.name.name;
    spec["function"] = op_.name.name;
    spec["packages"] = json::array();
    for (const auto& [requirement, name] : packages_) spec["packages"].push_back({requirement, name});
    spec["params"] = json::array();
    for (const auto& p : c_.params) spec["params"].push_back({p.name, p.type.str()});
    spec["outputs"] = json::array();
    for (const auto& o : outputs_) {
      std::string path = "/tmp/outputs/" + o.name + "/data";
      spec["outputs"].push_back({o.name, o.type.str(), path});
      output_paths[o.name] = path;
    }
    // KFP v2's launcher reads `{{$` anywhere in a command as its own placeholder: such a
    // source travels encoded, so that it still reaches Python as written.
    std::string source = source_;
    if (source.find("{{$") != std::string::npos) {
      spec["encoding"] = "base64";
      source = base64(source);
    }
    if (!field(op_, "image")) c_.image = literal(kPythonDefaultImage);
    c_.command = {literal("python3"), literal("-u"), literal("-c"), literal(std::string(kWrapper)),
                  literal(std::move(source)), literal(spec.dump())};
    c_.args.clear();
    for (const auto& p : c_.params) {
      const ast::OpParamDecl* decl = op_param(p.name);
      ir::Ref ref;
      ref.kind = ir::Ref::Kind::OpParam;
      ref.name = p.name;
      ref.type = p.type;
      ref.range = decl ? decl->name.range : op_.name.range;
      ir::Value v;
      v.kind = ir::Value::Kind::Interpolation;
      v.type = ir::Type::scalar(ir::TypeKind::String);
      v.range = ref.range;
      v.parts.push_back(ir::Part{{}, std::move(ref)});
      c_.args.push_back(std::move(v));
    }
    c_.python = true;
  }

  const Host& host_;
  const ast::OpDecl& op_;
  const std::vector<ir::OpOutput>& outputs_;
  ir::ContainerOp& c_;
  Diagnostics& diags_;
  const ast::StringLit* lit_ = nullptr;
  syntax::RawBlock block_;
  std::vector<syntax::RawLine> lines_;
  std::string source_;
  std::vector<std::pair<std::string, std::string>> packages_;
};

}  // namespace

bool lower_python_op(const Host& host, const ast::OpDecl& op, const std::vector<ir::OpOutput>& outputs,
                     ir::ContainerOp& c, std::map<std::string, std::string>& output_paths, Diagnostics& diags) {
  if (!op.body) return false;
  const ast::BodyField* python = field(op, "python");
  if (!python) {
    if (const auto* packages = field(op, "packages"))
      diags.error(packages->name.range, "'packages' belongs to a Python op, one with a 'python' field");
    return false;
  }
  PythonOp(host, op, outputs, c, diags).run(*python, output_paths);
  return true;
}

}  // namespace pipec::sema
