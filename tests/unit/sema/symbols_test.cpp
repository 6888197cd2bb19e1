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
    if (range.file == table.main && range.begin <= off && off <= range.end) return &table.symbols[symbol];
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

TEST(Symbols, NamesMeanWhatTheCheckerResolvedThemTo) {
  SourceManager sources;
  const std::string text = kProgram;
  FileId main = sources.add("main.pipe", text);
  SymbolTable table = index_program(sources, main);
  ASSERT_TRUE(table.loaded);

  // An op parameter in its op's body.
  const Symbol* s = used_at(table, text, "${message}", 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Symbol::Kind::OpParameter);
  EXPECT_EQ(s->op, "echo");
  EXPECT_EQ(s->type, "string");

  // Outside the loop, the parameter; inside, the loop variable that hides it (an error
  // `check` reports, but the use still means the loop variable).
  s = used_at(table, text, "message: x)", 9);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Symbol::Kind::Parameter);
  s = used_at(table, text, "${x}", 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Symbol::Kind::LoopVariable);
  EXPECT_EQ(s->type, "string");

  // A step's output inside a string: the step, then its op's output.
  s = used_at(table, text, "${first.out}", 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Symbol::Kind::Step);
  EXPECT_EQ(s->type, "echo");
  s = used_at(table, text, "${first.out}", 8);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Symbol::Kind::Output);
  EXPECT_EQ(s->name, "out");

  // A stdlib op and its argument, declared in the embedded module.
  s = used_at(table, text, "mpi_job(", 1);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Symbol::Kind::Op);
  EXPECT_EQ(sources.name(s->range.file), "stdlib/arena.pipe");
  s = used_at(table, text, "workers: n", 1);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Symbol::Kind::OpParameter);
  EXPECT_EQ(s->op, "mpi_job");
  ASSERT_EQ(table.uses.size(), 1u);
  EXPECT_TRUE(table.uses[0].stdlib);

  // A declaration is found at its own name.
  auto decl = table.at(main, static_cast<std::uint32_t>(text.find("first =")));
  ASSERT_TRUE(decl);
  EXPECT_EQ(table.symbols[*decl].kind, Symbol::Kind::Step);
}

TEST(Symbols, ATextThatDoesNotParseHasNoTable) {
  SourceManager sources;
  FileId main = sources.add("main.pipe", "pipeline p {\n  step = \n");
  SymbolTable table = index_program(sources, main);
  EXPECT_FALSE(table.loaded);
  EXPECT_TRUE(table.symbols.empty());
}

}  // namespace
}  // namespace pipec::sema
