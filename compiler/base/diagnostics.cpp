#include "compiler/base/diagnostics.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/utf8.hpp"

namespace pipec {

namespace {

// The item recorded at the first error past kMaxErrors; render() adds the final count.
constexpr std::string_view kTooManyErrors = "too many errors";

bool is_too_many(const Diagnostics& diags, const Diagnostic& d) {
  return diags.errors_not_shown() > 0 && &d == &diags.all().back() && d.message == kTooManyErrors &&
         !d.range.valid();
}

std::string too_many_message(const Diagnostics& diags) {
  return fmt::format("too many errors: {} shown, {} more not shown ({} in all)", Diagnostics::kMaxErrors,
                     diags.errors_not_shown(), diags.error_count());
}

}  // namespace

void Diagnostics::add(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::Note) {
    if (skipping_notes_) return;
  } else {
    skipping_notes_ = false;
  }
  if (diagnostic.severity == Severity::Warning && diagnostic.range.valid() &&
      !warned_.emplace(diagnostic.range.file, diagnostic.range.begin, diagnostic.range.end, diagnostic.message)
           .second) {
    skipping_notes_ = true;  // the same warning at the same place: shown already
    return;
  }
  if (diagnostic.severity == Severity::Error) {
    ++error_count_;
    if (error_count_ > kMaxErrors) {
      if (!dropping_) {
        items_.push_back({Severity::Error, {}, std::string(kTooManyErrors)});
        dropping_ = true;
      }
      return;
    }
  } else if (diagnostic.severity == Severity::Warning) {
    ++warning_count_;
  } else if (dropping_) {
    return;  // notes of dropped errors
  }
  if (dropping_ && diagnostic.severity != Severity::Error) return;
  items_.push_back(std::move(diagnostic));
}

void Diagnostics::error(SourceRange range, std::string message) {
  add({Severity::Error, range, std::move(message)});
}
void Diagnostics::warning(SourceRange range, std::string message) {
  add({Severity::Warning, range, std::move(message)});
}
void Diagnostics::note(SourceRange range, std::string message) {
  add({Severity::Note, range, std::move(message)});
}

namespace {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

const char* severity_color(Severity s) {
  switch (s) {
    case Severity::Error: return "\x1b[1;31m";
    case Severity::Warning: return "\x1b[1;35m";
    case Severity::Note: return "\x1b[1;36m";
  }
  return "";
}

// A source line as a terminal shows it. Control characters (but tabs) and bytes that are
// not valid UTF-8 show as '?', so a line with NULs, escapes or stray bytes prints safely.
// cell[i] is the terminal cell where byte i starts, counted from the line's start: a
// UTF-8 sequence takes one cell (wide characters are taken as one too), so the caret
// lines up under text that is not ASCII. cell has one more entry, for the end.
struct ShownLine {
  std::string text;
  std::vector<std::size_t> cell;
};

ShownLine show_line(std::string_view bytes) {
  ShownLine s;
  s.text.reserve(bytes.size());
  s.cell.reserve(bytes.size() + 1);
  std::size_t cells = 0;
  for (std::size_t i = 0; i < bytes.size();) {
    auto c = static_cast<unsigned char>(bytes[i]);
    std::size_t len = c < 0x80 ? 1 : utf8_sequence_length(bytes, i);
    // An invisible character (a bidirectional override would even reorder the line on
    // the terminal) shows as '?', so the caret under it points at something.
    if (len > 1 && invisible_character_name(utf8_code_point(bytes, i, len))) {
      s.text += '?';
      s.cell.insert(s.cell.end(), len, cells);
      ++cells;
      i += len;
      continue;
    }
    if (len <= 1) {
      bool garbling = c >= 0x80 || (c < 0x20 && c != '\t') || c == 0x7f;
      s.text += garbling ? '?' : static_cast<char>(c);
      len = 1;
    } else {
      s.text.append(bytes.substr(i, len));
    }
    s.cell.insert(s.cell.end(), len, cells);
    ++cells;
    i += len;
  }
  s.cell.push_back(cells);
  return s;
}

constexpr std::size_t kMaxShownLine = 120;

void render_text(const Diagnostic& d, const SourceManager& sources, std::ostream& out, bool color) {
  const char* bold = color ? "\x1b[1m" : "";
  const char* reset = color ? "\x1b[0m" : "";
  if (!d.range.valid()) {
    out << bold << "pipec: " << reset << (color ? severity_color(d.severity) : "")
        << severity_name(d.severity) << ": " << reset << bold << d.message << reset << '\n';
    return;
  }
  LineCol lc = sources.line_col(d.range.file, d.range.begin);
  out << bold << sources.name(d.range.file) << ':' << lc.line << ':' << lc.column << ": " << reset
      << (color ? severity_color(d.severity) : "") << severity_name(d.severity) << ": " << reset
      << bold << d.message << reset << '\n';
  if (d.severity == Severity::Note && d.range.begin == d.range.end) return;

  std::string_view line = sources.line_text(d.range.file, lc.line);
  std::size_t col = lc.column - 1;
  std::size_t len = d.range.end > d.range.begin ? d.range.end - d.range.begin : 1;
  if (col > line.size()) col = line.size();
  if (col + len > line.size()) len = std::max<std::size_t>(1, line.size() > col ? line.size() - col : 1);

  // Long lines are cut around the range, with "..." marking what was left out.
  std::size_t begin = 0;
  std::size_t end = line.size();
  std::string prefix, suffix;
  if (line.size() > kMaxShownLine) {
    if (len > kMaxShownLine - 20) len = kMaxShownLine - 20;
    begin = col > 20 ? col - 20 : 0;
    end = std::min(line.size(), begin + kMaxShownLine);
    if (begin > 0) prefix = "...";
    if (end < line.size()) suffix = "...";
  }
  ShownLine shown = show_line(line.substr(begin, end - begin));
  out << prefix << shown.text << suffix << '\n';
  std::size_t at = std::min(col - begin, shown.cell.size() - 1);
  std::size_t stop = std::min(col + len - begin, shown.cell.size() - 1);
  std::string marker(prefix.size() + shown.cell[at], ' ');
  // Keep tabs under tabs so the caret lines up in a terminal.
  for (std::size_t i = 0; i < at; ++i)
    if (line[begin + i] == '\t') marker[prefix.size() + shown.cell[i]] = '\t';
  marker += '^';
  if (shown.cell[stop] > shown.cell[at] + 1) marker += std::string(shown.cell[stop] - shown.cell[at] - 1, '~');
  out << (color ? "\x1b[1;32m" : "") << marker << reset << '\n';
}

nlohmann::json location_json(const SourceRange& range, const SourceManager& sources) {
  if (!range.valid()) return nullptr;
  LineCol b = sources.line_col(range.file, range.begin);
  LineCol e = sources.line_col(range.file, range.end);
  return {{"file", std::string(sources.name(range.file))},
          {"line", b.line},
          {"column", b.column},
          {"end_line", e.line},
          {"end_column", e.column},
          {"offset", range.begin},
          {"length", range.end - range.begin}};
}

}  // namespace

void render(const Diagnostics& diags, const SourceManager& sources, std::ostream& out,
            const RenderOptions& options) {
  if (options.format == DiagnosticFormat::Text) {
    for (const auto& d : diags.all()) {
      if (is_too_many(diags, d)) render_text({d.severity, d.range, too_many_message(diags)}, sources, out, options.color);
      else render_text(d, sources, out, options.color);
    }
    return;
  }
  // JSON: one object per error or warning, with its notes inside.
  nlohmann::json current;
  auto flush = [&] {
    if (!current.is_null()) out << current.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    current = nullptr;
  };
  for (const auto& d : diags.all()) {
    bool too_many = is_too_many(diags, d);
    nlohmann::json item = {{"severity", severity_name(d.severity)},
                           {"message", too_many ? too_many_message(diags) : d.message},
                           {"location", location_json(d.range, sources)}};
    if (too_many) item["not_shown"] = diags.errors_not_shown();
    if (d.severity == Severity::Note && !current.is_null()) {
      current["notes"].push_back(std::move(item));
      continue;
    }
    flush();
    current = std::move(item);
    current["notes"] = nlohmann::json::array();
  }
  flush();
}

bool want_color(int fd) {
  if (const char* no = std::getenv("NO_COLOR"); no && *no) return false;
  if (const char* force = std::getenv("FORCE_COLOR"); force && *force) return true;
  return isatty(fd) != 0;
}

}  // namespace pipec
