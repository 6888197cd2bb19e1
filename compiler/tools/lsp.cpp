#include "compiler/tools/lsp.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/compile/compile.hpp"
#include "compiler/sema/symbols.hpp"
#include "compiler/tools/format.hpp"
#include "input/json.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "compiler/compile/host.hpp"

namespace pipec::tools {

namespace {

using nlohmann::json;
using Kind = sema::Symbol::Kind;

// --- the index of one document ---------------------------------------------------------

// What sema resolved each name of one text to (sema/symbols.hpp), and the sources its
// ranges point into.
struct Index {
  SourceManager sources;
  FileId main = kNoFile;
  sema::SymbolTable table;
};

// --- a document ------------------------------------------------------------------------

struct Document {
  std::string uri, path, text;
  std::shared_ptr<Index> index;  // the last text that parsed, for hover and the rest
};

std::string path_of(const std::string& uri) {
  if (uri.rfind("file://", 0) != 0) return uri;
  std::string out;
  for (std::size_t i = 7; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size()) {
      out += static_cast<char>(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += uri[i];
    }
  }
  return out;
}

std::string uri_of(const std::string& path) { return path.rfind('/', 0) == 0 ? "file://" + path : path; }

// Positions count UTF-8 bytes when the client offers `utf-8` (positionEncoding), else
// UTF-16 code units, the protocol's default: a code point of 4 UTF-8 bytes is 2 units.
bool g_utf16 = true;

std::uint32_t units(std::string_view bytes) {
  if (!g_utf16) return static_cast<std::uint32_t>(bytes.size());
  std::uint32_t n = 0;
  for (unsigned char c : bytes) {
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte
    n += c >= 0xF0 ? 2 : 1;
  }
  return n;
}

json position(const SourceManager& sm, FileId file, std::uint32_t offset) {
  LineCol lc = sm.line_col(file, offset);
  std::string_view line = sm.line_text(file, lc.line);
  return {{"line", lc.line - 1}, {"character", units(line.substr(0, std::min<std::size_t>(line.size(), lc.column - 1)))}};
}

json range_json(const SourceManager& sm, SourceRange r) {
  return {{"start", position(sm, r.file, r.begin)}, {"end", position(sm, r.file, r.end)}};
}

std::uint32_t offset_of(const std::string& text, const json& pos) {
  std::uint32_t line = pos.value("line", 0u), character = pos.value("character", 0u);
  std::size_t i = 0;
  for (std::uint32_t l = 0; l < line && i < text.size(); ++i)
    if (text[i] == '\n') ++l;
  // Walk the line until `character` units are passed.
  std::size_t end = text.find('\n', i);
  if (end == std::string::npos) end = text.size();
  // One code point at a time, its units added up: linear in the line's length (issue 25).
  std::size_t j = i;
  std::uint32_t passed = 0;
  while (j < end && passed < character) {
    std::size_t next = j + 1;
    while (next < end && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    passed += units(std::string_view(text).substr(j, next - j));
    j = next;
  }
  return static_cast<std::uint32_t>(j);
}

class Server {
 public:
  Server(std::istream& in, std::ostream& out) : in_(in), out_(out) {}

  int run() {
    for (;;) {
      Incoming incoming = read_message();
      if (incoming.kind == Incoming::End) return 1;
      if (incoming.kind == Incoming::Unreadable) {
        send({{"jsonrpc", "2.0"}, {"id", nullptr},
              {"error", {{"code", -32700}, {"message", "unreadable message: " + incoming.text}}}});
        continue;
      }
      json msg;
      std::string problem;
      if (!input::parse_json(incoming.text, msg, problem) || !msg.is_object()) {
        send({{"jsonrpc", "2.0"}, {"id", nullptr},
              {"error", {{"code", -32700}, {"message", problem.empty() ? "parse error: not a JSON object"
                                                                        : "parse error: " + problem}}}});
        continue;
      }
      // A request whose method is not a string is an invalid request; a notification
      // (no id) of that kind gets no answer.
      if (msg.contains("method") && !msg["method"].is_string()) {
        if (msg.contains("id"))
          send({{"jsonrpc", "2.0"}, {"id", msg["id"]},
                {"error", {{"code", -32600}, {"message", "invalid request: \"method\" is not a string"}}}});
        continue;
      }
      std::string method = msg.value("method", "");
      if (method == "exit") return shutdown_ ? 0 : 1;
      bool request = msg.contains("id");
      try {
        json result = handle(method, msg.value("params", json::object()), request);
        if (request) send({{"jsonrpc", "2.0"}, {"id", msg["id"]}, {"result", result}});
      } catch (const std::pair<int, std::string>& e) {
        if (request)
          send({{"jsonrpc", "2.0"}, {"id", msg["id"]}, {"error", {{"code", e.first}, {"message", e.second}}}});
      } catch (const std::exception& e) {
        if (request)
          send({{"jsonrpc", "2.0"}, {"id", msg["id"]}, {"error", {{"code", -32603}, {"message", e.what()}}}});
      }
    }
  }

 private:
  // One framed message. A header block without a Content-Length that can be read (none,
  // negative, not a number, past 2^64, over the limit) is answered with an error and the
  // server goes on: past a length over the limit it skips that many bytes; otherwise the
  // body's end is unknown, and the next message starts at the next "Content-Length:".
  struct Incoming {
    enum Kind { Body, Unreadable, End } kind = End;
    std::string text;  // the body, or why it cannot be read
  };

  Incoming read_message() {
    std::uint64_t length = 0;
    bool have_length = false;
    std::string problem = "no Content-Length header";
    bool any_header = false;
    for (;;) {
      std::string line;
      if (resync_) {
        if (!skip_to_header()) return {};
        line = "content-length:";
        resync_ = false;
      }
      if (!read_header_line(line)) {
        if (in_.eof()) return {};
        resync_ = true;
        return {Incoming::Unreadable,
                "a header line is longer than " + input::size_text(input::kMaxLspHeaderBytes)};
      }
      if (line.empty()) {
        if (!any_header) continue;  // stray blank lines between messages
        break;
      }
      any_header = true;
      std::size_t colon = line.find(':');
      std::string key = line.substr(0, colon);
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      if (key != "content-length" || colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      std::uint64_t n = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
          n > static_cast<std::uint64_t>(std::numeric_limits<std::streamsize>::max())) {
        have_length = false;
        problem = fmt::format("Content-Length '{}' is not a number of bytes", shown(value));
      } else {
        length = n;
        have_length = true;
      }
    }
    if (!have_length) {
      resync_ = true;
      return {Incoming::Unreadable, problem};
    }
    if (length > input::kMaxLspMessageBytes) {
      in_.ignore(static_cast<std::streamsize>(length));
      if (static_cast<std::uint64_t>(in_.gcount()) != length) return {};
      return {Incoming::Unreadable, fmt::format("Content-Length {} is over the limit of {}", length,
                                                input::size_text(input::kMaxLspMessageBytes))};
    }
    std::string body(length, '\0');
    in_.read(body.data(), static_cast<std::streamsize>(length));
    if (in_.gcount() != static_cast<std::streamsize>(length)) return {};
    return {Incoming::Body, std::move(body)};
  }

  // A header line without its CRLF (or LF), appended to `line`. False at the end of the
  // input, or when the line passes the limit (the rest of it is left unread).
  bool read_header_line(std::string& line) {
    for (;;) {
      int c = in_.get();
      if (c == std::char_traits<char>::eof()) return false;
      if (c == '\n') break;
      if (line.size() >= input::kMaxLspHeaderBytes) return false;
      line.push_back(static_cast<char>(c));
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  // Reads up to and including the next "Content-Length:" (any case). False at the end.
  bool skip_to_header() {
    static constexpr std::string_view kHeader = "content-length:";
    std::size_t matched = 0;
    while (matched < kHeader.size()) {
      int c = in_.get();
      if (c == std::char_traits<char>::eof()) return false;
      char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == kHeader[matched]) ++matched;
      else matched = lower == kHeader[0] ? 1 : 0;
    }
    return true;
  }

  // A header value for a message: at most 40 bytes, control bytes as '?'.
  static std::string shown(std::string_view text) {
    std::string out;
    for (char c : text.substr(0, 40)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
    if (text.size() > 40) out += "...";
    return out;
  }

  void send(const json& msg) {
    std::string text = msg.dump(-1, ' ', false, json::error_handler_t::replace);
    out_ << "Content-Length: " << text.size() << "\r\n\r\n" << text;
    out_.flush();
  }

  json handle(const std::string& method, const json& params, bool request) {
    if (method == "initialize") {
      const json& offered = params.value("capabilities", json::object()).value("general", json::object())
                                .value("positionEncodings", json::array());
      g_utf16 = std::find(offered.begin(), offered.end(), "utf-8") == offered.end();
      return {{"capabilities",
               {{"positionEncoding", g_utf16 ? "utf-16" : "utf-8"},
                {"textDocumentSync", {{"openClose", true}, {"change", 1}}},
                {"hoverProvider", true},
                {"definitionProvider", true},
                {"completionProvider", {{"triggerCharacters", json::array({".", "(", ","})}}},
                {"documentSymbolProvider", true},
                {"documentFormattingProvider", true}}},
              {"serverInfo", {{"name", "pipec"}}}};
    }
    if (method == "initialized" || method == "$/cancelRequest" || method == "workspace/didChangeConfiguration")
      return nullptr;
    if (method == "shutdown") {
      shutdown_ = true;
      return nullptr;
    }
    if (method == "textDocument/didOpen") {
      const json& d = params.at("textDocument");
      open(d.at("uri").get<std::string>(), d.at("text").get<std::string>());
      return nullptr;
    }
    if (method == "textDocument/didChange") {
      const json& changes = params.at("contentChanges");
      if (!changes.empty()) open(params.at("textDocument").at("uri").get<std::string>(), changes.back().at("text").get<std::string>());
      return nullptr;
    }
    if (method == "textDocument/didClose") {
      docs_.erase(params.at("textDocument").at("uri").get<std::string>());
      return nullptr;
    }
    if (method == "textDocument/hover") return hover(params);
    if (method == "textDocument/definition") return definition(params);
    if (method == "textDocument/completion") return completion(params);
    if (method == "textDocument/documentSymbol") return symbols(params);
    if (method == "textDocument/formatting") return formatting(params);
    if (request) throw std::make_pair(-32601, "method not found: " + method);
    return nullptr;
  }

  // Diagnostics as `pipec check` reports them, for this file; the index of the text.
  void open(const std::string& uri, std::string text) {
    Document& doc = docs_[uri];
    doc.uri = uri;
    doc.path = path_of(uri);
    doc.text = std::move(text);
    auto index = std::make_shared<Index>();
    Diagnostics diags;
    index->main = index->sources.add(doc.path, doc.text);
    (void)compile::compile_program(index->sources, index->main, compile::TargetOptions{}, diags);
    json list = json::array();
    const Diagnostic* last = nullptr;
    for (const auto& d : diags.all()) {
      if (d.severity == Severity::Note) {
        if (last && d.range.file == index->main && !list.empty())
          list.back()["relatedInformation"].push_back(
              {{"location", {{"uri", uri}, {"range", range_json(index->sources, d.range)}}}, {"message", d.message}});
        continue;
      }
      last = &d;
      if (d.range.file != index->main && d.range.valid()) continue;
      SourceRange r = d.range.valid() ? d.range : SourceRange{index->main, 0, 0};
      list.push_back({{"range", range_json(index->sources, r)},
                      {"severity", d.severity == Severity::Error ? 1 : 2},
                      {"source", "pipec"},
                      {"message", d.message}});
    }
    send({{"jsonrpc", "2.0"}, {"method", "textDocument/publishDiagnostics"},
          {"params", {{"uri", uri}, {"diagnostics", list}}}});
    // The index: what each name means, as sema resolves it.
    index->table = sema::index_program(index->sources, index->main, compile::machine_host());
    if (!index->table.loaded) return;  // keep the last good index
    doc.index = std::move(index);
  }

  Document& doc(const json& params) {
    auto it = docs_.find(params.at("textDocument").at("uri").get<std::string>());
    if (it == docs_.end()) throw std::make_pair(-32602, std::string("the document is not open"));
    return it->second;
  }

  // The symbol under the cursor: a use of it, or its declaration.
  std::optional<std::size_t> at(const Document& d, const json& params) {
    if (!d.index) return std::nullopt;
    return d.index->table.at(d.index->main, offset_of(d.text, params.at("position")));
  }

  json hover(const json& params) {
    Document& d = doc(params);
    auto sym = at(d, params);
    if (!sym) return nullptr;
    const sema::Symbol& s = d.index->table.symbols[*sym];
    // A pipeline is indexed as an op whose signature says `pipeline` (sema/symbols.cpp).
    const bool pipeline = s.kind == Kind::Op && s.type.rfind("pipeline ", 0) == 0;
    std::string head = pipeline               ? s.type
                       : s.kind == Kind::Op   ? "op " + s.type
                       : s.kind == Kind::Step ? "step " + s.name + " = " + s.type + "(...)"
                       : s.type.empty()       ? std::string(sema::kind_name(s.kind)) + " " + s.name
                                              : std::string(sema::kind_name(s.kind)) + " " + s.name + ": " + s.type;
    if (!s.op.empty()) head += "  (of op " + s.op + ")";
    std::string text = "```pipe\n" + head + "\n```";
    if (!s.doc.empty()) text += "\n\n" + s.doc;
    return {{"contents", {{"kind", "markdown"}, {"value", text}}}};
  }

  json location(const Index& x, SourceRange r) {
    return {{"uri", uri_of(std::string(x.sources.name(r.file)))}, {"range", range_json(x.sources, r)}};
  }

  json definition(const json& params) {
    Document& d = doc(params);
    if (!d.index) return nullptr;
    std::uint32_t off = offset_of(d.text, params.at("position"));
    for (const auto& use : d.index->table.uses)
      if (!use.stdlib && use.range.begin <= off && off <= use.range.end)
        return {{"uri", uri_of(std::string(d.index->sources.name(use.file)))},
                {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}}}};
    auto sym = at(d, params);
    if (!sym) return nullptr;
    return location(*d.index, d.index->table.symbols[*sym].range);
  }

  json completion(const json& params) {
    Document& d = doc(params);
    json items = json::array();
    if (!d.index) return items;
    const sema::SymbolTable& x = d.index->table;
    std::uint32_t off = offset_of(d.text, params.at("position"));
    std::size_t word = off;
    while (word > 0 && (std::isalnum(static_cast<unsigned char>(d.text[word - 1])) || d.text[word - 1] == '_')) --word;
    auto item = [&](const sema::Symbol& s, int kind, const std::string& insert) {
      std::string what = sema::kind_name(s.kind);
      json it = {{"label", s.name}, {"kind", kind}, {"detail", s.type.empty() ? what : what + ": " + s.type}};
      if (!insert.empty()) it["insertText"] = insert;
      if (!s.doc.empty()) it["documentation"] = s.doc;
      items.push_back(std::move(it));
    };
    // `step.`: the outputs of the step's op.
    if (word > 0 && d.text[word - 1] == '.') {
      std::size_t head = word - 1;
      while (head > 0 && (std::isalnum(static_cast<unsigned char>(d.text[head - 1])) || d.text[head - 1] == '_')) --head;
      auto step = x.steps.find(d.text.substr(head, word - 1 - head));
      if (step != x.steps.end())
        for (const auto& s : x.symbols)
          if (s.kind == Kind::Output && s.op == x.symbols[step->second].type) item(s, 5, "");
      return items;
    }
    // Inside `op(...)` or `pipeline(...)`: the parameters a call of it takes, as `name: `.
    int depth = 0;
    for (std::size_t i = word; i > 0; --i) {
      char c = d.text[i - 1];
      if (c == ')' || c == ']' || c == '}') ++depth;
      else if (c == '[' || c == '{') { if (depth == 0) break; --depth; }
      else if (c == '(') {
        if (depth > 0) { --depth; continue; }
        std::size_t end = i - 1, begin = end;
        while (begin > 0 && (std::isalnum(static_cast<unsigned char>(d.text[begin - 1])) || d.text[begin - 1] == '_')) --begin;
        if (auto args = x.arguments.find(d.text.substr(begin, end - begin)); args != x.arguments.end())
          for (std::size_t id : args->second) item(x.symbols[id], 5, x.symbols[id].name + ": ");
        break;
      }
    }
    // Names: parameters, steps, ops, loop variables.
    for (const auto& s : x.symbols) {
      if (s.kind == Kind::Parameter || s.kind == Kind::Step || s.kind == Kind::LoopVariable) item(s, 6, "");
      else if (s.kind == Kind::Op) item(s, 3, "");
    }
    return items;
  }

  json symbols(const json& params) {
    Document& d = doc(params);
    json out = json::array();
    if (!d.index) return out;
    for (const auto& s : d.index->table.symbols) {
      if (s.range.file != d.index->main) continue;
      if (s.kind != Kind::Parameter && s.kind != Kind::Op && s.kind != Kind::Step) continue;
      json r = range_json(d.index->sources, s.range);
      out.push_back({{"name", s.name},
                     {"detail", s.type},
                     {"kind", s.kind == Kind::Op ? 12 : s.kind == Kind::Step ? 24 : 13},
                     {"range", r},
                     {"selectionRange", r}});
    }
    return out;
  }

  // The document in `pipec fmt`'s layout: one edit of the whole text, none when it is laid
  // out already; null while it has a syntax error (its diagnostics say where), as `fmt`
  // leaves such a file alone.
  json formatting(const json& params) {
    Document& d = doc(params);
    SourceManager sources;
    Diagnostics diags;
    FileId file = sources.add(d.path, d.text);
    Layout layout = format_file(sources, file, diags);
    if (layout.status == Layout::SyntaxError) return nullptr;
    if (layout.status == Layout::WouldChangeProgram)
      throw std::make_pair(-32603, std::string("internal error: formatting would change the program; the text "
                                               "is left as it is (please report it)"));
    if (layout.text == d.text) return json::array();
    // One edit from the start to just after the last character, where check's lines end.
    json end = position(sources, file, static_cast<std::uint32_t>(d.text.size()));
    return json::array({{{"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", end}}},
                         {"newText", layout.text}}});
  }

  std::istream& in_;
  std::ostream& out_;
  std::map<std::string, Document> docs_;
  bool shutdown_ = false;
  bool resync_ = false;  // the last header block had no readable length: find the next one
};

}  // namespace

int run_lsp(std::istream& in, std::ostream& out) { return Server(in, out).run(); }

}  // namespace pipec::tools
