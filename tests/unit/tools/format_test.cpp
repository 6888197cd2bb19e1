// `pipec fmt` over tricky lexemes, beside `pipec check` on the same text: the layout keeps each
// lexeme as the parser's lexer cut it, and the program means the same after it.
#include "compiler/tools/format.hpp"

#include <gtest/gtest.h>

#include <string>

#include "compiler/syntax/ast_printer.hpp"
#include "tests/unit/syntax/test_support.hpp"

namespace pipec::tools {
namespace {

using testing::check_string;
using testing::parse_string;

// Formats `text`, which must check cleanly, and expects `want`; the result checks cleanly, parses
// to the same tree and formats to itself.
void expect_layout(const std::string& text, const std::string& want) {
  auto before = check_string(text);
  ASSERT_TRUE(before.pipeline) << before.diagnostics;
  EXPECT_EQ(before.diagnostics, "");
  std::string once = format_source(text);
  EXPECT_EQ(once, want);
  auto after = check_string(once);
  ASSERT_TRUE(after.pipeline) << after.diagnostics;
  EXPECT_EQ(after.diagnostics, "");
    auto parsed_once = parse_string(once), parsed_text = parse_string(text);
  ASSERT_TRUE(parsed_once.module && parsed_text.module);
  EXPECT_EQ(syntax::print_ast(*parsed_once.module), syntax::print_ast(*parsed_text.module));
  EXPECT_EQ(format_source(once), once);
}

const std::string kOp = "op echo(msg: string) { image \"busybox\" command [\"echo\", msg] }\n";

TEST(Format, StringsWithInterpolationAndEscapes) {
  // `${`, `\$`, `\"`, `\\`, a `#` and a `->` inside strings stay as written; the spacing
  // around them is laid out.
  expect_layout(kOp +
                    "pipeline p {\n"
                    "    param n: int=2\n"
                    "    step a =echo(msg:\"${n} \\${n} \\\"q\\\" \\\\ # -> ( \")\n"
                    "  step b = echo( msg : \"\"\"\n"
                    "      \\\"\"\" ${n}  # {\n"
                    "      \"\"\" )\n"
                    "}\n",
                kOp +
                    "pipeline p {\n"
                    "  param n: int = 2\n"
                    "  step a = echo(msg: \"${n} \\${n} \\\"q\\\" \\\\ # -> ( \")\n"
                    "  step b = echo(msg: \"\"\"\n"
                    "      \\\"\"\" ${n}  # {\n"
                    "      \"\"\")\n"
                    "}\n");
}

TEST(Format, RawBlocksStayLineForLine) {
  // A raw block is one token, kept as written: its lines' indentation and trailing spaces, the
  // closing fence's indentation (which decides the text), and the `{`, `#` and `"` inside, which
  // open no level and no comment.
  expect_layout(kOp +
                    "pipeline p {\n"
                    "      step a = echo( msg: ```python\n"
                    "        x  =  [1,2]   # \"q\" ${n}  \n"
                    "\n"
                    "          {\n"
                    "    ```  \n"
                    "   )\n"
                    "      step b = echo(msg: \"y\")\n"
                    "}\n",
                kOp +
                    "pipeline p {\n"
                    "  step a = echo(msg: ```python\n"
                    "        x  =  [1,2]   # \"q\" ${n}  \n"
                    "\n"
                    "          {\n"
                    "    ```\n"
                    "  )\n"
                    "  step b = echo(msg: \"y\")\n"
                    "}\n");
}

TEST(Format, DocCommentsStayWithTheirDeclarations) {
  std::string text =
      "## Says it.\n"
      "##   Twice.   \n"
      "op say(\n"
      "    ## The words.\n"
      "    msg: string) { image \"busybox\" command [\"echo\", msg] }\n"
      "pipeline p {\n"
      "## How many.\n"
      "        param n: int = 1\n"
      "  step a = say(msg: \"x\")\n"
      "}\n";
  expect_layout(text,
                "## Says it.\n"
                "##   Twice.\n"
                "op say(\n"
                "  ## The words.\n"
                "  msg: string) { image \"busybox\" command [\"echo\", msg] }\n"
                "pipeline p {\n"
                "  ## How many.\n"
                "  param n: int = 1\n"
                "  step a = say(msg: \"x\")\n"
                "}\n");
  auto out = parse_string(format_source(text));
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& op = boost::get<syntax::ast::OpDecl>(out.module->decls.at(0).get());
  EXPECT_EQ(op.doc, "Says it.\n  Twice.");
  EXPECT_EQ(op.params.at(0).doc, "The words.");
}

TEST(Format, CommentAtTheEndOfTheFile) {
  expect_layout(kOp + "pipeline p {\n  step a = echo(msg: \"x\") # last step   \n}   # the end   ",
                kOp + "pipeline p {\n  step a = echo(msg: \"x\") # last step\n} # the end\n");
}

TEST(Format, OperatorsAndNumbersAreOneTokenEach) {
  expect_layout(kOp +
                    "pipeline p {\n"
                    "  param n: int in -5..64 = -3\n"
                    "  param r: float = 1e-3\n"
                    "  param l: list<int>= [1,2]\n"
                    "  if n>=2 and r!=0.5 or not n<=-1 {\n"
                    "    step a = echo(msg: \"x\")\n"
                    "  }\n"
                    "}\n",
                kOp +
                    "pipeline p {\n"
                    "  param n: int in -5..64 = -3\n"
                    "  param r: float = 1e-3\n"
                    "  param l: list<int>= [1, 2]\n"
                    "  if n>=2 and r!=0.5 or not n<=-1 {\n"
                    "    step a = echo(msg: \"x\")\n"
                    "  }\n"
                    "}\n");
}

TEST(Format, PipelineOutputsAndCalls) {
  // `-> (...)` after a pipeline's name, `output NAME = STEP.OUTPUT`, and a step that calls
  // a pipeline are laid out as an op's signature, a step and its call are.
  const std::string op = "op echo(msg: string) -> (out: string) {\n  image \"busybox\"\n  command [\"echo\", msg]\n"
                         "  outputs {out: \"/tmp/out\"}\n}\n";
  expect_layout(op +
                    "pipeline inner->(out:string,  all : list<string>) {\n"
                    "param m: string = \"x\"\n"
                    "  step e = echo(msg: m)\n"
                    "  for i in [\"a\"] { step each = echo(msg: i) }\n"
                    "      output out=e.out\n"
                    "  output all =  each.out\n"
                    "}\n"
                    "pipeline outer {\n"
                    "  step c = inner( m: \"y\" )\n"
                    "  step d = echo(msg: c.out)\n"
                    "}\n",
                op +
                    "pipeline inner -> (out: string, all: list<string>) {\n"
                    "  param m: string = \"x\"\n"
                    "  step e = echo(msg: m)\n"
                    "  for i in [\"a\"] { step each = echo(msg: i) }\n"
                    "  output out = e.out\n"
                    "  output all = each.out\n"
                    "}\n"
                    "pipeline outer {\n"
                    "  step c = inner(m: \"y\")\n"
                    "  step d = echo(msg: c.out)\n"
                    "}\n");
}

TEST(Format, BidiControlInACommentIsWarnedAtTheSamePlaceAfterFormatting) {
  // U+202E in a comment: check warns (not an error), and the layout keeps the character.
  std::string text = kOp + "pipeline p {\n    step a = echo(msg: \"x\") # \u202E note\n}\n";
  auto before = check_string(text);
  ASSERT_TRUE(before.pipeline) << before.diagnostics;
  EXPECT_NE(before.diagnostics.find("input:3:31: warning: bidirectional control character U+202E"),
            std::string::npos)
      << before.diagnostics;
  std::string once = format_source(text);
  EXPECT_EQ(once, kOp + "pipeline p {\n  step a = echo(msg: \"x\") # \u202E note\n}\n");
  auto after = check_string(once);
  EXPECT_NE(after.diagnostics.find("input:3:29: warning: bidirectional control character U+202E"),
            std::string::npos)
      << after.diagnostics;
}

}  // namespace
}  // namespace pipec::tools
