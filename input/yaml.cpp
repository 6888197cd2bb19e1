#include "input/yaml.hpp"

#include <cstdint>
#include <map>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "input/limits.hpp"

namespace pipec::input {

namespace {

struct Refused {
  YAML::Mark mark;
  std::string what;
};

std::string located(const YAML::Mark& mark, const std::string& what) {
  if (mark.is_null()) return what;
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) + ": " + what;
}

// Counts what a document would be once its aliases are walked, and its depth; throws
// Refused at the first event past a bound, before yaml-cpp descends any further.
class BoundsCheck : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_ > 0 && mark.pos == last_start_)
      throw Refused{mark, "unexpected text here (a ',' or other character after a complete "
                          "value?)"};
    last_start_ = mark.pos;
    ++documents_;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { leaf(anchor); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = sizes_.find(anchor);
    std::uint64_t size = it == sizes_.end() ? 1 : it->second;
    aliased_ += size;
    nodes_ += size;
    if (aliased_ > kMaxAliasNodes)
      throw Refused{mark, "aliases expand to more than " + std::to_string(kMaxAliasNodes) + " nodes"};
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  void leaf(YAML::anchor_t anchor) {
    ++nodes_;
    if (anchor) sizes_[anchor] = 1;
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (open_.size() >= kMaxNesting)
      throw Refused{mark, "nesting deeper than " + std::to_string(kMaxNesting) + " levels"};
    ++nodes_;
    open_.push_back({anchor, nodes_});
  }
  void close() {
    auto [anchor, first] = open_.back();
    open_.pop_back();
    if (anchor) sizes_[anchor] = nodes_ - first + 1;
  }

  std::size_t documents_ = 0;
  int last_start_ = 0;
  std::uint64_t nodes_ = 0;    // counting each alias as the nodes it names
  std::uint64_t aliased_ = 0;  // the nodes aliases added
  std::map<YAML::anchor_t, std::uint64_t> sizes_;
  std::vector<std::pair<YAML::anchor_t, std::uint64_t>> open_;
};

bool check_bounds(const std::string& text, std::string& error) {
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    BoundsCheck check;
    while (parser.HandleNextDocument(check)) {
    }
  } catch (const Refused& r) {
    error = located(r.mark, r.what);
    return false;
  } catch (const YAML::Exception& e) {
    error = located(e.mark, e.msg);
    return false;
  }
  return true;
}

}  // namespace

bool load_yaml_all(std::string_view text, std::vector<YAML::Node>& documents, std::string& error) {
  std::string copy(text);
  if (!check_bounds(copy, error)) return false;
  try {
    documents = YAML::LoadAll(copy);
  } catch (const YAML::Exception& e) {
    error = located(e.mark, e.msg);
    return false;
  }
  return true;
}

bool load_yaml(std::string_view text, YAML::Node& root, std::string& error) {
  std::string copy(text);
  if (!check_bounds(copy, error)) return false;
  try {
    root = YAML::Load(copy);
  } catch (const YAML::Exception& e) {
    error = located(e.mark, e.msg);
    return false;
  }
  return true;
}

}  // namespace pipec::input
