// One lexer for the parser and `pipec fmt` (issue 24): over every .pipe of the repository,
// the lexer's tokens tile the file, every name, string and number the parser read is one
// token of the lexer (a raw block too), and fmt keeps every token but blanks and newlines (a
// raw block as written, line for line).
#include <gtest/gtest.h>

#include <boost/spirit/home/x3/support/traits/is_variant.hpp>
#include <boost/fusion/include/for_each.hpp>
#include <boost/fusion/include/is_sequence.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/syntax/ast_adapted.hpp"
#include "compiler/syntax/lexer.hpp"
#include "compiler/syntax/parser.hpp"
#include "compiler/tools/format.hpp"

namespace pipec {
namespace {

namespace fs = std::filesystem;
namespace x3 = boost::spirit::x3;
using syntax::lex::Token;
using syntax::lex::TokenKind;

std::vector<fs::path> repository_programs() {
  std::vector<fs::path> out;
  fs::path root(PIPEC_SOURCE_DIR);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    // Hidden files are no programs of the repository (tests/fmt writes `.fmt-*` twins beside
    // the programs while it runs).
    std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name.front() == '.' || name == "node_modules")) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file() && it->path().extension() == ".pipe" && name.front() != '.') {
      out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every name, string, number and bool of a tree, with the token kind it must be.
struct Leaves {
  std::vector<std::pair<SourceRange, TokenKind>> found;

  template <typename T>
  void operator()(const T& node) {
    if constexpr (std::is_same_v<T, syntax::ast::Identifier> || std::is_same_v<T, syntax::ast::BoolLit>) {
      found.push_back({node.range, TokenKind::Word});
    } else if constexpr (std::is_same_v<T, syntax::ast::StringLit>) {
      found.push_back(
          {node.range, syntax::raw_block_at(node.raw, 0) ? TokenKind::RawBlock : TokenKind::String});
    } else if constexpr (std::is_same_v<T, syntax::ast::NumberLit>) {
      found.push_back({node.range, TokenKind::Number});
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, char>) {
      // a keyword kept as text, a bracket
    } else if constexpr (x3::traits::is_variant<T>::value) {
      boost::apply_visitor([&](const auto& n) { (*this)(n); }, node.get());
    } else if constexpr (boost::fusion::traits::is_sequence<T>::value) {
      boost::fusion::for_each(node, [&](const auto& member) { (*this)(member); });
    } else {
      visit_container(node);
    }
  }
  template <typename T>
  void visit_container(const std::vector<T>& items) {
    for (const auto& item : items) (*this)(item);
  }
  template <typename T>
  void visit_container(const boost::optional<T>& item) {
    if (item) (*this)(*item);
  }
  template <typename T>
  void visit_container(const x3::forward_ast<T>& item) {
    (*this)(item.get());
  }
};

// The tokens a layout keeps: all but blanks and newlines, comments without their trailing
// blanks.
std::vector<std::pair<TokenKind, std::string>> kept_tokens(std::string_view text) {
  std::vector<std::pair<TokenKind, std::string>> out;
  for (const Token& t : syntax::lex::tokenize(text)) {
    if (t.kind == TokenKind::Blank || t.kind == TokenKind::Newline) continue;
    std::string s(t.text(text));
    if (t.kind == TokenKind::Comment || t.kind == TokenKind::DocComment)
      while (syntax::lex::is_blank(s.back())) s.pop_back();
    out.push_back({t.kind, s});
  }
  return out;
}

TEST(LexerAgreement, EveryProgramOfTheRepository) {
  std::vector<fs::path> programs = repository_programs();
  ASSERT_GT(programs.size(), 100u) << "the programs of the repository were not found under " PIPEC_SOURCE_DIR;
  std::size_t accepted = 0, leaves_checked = 0, raw_blocks = 0;
  for (const fs::path& path : programs) {
    SCOPED_TRACE(path.string());
    SourceManager sources;
    FileId file = sources.add(path.string(), read(path));
    std::string_view text = sources.text(file);  // a byte-order mark left out, as the parser reads it
    std::vector<Token> tokens = syntax::lex::tokenize(text);
    // The tokens tile the file: in order, touching, none empty.
    std::string joined;
    for (const Token& t : tokens) {
      ASSERT_EQ(t.begin, joined.size());
      ASSERT_LT(t.begin, t.end);
      joined += t.text(text);
    }
    ASSERT_EQ(joined, text);

    Diagnostics diags;
    auto module = syntax::parse(sources, file, diags);
    if (!module || diags.has_errors()) continue;
    ++accepted;
    // What the parser read is what the lexer cut: each leaf of the tree is one token.
    for (const Token& t : tokens) EXPECT_NE(t.kind, TokenKind::Invalid) << t.text(text);
    Leaves leaves;
    for (const auto& decl : module->decls) leaves(decl);
    leaves_checked += leaves.found.size();
    for (const auto& [range, kind] : leaves.found) {
      auto token = std::lower_bound(tokens.begin(), tokens.end(), range.begin,
                                    [](const Token& t, std::uint32_t at) { return t.begin < at; });
      ASSERT_TRUE(token != tokens.end() && token->begin == range.begin)
          << "no token starts at " << range.begin << ": "
          << text.substr(range.begin, range.end - range.begin);
      EXPECT_EQ(token->end, range.end) << token->text(text);
      EXPECT_EQ(static_cast<int>(token->kind), static_cast<int>(kind)) << token->text(text);
      if (kind == TokenKind::RawBlock) ++raw_blocks;
    }
    // fmt lays out the same tokens.
    std::string formatted = tools::format_source(text);
    EXPECT_EQ(kept_tokens(formatted), kept_tokens(text));
  }
  EXPECT_GT(accepted, programs.size() / 2);
  EXPECT_GT(leaves_checked, 2000u);
  EXPECT_GT(raw_blocks, 0u) << "no raw block among the programs of the repository";
}

}  // namespace
}  // namespace pipec
