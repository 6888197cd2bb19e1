// parse(): the facade over the X3 grammar. Expects a file held by `sources`.
// Guarantees: X3's exceptions never leave this file; every syntax error is one
// located diagnostic; on success every StringLit has its `parts` and every param,
// op and pipeline its doc comment. The characters are read by the lexer (lexer.hpp):
// the checks before the grammar walk its tokens and the error recovery skips with its
// scanners.
#include "compiler/syntax/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/spirit/home/x3.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/base/spellcheck.hpp"
#include "input/utf8.hpp"
#include "compiler/syntax/config.hpp"
#include "compiler/syntax/lexer.hpp"
#include "compiler/syntax/module.hpp"

namespace pipec::syntax {

namespace x3 = boost::spirit::x3;

namespace {

using lex::is_ident_char;

SourceRange range_in(FileId file, std::size_t begin, std::size_t end) {
  return SourceRange{file, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)};
}

// Reports the first byte that is not valid UTF-8, or a NUL byte. Returns false then.
// `ascii` tells whether every byte is below 0x80.
bool check_encoding(std::string_view text, FileId file, Diagnostics& diags, bool& ascii) {
  ascii = true;
  std::size_t i = 0;
  while (i < text.size()) {
    // Fast path: eight ASCII bytes, none of them NUL.
    if (i + 8 <= text.size()) {
      std::uint64_t w;
      std::memcpy(&w, text.data() + i, 8);
      constexpr std::uint64_t kLow = 0x0101010101010101u, kHigh = 0x8080808080808080u;
      if ((w & kHigh) == 0 && ((w - kLow) & ~w & kHigh) == 0) {
        i += 8;
        continue;
      }
    }
    auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) {
      diags.error(range_in(file, i, i + 1), "source contains a NUL byte");
      return false;
    }
    std::size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      diags.error(range_in(file, i, i + 1), fmt::format("invalid UTF-8 byte 0x{:02x}", c));
      return false;
    }
    if (len > 1) ascii = false;
    i += len;
  }
  return true;
}

// A package or archive given where a program belongs (`pipec build pipeline.tar.gz`):
// its magic bytes name it, instead of a UTF-8 error and a line of binary. Returns false
// after reporting it.
bool check_not_package(std::string_view text, std::string_view name, Diagnostics& diags) {
  const char* kind = text.substr(0, 2) == "\x1f\x8b"                                     ? "gzip-compressed"
                     : text.substr(0, 4) == std::string_view("PK\x03\x04", 4) ||
                             text.substr(0, 4) == std::string_view("PK\x05\x06", 4) ? "zip"
                     : text.size() >= 262 && text.substr(257, 5) == "ustar"          ? "tar"
                                                                                      : nullptr;
  if (!kind) return true;
  diags.error({}, fmt::format("'{}' is a {} file, not a .pipe program: give the .pipe file it was built "
                              "from (a package goes to Kubeflow as it is: 'pipec upload {}')",
                              name, kind, name));
  return false;
}

// Invisible characters between tokens are errors, named by code point and name at their
// place; bidirectional controls in comments, strings and raw blocks are warnings, since they
// can make a line display in another order than it is read. Returns false after an error. The
// text is valid UTF-8 (check_encoding ran); only a text with bytes >= 0x80 needs the walk.
bool check_invisible(std::string_view text, FileId file, Diagnostics& diags) {
  bool ok = true;
  lex::Lexer lexer(text);
  while (!lexer.done()) {
    lex::Token token = lexer.next();
    // Between tokens, a character that starts none is an Invalid token of its own.
    bool code = token.kind == lex::TokenKind::Invalid;
    if (!code && token.kind != lex::TokenKind::Comment && token.kind != lex::TokenKind::DocComment &&
        token.kind != lex::TokenKind::String && token.kind != lex::TokenKind::RawBlock)
      continue;
    for (std::size_t i = token.begin; i < token.end;) {
      if (static_cast<unsigned char>(text[i]) < 0x80) {
        ++i;
        continue;
      }
      std::size_t len = utf8_sequence_length(text, i);
      if (len == 0) len = 1;  // not reached: the encoding was checked
      char32_t cp = utf8_code_point(text, i, len);
      if (const char* name = invisible_character_name(cp)) {
        if (code) {
          diags.error(range_in(file, i, i + len),
                      fmt::format("invisible character U+{:04X} {} between the tokens here: delete it",
                                  static_cast<std::uint32_t>(cp), name));
          ok = false;
        } else if (is_bidi_control(cp)) {
          diags.warning(range_in(file, i, i + len),
                        fmt::format("bidirectional control character U+{:04X} {} in a {}: the line may "
                                    "display in another order than pipec reads it (Trojan Source, "
                                    "CVE-2021-42574); delete it unless it is meant",
                                    static_cast<std::uint32_t>(cp), name,
                                    token.kind == lex::TokenKind::String     ? "string"
                                    : token.kind == lex::TokenKind::RawBlock ? "raw block"
                                                                             : "comment"));
        }
      }
      i += len;
    }
  }
  return ok;
}

// One walk over the lexer's tokens before the grammar runs. It bounds the depth the grammar
// recurses to (once per bracket, `not` and `else if`), so deep input gets an error instead of
// overflowing the stack, and collects the `##` doc comments (`docs`, in text order) for the
// declarations they document.
bool check_nesting(std::string_view text, FileId file, Diagnostics& diags, std::vector<lex::Token>& docs) {
  int depth = 0;
  int open_types = 0;  // `<` of list<...>/map<...> not yet closed
  int not_run = 0;
  std::vector<int> else_if_chain(1, 0);
  std::string_view prev_word;
  auto too_deep = [&](std::size_t at, std::size_t len) {
    diags.error(range_in(file, at, at + len),
                fmt::format("nesting deeper than {} levels", kMaxNesting));
    return false;
  };
  lex::Lexer lexer(text);
  for (lexer.skip_layout(); !lexer.done(); lexer.skip_layout()) {
    lex::Token token = lexer.next();
    switch (token.kind) {
      case lex::TokenKind::Blank:
      case lex::TokenKind::Newline:
      case lex::TokenKind::Comment:
        continue;
      case lex::TokenKind::DocComment:
        docs.push_back(token);
        continue;
      case lex::TokenKind::String:
      case lex::TokenKind::RawBlock:
        not_run = 0;
        prev_word = {};
        continue;
      case lex::TokenKind::Word:
      case lex::TokenKind::Number: {
        std::string_view word = token.text(text);
        if (word == "not") {
          if (depth + ++not_run > kMaxNesting) return too_deep(token.begin, word.size());
        } else {
          not_run = 0;
        }
        int& chain = else_if_chain.back();
        if (word == "if" && prev_word == "else") {
          if (depth + ++chain > kMaxNesting) return too_deep(token.begin, word.size());
        } else if (word == "if" || word == "step" || word == "param" || word == "for" ||
                   word == "finally" || word == "description") {
          chain = 0;
        }
        prev_word = word;
        continue;
      }
      case lex::TokenKind::Punct:
      case lex::TokenKind::Invalid:
        break;
    }
    // Brackets one character at a time: the grammar reads `list<int>=` as `>` and `=`.
    for (std::size_t i = token.begin; i < token.end; ++i) {
      char c = text[i];
      // `list<` and `map<` open a level too: the type grammar recurses on them.
      bool type_open = c == '<' && (prev_word == "list" || prev_word == "map");
      not_run = 0;
      prev_word = {};
      if (c == '(' || c == '[' || c == '{' || type_open) {
        if (++depth > kMaxNesting) return too_deep(i, 1);
        else_if_chain.push_back(0);
        if (type_open) ++open_types;
      } else if ((c == ')' || c == ']' || c == '}' || (c == '>' && open_types > 0)) && depth > 0) {
        if (c == '>') --open_types;
        --depth;
        else_if_chain.pop_back();
      }
    }
  }
  return true;
}

std::size_t skip_space_and_comments(std::string_view text, std::size_t i) {
  return static_cast<std::size_t>(lex::skip_space(text.data() + i, text.data() + text.size()) - text.data());
}

// The innermost bracket still open at the end of `text` (strings and comments skipped),
// for a note at an unexpected end of file.
std::optional<std::size_t> innermost_unclosed(std::string_view text) {
  std::vector<std::size_t> open;
  lex::Lexer lexer(text);
  while (!lexer.done()) {
    lex::Token token = lexer.next();
    if (token.kind != lex::TokenKind::Punct) continue;
    char c = text[token.begin];
    if (c == '{' || c == '(' || c == '[') {
      open.push_back(token.begin);
    } else if ((c == '}' || c == ')' || c == ']') && !open.empty()) {
      open.pop_back();
    }
  }
  if (open.empty()) return std::nullopt;
  return open.back();
}

// Whether the word at `j` is `word` (and not a longer word that starts with it).
bool word_at(std::string_view text, std::size_t j, std::string_view word) {
  const char* p = text.data() + j;
  return std::string_view(p, static_cast<std::size_t>(lex::scan_word(p, text.data() + text.size()) - p)) == word;
}

// Where to resume after a syntax error at `where` inside the statement (or top-level
// declaration) whose first token is at `begin`: the next line that starts a statement
// (a declaration) outside the brackets opened after the error, or the '}' that closes
// the enclosing block. Always after `begin`; the end of the file if nothing fits.
// `open_at_end` is set to whether brackets (or a string) were left open when it ran to the
// end of the file.
std::size_t resync(std::string_view text, std::size_t begin, std::size_t where, bool statement,
                   bool& open_at_end) {
  open_at_end = false;
  static constexpr std::array<std::string_view, 7> kStatementWords = {
      "step", "param", "if", "for", "finally", "description", "settings"};
  static constexpr std::array<std::string_view, 3> kDeclarationWords = {"use", "op", "pipeline"};
  const char* end = text.data() + text.size();
  auto at = [&](std::size_t k) { return text.data() + k; };
  auto offset = [&](const char* p) { return static_cast<std::size_t>(p - text.data()); };
  int depth = 0;            // brackets open since `begin`
  int depth_at_where = -1;  // ... at the error (-1: not reached yet)
  auto starts_unit = [&](std::size_t j) {
    if (j <= begin || j < where || depth > depth_at_where) return false;
    if (statement && text[j] == '}') {
      // A '}' alone on its line closes a block; '}, x: 1)' closes a map in a call.
      std::size_t k = offset(lex::scan_blank(at(j + 1), end));
      return k >= text.size() || text[k] == '\n' || text[k] == '#';
    }
    if (statement) {
      for (std::string_view w : kStatementWords)
        if (word_at(text, j, w)) return true;
    } else {
      for (std::string_view w : kDeclarationWords)
        if (word_at(text, j, w)) return true;
    }
    // A misspelt keyword starting a line, before a name: `stpe b = ...`, `pipline p {`.
    std::size_t k = j;
    while (k < text.size() && is_ident_char(text[k])) ++k;
    std::string_view word = text.substr(j, k - j);
    if (word.size() < 3 || lex::is_keyword(word)) return false;
    while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
    // ... or before a block (`finaly {`, `setings {`).
    if (k >= text.size() || !(lex::is_ident_start(text[k]) || (statement && text[k] == '{'))) return false;
    static const std::vector<std::string> kStatementList(kStatementWords.begin(), kStatementWords.end());
    static const std::vector<std::string> kDeclarationList(kDeclarationWords.begin(),
                                                           kDeclarationWords.end());
    return !spellcheck(word, statement ? kStatementList : kDeclarationList).empty();
  };
  std::size_t i = begin;
  while (i < text.size()) {
    if (depth_at_where < 0 && i >= where) depth_at_where = depth;
    char c = text[i];
    if (c == '#') {
      i = offset(lex::scan_comment(at(i), end));
    } else if (lex::RawEnd raw = lex::scan_raw(at(i), end); raw.end != at(i)) {
      if (!raw.closed) {
        open_at_end = true;  // a raw block never closed
        return text.size();
      }
      i = offset(raw.end);
    } else if (c == '"') {
      lex::StringEnd string = lex::scan_string(at(i), end);
      if (!string.closed && string.end == end) {
        open_at_end = true;  // a string never closed
        return text.size();
      }
      i = offset(string.end);
    } else if (c == '\n') {
      std::size_t j = offset(lex::scan_blank(at(i + 1), end));
      if (depth_at_where < 0 && j >= where) depth_at_where = depth;
      if (j < text.size() && starts_unit(j)) return j;
      i = j;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
      ++i;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth > 0) {
        --depth;
      } else if (c == '}' && statement && i >= where && i > begin) {
        return i;  // closes the block the statement is in
      }
      ++i;
    } else {
      ++i;
    }
  }
  open_at_end = depth > 0;
  return text.size();
}

// The place an expectation failure is reported at (see report_expectation).
std::size_t error_position(std::string_view text, std::size_t where, const std::string& which) {
  // On Boost 1.74 where() is before the whitespace that the expected parser would
  // have skipped; a string's closing quote is inside a lexeme, so nothing is skipped.
  if (which.find("close the string") == std::string::npos &&
      which.find("end of the line") == std::string::npos && which.find("raw block") == std::string::npos)
    where = skip_space_and_comments(text, where);
  return where;
}

// X3 names literals "'x'" (chars) or "\"x\"" (strings); diagnostics quote with '.
std::string describe(const std::string& which) {
  if (which.size() >= 2 && which.front() == '"' && which.back() == '"')
    return "'" + which.substr(1, which.size() - 2) + "'";
  return which;
}

void report_expectation(std::string_view text, FileId file, std::size_t where,
                        const std::string& which, Diagnostics& diags) {
  where = error_position(text, where, which);
  std::string expected = describe(which);
  if (where >= text.size()) {
    diags.error(range_in(file, text.size(), text.size()),
                fmt::format("unexpected end of file, expected {}", expected));
    bool wants_close = expected.find("'}'") != std::string::npos || expected.find("')'") != std::string::npos ||
                       expected.find("']'") != std::string::npos;
    if (auto open = wants_close ? innermost_unclosed(text) : std::nullopt)
      diags.note(range_in(file, *open, *open + 1),
                 fmt::format("the '{}' opened here is not closed", text[*open]));
    return;
  }
  std::size_t end = where + 1;
  if (is_ident_char(text[where])) {
    while (end < text.size() && is_ident_char(text[end])) ++end;
  } else {
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) ++end;
  }
  if (text[where] == '\n' || text[where] == '\r') end = where;
  std::string_view word = text.substr(where, end - where);
  // A keyword where a name belongs (`param in: int`): say so, not only "expected name".
  if (expected == "name" && lex::is_keyword(word)) {
    diags.error(range_in(file, where, end),
                fmt::format("expected name, but '{}' is a keyword and cannot be a name", word));
    return;
  }
  diags.error(range_in(file, where, end), fmt::format("expected {}", expected));
  // A misspelt keyword (`stpe`, `setings {`, `pipline p`, `limt 2`, `aftr a`): the nearest
  // word that may stand there. Past the error limit no note is shown: none is computed.
  if (!word.empty() && lex::is_ident_start(word[0]) && diags.error_count() <= Diagnostics::kMaxErrors) {
    // What begins a statement, and the words that may follow one's end (`after`, `else`).
    static const std::vector<std::string> kStatements = {"step", "param", "if", "for", "finally",
                                                         "description", "settings", "after", "else"};
    static const std::vector<std::string> kDeclarations = {"use", "op", "pipeline"};
    // Inside a statement: the words that stand there (`limit` only in a `for`), not those
    // that begin one (`stpe c` after an unclosed call is a missing ')', not a typo).
    static const std::vector<std::string> kInside = {
        "after", "else", "in", "limit", "max_failures", "min_success", "and", "or", "not", "true", "false"};
    const auto& candidates = expected.rfind("statement", 0) == 0 ? kStatements
                             : expected.find("'pipeline'") != std::string::npos ? kDeclarations
                                                                                 : kInside;
    if (std::string near = spellcheck(word, candidates); !near.empty())
      diags.note(range_in(file, where, where), fmt::format("did you mean '{}'?", near));
  }
}

// Reports each expectation failure the grammar's statement_item / top_item rules catch
// and tells them where to resume. When skipping ran to the end of the file inside a
// bracket or string never closed (which took the closing '}'s with it), the end-of-file
// errors that follow are not reported.
class ParseRecovery final : public grammar::Recovery {
 public:
  ParseRecovery(std::string_view text, FileId file, Diagnostics& diags)
      : text_(text), file_(file), diags_(diags) {}
  std::size_t errors() const { return errors_; }

  const char* recover(Level level, const char* start, const char* where,
                      const std::string& which) override {
    std::size_t begin = skip_space_and_comments(text_, static_cast<std::size_t>(start - text_.data()));
    std::size_t at = static_cast<std::size_t>(where - text_.data());
    std::size_t shown = error_position(text_, at, which);
    if (!(shown >= text_.size() && skipped_to_end_))
      report_expectation(text_, file_, at, which, diags_);
    ++errors_;
    bool open_at_end = false;
    std::size_t resume = resync(text_, begin, shown, level == Level::Statement, open_at_end);
    if (resume <= begin) resume = std::min(begin + 1, text_.size());
    skipped_to_end_ = open_at_end;
    return text_.data() + resume;
  }

 private:
  std::string_view text_;
  FileId file_;
  Diagnostics& diags_;
  std::size_t errors_ = 0;
  bool skipped_to_end_ = false;
};

//// Walking the tree after parsing ////////////////////////////////////////

// The `##` doc comments alone on the lines right above the line where a declaration
// starts, without the markers; "" when there are none or the declaration does not start
// its line. `docs`: the file's doc comment tokens, in text order.
std::string doc_before(std::string_view text, const std::vector<lex::Token>& docs, std::uint32_t offset) {
  std::size_t line_start = offset;
  while (line_start > 0 && text[line_start - 1] != '\n') --line_start;
  for (std::size_t k = line_start; k < offset; ++k)
    if (text[k] != ' ' && text[k] != '\t') return "";
  std::vector<std::string_view> lines;
  std::size_t end = line_start;
  while (end > 0) {
    std::size_t begin = end - 1;
    while (begin > 0 && text[begin - 1] != '\n') --begin;
    std::size_t k = begin;
    while (k < end - 1 && (text[k] == ' ' || text[k] == '\t')) ++k;
    // A doc comment starts there (it runs to the end of the line), or the run ends.
    auto doc = std::lower_bound(docs.begin(), docs.end(), k,
                                [](const lex::Token& t, std::size_t at) { return t.begin < at; });
    if (doc == docs.end() || doc->begin != k) break;
    lines.push_back(lex::doc_comment_text(doc->text(text)));
    end = begin;
  }
  std::string doc;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!doc.empty()) doc += '\n';
    doc += *it;
  }
  return doc;
}

class Finisher {
 public:
  Finisher(std::string_view text, const std::vector<lex::Token>& docs, Diagnostics& diags)
      : text_(text), docs_(docs), diags_(diags) {}
  bool ok() const { return ok_; }

  void operator()(ast::StringLit& s) { ok_ = lex::decode_string(s, diags_) && ok_; }
  void operator()(ast::NumberLit&) {}
  void operator()(ast::BoolLit&) {}
  void operator()(ast::Identifier&) {}
  void operator()(ast::Reference&) {}
  void operator()(ast::ListExpr& l) {
    for (auto& e : l.items) expr(e);
  }
  void operator()(ast::MapExpr& m) {
    for (auto& e : m.entries) {
      boost::apply_visitor(*this, e.key);
      expr(e.value);
    }
  }
  void operator()(ast::OrExpr& e) {
    expr(e.first);
    for (auto& r : e.rest) expr(r);
  }
  void operator()(ast::AndExpr& e) {
    expr(e.first);
    for (auto& r : e.rest) expr(r);
  }
  void operator()(ast::NotExpr& e) { expr(e.operand); }
  void operator()(ast::CompareExpr& e) {
    expr(e.lhs);
    if (e.tail) expr(e.tail->rhs);
  }
  template <typename T>
  void operator()(x3::forward_ast<T>& f) {
    (*this)(f.get());
  }
  void expr(ast::Expression& e) { boost::apply_visitor(*this, e); }

  void operator()(ast::Description& d) { (*this)(d.text); }
  void operator()(ast::ParamDecl& p) {
    p.doc = doc_before(text_, docs_, p.range.begin);
    if (p.constraint) {
      expr(p.constraint->low);
      if (p.constraint->high) expr(*p.constraint->high);
    }
    if (p.default_value) expr(*p.default_value);
  }
  void operator()(ast::StepDecl& s) {
    for (auto& a : s.args) expr(a.value);
  }
  void operator()(ast::IfStmt& s) {
    expr(s.condition);
    block(s.then_block);
    if (s.else_block) block(*s.else_block);
  }
  void operator()(ast::ForStmt& s) {
    expr(s.items);
    if (s.limit) expr(*s.limit);
    if (s.max_failures) expr(*s.max_failures);
    if (s.min_success) expr(*s.min_success);
    block(s.body);
  }
  void operator()(ast::FinallyStmt& s) { block(s.body); }
  void operator()(ast::SettingsStmt& s) {
    for (auto& f : s.body.fields) expr(f.value);
  }
  void operator()(ast::OutputStmt& s) { expr(s.value); }
  void block(ast::Block& b) {
    for (auto& s : b.statements) boost::apply_visitor(*this, s);
  }
  void operator()(ast::UseDecl& u) { boost::apply_visitor(*this, u.target); }
  void operator()(ast::OpDecl& o) {
    o.doc = doc_before(text_, docs_, o.range.begin);
    for (auto& p : o.params) {
      p.doc = doc_before(text_, docs_, p.range.begin);
      if (p.default_value) expr(*p.default_value);
    }
    for (auto& out : o.outputs) out.doc = doc_before(text_, docs_, out.range.begin);
    if (o.body)
      for (auto& f : o.body->fields) expr(f.value);
  }
  void operator()(ast::PipelineDecl& p) {
    p.doc = doc_before(text_, docs_, p.range.begin);
    for (auto& out : p.outputs) out.doc = doc_before(text_, docs_, out.range.begin);
    block(p.body);
  }

 private:
  std::string_view text_;
  const std::vector<lex::Token>& docs_;
  Diagnostics& diags_;
  bool ok_ = true;
};

}  // namespace

std::optional<ast::Module> parse(const SourceManager& sources, FileId file, Diagnostics& diags) {
  std::string_view text = sources.text(file);
  bool ascii = true;
  std::vector<lex::Token> docs;
  if (!check_not_package(text, sources.name(file), diags) || !check_encoding(text, file, diags, ascii) ||
      (!ascii && !check_invisible(text, file, diags)) || !check_nesting(text, file, diags, docs))
    return std::nullopt;

  // A syntax error is reported and its statement (or declaration) skipped, so one pass
  // reports them all; the tree is then only walked for string errors.
  ParseRecovery recovery(text, file, diags);
  grammar::Positions positions{file, text.data(), &recovery};
  ast::Module module;
  module.file = file;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  try {
    bool ok = x3::phrase_parse(first, last,
                               x3::with<grammar::position_tag>(std::ref(positions))[module_rule()],
                               grammar::skipper, module.decls);
    if (!ok || first != last) {
      report_expectation(text, file, static_cast<std::size_t>(first - text.data()),
                         "'use', 'op' or 'pipeline'", diags);
      return std::nullopt;
    }
  } catch (const x3::expectation_failure<const char*>& failure) {
    if (recovery.errors() == 0)
      report_expectation(text, file, static_cast<std::size_t>(failure.where() - text.data()),
                         failure.which(), diags);
    return std::nullopt;
  }
  Finisher finisher(text, docs, diags);
  for (auto& decl : module.decls) boost::apply_visitor(finisher, decl);
  if (!finisher.ok() || recovery.errors() > 0) return std::nullopt;
  return module;
}

bool ast::StringLit::is_plain() const {
  return std::none_of(parts.begin(), parts.end(), [](const StringPart& p) { return p.is_ref; });
}

std::string ast::StringLit::text() const {
  std::string out;
  for (const auto& p : parts)
    if (!p.is_ref) out += p.text;
  return out;
}

}  // namespace pipec::syntax
