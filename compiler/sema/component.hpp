#pragma once

// KFP components as ops: `use "path/component.yaml"` reads a KFP v1 ComponentSpec (what
// kfp.components.load_component_from_file reads) and makes it a container op. The reader
// bounds what it reads (size, nesting, no aliases, one document) and reports a file that is
// not a component at the YAML field's line and column. declaration() gives the op's
// signature as .pipe source: the loader parses it (so the checker, the LSP and
// `pipec component show` see one declaration), and instantiate() resolves the placeholders
// for one call, as kfp 1.8's compiler does for the arguments a step gives.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/sema/host.hpp"

namespace pipec::sema {
struct Program;
}

namespace pipec::sema::component {

/// The largest component file read (bytes); checked before reading.
inline constexpr std::uintmax_t kMaxFileBytes = 4u << 20;
/// The deepest nesting of YAML collections accepted.
inline constexpr int kMaxDepth = 64;
/// The most YAML nodes (keys, values, lists and maps) a component may have, counted as it is
/// read: the largest component file of kubeflow/pipelines (a KFP v2 AutoML pipeline) has
/// 17,081. A 4 MiB file can hold 450,000, which took 1.1 s and 270 MB to read and check.
inline constexpr std::size_t kMaxNodes = 100000;

/// A command-line item: text or a placeholder.
struct Arg {
  enum class Kind {
    Text, InputValue, InputPath, OutputPath, Concat, If, IsPresent,
    // KFP's artifact URIs and executor input: real placeholders on the kfp-v2 target, the
    // text kfp 1.8.22 writes elsewhere (docs/language.md "Placeholders").
    InputUri, OutputUri, ExecutorInput, OutputMetadata,
    // Text of a v1 component holding KFP v2 placeholders (`{{$}}`, ...): `text` on the Argo
    // target, as kfp 1.8.22 writes it; the first item's text (names as the op's) on kfp-v2,
    // as kfp 2.17 passes it to KFP's launcher. Further items: InputPath markers of the inputs
    // it uses as artifacts (they are files).
    V2Text,
  };
  Kind kind = Kind::Text;
  std::string text;          // Text: the word; placeholders: the input or output (KFP name)
  std::vector<Arg> items;    // Concat: the parts; If: the condition (one item)
  std::vector<Arg> then_items, else_items;  // If
  SourceRange range;
};

struct Input {
  std::string kfp_name, name;  // name: the op parameter (KFP's pythonic name)
  std::string kfp_type;        // "" when untyped
  ir::Type type;
  std::optional<ir::Literal> default_value;
  bool optional = false;  // `optional: true` and no default: a step may leave it out
  std::string doc;
  SourceRange range;
};

struct Output {
  std::string kfp_name, name, kfp_type;
  ir::Type type;
  std::string path;  // where the container writes it
  std::string doc;
  /// Written by the container where KFP says (through its URI or the executor input), not
  /// at `path`: on the kfp-v2 target nothing is copied from `path`.
  bool kfp_writes = false;
  SourceRange range;
};

struct Component;

/// An argument of a graph component's task, or the source of one of its outputs: a
/// constant, one of the graph's inputs, or an output of another of its tasks.
struct GraphArg {
  enum class Kind { Constant, GraphInput, TaskOutput };
  Kind kind = Kind::Constant;
  std::string text;  // Constant: the value; GraphInput: the input; TaskOutput: the output (KFP names)
  std::string task;  // TaskOutput: the task (its KFP name)
  SourceRange range;
};

/// A task of a graph component (`implementation.graph.tasks`): a step calling the
/// component its componentRef names (component_graph.cpp resolves it).
struct Task {
  std::string kfp_name, name;  // name: the step's (KFP's unique pythonic names of the tasks)
  std::string url, digest;     // the componentRef's
  /// The component it calls: its inline `spec`, or (after resolve_refs) the one its digest
  /// names. `key` says which: "sha256:HEX" of the file, or the inline spec's place.
  std::shared_ptr<Component> component;
  std::string key;
  std::vector<std::pair<std::string, GraphArg>> args;  // by the called component's input (KFP name)
  SourceRange range, ref_range;
};

struct Component {
  std::string kfp_name, name, doc;
  std::vector<Input> inputs;
  std::vector<Output> outputs;
  std::string image;
  /// The image is empty (kfp loads such components: their authors leave the image to be
  /// set before use): the op takes it as this required `string` parameter instead.
  std::string image_param;
  bool has_command = false;
  std::vector<Arg> command, args;
  std::vector<std::pair<std::string, std::string>> env;
  bool executor_input = false;  // some word is the executor input ({executorInput}, {{$}})
  SourceRange range;  // of the component's name (or the document)
  /// A graph component (`implementation.graph`): a pipeline of its tasks, in dependency
  /// order, and where each of its outputs comes from (by output, KFP name).
  bool graph = false;
  std::vector<Task> tasks;
  std::vector<std::pair<std::string, GraphArg>> output_values;
};

/// The largest number of components one graph component's references resolve to (each
/// once, however often referenced), and how deep graph components may nest.
inline constexpr std::size_t kMaxGraphComponents = 256;
inline constexpr int kMaxGraphDepth = 16;

/// Downloads the file at `url` into `body` (bounded), or says why not in `error`.
using Fetch = std::function<bool(const std::string& url, std::string& body, std::string& error)>;

/// Resolves the componentRef of every task of graph component `c`, and of the graph
/// components those name, as kfp's ComponentStore does: an inline `spec`, else the cache
/// file named by the `digest` (its SHA-256 checked). Then checks each task's arguments
/// against the component it calls and settles the types of the graph's inputs (a `file`
/// where a task takes one) and outputs (those of the task outputs they are). Every problem
/// is reported at its place in the YAML. Does nothing for other components.
/// With `fetch` (`pipec component fetch`; building never downloads), a digest missing from
/// the cache is fetched from the componentRef's `url`, checked against the digest and saved
/// in the cache; `saved` gets each file saved.
/// The cache is `host`'s (sema/host.hpp), and so is the saving.
[[nodiscard]] bool resolve_refs(SourceManager& sources, Component& c, Diagnostics& diags, const Host& host,
                                const Fetch& fetch = {}, std::vector<std::string>* saved = nullptr);

/// KFP's _sanitize_python_function_name: lower case, every run of non-word characters or
/// `_` one `_`, no leading or trailing `_`, `n` before a leading digit.
std::string python_name(const std::string& name);

/// Reads a component file into `sources`, its size checked before reading. Returns
/// kNoFile and sets `error` when it cannot.
FileId load_file(SourceManager& sources, const std::string& path, std::string& error);

/// An input a step may leave out: optional, without a default.
bool may_leave_out(const Component& c, const std::string& param);

/// Reads the component in `file` (already in `sources`). Reports every problem, located.
[[nodiscard]] bool read(const SourceManager& sources, FileId file, Diagnostics& diags,
                        Component& out);

/// The op's declaration as .pipe source: doc comments, `op NAME(PARAM: TYPE [= DEFAULT],
/// ...) -> (OUTPUT: TYPE, ...)`, no body (the container comes from the component). A graph
/// component (resolved) is a pipeline: `pipeline NAME -> (OUTPUT: TYPE, ...)` with a
/// `param` per input, a step per task calling its component's op (or pipeline), and an
/// `output` per output value.
std::string declaration(const Component& c);

/// The op a graph component's pipeline writes a constant or a value output with, where a
/// task reads the input as a file (KFP passes either as a file); its .pipe source, loaded
/// once with every graph component.
inline constexpr const char* kValueAsFileOp = "value_as_file";
inline constexpr const char* kValueAsFileImage = "busybox:1.36";
std::string value_as_file_source();

/// What a step gives an input: nothing (left out), a constant, or a run-time value.
struct Given {
  bool present = false;
  const ir::Literal* literal = nullptr;  // set when the value is a constant
};

/// The container a step runs: every placeholder resolved for the arguments `given` (by op
/// parameter name). `key` names the resolution (which inputs were present, which
/// conditions held): steps with the same key share the container. Errors (a condition on
/// a run-time value) are reported at `call`.
std::optional<ir::ContainerOp> instantiate(const Component& c,
                                           const std::map<std::string, Given>& given,
                                           SourceRange call, Diagnostics& diags,
                                           std::string& key);

/// The container of op `name` in a checked program, for `pipec component export`. nullptr,
/// with `why` set, when there is no such op or it has no container of its own (a training
/// op; a KFP component, whose container each step resolves).
const ir::ContainerOp* container_op(const Program& program, const std::string& name, std::string& why);

}  // namespace pipec::sema::component
