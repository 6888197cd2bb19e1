#include "compiler/base/diagnostics.hpp"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pipec {
namespace {

std::string render_text(const Diagnostics& diags, const SourceManager& sources) {
  std::ostringstream out;
  render(diags, sources, out, RenderOptions{});
  return out.str();
}

TEST(Diagnostics, RendersClangFormWithCaretAndTildes) {
  SourceManager sources;
  FileId f = sources.add("input", "pipeline p {\n  param n: int = \"x\"\n}\n");
  Diagnostics diags;
  diags.error({f, 30, 33}, "default for 'n' must be int, got string");
  EXPECT_EQ(render_text(diags, sources),
            "input:2:18: error: default for 'n' must be int, got string\n"
            "  param n: int = \"x\"\n"
            "                 ^~~\n");
  EXPECT_TRUE(diags.has_errors());
  EXPECT_EQ(diags.error_count(), 1u);
}

TEST(Diagnostics, NoteWithEmptyRangeHasNoSourceLine) {
  SourceManager sources;
  FileId f = sources.add("a.pipe", "step x = op()\n");
  Diagnostics diags;
  diags.error({f, 9, 11}, "unknown op 'op'");
  diags.note({f, 0, 0}, "did you mean 'opp'?");
  EXPECT_EQ(render_text(diags, sources),
            "a.pipe:1:10: error: unknown op 'op'\n"
            "step x = op()\n"
            "         ^~\n"
            "a.pipe:1:1: note: did you mean 'opp'?\n");
  EXPECT_EQ(diags.error_count(), 1u);
}

TEST(Diagnostics, UnlocatedErrorUsesProgramName) {
  SourceManager sources;
  Diagnostics diags;
  diags.error({}, "cannot read 'x.pipe': No such file or directory");
  EXPECT_EQ(render_text(diags, sources), "pipec: error: cannot read 'x.pipe': No such file or directory\n");
}

TEST(Diagnostics, TabsAreKeptUnderTabsAndControlBytesMasked) {
  SourceManager sources;
  FileId f = sources.add("t", "\tab\x01 cd\n");
  Diagnostics diags;
  diags.warning({f, 5, 7}, "odd");
  EXPECT_EQ(render_text(diags, sources), "t:1:6: warning: odd\n\tab? cd\n\t    ^~\n");
}

TEST(Diagnostics, CaretCountsCharactersNotBytes) {
  // "é" is two bytes and one character: the caret stays under the name, and the tildes
  // cover a range of non-ASCII text once per character. Columns stay in bytes.
  SourceManager sources;
  FileId f = sources.add("u", "x = \"\xc3\xa9 \xc3\xa9\", y: zz\n");
  Diagnostics diags;
  diags.error({f, 16, 18}, "unknown name 'zz'");
  diags.error({f, 5, 10}, "whole string");
  EXPECT_EQ(render_text(diags, sources),
            "u:1:17: error: unknown name 'zz'\n"
            "x = \"\xc3\xa9 \xc3\xa9\", y: zz\n"
            "              ^~\n"
            "u:1:6: error: whole string\n"
            "x = \"\xc3\xa9 \xc3\xa9\", y: zz\n"
            "     ^~~\n");
}

TEST(Diagnostics, InvalidUtf8IsMaskedOneCellPerByte) {
  // Bytes that are not UTF-8 (a lone 0xff, a truncated sequence, an overlong '/') never
  // reach the terminal: each shows as one '?', so the caret after them still lines up.
  SourceManager sources;
  FileId f = sources.add("b", "s = \"\xff\xe2\x82\" \xc0\xaf zz\n");
  Diagnostics diags;
  diags.error({f, 13, 15}, "here");
  EXPECT_EQ(render_text(diags, sources), "b:1:14: error: here\ns = \"???\" ?? zz\n             ^~\n");
}

TEST(Diagnostics, LongLinesAreCutAroundTheRange) {
  SourceManager sources;
  std::string line = std::string(200, 'a') + "BAD" + std::string(200, 'b');
  FileId f = sources.add("long", line + "\n");
  Diagnostics diags;
  diags.error({f, 200, 203}, "bad");
  std::string out = render_text(diags, sources);
  EXPECT_NE(out.find("long:1:201: error: bad\n..."), std::string::npos);
  std::string shown = out.substr(out.find('\n') + 1);
  std::string source_line = shown.substr(0, shown.find('\n'));
  std::string caret_line = shown.substr(shown.find('\n') + 1);
  EXPECT_LT(source_line.size(), 130u);
  EXPECT_EQ(source_line.substr(source_line.find('^') == std::string::npos ? caret_line.find('^') : 0, 3), "BAD");
  EXPECT_EQ(caret_line, std::string(caret_line.find('^'), ' ') + "^~~\n");
}

TEST(Diagnostics, JsonGroupsNotesUnderTheirError) {
  SourceManager sources;
  FileId f = sources.add("a.pipe", "x\ny gpu\n");
  Diagnostics diags;
  diags.error({f, 4, 7}, "unknown argument 'gpu'");
  diags.note({f, 4, 7}, "did you mean 'gpus'?");
  diags.warning({f, 0, 1}, "unused");
  std::ostringstream out;
  render(diags, sources, out, RenderOptions{DiagnosticFormat::Json, false});
  std::istringstream lines(out.str());
  std::string first, second, third;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_FALSE(std::getline(lines, third));
  auto a = nlohmann::json::parse(first);
  EXPECT_EQ(a["severity"], "error");
  EXPECT_EQ(a["message"], "unknown argument 'gpu'");
  EXPECT_EQ(a["location"]["file"], "a.pipe");
  EXPECT_EQ(a["location"]["line"], 2);
  EXPECT_EQ(a["location"]["column"], 3);
  EXPECT_EQ(a["location"]["length"], 3);
  ASSERT_EQ(a["notes"].size(), 1u);
  EXPECT_EQ(a["notes"][0]["message"], "did you mean 'gpus'?");
  auto b = nlohmann::json::parse(second);
  EXPECT_EQ(b["severity"], "warning");
  EXPECT_TRUE(b["notes"].empty());
}

TEST(Diagnostics, StopsRecordingAfterTheErrorLimit) {
  SourceManager sources;
  Diagnostics diags;
  for (int i = 0; i < 500; ++i) diags.error({}, "e");
  EXPECT_EQ(diags.error_count(), 500u);
  EXPECT_EQ(diags.all().size(), Diagnostics::kMaxErrors + 1);
  EXPECT_EQ(diags.errors_not_shown(), 400u);
  // The last item carries the count when rendered, as text and as JSON.
  std::ostringstream text, json;
  render(diags, sources, text, {});
  EXPECT_NE(text.str().find("error: too many errors: 100 shown, 400 more not shown (500 in all)\n"),
            std::string::npos)
      << text.str();
  render(diags, sources, json, {DiagnosticFormat::Json, false});
  std::string last = json.str().substr(json.str().rfind('{', json.str().size() - 3));
  EXPECT_NE(last.find("\"message\":\"too many errors: 100 shown, 400 more not shown (500 in all)\""),
            std::string::npos)
      << last;
  EXPECT_NE(last.find("\"not_shown\":400"), std::string::npos) << last;
}

TEST(Diagnostics, TheSameWarningAtTheSamePlaceIsShownOnce) {
  // An op's warning, found again for each of three steps that call it.
  SourceManager sources;
  FileId f = sources.add("x", "op a() {}\n");
  Diagnostics diags;
  for (int i = 0; i < 3; ++i) {
    diags.warning({f, 3, 4}, "w");
    diags.note({f, 0, 2}, "n");
  }
  diags.warning({f, 3, 4}, "another");
  diags.warning({f, 0, 2}, "w");
  ASSERT_EQ(diags.all().size(), 4u);
  EXPECT_EQ(diags.all()[0].message, "w");
  EXPECT_EQ(diags.all()[1].message, "n");
  EXPECT_EQ(diags.all()[2].message, "another");
  EXPECT_EQ(diags.all()[3].range.begin, 0u);
  EXPECT_EQ(diags.warning_count(), 3u);
}

TEST(SourceManager, LineAndColumnAreOneBasedBytes) {
  SourceManager sources;
  FileId f = sources.add("x", "ab\ncdé\nf");
  EXPECT_EQ(sources.line_col(f, 0).line, 1u);
  EXPECT_EQ(sources.line_col(f, 3).line, 2u);
  EXPECT_EQ(sources.line_col(f, 3).column, 1u);
  EXPECT_EQ(sources.line_col(f, 8).line, 3u);
  EXPECT_EQ(sources.line_text(f, 2), "cdé");
  EXPECT_EQ(sources.line_text(f, 3), "f");
  EXPECT_EQ(sources.line_text(f, 4), "");
}

TEST(SourceManager, LoadReportsMissingFile) {
  SourceManager sources;
  std::string error;
  EXPECT_EQ(sources.load("/nonexistent/dir/x.pipe", error), kNoFile);
  EXPECT_EQ(error, "No such file or directory");
}

}  // namespace
}  // namespace pipec
