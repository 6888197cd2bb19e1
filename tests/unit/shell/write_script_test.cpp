// compiler/shell: where a reference lands in a shell-form script, by the quoting context
// the user wrote it in, and the contexts where no placement is safe (docs/language.md,
// "Quoting in shell-form commands"). tests/shell runs the scripts with /bin/sh; this
// checks the text and the diagnostics of each context alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/shell/shell_script.hpp"

namespace pipec {
namespace {

// `text` with every `@` standing for a reference to parameter `x`.
std::vector<ir::Part> parts_of(const std::string& text) {
  std::vector<ir::Part> parts;
  std::string run;
  for (char c : text) {
    if (c != '@') {
      run += c;
      continue;
    }
    if (!run.empty()) parts.push_back(ir::Part{run, std::nullopt, {}});
    run.clear();
    ir::Ref ref;
    ref.kind = ir::Ref::Kind::Param;
    ref.name = "x";
    ref.range = SourceRange{1, 0, 1};
    parts.push_back(ir::Part{{}, ref, {}});
  }
  if (!run.empty()) parts.push_back(ir::Part{run, std::nullopt, {}});
  return parts;
}

struct Written {
  bool ok = false;
  std::string script;
  Diagnostics diags;
};

Written write(const std::string& text) {
  Written w;
  w.ok = shell::write_script(
      parts_of(text), [](const ir::Ref& r) { return shell::script_variable(r.name); }, SourceRange{1, 0, 1},
      w.script, w.diags);
  return w;
}

TEST(WriteScript, ABareReferenceIsOneQuotedWord) {
  Written w = write("echo @ done");
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.script, "echo \"${PIPEC_x}\" done");
}

TEST(WriteScript, InsideDoubleQuotesTheVariableStandsAlone) {
  Written w = write("echo \"a @ b\"");
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.script, "echo \"a ${PIPEC_x} b\"");
}

TEST(WriteScript, InsideSingleQuotesTheQuoteIsClosedAndReopened) {
  Written w = write("echo 'a @ b'");
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.script, "echo 'a '\"${PIPEC_x}\"' b'");
}

TEST(WriteScript, InsideACommandSubstitutionItIsBareAgain) {
  Written w = write("echo \"$(basename @)\"");
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.script, "echo \"$(basename \"${PIPEC_x}\")\"");
}

TEST(WriteScript, ContextsWithoutASafePlaceAreErrors) {
  for (const char* text : {"echo `@`", "echo $((@ + 1))", "cat <<'EOF'\n@\nEOF\n"}) {
    Written w = write(text);
    EXPECT_FALSE(w.ok) << text;
    EXPECT_TRUE(w.diags.has_errors()) << text;
  }
}

TEST(WriteScript, InACommentTheWordIsInert) {
  Written w = write("true # @");
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.script, "true # \"${PIPEC_x}\"");
}

TEST(WriteScript, AnUnquotedHereDocumentTakesTheVariable) {
  Written w = write("cat <<EOF\n@\nEOF\n");
  ASSERT_TRUE(w.ok);
  EXPECT_EQ(w.script, "cat <<EOF\n${PIPEC_x}\nEOF\n");
}

TEST(WriteScript, ALineStartingWithADashAfterACompleteLineIsWarned) {
  Written w = write("train @\n--epochs 3");
  EXPECT_TRUE(w.ok);
  EXPECT_FALSE(w.diags.has_errors());
  EXPECT_EQ(w.diags.warning_count(), 1u);
}

}  // namespace
}  // namespace pipec
