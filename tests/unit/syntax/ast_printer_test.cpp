#include "compiler/syntax/ast_printer.hpp"

#include <gtest/gtest.h>

#include "tests/unit/syntax/test_support.hpp"

namespace pipec::syntax {
namespace {

TEST(AstPrinter, PrintsDecodedTreeWithPrecedence) {
  auto out = testing::parse_string(
      "use arena\n"
      "op f(x: list<int> = [1, 2]) -> (y: string) {\n"
      "  image \"img\"\n"
      "}\n"
      "pipeline p {\n"
      "  description \"\"\"\n"
      "    two\n"
      "      lines\n"
      "  \"\"\"\n"
      "  param n: int in 1..3 = 2\n"
      "  if n > 1 and not (a or b) {\n"
      "    step s = f(x: [n], z: {K: \"v ${n}\"}) after t\n"
      "  } else {\n"
      "    for i in xs { }\n"
      "  }\n"
      "  finally { }\n"
      "}\n");
  ASSERT_TRUE(out.module) << out.diagnostics;
  EXPECT_EQ(print_ast(*out.module),
            "(use arena)\n"
            "(op f)\n"
            "  (param x: list<int> = (list (number 1) (number 2)))\n"
            "  (output y: string)\n"
            "  (image (string \"img\"))\n"
            "(pipeline p)\n"
            "  (description (string \"two\\n  lines\"))\n"
            "  (param n: int in (number 1)..(number 3) = (number 2))\n"
            "  (if (and (> (ref n) (number 1)) (not (or (ref a) (ref b)))))\n"
            "    (step s = f after t)\n"
            "      (arg x (list (ref n)))\n"
            "      (arg z (map K: (string \"v \" ${n})))\n"
            "  (else)\n"
            "    (for i in (ref xs))\n"
            "  (finally)\n");
}

}  // namespace
}  // namespace pipec::syntax
