// compiler/driver: the one-screen report `pipec build` prints, on lowered pipelines.
#include "compiler/driver/summary.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/unit/syntax/test_support.hpp"

namespace pipec::driver {
namespace {

std::string summary_of(const std::string& text, std::size_t bytes = 2048) {
  auto out = testing::check_string(text);
  EXPECT_TRUE(out.pipeline) << out.diagnostics;
  if (!out.pipeline) return "";
  std::ostringstream s;
  print_summary(*out.pipeline, "out.yaml", bytes, s);
  return s.str();
}

const char* const kOp =
    "op echo(msg: string = \"\") {\n"
    "  image \"busybox\"\n"
    "  command [\"echo\", \"${msg}\"]\n"
    "}\n";

TEST(Summary, StepsParametersAndTheFileWritten) {
  std::string s = summary_of(std::string(kOp) +
                             "pipeline p {\n  param greeting: string = \"hi\"\n  param n: int\n"
                             "  step a = echo(msg: greeting)\n"
                             "  for x in [\"1\", \"2\"] {\n    step b = echo(msg: x)\n  }\n"
                             "  finally {\n    step c = echo(msg: \"bye\")\n  }\n"
                             "}\n");
  EXPECT_NE(s.find("pipeline p: 2 steps, 2 parameters\n"), std::string::npos) << s;
  EXPECT_NE(s.find("    b  echo  (in for x)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  finally:\n    c  echo\n"), std::string::npos) << s;
  EXPECT_NE(s.find("greeting  string = \"hi\""), std::string::npos) << s;
  EXPECT_NE(s.find("n         int (required)"), std::string::npos) << s;
  EXPECT_NE(s.find("  wrote out.yaml (2.0 KiB)\n"), std::string::npos) << s;
}

// A default with a newline or a quote stays on its row, escaped.
TEST(Summary, ADefaultCannotBreakTheTable) {
  std::string s = summary_of(std::string(kOp) +
                             "pipeline p {\n  param m: string = \"a\\nb\\\"c\"\n  step a = echo(msg: m)\n}\n",
                             10);
  EXPECT_NE(s.find("m  string = \"a\\nb\\\"c\"\n"), std::string::npos) << s;
  EXPECT_NE(s.find("(10 B)"), std::string::npos) << s;
}

TEST(Summary, LongListsAreCutWithACount) {
  std::string text = kOp;
  text += "pipeline p {\n";
  for (int i = 0; i < 15; ++i) text += "  step s" + std::to_string(i) + " = echo()\n";
  text += "}\n";
  std::string s = summary_of(text);
  EXPECT_NE(s.find("15 steps"), std::string::npos) << s;
  EXPECT_NE(s.find("    ... and 3 more\n"), std::string::npos) << s;
  EXPECT_EQ(s.find("s12 "), std::string::npos) << s;
}

}  // namespace
}  // namespace pipec::driver
