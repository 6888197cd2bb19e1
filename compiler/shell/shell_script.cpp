// write_script(): a shell-form command with each reference placed by its quoting context.
//
// The scan follows POSIX sh's quoting (XCU 2.2, 2.6.2-2.6.4, 2.7.4) closely enough to know,
// at each reference, whether the shell would read it bare, inside double quotes, inside
// single quotes, inside backticks, inside arithmetic, or in a here-document body. Text is
// copied as written: only references are rewritten.
#include "compiler/shell/shell_script.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace pipec::shell {
namespace {

enum class Ctx {
  Bare,      // the script itself, or inside $( ... )
  Double,    // "..."
  Single,    // '...'
  Backtick,  // `...`
  Arith,     // $(( ... ))
  Param,     // ${ ... } written by the user (escaped as \${ in the source)
  Comment,   // # ... to the end of the line
  Heredoc,   // the body of a here-document
};

struct Frame {
  Ctx ctx = Ctx::Bare;
  int depth = 0;        // Bare inside $(: open parens; Arith: open parens
  bool quoted = false;  // Param: inside "..." or a here-document; Heredoc: delimiter quoted
  bool subst = false;   // Bare: a $( ... ) (closed by its `)`), not the script itself
  std::string delimiter;   // Heredoc
  bool strip_tabs = false;  // Heredoc: <<-
};

struct PendingHeredoc {
  std::string delimiter;
  bool quoted = false;
  bool strip_tabs = false;
};

// Whether a word starts after character `c` (so a `#` there begins a comment).
bool word_start(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
         c == ')' || c == '<' || c == '>';
}

class Scanner {
 public:
  Scanner(std::string& out, Diagnostics& diags, SourceRange whole)
      : out_(out), diags_(diags), whole_(whole) {
    stack_.push_back(Frame{});
  }

  void text(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) i = step(s, i);
  }

  bool reference(const ir::Ref& ref, const std::string& var) {
    SourceRange at = ref.range.valid() ? ref.range : whole_;
    auto refuse = [&](std::string_view where, std::string_view fix) {
      diags_.error(at, fmt::format("a value cannot be placed {}: the shell would read it as code; {}",
                                   where, fix));
      return false;
    };
    if (reading_delimiter_)
      return refuse("in a here-document delimiter", "write the delimiter as plain text");
    const Frame& f = stack_.back();
    switch (f.ctx) {
      case Ctx::Bare:
      case Ctx::Comment: out_ += "\"${" + var + "}\""; return true;
      case Ctx::Param: out_ += f.quoted ? "${" + var + "}" : "\"${" + var + "}\""; return true;
      case Ctx::Double: out_ += "${" + var + "}"; return true;
      case Ctx::Single: out_ += "'\"${" + var + "}\"'"; return true;
      case Ctx::Heredoc:
        if (f.quoted)
          return refuse("in a here-document whose delimiter is quoted (the shell expands nothing there)",
                        "write the delimiter unquoted (<<" + f.delimiter + ") to use values in it");
        out_ += "${" + var + "}";
        return true;
      case Ctx::Backtick:
        return refuse("inside backticks", "use $(...) instead of `...`");
      case Ctx::Arith:
        return refuse("inside $((...))",
                      "assign it to a variable first (n=${x}; echo $((n + 1))), and the shell checks it is a number");
    }
    return false;
  }

  /// Lines after the first that start with `-`: their number and text, for the warning.
  struct DashLine {
    int line;
    std::string text;
  };
  const std::vector<DashLine>& dash_lines() const { return dash_lines_; }

 private:
  Frame& top() { return stack_.back(); }
  void push(Frame f) { stack_.push_back(std::move(f)); }
  void pop() {
    if (stack_.size() > 1) stack_.pop_back();
  }

  // Handles s[i] (and what it starts); returns the index of the last character used.
  std::size_t step(std::string_view s, std::size_t i) {
    char c = s[i];
    auto next = [&](std::size_t k) { return i + k < s.size() ? s[i + k] : '\0'; };
    if (reading_delimiter_) return read_delimiter(s, i);
    Frame& f = top();
    if (at_line_start_ && f.ctx == Ctx::Heredoc) {
      // A here-document body line: the delimiter line ends it.
      std::size_t end = s.find('\n', i);
      std::string_view line = s.substr(i, end == std::string_view::npos ? s.size() - i : end - i);
      std::string_view bare = line;
      if (f.strip_tabs)
        while (!bare.empty() && bare.front() == '\t') bare.remove_prefix(1);
      if (bare == f.delimiter && end != std::string_view::npos) {
        out_ += line;
        out_ += '\n';
        pop();
        begin_heredoc();  // the next pending one, if any
        return end;
      }
    }
    if (at_line_start_ && stack_.size() == 1 && c != ' ' && c != '\t') {
      int line = 1 + static_cast<int>(std::count(out_.begin(), out_.end(), '\n'));
      if (c == '-' && line > 1) {
        std::size_t end = s.find('\n', i);
        dash_lines_.push_back({line, std::string(s.substr(i, end == std::string_view::npos ? s.size() - i : end - i))});
      }
    }
    if (c != ' ' && c != '\t') at_line_start_ = false;
    out_ += c;
    switch (f.ctx) {
      case Ctx::Single:
        if (c == '\'') pop();
        return i;
      case Ctx::Comment:
        if (c == '\n') {
          pop();
          newline();
        }
        return i;
      case Ctx::Backtick:
        if (c == '\\' && next(1)) {
          out_ += next(1);
          return i + 1;
        }
        if (c == '`') pop();
        return i;
      case Ctx::Arith:
        if (c == '(') ++f.depth;
        if (c == ')') {
          if (f.depth > 0) {
            --f.depth;
          } else if (next(1) == ')') {
            out_ += ')';
            pop();
            return i + 1;
          }
        }
        return i;
      case Ctx::Double:
      case Ctx::Heredoc:
        if (c == '\\' && next(1)) {
          out_ += next(1);
          if (next(1) == '\n') newline();
          return i + 1;
        }
        if (c == '"' && f.ctx == Ctx::Double) {
          pop();
          return i;
        }
        if (c == '\n' && f.ctx == Ctx::Heredoc) at_line_start_ = true;
        return expansion(s, i);
      case Ctx::Param:
        if (c == '}') {
          pop();
          return i;
        }
        if (!f.quoted) return bare(s, i);
        return expansion(s, i);
      case Ctx::Bare:
        return bare(s, i);
    }
    return i;
  }

  // `$((`, `$(`, `${` and backticks: active in every context but single quotes and comments.
  std::size_t expansion(std::string_view s, std::size_t i) {
    char c = s[i];
    auto next = [&](std::size_t k) { return i + k < s.size() ? s[i + k] : '\0'; };
    if (c == '`') {
      push(Frame{Ctx::Backtick});
    } else if (c == '$' && next(1) == '(' && next(2) == '(') {
      out_ += "((";
      push(Frame{Ctx::Arith});
      return i + 2;
    } else if (c == '$' && next(1) == '(') {
      out_ += '(';
      Frame f{Ctx::Bare};
      f.subst = true;
      push(f);
      return i + 1;
    } else if (c == '$' && next(1) == '{') {
      out_ += '{';
      Frame f{Ctx::Param};
      f.quoted = top().ctx == Ctx::Double || top().ctx == Ctx::Heredoc ||
                 (top().ctx == Ctx::Param && top().quoted);
      push(f);
      return i + 1;
    }
    return i;
  }

  std::size_t bare(std::string_view s, std::size_t i) {
    char c = s[i];
    auto next = [&](std::size_t k) { return i + k < s.size() ? s[i + k] : '\0'; };
    Frame& f = top();
    if (c == '\\' && next(1)) {
      out_ += next(1);
      if (next(1) == '\n') newline();
      return i + 1;
    }
    if (c == '\'') {
      push(Frame{Ctx::Single});
      return i;
    }
    if (c == '"') {
      push(Frame{Ctx::Double});
      return i;
    }
    if (c == '#' && (out_.size() < 2 || word_start(out_[out_.size() - 2]))) {
      push(Frame{Ctx::Comment});
      return i;
    }
    if (c == '\n') {
      newline();
      return i;
    }
    if (f.ctx == Ctx::Bare && f.subst) {
      if (c == '(') ++f.depth;
      if (c == ')') {
        if (f.depth == 0) {
          pop();
          return i;
        }
        --f.depth;
      }
    }
    if (c == '<' && next(1) == '<' && next(2) != '<') {
      out_ += '<';
      std::size_t k = i + 1;
      PendingHeredoc h;
      if (next(2) == '-') {
        out_ += '-';
        h.strip_tabs = true;
        ++k;
      }
      pending_.push_back(h);
      reading_delimiter_ = true;
      delimiter_started_ = false;
      return k;
    }
    return expansion(s, i);
  }

  // The word after `<<`: quotes in it make the here-document literal.
  std::size_t read_delimiter(std::string_view s, std::size_t i) {
    char c = s[i];
    PendingHeredoc& h = pending_.back();
    bool ends = c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
                c == '>' || c == ')';
    if (!delimiter_started_ && (c == ' ' || c == '\t')) {
      out_ += c;
      return i;
    }
    if (delimiter_started_ && ends && !in_delimiter_quote_) {
      reading_delimiter_ = false;
      return step(s, i);
    }
    delimiter_started_ = true;
    out_ += c;
    if (in_delimiter_quote_) {
      if (c == in_delimiter_quote_) {
        in_delimiter_quote_ = 0;
      } else {
        h.delimiter += c;
      }
    } else if (c == '\'' || c == '"') {
      in_delimiter_quote_ = c;
      h.quoted = true;
    } else if (c == '\\') {
      h.quoted = true;
    } else {
      h.delimiter += c;
    }
    return i;
  }

  void newline() {
    at_line_start_ = true;
    begin_heredoc();
  }

  void begin_heredoc() {
    if (pending_.empty() || top().ctx == Ctx::Heredoc) return;
    PendingHeredoc h = pending_.front();
    pending_.erase(pending_.begin());
    Frame f{Ctx::Heredoc};
    f.quoted = h.quoted;
    f.delimiter = h.delimiter;
    f.strip_tabs = h.strip_tabs;
    push(f);
  }

  std::string& out_;
  Diagnostics& diags_;
  SourceRange whole_;
  std::vector<Frame> stack_;
  std::vector<PendingHeredoc> pending_;
  bool reading_delimiter_ = false;
  bool delimiter_started_ = false;
  char in_delimiter_quote_ = 0;
  bool at_line_start_ = true;
  std::vector<DashLine> dash_lines_;
};

}  // namespace

bool write_script(const std::vector<ir::Part>& parts,
                  const std::function<std::string(const ir::Ref&)>& variable, SourceRange whole,
                  std::string& script, Diagnostics& diags) {
  Scanner scanner(script, diags, whole);
  bool ok = true;
  for (const auto& part : parts) {
    if (part.ref) {
      ok = scanner.reference(*part.ref, variable(*part.ref)) && ok;
    } else {
      scanner.text(part.text);
    }
  }
  for (const auto& [line, text] : scanner.dash_lines()) {
    std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
    while (!shown.empty() && shown.back() == ' ') shown.pop_back();
    diags.warning(whole, fmt::format("line {} of this command, '{}', starts with '-' and runs as a "
                                     "command of its own; end line {} with '\\' to continue it",
                                     line, shown, line - 1));
  }
  return ok;
}

std::vector<ir::Part> command_parts(const std::vector<ir::Value>& command, SourceRange& whole) {
  std::vector<ir::Part> parts;
  for (const auto& cmd : command) {
    whole = cmd.range.valid() ? cmd.range : whole;
    if (cmd.kind == ir::Value::Kind::Literal) parts.push_back(ir::Part{ir::literal_text(cmd.literal), {}});
    else if (cmd.kind == ir::Value::Kind::Ref) parts.push_back(ir::Part{{}, cmd.ref});
    else parts.insert(parts.end(), cmd.parts.begin(), cmd.parts.end());
  }
  return parts;
}

}  // namespace pipec::shell
