#pragma once

// The parts of a KFP component's reading that its files share: a YAML tree with places
// (built from yaml-cpp's events, bounded), YAML 1.1's reading of plain scalars as kfp's
// PyYAML reads them, KFP's types and names. Internal to compiler/sema.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/sema/component.hpp"

namespace pipec::sema::component::detail {

struct YNode {
  enum class Kind { Null, Scalar, Seq, Map };
  Kind kind = Kind::Null;
  std::string text;
  bool plain = false;  // an unquoted scalar (YAML 1.1 may read it as a number or bool)
  std::vector<YNode> items;
  std::vector<std::pair<YNode, YNode>> entries;
  SourceRange range;

  const YNode* get(std::string_view key) const;

  // Declared here, defaulted below, where a pair of YNodes is complete: clang cannot
  // instantiate the vector of pairs while YNode's implicit members are being defined (the
  // fuzz build is clang's).
  YNode();
  YNode(const YNode&);
  YNode(YNode&&) noexcept;
  YNode& operator=(const YNode&);
  YNode& operator=(YNode&&) noexcept;
  ~YNode();
};

/// Parses `file` (one YAML document, no anchors or aliases, nested at most kMaxDepth)
/// into `root`. Reports a problem at its place and returns false.
bool parse_yaml(const SourceManager& sources, FileId file, Diagnostics& diags, YNode& root);

/// "nothing", "a scalar", "a list", "a map".
const char* kind_name(YNode::Kind k);
/// YAML 1.1's true and false words (yes, On, TRUE, ...).
bool is_true_word(const std::string& s);
bool is_false_word(const std::string& s);
/// Whether PyYAML (YAML 1.1) reads an unquoted scalar as a string, not as an int, a
/// float, a bool or null.
bool is_yaml_string(const std::string& s);
/// The text kfp gives a YAML scalar it turns into a word: str() of what PyYAML read, so
/// an unquoted `true` is "True".
std::string word_text(const YNode& n);
std::string lower(std::string s);

/// The pipec type of a KFP input type, and of an output type (docs/language.md "KFP
/// components as ops").
ir::Type input_type(const std::string& kfp);
ir::Type output_type(const std::string& kfp);
/// kfp's _sanitize_file_name: the folder of an input's or output's file.
std::string sanitize_file_name(const std::string& name);
/// kfp's _generate_output_file_name and _generate_input_file_name: where the container
/// writes an output (/tmp/outputs/NAME/data) and finds an input file (/tmp/inputs/NAME/data).
std::string output_file(const std::string& kfp_name);
std::string input_file(const std::string& kfp_name);
/// The op's name for a component's name (python_name; a keyword gets `_`).
std::string op_name_of(const std::string& kfp);
/// kfp's generate_unique_name_conversion_table with _sanitize_python_function_name.
std::vector<std::string> unique_names(const std::vector<std::string>& names);
/// Names every input (or output) by unique_names of their KFP names.
template <class T>
void give_names(std::vector<T>& items) {
  std::vector<std::string> kfp;
  for (const auto& i : items) kfp.push_back(i.kfp_name);
  auto names = unique_names(kfp);
  for (std::size_t i = 0; i < items.size(); ++i) items[i].name = names[i];
}

/// kfp 2.17's type_utils.is_parameter_type: the KFP types that are values, not artifacts.
bool is_parameter_type(const std::string& kfp);
/// After the command is read: inputs used as files (inputPath, inputUri; with the executor
/// input every artifact input) are `file` parameters, and which outputs KFP has the
/// container write itself (outputUri, the executor input).
void settle_files(Component& c);

/// A KFP v2 placeholder `{{$...}}` by its inside: the executor input (""), an input's
/// value, path, URI or metadata field, an output's path or URI.
struct V2Ref {
  enum class Kind { ExecutorInput, InputValue, InputPath, InputUri, InputMetadata, OutputPath, OutputUri };
  Kind kind = Kind::ExecutorInput;
  std::string name, key;  // the input or output (KFP name); InputMetadata: the field
  bool is_input() const { return kind != Kind::OutputPath && kind != Kind::OutputUri; }
};
std::optional<V2Ref> parse_v2_ref(const std::string& inner);
/// Text of a v1 component that holds KFP v2 placeholders, as kfp 2.17 passes it to KFP's
/// launcher: the same text with the component's names as the op's (pipec's). nullopt when
/// some `{{$` is not a placeholder of the component's own inputs and outputs. Inputs used as
/// artifacts are added to `artifact_inputs`.
std::optional<std::string> v2_text_for(const std::string& text, const Component& c,
                                       std::vector<std::string>& artifact_inputs);

/// Reads a KFP v1 ComponentSpec (component_spec.cpp) and a KFP v2 component, a pipeline
/// spec with one component (component_v2.cpp).
bool read_v1(const YNode& root, Diagnostics& diags, Component& out);
/// A graph task's constant argument as the value of an input of type `t` (kfp passes it
/// as its text): nullopt when the type cannot hold it.
std::optional<ir::Literal> constant_literal(const std::string& text, const ir::Type& t);
/// After read_v1: a component without an image takes it as a parameter (component.hpp).
void finish_v1(Component& c);
bool read_v2(const YNode& root, Diagnostics& diags, Component& out);

/// What the v1 and v2 component readers share: where their errors go, and whether any was
/// reported.
class ReaderBase {
 protected:
  explicit ReaderBase(Diagnostics& diags) : diags_(diags) {}
  /// Reports an error at `at`; returns false, for `return fail(...)`.
  bool fail(SourceRange at, std::string message) {
    diags_.error(at, std::move(message));
    ok_ = false;
    return false;
  }

  Diagnostics& diags_;
  bool ok_ = true;
};

}  // namespace pipec::sema::component::detail
