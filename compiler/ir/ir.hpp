#pragma once

// The IR: the typed, resolved pipeline graph that sema's lowering produces and
// every emitter reads. It holds no AST and no parser types; every name in it has
// been resolved and every value type-checked. Ranges point back into the source
// for the few errors an emitter may still report.
//
// Ownership of this header: shared between the lowering (ir/lower.cpp) and the
// emitters (emit/argo, emit/kfpv2, training). Change it in small, announced steps.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/base/box.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/ir/plan.hpp"
#include "compiler/ir/type.hpp"
#include "rules/kubernetes.hpp"
#include "rules/retry.hpp"

namespace pipec::ir {

/// A literal value as JSON: string, integer, float, bool, array or object. Objects keep
/// the source order of their keys.
using Literal = nlohmann::ordered_json;

/// Constraint on a parameter: a set of allowed values and/or an inclusive numeric range.
struct Constraint {
  std::vector<Literal> one_of;  // empty: any value
  std::optional<double> min;
  std::optional<double> max;
  bool empty() const { return one_of.empty() && !min && !max; }
};

/// A pipeline parameter (`param NAME: TYPE [in ...] [= DEFAULT]`).
struct Param {
  std::string name;  // as in the source; also the Argo parameter name
  Type type;
  std::optional<Literal> default_value;  // absent: the run must give a value
  Constraint constraint;
  std::string doc;  // from `##` doc comments above it, may be empty
  SourceRange range;
};

/// A reference to a value known only at run time.
struct Ref {
  enum class Kind {
    Param,       // a pipeline parameter: `name`
    OpParam,     // inside a container op body: the op's own parameter `name`
    LoopItem,    // the variable of an enclosing `for`: `name`, optional `field` for item.key
    StepOutput,  // an output of another step: step `name`, output `field`
    Run,         // in `finally`, the run's own `run.status` or `run.failures` (`field`)
  };
  // The kind beside the range's 12 bytes takes no padding (112 bytes, not 120), and is read
  // first, with the name, from one cache line.
  Kind kind = Kind::Param;
  SourceRange range;
  std::string name;
  std::string field;
  Type type;
};

struct Value;

/// One piece of an interpolated string: literal text, or a reference.
struct Part {
  std::string text;        // used when ref is empty
  std::optional<Ref> ref;  // `${...}`
  /// A KFP component's placeholder that only KFP v2's launcher resolves (`{{$}}`, an
  /// artifact's `.uri`): the kfp-v2 writer prints this instead of `text`, which is what
  /// kfp 1.8.22 writes on Argo. Never set from a user's text.
  std::string kfp_v2;
};

/// The value of an op argument or body field after checking.
struct Value {
  enum class Kind {
    Literal,        // `literal` holds it (may be a whole list or map of literals)
    Ref,            // `ref`
    Interpolation,  // a string with `${...}` parts: `parts`
    List,           // a list with at least one non-literal item: `items`
    Map,            // a map with at least one non-literal value: `entries`
  };
  // The kind beside the range's 12 bytes takes no padding (256 bytes, not 272); what is
  // read first (kind, type, literal) shares the first cache line.
  Kind kind = Kind::Literal;
  SourceRange range;
  Type type;
  Literal literal;
  std::optional<Ref> ref;
  std::vector<Part> parts;
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> entries;

  bool is_literal() const { return kind == Kind::Literal; }

  // Declared here, defaulted in ir.cpp: with libstdc++ 12 in C++20 mode, clang
  // cannot instantiate std::pair<std::string, Value> (in `entries`) while Value's
  // implicit members are being defined. Needed for the clang fuzz build.
  Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();
};

/// The ref a value is made of when it is one whole ref: a Ref, or an interpolation
/// that is only `${x}` (the parser keeps no empty text parts). Else nullptr.
const Ref* whole_ref(const Value& v);

/// The text a literal stands for at run time, as Argo passes it: strings as they are,
/// bools as true/false, numbers as JSON writes them, lists and maps as compact JSON.
std::string literal_text(const Literal& l);

/// A run-time condition (`if`): comparisons, `and`, `or`, `not` over values.
struct Condition {
  enum class Op { Leaf, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not };
  Op op = Op::Leaf;
  std::vector<Condition> operands;  // two for comparisons/and/or, one for not
  Box<Value> value;                 // for Leaf: a bool value or any comparable value
  SourceRange range;
};

/// How a comparison (Eq ... Ge) compares its two operands: decided once here, and printed
/// by each target (Argo's expr, KFP's CEL) or applied by the local run, so the three
/// cannot disagree. Two ints compare as 64-bit integers (exactly beyond 2^53), an int and
/// a float or two floats as doubles, two bools as truth values, anything else as text
/// (byte by byte: "10" < "9").
enum class Comparison { Int, Float, Bool, Text };
Comparison comparison_of(const Condition& c);

/// The texts a `bool` value read at run time means as true: those Go's strconv.ParseBool
/// reads as true, which is how the KFP v2 backend reads a BOOLEAN output (so `true`, pipec's
/// and JSON's spelling, and `True`, Python's str(True), which kfp 1.8's
/// create_component_from_func writes for a bool output and compiles a comparison with).
/// Every other text means false. Decided here once: the Argo writer prints the test
/// (`x in [...]`), the local run applies it (is_true_text), KFP v2's backend parses alike.
inline constexpr std::string_view kTrueTexts[] = {"true", "True", "TRUE", "t", "T", "1"};
[[nodiscard]] bool is_true_text(std::string_view text);

/// The operator of a comparison, `and` or `or` as both targets spell it: "==", "!=", "<",
/// "<=", ">", ">=", "&&", "||".
const char* op_symbol(Condition::Op op);

/// A single-quoted string literal, in the syntax both targets' condition languages share
/// (Argo's expr-lang, KFP's CEL), that holds `text` exactly: `'`, `\` and control
/// characters escaped (the others as `\u00XX`, which both read). With `escape_braces`, `{`
/// and `}` too, so that the literal can never close Argo's `{{=...}}` tag.
std::string quoted_string(std::string_view text, bool escape_braces);

/// The spelling of a condition's values in one target's expression language: each target
/// gives one, and print_condition() writes the tree with it, so the targets print the one
/// decision of comparison_of() alike.
class ConditionSyntax {
 public:
  virtual ~ConditionSyntax() = default;
  /// A value taken as a truth value: a bool literal, or a value whose text is "true".
  virtual std::string truth(const Value& v) = 0;
  /// An operand of a comparison that compares as `how` (Int, Float or Text).
  virtual std::string operand(const Value& v, Comparison how) = 0;
};

/// `c` as an expression: `(a op b)` for comparisons, `and` and `or` (op_symbol), `!a`
/// for `not`, operands left to right.
std::string print_condition(const Condition& c, ConditionSyntax& syntax);

/// A parameter or output in an op signature.
struct OpParam {
  std::string name;
  Type type;
  std::optional<Literal> default_value;
  std::string doc;
  /// A `file` parameter of a container op: where the file is placed for the command
  /// (`inputs {name: "/path"}`, default /tmp/inputs/<name>/data); `${name}` is this path.
  std::string path;
  /// A KFP component's file input, which its command reads where KFP says (its path, URI
  /// or the executor input): the kfp-v2 writer places nothing at `path`.
  bool kfp_reads = false;
};

struct OpOutput {
  std::string name;
  Type type;
  std::string path;  // where the container writes it (container ops)
  std::string doc;
  /// A KFP component's output the container writes where KFP v2 says (its URI or the
  /// executor input): the kfp-v2 writer copies nothing from `path`.
  bool kfp_writes = false;
};

/// A container op (`op NAME(...) -> (...) { image ...; command ... }`).
/// References inside the body are Ref::Kind::OpParam.
struct ContainerOp {
  std::string name;
  std::vector<OpParam> params;
  std::vector<OpOutput> outputs;
  Value image;
  /// Exec form: `command ["python", "x.py", "${n}"]` gives one Value per argv word.
  /// Shell form: `command "python x.py --n ${n}"` gives one Interpolation run by
  /// `sh -c`, each `${...}` reaching the script as a quoted environment variable.
  std::vector<Value> command;
  bool shell = false;
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> env;
  /// Resource fields: cpu, memory (requests = limits), gpus, gpu_vendor, ... in source order.
  std::vector<std::pair<std::string, Value>> resources;
  /// `retries N` or `retries {limit: N, policy: ..., backoff: "30s", factor: 2,
  /// max_duration: "1h"}`: Argo retryStrategy (policy Always unless given, as KFP v1's
  /// set_retry), KFP v2 retryPolicy.
  std::optional<long long> retries;
  std::string retry_policy = "Always";  // Always, OnFailure, OnError, OnTransientError
  std::optional<long long> retry_backoff_seconds;  // the first wait before a retry
  std::optional<long long> retry_factor;           // each wait is the last times this
  std::optional<long long> retry_max_duration_seconds;  // no retry after this, from the first start
  /// `on: ["oom", "evicted", "exit:N", "message:TEXT"]`: retry only a failure one of these
  /// matches (rules::should_retry); empty: every failure.
  std::vector<rules::RetryOn> retry_on;
  /// `memory_factor: F, memory_max: Q`: the memory of attempt 0, 1, ... retries (limit),
  /// rules::grown_memory of the op's literal memory; empty when memory does not grow.
  std::vector<std::string> retry_memory;
  double retry_memory_factor = 0;
  std::string retry_memory_max;
  /// Where `on` or `memory_factor` is written (a target that cannot express them says so there).
  SourceRange retry_reasons_range;
  /// `timeout`: seconds (an int, or "90s", "30m", "2h", "1h30m"): activeDeadlineSeconds.
  std::optional<long long> timeout_seconds;
  /// Pod placement and metadata, literal texts: `node_selector {KEY: "v"}`,
  /// `tolerations ["key=value:NoSchedule"]` (each read by rules::parse_toleration, as
  /// data), `labels {...}`, `annotations {...}`.
  std::vector<std::pair<std::string, std::string>> node_selector;
  std::vector<rules::Toleration> tolerations;
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::pair<std::string, std::string>> annotations;
  /// Scheduling on a shared cluster, literal texts ("" for none; docs/language.md,
  /// "Scheduling"): a Kueue queue (the pod's label kueue.x-k8s.io/queue-name), a
  /// PriorityClass, a scheduler (schedulerName), the size of /dev/shm (a memory-backed
  /// emptyDir).
  std::string queue, priority_class, scheduler, shm_size;
  /// Where each of those four is written (its value), by field name.
  std::map<std::string, SourceRange> scheduling_ranges;
  /// `cache false`: results are never reused; `cache "7d"`: reused while at most that
  /// old (seconds; KFP v1's max_cache_staleness). Unset: KFP's default (reuse).
  std::optional<bool> cache;
  std::optional<long long> cache_staleness_seconds;
  /// `volumes {"/path": "pvc:claim[/sub/path]" | "empty[:SIZE]" | "memory[:SIZE]" |
  /// "ephemeral:SIZE" | "configmap:name" | "secret:name" | "workspace"}`, each with an
  /// optional ":ro"; "workspace" is the run's claim (Settings::workspace).
  struct Volume {
    /// What is mounted: a claim, a scratch emptyDir (`memory` too: an emptyDir with
    /// `memory` set), a generic ephemeral claim, a ConfigMap, a Secret, the run's workspace.
    /// Decided once by sema from the source word (volume_kind_of); consumers switch on it.
    enum class Kind { Pvc, Empty, Ephemeral, ConfigMap, Secret, Workspace };
    Kind kind = Kind::Empty;
    std::string name;  // claim, config map or secret name ("" for empty and ephemeral)
    std::string path;
    std::string sub_path;   // pvc: the directory of the claim mounted ("" = its root)
    std::string size;       // empty: sizeLimit ("" = none); ephemeral: the claim's storage
    bool memory = false;    // empty: medium Memory (tmpfs)
    bool read_only = false; // the mount is read-only
    SourceRange range;      // the source text that names it (preflight reports there)
  };
  std::vector<Volume> volumes;
  /// `secret_env {VAR: "secret:key"}`: VAR from a Secret's key (only names in the workflow).
  struct SecretEnv {
    std::string var, secret, key;
    SourceRange range;  // the "SECRET:KEY" text (preflight reports there)
  };
  std::vector<SecretEnv> secret_env;
  std::string image_pull_policy;  // Always, IfNotPresent, Never; "" = Kubernetes' default
  std::string working_dir;        // `working_dir "/work"`: the container's workingDir
  /// `run_as_user 1000`, `run_as_group 1000`, `run_as_non_root true`: the container's
  /// securityContext.
  std::optional<long long> run_as_user, run_as_group;
  std::optional<bool> run_as_non_root;
  /// `metrics ["acc:PERCENTAGE", "loss:min"]`: specs as training ops take them (literals
  /// or whole op parameters), collected by pipec-metrics from the command's output, or
  /// from the file `metrics_from` after it ends.
  std::vector<Value> metrics;
  std::string metrics_from;
  /// A Python function op (sema/python_op): the command runs `python3` on the function; a
  /// local run runs /usr/bin/python3 and installs no `packages` (a missing one is an error).
  bool python = false;
  std::string doc;
  SourceRange range;

  /// Whether an output is a visual kind (html, markdown, table, confusion_matrix, roc),
  /// which pipec-metrics reads after the command ends.
  bool has_visual_outputs() const {
    for (const auto& o : outputs)
      if (o.type.visual != rules::visuals::Kind::None) return true;
    return false;
  }
  /// Whether pipec-metrics runs the command: for metrics or visual outputs.
  bool runs_under_pipec_metrics() const { return !metrics.empty() || has_visual_outputs(); }
};

/// A volume kind's source word ("pvc", "empty", "ephemeral", "configmap", "secret",
/// "workspace"; a `memory` volume is an Empty one), and the kind a word names (nullopt for
/// none of those; "memory" is sema's to read, as an Empty volume with `memory` set).
const char* volume_kind_word(ContainerOp::Volume::Kind kind);
std::optional<ContainerOp::Volume::Kind> volume_kind_of(std::string_view word);

/// Which lowering a step's op gets. Pipeline: the step calls another pipeline of the
/// program (Pipeline::callees holds it, by Step::op). TrainJob: `train_job`, a Kubeflow
/// Trainer v2 TrainJob on any runtime, in the TrainJob's own terms.
enum class OpKind { Container, MpiJob, TfJob, PyTorchJob, TrainJob, Pipeline };

/// When a step runs after one it names in `after`: when that one succeeded (or was skipped
/// by its condition), the default; when it failed (`after a.failed`); or whatever its
/// outcome (`after a.done`).
enum class Upon { Succeeded, Failed, Done };

/// One step: a call of an op with named, checked arguments.
struct Step {
  std::string name;  // source name
  std::string op;    // op name; for Container, the key into Pipeline::ops
  OpKind kind = OpKind::Container;
  /// Every argument of the signature, in signature order: the given value or the
  /// signature's default. Arguments without a value and without a default are absent.
  std::vector<std::pair<std::string, Value>> args;
  // A step's outputs are its op's: Pipeline::ops holds them for container ops (training
  // ops declare none; their metrics are fixed artifacts), so steps do not copy them.
  /// Steps of the same scope this one runs after: named in `after` or whose outputs
  /// it uses. Sorted by name, no duplicates. Steps outside the enclosing loop that it
  /// uses appear in the loop's `depends` instead.
  std::vector<std::string> depends;
  /// The entries of `depends` the step runs after on another outcome than success
  /// (`after a.failed`, `after a.done`); the others run after a success.
  std::map<std::string, Upon> upon;
  /// `allow_failure`: the step failing fails neither the run nor the steps after it (they
  /// run as after a success). Argo `continueOn.failed`.
  bool allow_failure = false;
  SourceRange policy_range;  // where `allow_failure` or the first `.failed`/`.done` is written
  Box<Condition> when;  // the conjunction of the enclosing `if`s in this scope
  SourceRange range;
};

struct Loop;

/// A node of a DAG: a step, or a loop whose body is a DAG of its own.
using Node = std::variant<Step, Loop>;

/// `for VAR in ITEMS { body }`: the body runs once per item, in parallel.
struct Loop {
  std::string name;  // generated, unique: "for-<var>" or "for-<var>-2", ...
  std::string var;
  /// At most this many iterations at once (0: no limit). Argo holds it, and the check of a
  /// loop that tolerates failures, in a DAG template around the loop, `limit_name`
  /// (generated, unique, set when limit > 0 or tolerates()).
  int limit = 0;
  std::string limit_name;
  /// Failure tolerance: the loop succeeds when at most `max_failures` items failed (-1: no
  /// such rule) and at least `min_success` of them (a share, 0: no such rule) succeeded;
  /// without either, any failed item fails it. `tolerance_range`: where the first is written.
  int max_failures = -1;
  double min_success = 0;
  SourceRange tolerance_range;
  bool tolerates() const { return max_failures >= 0 || min_success > 0; }
  Type item_type;
  Box<Value> items;  // always set: a literal list (withItems) or a Ref/list value (withParam)
  std::vector<Node> body;
  std::vector<std::string> depends;  // same meaning as Step::depends
  Box<Condition> when;
  SourceRange range;
};

/// The run's workspace (`settings { workspace ... }`): a claim made for the run, named
/// kWorkspaceVolume (ir/launcher_call.hpp) in the workflow.
/// Where KFP v2 mounts the workspace in a container step's pod (its only place there).
inline constexpr const char* kWorkspaceMountPath = "/kfp-workspace";
struct Workspace {
  std::string size;           // the claim's storage request, a quantity
  std::string storage_class;  // "" = the cluster's default class
  std::string access_mode = "ReadWriteOnce";
};

/// `settings { ... }`: the pipeline's own settings (literals), as KFP v1's PipelineConf.
struct Settings {
  std::optional<long long> timeout_seconds;  // the whole run (Argo activeDeadlineSeconds)
  std::optional<long long> ttl_seconds;      // the workflow is deleted this long after it ends
  std::string pod_gc;                        // OnPodCompletion, OnPodSuccess, OnWorkflowCompletion, OnWorkflowSuccess
  std::optional<long long> parallelism;      // pods of the run at once
  std::string service_account;               // the pods' service account
  std::vector<std::string> image_pull_secrets;  // Secrets to pull images with
  std::optional<Workspace> workspace;           // the run's workspace claim
  /// `fail_fast false`: a failed step stops only the steps that depend on it, not the run's
  /// other branches (Argo's DAG `failFast`, true by default).
  bool fail_fast = true;
  std::map<std::string, SourceRange> ranges;   // of each setting given, by name
};

/// `output NAME = STEP.FIELD`: an output of a pipeline called as a step. `ref` is the step
/// output it gives, with the type it has at the top of the pipeline (a list per loop crossed).
struct PipelineOutput {
  std::string name;
  Type type;
  Ref ref;
  std::string doc;
  SourceRange range;
};

/// A checked, lowered pipeline.
struct Pipeline {
  std::string name;  // source name of the pipeline
  std::string description;
  std::vector<Param> params;        // in source order
  std::vector<ContainerOp> ops;     // container ops used by some step, by name order
  std::vector<Node> dag;            // the main DAG, in source order
  std::vector<Node> exit_handler;   // `finally { ... }` steps, in source order
  Settings settings;
  /// What a step that calls this pipeline reads, in signature order (callees only).
  std::vector<PipelineOutput> outputs;
  /// The pipelines steps call (OpKind::Pipeline), each lowered once and shared by all its
  /// calls, callees before their callers. Only the built pipeline holds them; each has its
  /// own plan, and `ops` of the built pipeline holds every container op of all of them.
  std::vector<Pipeline> callees;
  [[nodiscard]] const Pipeline* callee(std::string_view name) const;
  /// The lowering's decisions on the graph (scopes, reads, fan-in), made by lower::lower.
  Plan plan;
  SourceRange range;
};

/// The pipeline's parameters as the signature of a compiled pipeline: a JSON list of
/// {name, type, required, default, enum, min, max}, in source order. The Argo writer puts
/// it in the workflow's pipec.dev/parameters annotation, and `upload`, `run` and `run
/// --local` check overrides against it (compiler/client/kfp/parameters): one text, whether
/// the pipeline was just compiled or is read back from a package.
std::string parameters_json(const Pipeline& pipeline);

/// Calls `f` with every reference inside `v` (its parts, items and entries), in order.
template <typename F>
void for_each_ref(const Value& v, F&& f) {
  if (v.ref) f(*v.ref);
  for (const auto& part : v.parts)
    if (part.ref) f(*part.ref);
  for (const auto& item : v.items) for_each_ref(item, f);
  for (const auto& [key, item] : v.entries) for_each_ref(item, f);
}

/// Calls `f` with every reference inside condition `c`, left to right.
template <typename F>
void for_each_ref(const Condition& c, F&& f) {
  if (c.value) for_each_ref(*c.value, f);
  for (const auto& o : c.operands) for_each_ref(o, f);
}

}  // namespace pipec::ir
