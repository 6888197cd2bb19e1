// A KFP component's YAML as a tree with places: yaml-cpp's events, bounded (nesting, no
// anchors or aliases, one document), and YAML 1.1's reading of plain scalars.
#include "compiler/sema/component_detail.hpp"

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "input/utf8.hpp"

namespace pipec::sema::component::detail {

YNode::YNode() = default;
YNode::YNode(const YNode&) = default;
YNode::YNode(YNode&&) noexcept = default;
YNode& YNode::operator=(const YNode&) = default;
YNode& YNode::operator=(YNode&&) noexcept = default;
YNode::~YNode() = default;

const YNode* YNode::get(std::string_view key) const {
  for (const auto& entry : entries)
    if (entry.first.kind == Kind::Scalar && entry.first.text == key) return &entry.second;
  return nullptr;
}

namespace {

struct Refused : std::runtime_error {
  Refused(const std::string& what, SourceRange at) : std::runtime_error(what), range(at) {}
  SourceRange range;
};

class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(FileId file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_anchor(mark, anchor);
    YNode n;
    n.range = at(mark, 1);
    count(n.range);
    add(std::move(n));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw Refused("YAML aliases (*name) are not accepted in a component", at(mark, 1));
  }
  void OnAnchor(const YAML::Mark& mark, const std::string&) override {
    throw Refused("YAML anchors (&name) are not accepted in a component", at(mark, 1));
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_anchor(mark, anchor);
    YNode n;
    n.kind = YNode::Kind::Scalar;
    n.text = value;
    n.plain = tag == "?";
    n.range = at(mark, std::max<std::size_t>(1, value.size()));
    count(n.range);
    add(std::move(n));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, YNode::Kind::Seq);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, YNode::Kind::Map);
  }
  void OnMapEnd() override { close(); }

  bool done() const { return has_root_; }
  YNode take() { return std::move(root_); }

 private:
  SourceRange at(const YAML::Mark& mark, std::size_t length) const {
    auto begin = static_cast<std::uint32_t>(std::max(0, mark.pos));
    return {file_, begin, begin + static_cast<std::uint32_t>(length)};
  }
  // Stops at the first node past kMaxNodes, before yaml-cpp reads any further.
  void count(SourceRange at) {
    if (++nodes_ > kMaxNodes)
      throw Refused(fmt::format("the component has more than {} YAML nodes (keys, values, lists "
                                "and maps); split it into smaller components",
                                kMaxNodes),
                    at);
  }
  void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor)
      throw Refused("YAML anchors (&name) are not accepted in a component", at(mark, 1));
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor, YNode::Kind kind) {
    check_anchor(mark, anchor);
    if (static_cast<int>(stack_.size()) >= kMaxDepth)
      throw Refused(fmt::format("the component nests deeper than {} levels", kMaxDepth),
                    at(mark, 1));
    YNode n;
    n.kind = kind;
    n.range = at(mark, 1);
    count(n.range);
    stack_.push_back(std::move(n));
    pending_key_.emplace_back();
  }
  void close() {
    YNode n = std::move(stack_.back());
    stack_.pop_back();
    pending_key_.pop_back();
    add(std::move(n));
  }
  void add(YNode n) {
    if (stack_.empty()) {
      root_ = std::move(n);
      has_root_ = true;
      return;
    }
    YNode& top = stack_.back();
    if (top.kind == YNode::Kind::Seq) {
      top.items.push_back(std::move(n));
      return;
    }
    auto& key = pending_key_.back();
    if (!key) {
      if (n.kind == YNode::Kind::Seq || n.kind == YNode::Kind::Map)
        throw Refused("a map key must be a scalar", n.range);
      key = std::move(n);
      return;
    }
    for (const auto& [k, v] : top.entries)
      if (k.text == key->text)
        throw Refused(fmt::format("duplicate key '{}'", key->text), key->range);
    top.entries.emplace_back(std::move(*key), std::move(n));
    key.reset();
  }

  FileId file_;
  std::vector<YNode> stack_;
  std::vector<std::optional<YNode>> pending_key_;
  YNode root_;
  bool has_root_ = false;
  std::size_t nodes_ = 0;
};

}  // namespace

const char* kind_name(YNode::Kind k) {
  switch (k) {
    case YNode::Kind::Null: return "nothing";
    case YNode::Kind::Scalar: return "a scalar";
    case YNode::Kind::Seq: return "a list";
    case YNode::Kind::Map: return "a map";
  }
  return "?";
}

bool is_true_word(const std::string& s) {
  static const std::set<std::string> words = {"yes", "Yes", "YES", "true", "True", "TRUE",
                                              "on",  "On",  "ON"};
  return words.count(s) > 0;
}
bool is_false_word(const std::string& s) {
  static const std::set<std::string> words = {"no", "No", "NO", "false", "False", "FALSE",
                                              "off", "Off", "OFF"};
  return words.count(s) > 0;
}

// Whether PyYAML (YAML 1.1) reads an unquoted scalar as a string, not as an int, a float,
// a bool or null.
bool is_yaml_string(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return false;
  if (is_true_word(s) || is_false_word(s)) return false;
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return true;
  if (s.compare(i, std::string::npos, ".inf") == 0 || s.compare(i, std::string::npos, ".Inf") == 0 ||
      s == ".nan" || s == ".NaN")
    return false;
  bool digit = false, dot = false;
  for (std::size_t k = i; k < s.size(); ++k) {
    char ch = s[k];
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '_') {
      digit = digit || ch != '_';
    } else if (ch == '.' && !dot) {
      dot = true;
    } else if ((ch == 'e' || ch == 'E') && dot && digit && k + 1 < s.size() &&
               (s[k + 1] == '-' || s[k + 1] == '+')) {
      ++k;  // YAML 1.1 floats need a '.' and a signed exponent
    } else if ((ch == 'x' || ch == 'o') && k == i + 1 && s[i] == '0') {
      continue;
    } else {
      return true;
    }
  }
  return !digit;
}

// The text kfp gives a YAML scalar it turns into a word: str() of what PyYAML (YAML 1.1)
// read, so an unquoted `true` is "True".
std::string word_text(const YNode& n) {
  if (!n.plain) return n.text;
  if (is_true_word(n.text)) return "True";
  if (is_false_word(n.text)) return "False";
  return n.text;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

namespace {

// kfp reads a component with yaml.safe_load: UTF-8 text, of printable characters (tab,
// newline and carriage return the only controls). A byte that is neither is refused at
// its own line and column here, before anything is printed or generated from the file.
bool check_characters(std::string_view text, FileId file, Diagnostics& diags) {
  if (std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos) {
    auto at = static_cast<std::uint32_t>(bad);
    diags.error({file, at, at + 1}, fmt::format("invalid UTF-8 byte 0x{:02x}: a component file is UTF-8 text",
                                                static_cast<unsigned char>(text[bad])));
    return false;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      auto at = static_cast<std::uint32_t>(i);
      diags.error({file, at, at + 1}, fmt::format("control character 0x{:02x} in a component file: YAML takes "
                                                  "none but tab and line ends (write it as an escape in a "
                                                  "double-quoted string)",
                                                  c));
      return false;
    }
  }
  return true;
}

}  // namespace

bool parse_yaml(const SourceManager& sources, FileId file, Diagnostics& diags, YNode& root) {
  std::string text(sources.text(file));
  if (!check_characters(text, file, diags)) return false;
  SourceRange whole{file, 0, 1};
  TreeBuilder builder(file);
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    parser.HandleNextDocument(builder);
    if (!builder.done()) {
      diags.error(whole, "the file is empty: a component is a YAML map");
      return false;
    }
    // A second document: kfp's loader (yaml.safe_load) refuses it, so does this one.
    TreeBuilder rest(file);
    if (parser.HandleNextDocument(rest) && rest.done()) {
      diags.error(whole, "the file holds more than one YAML document; a component is one");
      return false;
    }
  } catch (const Refused& e) {
    diags.error(e.range, e.what());
    return false;
  } catch (const YAML::Exception& e) {
    auto begin = static_cast<std::uint32_t>(std::max(0, e.mark.pos));
    diags.error({file, begin, begin + 1}, fmt::format("not valid YAML: {}", e.msg));
    return false;
  }
  root = builder.take();
  return true;
}

}  // namespace pipec::sema::component::detail
