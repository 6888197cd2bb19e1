// libFuzzer target for the KFP client against any server answers: `pipec upload` and
// `pipec run` (upload_command, run_command: every call the client makes, with --wait) over
// an HttpTransport whose answers come from the input. Only the transport is fake. The
// input's parts are separated by a line `%%`: each is `STATUS` on its first line and the
// body after it, given to the requests in order; when none is left there is no answer
// (as when the server is gone). The first byte picks the command: run a package, run a
// pipeline by id (its template comes from the server), upload, or run a KFP v2 package.
// Any answers must give an exit status, never a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/client/http.hpp"
#include "compiler/client/kfp/commands.hpp"
#include "compiler/client/kfp/flows.hpp"

namespace {

using namespace pipec::client;       // NOLINT: a test
using namespace pipec::client::kfp;  // NOLINT

// A compiled pipeline with typed parameters (as `pipec build` writes its annotation).
const char* kWorkflow = R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: typed-
  annotations:
    pipelines.kubeflow.org/pipeline_spec: '{"name": "typed", "inputs": [{"name": "epochs", "type": "Integer", "default": "3"}, {"name": "rate", "type": "Float", "default": "0.1"}, {"name": "tags", "type": "JsonArray", "default": "[\"a\"]"}]}'
spec:
  entrypoint: typed
  arguments:
    parameters:
    - name: epochs
      value: '3'
    - name: rate
      value: '0.1'
    - name: tags
      value: '["a"]'
  templates:
  - name: typed
    container:
      image: busybox
      command: [echo, '{{workflow.parameters.epochs}}']
)";

const char* kV2Spec = R"({"pipelineInfo": {"name": "typed-v2"}, "schemaVersion": "2.1.0", "sdkVersion": "pipec",
"root": {"inputDefinitions": {"parameters": {"epochs": {"parameterType": "NUMBER_INTEGER", "defaultValue": 3},
"name": {"parameterType": "STRING", "defaultValue": "x"}}}, "dag": {"tasks": {}}},
"components": {}, "deploymentSpec": {"executors": {}}})";

class FakeTransport final : public HttpTransport {
 public:
  explicit FakeTransport(std::string_view input) {
    while (!input.empty()) {
      auto sep = input.find("\n%%\n");
      std::string_view part = input.substr(0, sep);
      input = sep == std::string_view::npos ? std::string_view() : input.substr(sep + 4);
      auto nl = part.find('\n');
      long status = 0;
      for (char c : part.substr(0, nl))
        if (c >= '0' && c <= '9' && status < 1000) status = status * 10 + (c - '0');
      answers_.push_back({status, nl == std::string_view::npos ? std::string() : std::string(part.substr(nl + 1))});
    }
  }
  pipec::Status send(const HttpRequest&, HttpResponse& response) override {
    if (next_ >= answers_.size()) return pipec::Status::error("connection refused (no answer left)");
    response.status = answers_[next_].first;
    response.body = answers_[next_].second;
    response.location.clear();
    ++next_;
    return pipec::Status::ok();
  }

 private:
  std::vector<std::pair<long, std::string>> answers_;
  std::size_t next_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  FakeTransport transport(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  Connection connection;
  connection.host = "http://kfp.example";
  connection.token = "secret-token";
  std::ostringstream out, err;
  RunArgs args;
  args.params = {"epochs=5"};
  args.wait = true;
  args.poll = std::chrono::milliseconds(0);
  args.timeout = std::chrono::milliseconds(0);
  args.retry.get_attempts = 2;
  args.retry.first_delay = std::chrono::milliseconds(0);
  args.retry.max_delay = std::chrono::milliseconds(0);
  switch (data[0] & 3) {
    case 0:
    case 3: {
      LocalPackage package;
      bool v2 = (data[0] & 3) == 3;
      if (!load_package_bytes(v2 ? kV2Spec : kWorkflow, v2 ? "p.json" : "p.yaml", package)) __builtin_trap();
      (void)run_command(package, "", args, connection, transport, out, err);
      break;
    }
    case 1:
      args.v2 = (data[0] & 4) != 0;
      (void)run_command(std::nullopt, "pipeline-id-1", args, connection, transport, out, err);
      break;
    case 2: {
      LocalPackage package;
      if (!load_package_bytes(kWorkflow, "p.yaml", package)) __builtin_trap();
      (void)upload_command(package, {}, connection, transport, out, err, args.retry);
      break;
    }
  }
  if (std::getenv("PIPEC_FUZZ_VERBOSE"))  // to see where a seed leads
    std::fprintf(stderr, "%s%s\n", out.str().c_str(), err.str().c_str());
  // A secret never reaches what is printed, whatever the server answers.
  if (out.str().find("secret-token") != std::string::npos || err.str().find("secret-token") != std::string::npos)
    __builtin_trap();
  return 0;
}
