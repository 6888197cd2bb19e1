#pragma once
// The parameters a workflow declares, and `-p name=value` overrides checked against
// them before anything is sent. Values go to the server in their canonical text form:
// strings verbatim, numbers and bools as JSON scalars, lists and maps as compact JSON.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipec::client::kfp {

enum class ParamKind { Any, String, Int, Float, Bool, List, Map };

/// A parameter type: a scalar, or list<T> / map<T> with the element in `element`.
/// Any is the type of a parameter whose workflow says nothing about it (free text).
struct ParamType {
  ParamKind kind = ParamKind::Any;
  std::vector<ParamType> element;  // one entry for List and Map, empty otherwise

  /// The language spelling: "int", "list<string>", "map<list<float>>", "any".
  std::string spelling() const;
};

/// Parses a language spelling ("list<int>"). Returns nullopt for anything else.
std::optional<ParamType> parse_param_type(std::string_view spelling);

/// One declared pipeline parameter.
struct DeclaredParam {
  std::string name;
  ParamType type;
  std::optional<std::string> default_value;  // canonical text; nullopt when required
  std::vector<std::string> allowed;          // canonical texts, when it is an enumeration
  std::optional<double> min;
  std::optional<double> max;
  std::string description;

  bool required() const { return !default_value.has_value(); }
};

/// Where the declarations were read from.
enum class SignatureSource {
  PipecParameters,     // annotation pipec.dev/parameters (typed, with enums and ranges)
  KfpPipelineSpec,     // annotation pipelines.kubeflow.org/pipeline_spec (KFP SDK types)
  WorkflowArguments,   // spec.arguments.parameters only (untyped)
  KfpV2PipelineSpec,   // root.inputDefinitions of a KFP v2 pipeline spec (typed, no enums)
};

/// The name and parameters of a compiled pipeline.
struct Signature {
  std::string name;
  std::string description;
  std::vector<DeclaredParam> params;
  SignatureSource source = SignatureSource::WorkflowArguments;

  const DeclaredParam* find(std::string_view name) const;
};

/// Reads the signature of an Argo workflow (KFP v1): prefers pipec.dev/parameters, then
/// pipelines.kubeflow.org/pipeline_spec, then spec.arguments.parameters. Or of a KFP v2
/// pipeline spec: root.inputDefinitions.parameters.
/// Returns false and sets `error` if the text is neither.
[[nodiscard]] bool read_signature(std::string_view workflow_yaml, Signature& out,
                                  std::string& error);

/// Reads the parameters of a pipeline compiled from a .pipe file from their JSON list
/// (ir::parameters_json, which the Argo writer puts in pipec.dev/parameters), so that a
/// pipeline just compiled is checked as its package read back would be. Appends to
/// `out.params`; returns false and sets `error` when the text is not such a list.
[[nodiscard]] bool read_parameters_json(std::string_view text, Signature& out, std::string& error);

/// Whether the (first document of the) YAML is a KFP v2 pipeline spec.
bool is_v2_pipeline_spec(std::string_view yaml);

/// The JSON value a KFP v2 run takes for a checked value (canonical text): numbers and
/// bools as JSON scalars, lists and maps as JSON, strings (and untyped values) as strings.
std::string typed_json_value(const ParamType& type, const std::string& canonical);

/// One override as the user gave it.
struct Override {
  std::string name;
  std::string text;         // the value text (JSON text when `structured`)
  bool structured = false;  // from a params file: a list or map, already as JSON text
  std::string origin;       // "-p" or the params file's path, for messages
};

/// Splits `-p NAME=VALUE` at the first '='. The value is kept byte for byte.
/// Returns false and sets `error` when there is no '=' or the name is empty.
[[nodiscard]] bool parse_override(std::string_view argument, Override& out, std::string& error);

/// Reads a params file (a YAML or JSON mapping of name to value). Scalars keep their text
/// as written; lists and maps become JSON text. Returns false and appends to `errors`.
[[nodiscard]] bool read_params_file(std::string_view content, const std::string& path,
                                    std::vector<Override>& out, std::vector<std::string>& errors);

/// Reads the params file at `path` (a regular file of at most 16 MiB) and then as
/// read_params_file(). Returns false and appends to `errors`.
[[nodiscard]] bool load_params_file(const std::string& path, std::vector<Override>& out,
                                    std::vector<std::string>& errors);

/// Checks overrides against the signature: unknown names (with a did-you-mean), values
/// that are not of the declared type, outside the enumeration or range, names given
/// twice on the command line, and required parameters left without a value. A later
/// override of the same name from `-p` wins over a params file.
/// On success fills `values` with (name, canonical text) in declaration order and
/// returns true; otherwise appends one message per problem (each names the parameter).
[[nodiscard]] bool check_overrides(const Signature& signature,
                                   const std::vector<Override>& overrides,
                                   std::vector<std::pair<std::string, std::string>>& values,
                                   std::vector<std::string>& errors);

/// Checks one value text against a type. On success sets `canonical`; otherwise sets
/// `problem` to why not (e.g. "'x' is not an integer").
[[nodiscard]] bool canonical_value(const ParamType& type, std::string_view text, bool structured,
                                   std::string& canonical, std::string& problem);

}  // namespace pipec::client::kfp
