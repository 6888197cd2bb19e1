#include "compiler/syntax/parser.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/syntax/test_support.hpp"

namespace pipec::syntax {
namespace {

using testing::parse_string;
namespace x3 = boost::spirit::x3;

const ast::PipelineDecl& pipeline_of(const ast::Module& m) {
  for (const auto& d : m.decls)
    if (const auto* p = boost::get<ast::PipelineDecl>(&d.get())) return *p;
  throw std::runtime_error("no pipeline");
}

const ast::StepDecl& first_step(const ast::Module& m) {
  for (const auto& s : pipeline_of(m).body.statements)
    if (const auto* step = boost::get<ast::StepDecl>(&s.get())) return *step;
  throw std::runtime_error("no step");
}

const ast::StringLit& string_arg(const ast::StepDecl& step, std::size_t i) {
  // A value with no operator is the literal itself: no or/and/compare node around it.
  return boost::get<ast::StringLit>(step.args.at(i).value.get());
}

TEST(Parser, ParsesDeclarationsWithTrailingCommas) {
  auto out = parse_string(
      "use arena\n"
      "use \"lib/ops.pipe\"\n"
      "op train(epochs: int = 10, data: list<string>,) -> (model: string,) {\n"
      "  image \"python:3.11\"\n"
      "  command [\"python\", \"train.py\",]\n"
      "  env {A: \"1\", \"B-2\": \"x\",}\n"
      "}\n"
      "pipeline p {\n"
      "  param n: int in 1..64 = 1\n"
      "  step a = train(epochs: n, data: [\"x\",],) after b, c,\n"
      "  step b = train(data: [])\n"
      "}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  EXPECT_EQ(out.diagnostics, "");
  ASSERT_EQ(out.module->decls.size(), 4u);
  const auto& op = boost::get<ast::OpDecl>(out.module->decls[2].get());
  EXPECT_EQ(op.name.name, "train");
  ASSERT_EQ(op.params.size(), 2u);
  EXPECT_EQ(op.params[1].type.name.name, "list");
  EXPECT_EQ(op.params[1].type.args.at(0).name.name, "string");
  ASSERT_EQ(op.outputs.size(), 1u);
  ASSERT_TRUE(op.body);
  EXPECT_EQ(op.body->fields.size(), 3u);
  const auto& step = first_step(*out.module);
  EXPECT_EQ(step.name.name, "a");
  EXPECT_EQ(step.op.name, "train");
  ASSERT_EQ(step.after.size(), 2u);
  EXPECT_EQ(step.after[1].step.name, "c");
  EXPECT_FALSE(step.after[1].outcome);
  EXPECT_FALSE(step.allow_failure);
}

// The failure policies of a step: `after a.failed, b.done` and `allow_failure`, with places.
TEST(Parser, StepFailurePolicies) {
  auto out = parse_string("pipeline p {\n  step s = f() after a.failed, b.done allow_failure\n  step t = f() allow_failure\n}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  EXPECT_EQ(out.diagnostics, "");
  const auto& step = first_step(*out.module);
  ASSERT_EQ(step.after.size(), 2u);
  EXPECT_EQ(step.after[0].step.name, "a");
  ASSERT_TRUE(step.after[0].outcome);
  EXPECT_EQ(step.after[0].outcome->name, "failed");
  EXPECT_EQ(step.after[1].outcome->name, "done");
  ASSERT_TRUE(step.allow_failure);
  EXPECT_EQ(step.allow_failure->range.begin, 51u);
  EXPECT_EQ(step.allow_failure->range.end, 64u);
}

TEST(Parser, RecordsByteRanges) {
  auto out = parse_string("pipeline p {\n  step all_reduce = f(x: 1)\n}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& step = first_step(*out.module);
  EXPECT_EQ(step.name.range.begin, 20u);
  EXPECT_EQ(step.name.range.end, 30u);
  EXPECT_EQ(step.range.begin, 15u);  // at 'step', after the skipped indentation
  EXPECT_EQ(step.args.at(0).name.range.begin, 35u);
}

TEST(Parser, BodylessOpIsBuiltin) {
  auto out = parse_string("op mpi_job(image: string)\nop tf_job(image: string) -> (x: int)\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  EXPECT_FALSE(boost::get<ast::OpDecl>(out.module->decls[0].get()).body);
  EXPECT_FALSE(boost::get<ast::OpDecl>(out.module->decls[1].get()).body);
}

TEST(Parser, DecodesEscapesAndInterpolation) {
  auto out =
      parse_string("pipeline p {\n  step a = f(s: \"x \\\"${n}\\\" \\$ ${t.out}\\n\\t\\\\\")\n}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& s = string_arg(first_step(*out.module), 0);
  ASSERT_EQ(s.parts.size(), 5u);
  EXPECT_EQ(s.parts[0].text, "x \"");
  EXPECT_TRUE(s.parts[1].is_ref);
  EXPECT_EQ(s.parts[1].head.name, "n");
  EXPECT_EQ(s.parts[2].text, "\" $ ");
  EXPECT_EQ(s.parts[3].head.name, "t");
  EXPECT_EQ(s.parts[3].field->name, "out");
  EXPECT_EQ(s.parts[4].text, "\n\t\\");
  EXPECT_FALSE(s.is_plain());
}

TEST(Parser, RawBlockKeepsTextAsWritten) {
  // Quotes, escapes, `${...}`, `#`, brackets and a shorter fence are text; the closing
  // fence's indentation goes, deeper indentation and blank lines stay.
  auto out = parse_string(
      "pipeline p {\n"
      "  step a = f(s: ````python3 \n"
      "      def f(x):  # \"q\" \\n ${x} {{y}} }\n"
      "\n"
      "          return ```\n"
      "      ````\n"
      "  , t: 1)\n"
      "}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& s = string_arg(first_step(*out.module), 0);
  EXPECT_TRUE(s.is_plain());
  EXPECT_EQ(s.text(), "def f(x):  # \"q\" \\n ${x} {{y}} }\n\n    return ```\n");
  EXPECT_EQ(first_step(*out.module).args.size(), 2u);
}

TEST(Parser, RawBlockProblemsAreLocated) {
  auto junk = parse_string("pipeline p {\n  step a = f(s: ``` x\n  ```)\n}\n");
  EXPECT_FALSE(junk.module);
  EXPECT_EQ(junk.diagnostics.substr(0, 99),
            "input:2:21: error: expected a line end after the opening ``` (a raw block starts on the "
            "next line)\n");
  auto shallow = parse_string("pipeline p {\n  step a = f(s: ```\n  x\n    ```\n  )\n}\n");
  EXPECT_FALSE(shallow.module);
  EXPECT_EQ(shallow.diagnostics.substr(0, 33), "input:3:1: error: this line of th");
  auto open = parse_string("pipeline p {\n  step a = f(s: ```\n  x ``` )\n}\n");
  EXPECT_FALSE(open.module);
  EXPECT_EQ(open.diagnostics.substr(0, 83),
            "input:2:17: error: expected a line of only ``` to close this raw block\n  step a = f");
}

TEST(Parser, DollarWithoutBraceIsText) {
  auto out = parse_string("pipeline p {\n  step a = f(s: \"cost $5 $x\")\n}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& s = string_arg(first_step(*out.module), 0);
  EXPECT_TRUE(s.is_plain());
  EXPECT_EQ(s.text(), "cost $5 $x");
}

TEST(Parser, DedentsTripleQuotedStrings) {
  auto out = parse_string(
      "pipeline p {\n"
      "  step a = f(s: \"\"\"\n"
      "      mpirun python x.py\n"
      "        --batch ${n}\n"
      "\n"
      "      done\n"
      "    \"\"\")\n"
      "}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& s = string_arg(first_step(*out.module), 0);
  ASSERT_EQ(s.parts.size(), 3u);
  EXPECT_EQ(s.parts[0].text, "mpirun python x.py\n  --batch ");
  EXPECT_EQ(s.parts[1].head.name, "n");
  EXPECT_EQ(s.parts[2].text, "\n\ndone");
}

TEST(Parser, AttachesDocComments) {
  auto out = parse_string(
      "## Trains.\n"
      "## Twice.\n"
      "op t(\n"
      "  ## Epoch count.\n"
      "  epochs: int,\n"
      "  # plain comment\n"
      "  lr: float,\n"
      ") { image \"x\" }\n"
      "pipeline p {\n"
      "  ## The batch size.\n"
      "  param b: int = 1\n"
      "}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& op = boost::get<ast::OpDecl>(out.module->decls[0].get());
  EXPECT_EQ(op.doc, "Trains.\nTwice.");
  EXPECT_EQ(op.params[0].doc, "Epoch count.");
  EXPECT_EQ(op.params[1].doc, "");
  const auto& param =
      boost::get<x3::forward_ast<ast::ParamDecl>>(pipeline_of(*out.module).body.statements[0].get())
          .get();
  EXPECT_EQ(param.doc, "The batch size.");
}

TEST(Parser, DocCommentsComeFromTheLexersTokens) {
  // A `##` line inside a triple-quoted string is the string's text, not a doc comment of the
  // declaration below it.
  auto out = parse_string(
      "pipeline p {\n"
      "  description \"\"\"\n"
      "## not a doc \"\"\"\n"
      "  param b: int = 1\n"
      "}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& param =
      boost::get<x3::forward_ast<ast::ParamDecl>>(pipeline_of(*out.module).body.statements[1].get())
          .get();
  EXPECT_EQ(param.doc, "");
}

TEST(Parser, SeesABidiControlRightAfterABackslash) {
  // U+202E after a backslash in a string: the lexer reads the string's characters whole (the
  // character walk used to skip the backslash and the first byte of the character after it).
  auto out = parse_string("pipeline p {\n  param s: string = \"a\\\u202Eb\"\n}\n");
  EXPECT_NE(out.diagnostics.find("input:2:24: warning: bidirectional control character U+202E "
                                 "RIGHT-TO-LEFT OVERRIDE in a string"),
            std::string::npos)
      << out.diagnostics;
}

TEST(Parser, ABidiControlInARawBlockIsWarnedAsInARawBlock) {
  auto out = parse_string("pipeline p {\n  step a = f(s: ```\n    x = 1 # \u202E\n    ```\n  )\n}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  EXPECT_NE(out.diagnostics.find("input:3:13: warning: bidirectional control character U+202E "
                                 "RIGHT-TO-LEFT OVERRIDE in a raw block"),
            std::string::npos)
      << out.diagnostics;
}

TEST(Parser, BracketsInARawBlockAreText) {
  // More brackets than the nesting bound, unbalanced, inside a raw block are none of the
  // grammar's: no nesting error.
  auto out = parse_string("pipeline p {\n  step a = f(s: ```\n  " + std::string(kMaxNesting + 10, '(') +
                          "\n  ```\n  )\n  step b = f()\n}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  EXPECT_EQ(out.diagnostics, "");
  EXPECT_EQ(pipeline_of(*out.module).body.statements.size(), 2u);
}

TEST(Parser, RecoverySkipsARawBlockWhole) {
  // After the error in `step a`, a line inside its raw block that looks like a statement is
  // not where parsing resumes: `step b` is.
  auto out = parse_string(
      "pipeline p {\n"
      "  step a = f(x: 1 +, s: ```\n"
      "  step c = g(\n"
      "  ```\n"
      "  )\n"
      "  step b = f(\n"
      "}\n");
  EXPECT_EQ(out.diagnostics.substr(0, 26), "input:2:19: error: expecte") << out.diagnostics;
  for (const char* inside : {"input:3:", "input:4:", "input:5:"})
    EXPECT_EQ(out.diagnostics.find(inside), std::string::npos) << out.diagnostics;
  EXPECT_NE(out.diagnostics.find("input:7:1: error: "), std::string::npos) << out.diagnostics;
}

TEST(Parser, ParsesIfElseIfForFinally) {
  auto out = parse_string(
      "pipeline p {\n"
      "  if a == 1 and not b or c {\n"
      "  } else if x >= 2.5 {\n"
      "    for i in [1, 2] { step s = f() }\n"
      "  } else {\n"
      "  }\n"
      "  finally { step e = f() }\n"
      "}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  const auto& body = pipeline_of(*out.module).body.statements;
  ASSERT_EQ(body.size(), 2u);
  const auto& i = boost::get<x3::forward_ast<ast::IfStmt>>(body[0].get()).get();
  ASSERT_TRUE(i.else_block);
  ASSERT_EQ(i.else_block->statements.size(), 1u);
  const auto& nested =
      boost::get<x3::forward_ast<ast::IfStmt>>(i.else_block->statements[0].get()).get();
  EXPECT_TRUE(nested.else_block);
  EXPECT_NE(boost::get<x3::forward_ast<ast::FinallyStmt>>(&body[1].get()), nullptr);
}

TEST(Parser, KeywordsAreNotNames) {
  auto out = parse_string("pipeline p {\n  param in: int = 1\n}\n");
  EXPECT_FALSE(out.module);
  EXPECT_EQ(out.diagnostics,
            "input:2:9: error: expected name, but 'in' is a keyword and cannot be a name\n"
            "  param in: int = 1\n"
            "        ^~\n");
  // A keyword prefix is a name.
  EXPECT_TRUE(parse_string("pipeline p {\n  param interval: int = 1\n}\n").module);
}

TEST(Parser, ReportsExpectedTokenAfterSkippedComments) {
  auto out = parse_string("pipeline p {\n  param n: int = # nothing\n  # still nothing\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:4:1: error: expected expression\n"
            "}\n"
            "^\n");
}

TEST(Parser, ReportsUnknownStatement) {
  auto out = parse_string("pipeline p {\n  stpe a = f()\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:2:3: error: expected statement or '}'\n"
            "  stpe a = f()\n"
            "  ^~~~\n"
            "input:2:3: note: did you mean 'step'?\n");
}

TEST(Parser, ReportsMissingCloseParen) {
  auto out = parse_string("pipeline p {\n  step a = f(x: 1\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:3:1: error: expected ')'\n"
            "}\n"
            "^\n");
}

TEST(Parser, ReportsUnterminatedString) {
  auto out = parse_string("pipeline p {\n  description \"abc\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:2:19: error: expected '\"' before the end of the line\n"
            "  description \"abc\n"
            "                  ^\n");
}

TEST(Parser, ReportsUnexpectedEndOfFile) {
  auto out = parse_string("pipeline p {\n  param n: int\n");
  EXPECT_EQ(out.diagnostics,
            "input:3:1: error: unexpected end of file, expected statement or '}'\n"
            "\n"
            "^\n"
            "input:1:12: note: the '{' opened here is not closed\n"
            "pipeline p {\n"
            "           ^\n");
}

TEST(Parser, ReportsEverySyntaxErrorInOnePass) {
  auto out = parse_string("pipeline p {\n  stpe a = f()\n  step b = f(x: 1\n  stpe c = f()\n}\n");
  EXPECT_FALSE(out.module.has_value());
  EXPECT_EQ(out.diagnostics,
            "input:2:3: error: expected statement or '}'\n"
            "  stpe a = f()\n"
            "  ^~~~\n"
            "input:2:3: note: did you mean 'step'?\n"
            "input:4:3: error: expected ')'\n"
            "  stpe c = f()\n"
            "  ^~~~\n"
            "input:4:3: error: expected statement or '}'\n"
            "  stpe c = f()\n"
            "  ^~~~\n"
            "input:4:3: note: did you mean 'step'?\n");
}

TEST(Parser, RecoverySkipsTheWholeBadStatementAndNothingMore) {
  // The bad `if` header's block, the rest of a multi-line call and a map closed on a
  // line of its own are skipped with their statement; the '}' ending the block stays.
  auto out = parse_string(
      "pipeline p {\n"
      "  if x = 1 {\n    step a = f()\n  }\n"
      "  step b = f(\n    m: {a: 1 b: 2\n    },\n    n: 1,\n  )\n"
      "  step c = f(x: 1 }\n"
      "}\n"
      "op 1x()\n"
      "pipeline q { stpe d = f() }\n");
  EXPECT_EQ(out.diagnostics,
            "input:2:8: error: expected '{'\n"
            "  if x = 1 {\n"
            "       ^\n"
            "input:6:14: error: expected '}'\n"
            "    m: {a: 1 b: 2\n"
            "             ^\n"
            "input:10:19: error: expected ')'\n"
            "  step c = f(x: 1 }\n"
            "                  ^\n"
            "input:12:4: error: expected name\n"
            "op 1x()\n"
            "   ^~\n"
            "input:13:14: error: expected statement or '}'\n"
            "pipeline q { stpe d = f() }\n"
            "             ^~~~\n"
            "input:13:14: note: did you mean 'step'?\n");
}

TEST(Parser, AnUnclosedBracketEndsItsStatementAtTheNextOne) {
  // `step b` is parsed (no error of its own); the end of the file still lacks a '}'.
  auto out = parse_string("pipeline p {\n  step a = f(m: {\n  step b = f(\n");
  EXPECT_EQ(out.diagnostics,
            "input:3:3: error: expected '}'\n"
            "  step b = f(\n"
            "  ^~~~\n"
            "input:4:1: error: unexpected end of file, expected ')'\n"
            "\n"
            "^\n"
            "input:3:13: note: the '(' opened here is not closed\n"
            "  step b = f(\n"
            "            ^\n");
}

TEST(Parser, AfterSkippingToTheEndOfTheFileOnlyTrueErrorsFollow) {
  // A bracket never closed takes the rest of the file: no second error at its end.
  auto out = parse_string("pipeline p {\n  step a = f(m: [1\n    2)\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:3:5: error: expected ']'\n"
            "    2)\n"
            "    ^\n");
  // Brackets closed, and the block's '}' missing: that is an error of its own.
  out = parse_string("pipeline p {\n  step a = f(m: [1\n    2])\n");
  EXPECT_EQ(out.diagnostics,
            "input:3:5: error: expected ']'\n"
            "    2])\n"
            "    ^\n"
            "input:4:1: error: unexpected end of file, expected statement or '}'\n"
            "\n"
            "^\n"
            "input:1:12: note: the '{' opened here is not closed\n"
            "pipeline p {\n"
            "           ^\n");
}

TEST(Parser, ReportsBadEscapeAndInterpolation) {
  auto out = parse_string("pipeline p {\n  step a = f(s: \"\\q ${} ${x.}\")\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:2:18: error: unknown escape sequence '\\q' (use \\\" \\\\ \\n \\t or \\$)\n"
            "  step a = f(s: \"\\q ${} ${x.}\")\n"
            "                 ^~\n"
            "input:2:23: error: expected a name after '${' (e.g. ${batch_size} or ${train.model})\n"
            "  step a = f(s: \"\\q ${} ${x.}\")\n"
            "                      ^\n"
            "input:2:29: error: expected a name after '.' in '${...}'\n"
            "  step a = f(s: \"\\q ${} ${x.}\")\n"
            "                            ^\n");
}

TEST(Parser, RejectsInvalidUtf8) {
  auto out = parse_string("pipeline p {\n  description \"caf\xc3\xa9 \xff\"\n}\n");
  EXPECT_EQ(out.diagnostics,
            "input:2:22: error: invalid UTF-8 byte 0xff\n"
            "  description \"caf\xc3\xa9 ?\"\n"
            "                    ^\n");
}

TEST(Parser, RejectsOverlongUtf8) {
  auto out = parse_string("# \xc0\xaf\n");
  EXPECT_EQ(out.diagnostics, "input:1:3: error: invalid UTF-8 byte 0xc0\n# ??\n  ^\n");
}

TEST(Parser, RejectsNulByte) {
  auto out = parse_string(std::string("pipeline p {\0}\n", 15));
  EXPECT_EQ(out.diagnostics,
            "input:1:13: error: source contains a NUL byte\n"
            "pipeline p {?}\n"
            "            ^\n");
}

TEST(Parser, AcceptsNestingUpToTheLimit) {
  std::string deep(kMaxNesting - 2, '[');
  std::string text =
      "pipeline p {\n  param x: list<int> = " + deep + std::string(kMaxNesting - 2, ']') + "\n}\n";
  auto out = parse_string(text);
  EXPECT_TRUE(out.module) << out.diagnostics;
}

// The pipeline's own '{' is the first level, so the 256th '(' is one too many.
TEST(Parser, RejectsDeepNestingWithoutOverflow) {
  std::string text = "pipeline p {\n  param x: int = " + std::string(100000, '(') + "\n}\n";
  auto out = parse_string(text);
  EXPECT_FALSE(out.module);
  EXPECT_NE(out.diagnostics.find("input:2:273: error: nesting deeper than 256 levels\n"),
            std::string::npos)
      << out.diagnostics;
}

TEST(Parser, RejectsLongNotAndElseIfChains) {
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  auto out = parse_string("pipeline p {\n  if " + nots + "x { }\n}\n");
  EXPECT_NE(out.diagnostics.find("error: nesting deeper than 256 levels"), std::string::npos);
  std::string chain = "pipeline p {\n  if a { }";
  for (int i = 0; i < 100000; ++i) chain += " else if a { }";
  out = parse_string(chain + "\n}\n");
  EXPECT_NE(out.diagnostics.find("error: nesting deeper than 256 levels"), std::string::npos);
}

TEST(Parser, HandlesALargeFile) {
  std::string text = "pipeline p {\n";
  while (text.size() < 5'000'000)
    text += "  step s" + std::to_string(text.size()) + " = f(x: [1, 2, \"abc\"], y: 2)\n";
  text += "}\n";
  auto out = parse_string(text);
  ASSERT_TRUE(out.module) << out.diagnostics.substr(0, 500);
  EXPECT_GT(pipeline_of(*out.module).body.statements.size(), 100000u);
}

}  // namespace
}  // namespace pipec::syntax
