#include "compiler/sema/symbols.hpp"

#include <gtest/gtest.h>

#include <string>

namespace pipec::sema {
namespace {

// The symbol a use at the first `needle` in `text` (plus `offset`) resolves to.
const Symbol* used_at(const SymbolTable& table, const std::string& text, const std::string& needle,
                      std::size_t offset = 0) {
  auto at = text.find(needle);
  if (at == std::string::npos) return nullptr;
  auto off = static_cast<std::uint32_t>(at + offset);
  for (const auto& [range, symbol] : table.refs)
    if (range.file == table.main && range.begin <= off && off <= range.end)
      return &table.symbols[symbol];
  return nullptr;
}

const char* const kProgram =
    "use arena\n"
    "op echo(message: string) -> (out: string) {\n"
    "  image \"busybox\"\n"
    "  command [\"echo\", \"${message}\"]\n"
    "  outputs {out: \"/tmp/out\"}\n"
    "}\n"
    "pipeline p {\n"
    "  param x: string = \"a\"\n"
    "  param n: int = 2\n"
    "  step first = echo(message: x)\n"
    "  for x in [\"b\", \"c\"] {\n"
    "    step each = echo(message: \"${x} ${first.out}\")\n"
    "  }\n"
    "  step train = mpi_job(image: \"i\", command: \"c\", workers: n)\n"
    "}\n";

// The kind, type and op of a symbol, as one string to compare.
std::string shown(const Symbol* s) {
  if (!s) return "nothing";
  return std::string(kind_name(s->kind)) + " " + s->name + ": " + s->type +
         (s->op.empty() ? "" : " of " + s->op);
}

TEST(Symbols, NamesMeanWhatTheCheckerResolvedThemTo) {
  SourceManager sources;
  const std::string text = kProgram;
  FileId main = sources.add("main.pipe", text);
  SymbolTable table = index_program(sources, main, Host{});
  ASSERT_TRUE(table.loaded);

  // An op parameter in its op's body.
  EXPECT_EQ(shown(used_at(table, text, "${message}", 2)), "op parameter message: string of echo");
  // Outside the loop, the parameter; inside, the loop variable that hides it (an error
  // `check` reports, but the use still means the loop variable).
  EXPECT_EQ(shown(used_at(table, text, "message: x)", 9)), "parameter x: string");
  EXPECT_EQ(shown(used_at(table, text, "${x}", 2)), "loop variable x: string");
  // A step's output inside a string: the step, then its op's output.
  EXPECT_EQ(shown(used_at(table, text, "${first.out}", 2)), "step first: echo");
  EXPECT_EQ(shown(used_at(table, text, "${first.out}", 8)), "output out: string of echo");
  // A stdlib op and its argument, declared in the embedded module.
  const Symbol* op = used_at(table, text, "mpi_job(", 1);
  ASSERT_TRUE(op);
  EXPECT_EQ(op->kind, Symbol::Kind::Op);
  EXPECT_EQ(sources.name(op->range.file), "stdlib/arena.pipe");
  EXPECT_EQ(shown(used_at(table, text, "workers: n", 1)), "op parameter workers: int of mpi_job");
  ASSERT_EQ(table.uses.size(), 1u);
  EXPECT_TRUE(table.uses[0].stdlib);
  // A declaration is found at its own name.
  auto decl = table.at(main, static_cast<std::uint32_t>(text.find("first =")));
  ASSERT_TRUE(decl);
  EXPECT_EQ(shown(&table.symbols[*decl]), "step first: echo");
}

// What a call of each op or pipeline takes by name: an op's op parameters, a pipeline's
// parameters (also of a pipeline nothing calls, and each declared once when it is checked),
// in declaration order; a name both an op and a pipeline have is the op's.
TEST(Symbols, ArgumentsOfOpsAndPipelines) {
  SourceManager sources;
  const std::string text =
      "op echo(message: string, times: int = 1) {\n"
      "  image \"busybox\"\n"
      "  command [\"echo\", \"${message}\"]\n"
      "}\n"
      "pipeline unused {\n"
      "  param a: int = 1\n"
      "  step u = echo(message: \"u\")\n"
      "}\n"
      "pipeline echo {\n"
      "  param hidden: int = 1\n"
      "  step h = echo(message: \"h\")\n"
      "}\n"
      "pipeline inner {\n"
      "  ## How many.\n"
      "  param count: int = 1\n"
      "  param label: string\n"
      "  step e = echo(message: label)\n"
      "}\n"
      "pipeline p {\n"
      "  step i = inner(label: \"x\")\n"
      "}\n";
  FileId main = sources.add("main.pipe", text);
  SymbolTable table = index_program(sources, main, Host{});
  ASSERT_TRUE(table.loaded);
  auto arguments = [&](const std::string& callee) {
    std::string out;
    auto it = table.arguments.find(callee);
    if (it == table.arguments.end()) return std::string("none");
    for (std::size_t id : it->second) out += (out.empty() ? "" : ", ") + shown(&table.symbols[id]);
    return out;
  };
  EXPECT_EQ(arguments("echo"), "op parameter message: string of echo, op parameter times: int of echo");
  EXPECT_EQ(arguments("inner"), "parameter count: int, parameter label: string");
  EXPECT_EQ(table.symbols[table.arguments.at("inner")[0]].doc, "How many.");
  EXPECT_EQ(arguments("unused"), "parameter a: int");
  EXPECT_EQ(arguments("p"), "none");
  // The called pipeline was checked: its parameter is declared once, and the argument's
  // name and a use in its body mean that one symbol.
  std::size_t count = 0;
  for (const auto& s : table.symbols) count += s.name == "label";
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(used_at(table, text, "label: \"x\""), &table.symbols[table.arguments.at("inner")[1]]);
  EXPECT_EQ(used_at(table, text, "message: label", 9), &table.symbols[table.arguments.at("inner")[1]]);
}

TEST(Symbols, ATextThatDoesNotParseHasNoTable) {
  SourceManager sources;
  FileId main = sources.add("main.pipe", "pipeline p {\n  step = \n");
  SymbolTable table = index_program(sources, main, Host{});
  EXPECT_FALSE(table.loaded);
  EXPECT_TRUE(table.symbols.empty());
}

}  // namespace
}  // namespace pipec::sema
