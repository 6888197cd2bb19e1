// libFuzzer target for the launcher's loop against the Kubernetes API: run_launcher with a
// KubeClient whose transport (only) is fake. The input is the API server's answers: parts
// separated by a line `%%`, each `CLASS STATUS` on its first line and the body after it;
// CLASS says which requests it answers: `create` (POST), `get` (a GET of one object),
// `watch` (a watch stream), `pods` (a pod list), `log` (a log, streamed or read), `delete`.
// Each request takes the next answer of its class; when none is left there is no answer
// (status 0), as when the server is gone. A stream's body reaches the launcher in two
// pieces, cut where the input's first byte says. The first byte also picks the job: an
// MPIJob, a TFJob as an operator job or as plain pods, or a PyTorchJob as a TrainJob.
// Any answers must end in one of the launcher's exit codes, never a crash, a hang or a
// sanitizer report.
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kube/client.hpp"
#include "runtime/launcher.hpp"

using pipec::kube::HttpResponse;
using pipec::kube::KubeClient;

namespace {

using pipec::kube::HttpResponse;

const char* kMpiJob =
    R"({"apiVersion":"kubeflow.org/v2beta1","kind":"MPIJob","metadata":{"name":"mpi"},"spec":{"slotsPerWorker":1,"mpiReplicaSpecs":{"Launcher":{"replicas":1,"template":{"spec":{"containers":[{"name":"mpi","image":"i","command":["sh","-c","mpirun true"]}]}}},"Worker":{"replicas":2,"template":{"spec":{"containers":[{"name":"mpi","image":"i"}]}}}},"runPolicy":{"cleanPodPolicy":"Running","backoffLimit":0}}})";
const char* kTfJob =
    R"({"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"tf"},"spec":{"tfReplicaSpecs":{"Chief":{"replicas":1,"template":{"spec":{"containers":[{"name":"tensorflow","image":"i"}]}}},"PS":{"replicas":1,"template":{"spec":{"containers":[{"name":"tensorflow","image":"i"}]}}},"Worker":{"replicas":2,"template":{"spec":{"containers":[{"name":"tensorflow","image":"i"}]}}}},"runPolicy":{"cleanPodPolicy":"Running","backoffLimit":0}}})";
const char* kPyTorchJob =
    R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"pt"},"spec":{"nprocPerNode":"1","pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}},"Worker":{"replicas":1,"template":{"spec":{"containers":[{"name":"pytorch","image":"i"}]}}}},"runPolicy":{"cleanPodPolicy":"Running","backoffLimit":0}}})";

struct Answer {
  long status = 0;
  std::string body;
};

class FakeServer {
 public:
  FakeServer(std::string_view input, std::size_t cut) : cut_(cut) {
    while (!input.empty()) {
      auto sep = input.find("\n%%\n");
      std::string_view part = input.substr(0, sep);
      input = sep == std::string_view::npos ? std::string_view() : input.substr(sep + 4);
      auto nl = part.find('\n');
      std::string_view head = part.substr(0, nl);
      std::string_view body = nl == std::string_view::npos ? std::string_view() : part.substr(nl + 1);
      auto space = head.find(' ');
      std::string cls(head.substr(0, space));
      long status = 0;
      for (char c : space == std::string_view::npos ? std::string_view() : head.substr(space + 1))
        if (c >= '0' && c <= '9' && status < 1000) status = status * 10 + (c - '0');
      answers_[cls].push_back({status, std::string(body)});
    }
  }

  HttpResponse answer(std::string_view method, const std::string& path,
                      const std::function<bool(std::string_view)>* on_data) {
    std::string cls = method == "POST"                              ? "create"
                      : method == "DELETE"                          ? "delete"
                      : path.find("/log") != std::string::npos      ? "log"
                      : path.find("watch=true") != std::string::npos ? "watch"
                      : path.find("/pods?") != std::string::npos    ? "pods"
                                                                    : "get";
    Answer a;
    {
      std::lock_guard lock(mutex_);
      auto& list = answers_[cls];
      std::size_t& next = next_[cls];
      if (next >= list.size()) {
        HttpResponse none;
        none.error = "connection refused (no answer left)";
        return none;
      }
      a = list[next++];
    }
    HttpResponse r;
    r.status = a.status;
    if (on_data && r.status >= 200 && r.status < 300) {
      std::size_t at = std::min(cut_, a.body.size());
      if ((*on_data)(std::string_view(a.body).substr(0, at)))
        (void)(*on_data)(std::string_view(a.body).substr(at));
    } else {
      r.body = std::move(a.body);
    }
    return r;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::vector<Answer>> answers_;
  std::map<std::string, std::size_t> next_;
  std::size_t cut_;
};

std::string work_dir() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("pipec-launcher-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  unsigned mode = data[0] & 3;
  FakeServer server(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), data[0] >> 2);
  pipec::runtime::LauncherOptions o;
  o.manifest = mode == 0 ? kMpiJob : mode == 3 ? kPyTorchJob : kTfJob;
  o.runtime = mode == 2 ? "pods" : mode == 3 ? "trainer-v2" : "";
  o.step_name = "wf-train-123";
  o.workflow_name = "wf";
  o.pod_uid = "pod-uid-1";
  o.namespace_name = "team";
  o.metric_args = {"loss:min", "accuracy:PERCENTAGE"};
  o.metrics_file = work_dir() + "/metrics.json";
  o.ui_metadata_file = work_dir() + "/ui.json";
  o.poll_interval = std::chrono::milliseconds(0);
  o.retry_delay = std::chrono::milliseconds(0);
  o.log_grace = std::chrono::milliseconds(0);
  o.api_retries = 2;
  o.api_outage_limit = std::chrono::milliseconds(0);
  o.watch_failures_before_polling = 2;
  pipec::kube::KubeConfig config;
  config.server = "http://fake";
  pipec::kube::KubeClient client(
      config, [&server](std::string_view method, const std::string& path, const std::string&,
                        const std::function<bool(std::string_view)>* on_data,
                        const std::function<bool()>*) { return server.answer(method, path, on_data); });
  std::ostringstream out, err;
  std::atomic<bool> stop{false};
  int code = pipec::runtime::run_launcher(o, client, out, err, stop);
  if (code < 0 || code > 5) __builtin_trap();
  if (std::getenv("PIPEC_FUZZ_VERBOSE"))  // to see where a seed leads
    std::fprintf(stderr, "exit %d\n%s%s\n", code, err.str().c_str(), out.str().c_str());
  return 0;
}
