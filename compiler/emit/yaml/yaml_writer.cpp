// The block-style YAML writer (see yaml_writer.hpp). Expects a JSON tree whose strings
// are valid UTF-8 (the source manager rejects anything else); guarantees that reading
// the output back gives the same tree, with every string still a string.
#include "compiler/emit/yaml/yaml_writer.hpp"

#include <array>
#include <cstdint>

namespace pipec::emit::yaml {
namespace {

using Json = nlohmann::ordered_json;

// Decodes one UTF-8 sequence at `i` (already validated upstream); returns the code point
// and advances `i`. Invalid bytes decode as U+FFFD-like sentinel 0xFFFFFFFF.
std::uint32_t next_code_point(std::string_view s, std::size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : -1;
  if (extra < 0 || i + static_cast<std::size_t>(extra) >= s.size() + (extra == 0 ? 1 : 0)) {
    ++i;
    return 0xFFFFFFFFu;
  }
  std::uint32_t cp = extra == 0 ? b : b & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    if ((c & 0xC0) != 0x80) {
      ++i;
      return 0xFFFFFFFFu;
    }
    cp = (cp << 6) | (c & 0x3F);
  }
  i += static_cast<std::size_t>(extra) + 1;
  return cp;
}

// YAML's printable set (c-printable), without the line breaks and tab.
bool is_printable(std::uint32_t cp) {
  return (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 || (cp >= 0xA0 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD && cp != 0xFEFF) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Words YAML 1.1 (Go's yaml.v2, PyYAML) or 1.2 reads as bool or null.
bool is_reserved_word(std::string_view s) {
  if (s.empty() || s.size() > 6) return false;
  switch (s.front()) {  // the first letters of the words below
    case 'y': case 'Y': case 'n': case 'N': case 't': case 'T': case 'f': case 'F': case 'o':
    case 'O': case '~': case '.': case '-': case '+': case '<': case '=':
      break;
    default: return false;
  }
  static constexpr std::string_view kWords[] = {
      "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE",
      "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL",
      "~", ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", "+.Inf", "+.INF", ".nan",
      ".NaN", ".NAN", "<<", "="};
  for (auto w : kWords)
    if (s == w) return true;
  return false;
}

// Plain text that some YAML reader could take for a number or a timestamp: anything
// that starts like one (a digit, or a sign or dot before a digit). Over-quoting such
// strings costs two characters; under-quoting turns "1e3" or "0x10" into a number.
bool looks_numeric(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') ++i;
  return i < s.size() && is_digit(s[i]);
}

// The rules of a plain scalar that look at its ends and its whole: not empty, no word or
// number another reader would resolve, no indicator first, no space or ':' last.
bool plain_shape(std::string_view s) {
  if (s.empty() || is_reserved_word(s) || looks_numeric(s)) return false;
  if (s.back() == ' ' || s.back() == ':') return false;
  // `-` may start a plain scalar before a non-space (`--manifest`), but not `---`, a
  // document marker. The other indicators cannot start one (`?` and `:` could, before a
  // non-space: kept out, simple and safe).
  if (s.front() == '-')
    return !(s.size() < 2 || s[1] == ' ' || s[1] == '\t' || s.rfind("---", 0) == 0);
  switch (s.front()) {
    case '?': case ':': case ',': case '[': case ']': case '{': case '}':
    case '#': case '&': case '*': case '!': case '|': case '>': case '\'': case '"':
    case '%': case '@': case '`': case ' ': case '.':
      return false;
    default: return true;
  }
}

// plain_shape(), and nothing inside that ends the scalar (": ", " #") or that a plain
// scalar cannot hold (tabs, non-printable characters).
bool plain_allowed(std::string_view s) {
  if (!plain_shape(s)) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ':' && i + 1 < s.size() && (s[i + 1] == ' ' || s[i + 1] == '\t')) return false;
    if (c == '#' && i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t')) return false;
    if (c == '\t') return false;
  }
  for (std::size_t i = 0; i < s.size();)
    if (!is_printable(next_code_point(s, i))) return false;
  return true;
}

// Multi-line text that a `|` block holds exactly: printable lines (tabs allowed inside),
// no carriage returns, no line ending in a space or tab (readers differ on trailing
// white space in blocks), and a first line that does not start with a space (its
// indentation would need an indicator). Anything else is double-quoted.
bool literal_allowed(std::string_view s) {
  if (s.find('\n') == std::string_view::npos) return false;
  if (s.front() == ' ' || s.front() == '\n' || s.front() == '\t') return false;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = next_code_point(s, i);
    if (cp == '\n' || cp == '\t') {
      if ((cp == '\n' && i >= 2 && (s[i - 2] == ' ' || s[i - 2] == '\t'))) return false;
      continue;
    }
    if (!is_printable(cp) || cp == 0x85 || cp == 0x2028 || cp == 0x2029) return false;
  }
  if (s.back() == ' ' || s.back() == '\t') return false;
  return true;
}

void append_double_quoted(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    std::size_t start = i;
    std::uint32_t cp = next_code_point(s, i);
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\t': out += "\\t"; continue;
      case '\r': out += "\\r"; continue;
      case 0: out += "\\0"; continue;
      // YAML 1.1 readers (go-yaml v2: Argo, Kubernetes) take these as line breaks. The
      // \u form, not \N \L \P: every reader decodes it (yaml-cpp gets \N wrong).
      case 0x85: out += "\\u0085"; continue;
      case 0x2028: out += "\\u2028"; continue;
      case 0x2029: out += "\\u2029"; continue;
      default: break;
    }
    if (cp == 0xFFFFFFFFu) {
      // Not UTF-8 (cannot come from the front end): keep the byte visible.
      auto b = static_cast<unsigned char>(s[start]);
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    } else if (is_printable(cp)) {
      out.append(s.substr(start, i - start));
    } else if (cp <= 0xFF) {
      out += "\\x";
      out.push_back(kHex[cp >> 4]);
      out.push_back(kHex[cp & 0xF]);
    } else {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(cp >> shift) & 0xF]);
    }
  }
  out.push_back('"');
}

void append_literal(std::string& out, std::string_view s, int indent) {
  // Chomping: `-` strips the final line break, none keeps one, `+` keeps them all.
  std::size_t trailing = 0;
  while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
  out += trailing == 0 ? "|-" : trailing == 1 ? "|" : "|+";
  std::string_view rest = s.substr(0, s.size() - (trailing == 0 ? 0 : 1));
  std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  std::size_t pos = 0;
  while (true) {
    std::size_t nl = rest.find('\n', pos);
    std::string_view line = rest.substr(pos, nl == std::string_view::npos ? rest.npos : nl - pos);
    out.push_back('\n');
    if (!line.empty()) {
      out += pad;
      out.append(line);
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
}

void append_key(std::string& out, std::string_view key) { append_scalar(out, key, 0); }

void append_indent(std::string& out, int indent) { out.append(static_cast<std::size_t>(indent), ' '); }

template <class Doc>
void append_value(std::string& out, const Doc& v, int indent);


// Writes the entries of a mapping at `indent`; the first key follows whatever is on the
// current line (after "- " in a sequence), the others start new lines.
template <class Doc>
void append_mapping(std::string& out, const Doc& obj, int indent, bool first_inline) {
  bool first = true;
  for (const auto& [key, value] : obj.items()) {
    if (!(first && first_inline)) {
      out.push_back('\n');
      append_indent(out, indent);
    }
    first = false;
    append_key(out, key);
    out.push_back(':');
    if (value.is_object() && !value.empty()) {
      append_mapping(out, value, indent + 2, false);
    } else if (value.is_array() && !value.empty()) {
      append_value(out, value, indent);  // sequences under a key are not indented
    } else {
      out.push_back(' ');
      append_value(out, value, indent);
    }
  }
}

template <class Doc>
void append_sequence_item(std::string& out, const Doc& item, int indent) {
  out.push_back('\n');
  append_indent(out, indent);
  out += "- ";
  if (item.is_object() && !item.empty()) {
    append_mapping(out, item, indent + 2, true);
  } else if (item.is_array() && !item.empty()) {
    // A nested sequence starts on the next line, indented under the dash.
    out.pop_back();
    for (const auto& inner : item) append_sequence_item(out, inner, indent + 2);
  } else {
    append_value(out, item, indent);
  }
}

template <class Doc>
void append_sequence(std::string& out, const Doc& arr, int indent) {
  for (const auto& item : arr) append_sequence_item(out, item, indent);
}

template <class Doc>
void append_value(std::string& out, const Doc& v, int indent) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      if (v.empty()) {
        out += "{}";
      } else {
        append_mapping(out, v, indent, false);
      }
      return;
    case nlohmann::json::value_t::array:
      if (v.empty()) {
        out += "[]";
      } else {
        append_sequence(out, v, indent);
      }
      return;
    case nlohmann::json::value_t::string: append_scalar(out, v.template get_ref<const std::string&>(), indent); return;
    case nlohmann::json::value_t::boolean: out += v.template get<bool>() ? "true" : "false"; return;
    case nlohmann::json::value_t::null: out += "null"; return;
    default: out += v.dump(); return;  // numbers
  }
}

}  // namespace

ScalarStyle scalar_style(std::string_view text) {
  // Fast path: one pass over printable ASCII text, which is nearly every scalar. A
  // table marks the bytes that need a closer look.
  enum : unsigned char { kOther = 1, kColon = 2, kHash = 4 };
  static const auto kClass = [] {
    std::array<unsigned char, 256> t{};
    for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = (c < 0x20 || c > 0x7E) ? kOther : 0;
    t[':'] = kColon;
    t['#'] = kHash;
    return t;
  }();
  bool ascii = true;
  bool awkward = false;  // ": " or " #" inside
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0, n = text.size(); i < n; ++i) {
    unsigned char k = kClass[p[i]];
    if (k == 0) continue;
    if (k == kOther) {
      ascii = false;
      break;
    }
    if ((k == kColon && i + 1 < n && p[i + 1] == ' ') || (k == kHash && i > 0 && p[i - 1] == ' '))
      awkward = true;
  }
  // Printable ASCII has no tabs, so the separators were all seen above.
  if (ascii) return !awkward && plain_shape(text) ? ScalarStyle::Plain : ScalarStyle::SingleQuoted;
  // NEL, LS and PS are line breaks to a YAML 1.1 reader, inside any style but double
  // quotes, where they are written escaped.
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = next_code_point(text, i);
    if (cp == 0x85 || cp == 0x2028 || cp == 0x2029) return ScalarStyle::DoubleQuoted;
  }
  if (plain_allowed(text)) return ScalarStyle::Plain;
  if (literal_allowed(text)) return ScalarStyle::Literal;
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = next_code_point(text, i);
    if (!is_printable(cp)) return ScalarStyle::DoubleQuoted;
  }
  // Single quotes cannot keep leading/trailing spaces on folded lines, but we never
  // fold, so every printable one-line text fits.
  return ScalarStyle::SingleQuoted;
}

void append_scalar(std::string& out, std::string_view text, int indent) {
  switch (scalar_style(text)) {
    case ScalarStyle::Plain: out.append(text); return;
    case ScalarStyle::Literal: append_literal(out, text, indent); return;
    case ScalarStyle::DoubleQuoted: append_double_quoted(out, text); return;
    case ScalarStyle::SingleQuoted: {
      out.push_back('\'');
      // Copy runs between quotes whole; a quote is written twice.
      std::size_t from = 0;
      for (std::size_t q = text.find('\''); q != std::string_view::npos; q = text.find('\'', from)) {
        out.append(text.substr(from, q + 1 - from));
        out.push_back('\'');
        from = q + 1;
      }
      out.append(text.substr(from));
      out.push_back('\'');
      return;
    }
  }
}

void new_line(std::string& out, int indent) {
  out.push_back('\n');
  append_indent(out, indent);
}

void append_entry(std::string& out, std::string_view key, const Json& value, int indent) {
  new_line(out, indent);
  append_key(out, key);
  out.push_back(':');
  if (value.is_object() && !value.empty()) {
    append_mapping(out, value, indent + 2, false);
  } else if (value.is_array() && !value.empty()) {
    append_value(out, value, indent);
  } else {
    out.push_back(' ');
    append_value(out, value, indent);
  }
}

void append_scalar_entry(std::string& out, std::string_view key, std::string_view value, int indent) {
  new_line(out, indent);
  append_key(out, key);
  out += ": ";
  append_scalar(out, value, indent);
}

void append_item(std::string& out, const Json& value, int indent) {
  append_sequence_item(out, value, indent);
}

namespace {
template <class Doc>
void append_document(std::string& out, const Doc& doc) {
  if (doc.is_object() && !doc.empty()) {
    append_mapping(out, doc, 0, true);
  } else {
    append_value(out, doc, 0);
  }
  out.push_back('\n');
}
}  // namespace

void append_yaml(std::string& out, const Json& doc) { append_document(out, doc); }

void append_yaml(std::string& out, const nlohmann::json& doc) { append_document(out, doc); }

}  // namespace pipec::emit::yaml
