// libFuzzer target for parameter values: `-p NAME=VALUE` and `--params-file` as `pipec run`
// and `pipec run --local` read them (parse_override, read_params_file, check_overrides),
// against a signature of every parameter type (read_signature of a compiled workflow). The
// input up to a line `%%` is the params file; each line after it is one `-p` argument.
// Each checked value is then turned into what the run sends (typed_json_value, KFP v2's
// JSON). Any input gives values or messages, never a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/client/kfp/parameters.hpp"

namespace {

using namespace pipec::client::kfp;  // NOLINT: a test

// What `pipec build` writes for `param`s of each type, with an enumeration and a range.
const char* kWorkflow = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: every-type-
  annotations:
    pipec.dev/parameters: '[{"name": "data", "type": "string", "required": true}, {"name": "batch_size", "type": "int", "default": 64, "required": false, "min": 1, "max": 4096}, {"name": "lr", "type": "float", "default": 0.001, "required": false}, {"name": "shuffle", "type": "bool", "default": true, "required": false}, {"name": "optimizer", "type": "string", "default": "adam", "required": false, "enum": ["adam", "sgd"]}, {"name": "layers", "type": "list<int>", "default": [64, 32], "required": false}, {"name": "tags", "type": "map<string>", "default": {}, "required": false}, {"name": "grid", "type": "map<list<float>>", "default": {}, "required": false}]'
spec:
  entrypoint: every-type
  arguments:
    parameters:
    - name: text
      value: a
  templates:
  - name: every-type
    container: {image: busybox}
)";

const Signature& signature() {
  static const Signature s = [] {
    Signature sig;
    std::string error;
    if (!read_signature(kWorkflow, sig, error)) __builtin_trap();
    return sig;
  }();
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto sep = input.find("\n%%\n");
  std::string_view file = input.substr(0, sep);
  std::string_view rest = sep == std::string_view::npos ? std::string_view() : input.substr(sep + 4);
  std::vector<Override> overrides;
  std::vector<std::string> errors;
  (void)read_params_file(file, "params.yaml", overrides, errors);
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view arg = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    Override o;
    std::string error;
    if (parse_override(arg, o, error)) overrides.push_back(std::move(o));
    else errors.push_back(error);
  }
  std::vector<std::pair<std::string, std::string>> values;
  if (check_overrides(signature(), overrides, values, errors)) {
    for (const auto& [name, text] : values) {
      const DeclaredParam* p = signature().find(name);
      if (!p) __builtin_trap();
      (void)typed_json_value(p->type, text);
    }
  }
  return 0;
}
