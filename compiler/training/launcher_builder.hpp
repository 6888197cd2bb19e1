#pragma once
// The builder of a training step's launcher call, shared by the files that implement it
// (internal to pipec_training): launcher_arguments.cpp reads and checks the op's
// arguments, launcher_call.cpp makes the job manifest and the launcher's argv.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/ir/defaults.hpp"
#include "compiler/training/launcher_call.hpp"
#include "rules/launcher_cli.hpp"
#include "runtime/job_render.hpp"

namespace pipec::training::detail {

using Json = nlohmann::ordered_json;
using Kind = rules::BindingKind;
using Option = rules::LauncherOption;

inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

/// One option of the call and its value, a word each target spells its own way.
inline void add_arg(std::vector<ir::LauncherArg>& args, Option id, ir::LauncherWord value) {
  args.push_back({id, std::move(value)});
}

/// The role of one replica type in the job.
struct Role {
  std::string type;        // replica type: Launcher, Worker, PS, Chief, Evaluator, Master
  const char* image_arg;   // argument holding its image
  bool runs_script;        // the container runs the user's command
  bool gpus;               // gets the `gpus` limit
  const char* cpu_arg;     // argument holding its CPU limit, or nullptr
  const char* memory_arg;  // argument holding its memory limit, or nullptr
  const char* count_arg;   // argument holding the replica count, or nullptr for 1
};

class Builder {
 public:
  Builder(const ir::Step& step, const JobOptions& options, ir::LauncherCall& call,
          Diagnostics& diags)
      : step_(step), options_(options), call_(call), diags_(diags) {}

  bool run();
  /// train_job's TrainJob and launcher call (trainjob_call.cpp).
  bool run_trainjob();

 private:
  // --- arguments -------------------------------------------------------------------
  const ir::Value* arg(const std::string& name) const {
    for (const auto& [n, v] : step_.args)
      if (n == name) return &v;
    return nullptr;
  }
  SourceRange where(const ir::Value& v) const { return v.range.valid() ? v.range : step_.range; }

  /// The default a reference has in the manifest: the parameter's default, else nullopt.
  std::optional<ir::Literal> ref_default(const ir::Ref& ref) const {
    return options_.params ? ir::param_default(ref, *options_.params) : std::nullopt;
  }

  const ir::Param* param_of(const ir::Ref& ref) const {
    if (ref.kind != ir::Ref::Kind::Param || !options_.params) return nullptr;
    for (const auto& p : *options_.params)
      if (p.name == ref.name) return &p;
    return nullptr;
  }

  /// A template input carrying `value`; the same reference gets the same input.
  std::string input_for(const std::string& base, const ir::Value& value) {
    std::string key;
    if (const ir::Ref* r = ir::whole_ref(value))
      key = std::to_string(static_cast<int>(r->kind)) + "/" + r->name + "/" + r->field;
    if (!key.empty()) {
      auto it = input_by_ref_.find(key);
      if (it != input_by_ref_.end()) return it->second;
    }
    std::string name;
    for (char c : base) name.push_back(is_alnum(c) || c == '-' || c == '_' ? c : '_');
    if (used_inputs_.count(name)) {
      int n = 2;
      while (used_inputs_.count(name + "_" + std::to_string(n))) ++n;
      name += "_" + std::to_string(n);
    }
    used_inputs_.insert(name);
    if (!key.empty()) input_by_ref_[key] = name;
    if (const ir::Ref* r = ir::whole_ref(value); r && value.kind != ir::Value::Kind::Ref) {
      ir::Value plain;
      plain.kind = ir::Value::Kind::Ref;
      plain.type = r->type;
      plain.ref = *r;
      plain.range = value.range;
      call_.inputs.emplace_back(name, plain);
    } else {
      call_.inputs.emplace_back(name, value);
    }
    return name;
  }

  void bind(const std::string& pointer, const std::string& name, rules::BindingKind kind) {
    binds_.push_back(rules::binding_arg(pointer, name, kind));
  }

  /// A scalar argument: its manifest value, and the input that replaces it at run time.
  struct Scalar {
    ir::Literal value;
    std::string input;  // empty: a literal
  };

  /// Resolves a scalar argument; `placeholder` is its manifest value when a reference has
  /// no known default. A list or map is none (sema has refused it).
  std::optional<Scalar> scalar(const std::string& name, const ir::Value& v,
                               ir::Literal placeholder) {
    if (v.kind == ir::Value::Kind::Literal) return Scalar{v.literal, {}};
    if (const ir::Ref* r = ir::whole_ref(v)) {
      auto def = ref_default(*r);
      Scalar s{def ? *def : placeholder, input_for(name, v)};
      return s;
    }
    if (v.kind == ir::Value::Kind::Interpolation) {
      // A string built from values: the Argo task passes the whole string as one input.
      auto text = interpolated_default(v);
      return Scalar{text ? ir::Literal(*text) : placeholder, input_for(name, v)};
    }
    return std::nullopt;
  }

  /// The text of an interpolation for the parameters' defaults, if all are known.
  std::optional<std::string> interpolated_default(const ir::Value& v) const {
    static const std::vector<ir::Param> none;
    return ir::interpolated_default(v, options_.params ? *options_.params : none);
  }


  // A limit from scalar argument `arg_name` into `limits[resource]` (none for an empty or 0
  // literal), bound at `pointer` + the resource (a JSON pointer: '/' written "~1") when a
  // run-time value gives it.
  void limit(Json& limits, const char* arg_name, const std::string& resource, const std::string& pointer,
             rules::BindingKind kind) {
    auto it = scalars_.find(arg_name);
    if (it == scalars_.end()) return;
    const Scalar& s = it->second;
    std::string text = ir::literal_text(s.value);
    if (s.input.empty() && (text.empty() || text == "0")) return;
    limits[resource] = text.empty() ? "0" : text;
    std::string key;
    for (char ch : resource) key += ch == '/' ? std::string("~1") : std::string(1, ch);
    if (!s.input.empty()) bind(pointer + key, s.input, kind);
  }

  // The `gpus` limit under the resource `gpu_resource` names (a literal; nvidia.com/gpu
  // by default: a run-time name is bound by the caller, Kind::GpuResource).
  void gpu_limit(Json& limits, const std::string& pointer) {
    std::string vendor = "nvidia.com/gpu";
    if (auto it = scalars_.find("gpu_resource");
        it != scalars_.end() && it->second.input.empty() && !ir::literal_text(it->second.value).empty())
      vendor = ir::literal_text(it->second.value);
    limit(limits, "gpus", vendor, pointer, Kind::Quantity);
  }

  // Each entry of a map argument given as a literal or as a map of values, in order;
  // false when `v` is neither (a whole map from a run-time value is the caller's).
  template <class Add>
  static bool each_entry(const ir::Value& v, Add add) {
    if (v.kind == ir::Value::Kind::Literal && v.literal.is_object()) {
      for (const auto& [k, val] : v.literal.items()) {
        ir::Value lit;
        lit.literal = val;
        lit.range = v.range;
        add(k, lit);
      }
      return true;
    }
    if (v.kind != ir::Value::Kind::Map) return false;
    for (const auto& [k, val] : v.entries) add(k, val);
    return true;
  }

  // --- pieces of the job ---------------------------------------------------------------
  bool read_arguments();
  bool read_data();
  bool read_workspace();
  bool read_env();
  bool read_metrics();
  void add_retry_options();
  void add_call_args(const Json& job);
  bool read_command();
  bool read_sync();
  bool read_node_placement();
  bool read_metadata();
  Json metadata(const std::string& base, bool job);
  void scheduling(Json& spec, const std::string& base);
  void gang(Json& run_policy);
  Json container(const Role& role, const std::string& base);
  Json replica(const Role& role, const std::string& base);
  std::string replica_spec_key() const;
  const char* job_kind() const {
    return step_.kind == ir::OpKind::MpiJob     ? "MPIJob"
           : step_.kind == ir::OpKind::TfJob    ? "TFJob"
           : step_.kind == ir::OpKind::TrainJob ? "TrainJob"
                                                : "PyTorchJob";
  }
  // train_job's pieces (trainjob_call.cpp).
  Json trainjob_words(const char* name, const std::string& base);
  Json trainjob_env(const char* name, const std::string& base);
  Json trainjob_initializer(const char* what);
  Json trainjob_trainer();
  Json trainjob_patch(const std::string& base);
  void add_launcher_options();

  const ir::Step& step_;
  const JobOptions& options_;
  ir::LauncherCall& call_;
  Diagnostics& diags_;
  bool ok_ = true;

  std::vector<std::string> binds_;
  std::set<std::string> used_inputs_;
  std::map<std::string, std::string> input_by_ref_;

  // Read arguments.
  std::map<std::string, Scalar> scalars_;  // the scalar arguments by name
  struct DataEntry {
    std::string claim, path;
  };
  std::vector<DataEntry> data_;  // the manifest's data volumes
  std::string data_input;        // non-empty: the data list is bound (names, comma-separated)
  std::string workspace_path_;   // non-empty: the run's workspace is mounted there
  std::vector<std::pair<std::string, std::string>> literal_values_;  // `--value NAME=TEXT` of literals
  std::string env_map_input_, node_selector_input_, tolerations_input_, gpu_resource_input_;
  std::string metric_list_input_;
  struct EnvVar {
    std::string name;
    Scalar value;
  };
  std::vector<EnvVar> env_;
  std::vector<EnvVar> script_env_;  // the command's references
  std::string script_;
  std::optional<Scalar> sync_;
  Json node_selector_ = Json::object();
  std::vector<std::pair<std::string, std::string>> node_selector_inputs_;  // key, input
  Json tolerations_ = Json::array();
  Json labels_ = Json::object(), annotations_ = Json::object();
  std::vector<std::pair<std::string, std::string>> label_inputs_, annotation_inputs_;  // key, input
  std::vector<ir::LauncherArg> metric_args_;
  std::string tensorboard_;
};

/// JSON text with every run of `{` of two or more written `\u007b`, so Argo sees no tag in
/// it (the launcher reads back the same text).
std::string json_without_argo_tags(const std::string& json);

}  // namespace pipec::training::detail
