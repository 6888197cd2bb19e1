#include "compiler/syntax/lexer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace pipec::syntax::lex {
namespace {

// "Kind:text" for every token but blanks, newlines as "NL".
std::vector<std::string> shown(std::string_view text) {
  std::vector<std::string> out;
  for (const Token& t : tokenize(text)) {
    std::string kind;
    switch (t.kind) {
      case TokenKind::Blank: continue;
      case TokenKind::Newline: out.push_back("NL"); continue;
      case TokenKind::Comment: kind = "comment"; break;
      case TokenKind::DocComment: kind = "doc"; break;
      case TokenKind::Word: kind = "word"; break;
      case TokenKind::Number: kind = "number"; break;
      case TokenKind::String: kind = "string"; break;
      case TokenKind::RawBlock: kind = "raw"; break;
      case TokenKind::Punct: kind = "punct"; break;
      case TokenKind::Invalid: kind = "invalid"; break;
    }
    out.push_back(kind + ":" + std::string(t.text(text)));
  }
  return out;
}

using V = std::vector<std::string>;

TEST(Lexer, TokensTileTheText) {
  std::string text = "op a(x: int = -3) -> (y: string) { # c\r\n  image \"b\" }\n## d\n\"\"\"u";
  std::string joined;
  std::uint32_t at = 0;
  for (const Token& t : tokenize(text)) {
    EXPECT_EQ(t.begin, at);
    EXPECT_LT(t.begin, t.end);
    joined += t.text(text);
    at = t.end;
  }
  EXPECT_EQ(joined, text);
}

TEST(Lexer, WordsNumbersAndOperators) {
  EXPECT_EQ(shown("param n: int in 1..64 = -3"),
            (V{"word:param", "word:n", "punct::", "word:int", "word:in", "number:1", "punct:..",
               "number:64", "punct:=", "number:-3"}));
  EXPECT_EQ(shown("x>=1e-3 and y!=0.5 or z->w<=2E+4"),
            (V{"word:x", "punct:>=", "number:1e-3", "word:and", "word:y", "punct:!=", "number:0.5",
               "word:or", "word:z", "punct:->", "word:w", "punct:<=", "number:2E+4"}));
  // A number runs into no word; `1e` has no exponent digits; a lone '-' or '!' is no token of
  // the language.
  EXPECT_EQ(shown("1x 1e - !"), (V{"invalid:1x", "invalid:1e", "invalid:-", "invalid:!"}));
  EXPECT_TRUE(is_keyword("pipeline"));
  EXPECT_FALSE(is_keyword("pipelines"));
  EXPECT_FALSE(is_keyword("limit"));  // a keyword only where the grammar reads it
}

TEST(Lexer, StringsKeepEscapesAndInterpolationInOneToken) {
  EXPECT_EQ(shown(R"(a: "x\"y ${b.c} \${d} \\" z)"),
            (V{"word:a", "punct::", R"(string:"x\"y ${b.c} \${d} \\")", "word:z"}));
  // A backslash at a line's end continues a "..." string on the next line.
  EXPECT_EQ(shown("\"a\\\nb\" c"), (V{"string:\"a\\\nb\"", "word:c"}));
  // """ ... """ holds lines, quotes and escaped triple quotes.
  EXPECT_EQ(shown("\"\"\"\n  say \"hi\" \\\"\"\" # no comment\n\"\"\" x"),
            (V{"string:\"\"\"\n  say \"hi\" \\\"\"\" # no comment\n\"\"\"", "word:x"}));
  EXPECT_EQ(shown("\"\" \"\"\"\"\"\""), (V{"string:\"\"", "string:\"\"\"\"\"\""}));
}

TEST(Lexer, UnclosedStrings) {
  const char* text = "\"abc\nd";
  StringEnd s = scan_string(text, text + 6);
  EXPECT_FALSE(s.closed);
  EXPECT_FALSE(s.triple);
  EXPECT_EQ(s.end, text + 4);  // before the line's end
  const char* triple = "\"\"\"abc\n\\";
  s = scan_string(triple, triple + 8);
  EXPECT_FALSE(s.closed);
  EXPECT_TRUE(s.triple);
  EXPECT_EQ(s.end, triple + 8);  // at the end of the text, past the last backslash
}

TEST(Lexer, RawBlocksAreOneTokenReadAsWritten) {
  // Quotes, `#`, `${`, a backslash and a shorter fence inside are text; the closing fence (as
  // long as the opening one) ends the token.
  EXPECT_EQ(shown("s: ````python\n  x = \"a # b\" ${c} \\\n  ```\n  ````\n)"),
            (V{"word:s", "punct::", "raw:````python\n  x = \"a # b\" ${c} \\\n  ```\n  ````", "NL",
               "punct:)"}));
  // Backticks in a string or a comment open none; fewer than three are no token of the
  // language.
  EXPECT_EQ(shown("\"```\" # ```\n``"),
            (V{"string:\"```\"", "comment:# ```", "NL", "invalid:`", "invalid:`"}));
  // Never closed: the token runs to the end of the text.
  EXPECT_EQ(shown("a ```\nx \"\n``\n"), (V{"word:a", "raw:```\nx \"\n``\n"}));
  std::string_view open = "```\nx\n";
  RawEnd raw = scan_raw(open.data(), open.data() + open.size());
  EXPECT_FALSE(raw.closed);
  EXPECT_EQ(raw.end, open.data() + open.size());
  std::string_view closed = "```\nx\n```";
  raw = scan_raw(closed.data(), closed.data() + closed.size());
  EXPECT_TRUE(raw.closed);
  EXPECT_EQ(raw.end, closed.data() + closed.size());
  EXPECT_EQ(scan_raw(closed.data() + 1, closed.data() + closed.size()).end, closed.data() + 1);
}

TEST(Lexer, CommentsAndDocComments) {
  EXPECT_EQ(shown("## doc \r\n# plain \"not a string\"\nx # end"),
            (V{"doc:## doc \r", "NL", "comment:# plain \"not a string\"", "NL", "word:x", "comment:# end"}));
  EXPECT_EQ(doc_comment_text("## doc \r"), "doc");
  EXPECT_EQ(doc_comment_text("##  two spaces"), " two spaces");
  EXPECT_EQ(doc_comment_text("##"), "");
  EXPECT_EQ(doc_comment_text("### three"), "# three");
}

TEST(Lexer, InvisibleCharactersAreTokensOfTheirOwn) {
  // U+200B ZERO WIDTH SPACE between tokens, U+202E in a comment and a string.
  EXPECT_EQ(shown("a\u200B= \"\u202E\" # \u202E"),
            (V{"word:a", "invalid:\u200B", "punct:=", "string:\"\u202E\"", "comment:# \u202E"}));
}

TEST(Lexer, SkipSpaceTakesBlanksNewlinesAndComments) {
  std::string_view text = " \t\r\n# c\n  ## d\nx";
  EXPECT_EQ(skip_space(text.data(), text.data() + text.size()), text.data() + text.size() - 1);
}

}  // namespace
}  // namespace pipec::syntax::lex
