// pipec-metrics: runs a container op's command and collects the metrics it prints, with
// the launcher's scraper (runtime/metrics.hpp: one rule for training and container steps),
// into KFP's metrics file. Built static, so an init container can copy it from the
// launcher image into any step's image (docs/runtime.md "Metrics of container ops").
//
//   pipec-metrics --install PATH
//   pipec-metrics --metric SPEC... [--from FILE] [--metrics-file PATH]
//                 [--visual KIND:NAME:PATH]... [--executor-input JSON] -- COMMAND...
// (rules/metrics_cli.hpp: the one command line the compiler writes and this reads)
//
// The command's stdout and stderr reach this process's stdout unchanged (the pod's log
// merges them too); the metrics are read from them, or from FILE after the command ends.
// The exit status is the command's (128 + N for a signal N); SIGTERM and SIGINT are
// passed on to it. 2: bad arguments, 127: the command cannot be started. With KFP v2's
// executor input (`{{$}}`) the metrics also go, as the metadata of the output artifact
// `metrics` (system.Metrics), into the ExecutorOutput file it names. Each `--visual` file
// (an op's visual output, docs/language.md "Visual outputs") is read after the command
// ends: into KFP v1's UI metadata, mlpipeline-ui-metadata.json beside the metrics file, or
// with KFP v2's executor input (a confusion matrix or an ROC curve, system.
// ClassificationMetrics) into the ExecutorOutput as its artifact's metadata.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fileio/atomic_file.hpp"
#include "input/json.hpp"
#include "input/read.hpp"
#include "rules/metrics_cli.hpp"
#include "runtime/metrics.hpp"
#include "runtime/visual_outputs.hpp"

namespace {

using pipec::runtime::MetricScraper;
using pipec::rules::MetricSpec;

volatile sig_atomic_t g_child = 0;

void forward(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

int usage(const std::string& why) {
  std::cerr << "pipec-metrics: " << why << "\n" << pipec::rules::metrics_cli::usage();
  return 2;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Copies this executable to `path` (mode 0755): the init container's whole job.
int install(const std::string& path) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  out.close();
  if (!in || !out || ::chmod(path.c_str(), 0755) != 0) {
    std::cerr << "pipec-metrics: cannot install to " << path << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  return 0;
}

// The visual outputs' metadata into KFP v2's ExecutorOutput `out` (as the scraper wrote
// it): each one's artifact as the executor input names it, with its metadata.
bool add_classification_metadata(std::string_view executor_input, const std::map<std::string, nlohmann::json>& metadata,
                                 std::string& out) {
  using nlohmann::json;
  if (metadata.empty()) return true;
  json input = pipec::input::parse_json(executor_input);
  json output = pipec::input::parse_json(out);
  if (!output.is_object()) output = json::object();
  const json* artifacts = input.is_object() && input.contains("outputs") && input["outputs"].is_object() &&
                                  input["outputs"].contains("artifacts") && input["outputs"]["artifacts"].is_object()
                              ? &input["outputs"]["artifacts"]
                              : nullptr;
  for (const auto& [name, meta] : metadata) {
    if (!artifacts) return false;
    auto it = artifacts->find(name);
    if (it == artifacts->end() || !it->is_object() || !it->contains("artifacts") || !(*it)["artifacts"].is_array() ||
        (*it)["artifacts"].empty() || !(*it)["artifacts"][0].is_object())
      return false;
    json artifact = (*it)["artifacts"][0];
    artifact["metadata"] = meta;
    output["artifacts"][name] = {{"artifacts", json::array({std::move(artifact)})}};
  }
  out = output.dump() + "\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = pipec::rules::metrics_cli;
  cli::Parsed parsed;
  std::string why;
  if (!cli::parse(std::vector<std::string>(argv + 1, argv + argc), parsed, why)) return usage(why);
  if (parsed.install) return install(*parsed.install);
  std::vector<MetricSpec> specs;
  for (const auto& text : parsed.specs) {
    auto spec = pipec::rules::parse_metric_spec(text, why);
    if (!spec) return usage(why);
    specs.push_back(std::move(*spec));
  }
  if (!pipec::rules::check_metric_specs(specs, why)) return usage(why);
  const std::string& metrics_file = parsed.metrics_file;
  const std::string& from = parsed.from;
  const std::string& executor_input = parsed.executor_input;
  std::vector<char*> command;
  for (auto& word : parsed.command) command.push_back(word.data());
  command.push_back(nullptr);
  std::vector<pipec::runtime::VisualFile> visuals;
  for (const auto& v : parsed.visuals) {
    auto kind = pipec::rules::visuals::kind_of(v.kind);
    if (!kind) return usage("--visual: unknown kind '" + v.kind + "'");
    visuals.push_back({*kind, v.name, v.path});
  }
  MetricScraper scraper(specs);
  std::string output_file, executor_output;
  if (!executor_input.empty() && !scraper.executor_output(executor_input, output_file, executor_output, why))
    return usage("--executor-input: " + why);

  int fds[2];
  if (::pipe(fds) != 0) return usage(std::string("pipe: ") + std::strerror(errno));
  struct sigaction sa {};
  sa.sa_handler = forward;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    ::execvp(command[0], command.data());
    std::fprintf(stderr, "pipec-metrics: cannot run '%s': %s\n", command[0], std::strerror(errno));
    ::_exit(127);
  }
  if (pid < 0) return usage(std::string("fork: ") + std::strerror(errno));
  g_child = pid;
  ::close(fds[1]);
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    write_all(1, buffer, static_cast<std::size_t>(n));
    if (from.empty()) scraper.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (from.empty()) {
    scraper.finish();
  } else {
    // Read in pieces, as the stream is: any size, and the same values as streaming gives.
    std::string problem;
    if (pipec::input::read_file_in_pieces(from, [&](std::string_view piece) { scraper.feed(piece); },
                                          problem)) {
      scraper.finish();
    } else if (::access(from.c_str(), F_OK) != 0) {
      std::cerr << "pipec-metrics: no metrics file " << from << " (the command did not write it)\n";
    } else {
      std::cerr << "pipec-metrics: cannot read " << from << ": " << problem << "\n";
    }
  }
  for (const auto& w : scraper.take_warnings()) std::cerr << "pipec-metrics: warning: " << w << "\n";
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto write = [&](const std::string& path, const std::string& text) {
    if (pipec::fileio::write_file_atomically(path, text, why, pipec::fileio::Folders::Create)) return;
    std::cerr << "pipec-metrics: cannot write " << path << ": " << why << "\n";
    if (code == 0) code = 1;
  };
  auto beside = [&](const char* name) {
    return (std::filesystem::path(metrics_file).parent_path() / name).string();
  };
  // A step with visual outputs only has no metrics to write.
  if (!specs.empty()) {
    write(metrics_file, scraper.metrics_json());
    write(cli::series_path(metrics_file, parsed.series_file), scraper.series_json());
  }
  std::vector<std::string> visual_warnings;
  std::map<std::string, nlohmann::json> classification;
  // KFP v1: the UI metadata; KFP v2: the classification metrics' metadata.
  if (!visuals.empty() && executor_input.empty())
    write(beside(pipec::rules::metrics_cli::kUiMetadataFile),
          pipec::runtime::ui_metadata(visuals, visual_warnings).dump() + "\n");
  if (!visuals.empty() && !executor_input.empty())
    classification = pipec::runtime::classification_metadata(visuals, visual_warnings);
  for (const auto& w : visual_warnings) std::cerr << "pipec-metrics: warning: " << w << "\n";
  if (!executor_input.empty()) {
    bool ok = scraper.executor_output(executor_input, output_file, executor_output, why);
    if (ok && !add_classification_metadata(executor_input, classification, executor_output)) {
      ok = false;
      why = "the executor input names no output artifact of a visual output";
    }
    if (ok && !output_file.empty())
      ok = pipec::fileio::write_file_atomically(output_file, executor_output, why, pipec::fileio::Folders::Create);
    if (!ok) {
      std::cerr << "pipec-metrics: cannot write KFP v2's executor output: " << why << "\n";
      if (code == 0) code = 1;
    }
  }
  return code;
}
