// pipec-launcher: the process edge. Signals set a flag; everything else is run_launcher().
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>

#include "launcher_git_commit.hpp"
#include "kube/client.hpp"
#include "runtime/launcher.hpp"
#include "rules/launcher_cli.hpp"

using pipec::kube::InClusterPaths;
using pipec::kube::KubeClient;
using pipec::kube::load_kube_config;

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }
}  // namespace

int main(int argc, char** argv) {
  using namespace pipec::runtime;  // NOLINT: main only
  // The training log goes to stdout through iostreams alone: without stdio's sync, a batch
  // of the log is one write(2), not one per stdio buffer (about 40,000 writes for 200 MB
  // before; docs/runtime.md "Throughput").
  std::ios::sync_with_stdio(false);
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 1 && args[0] == pipec::rules::launcher_flag(pipec::rules::LauncherOption::Version)) {  // the build, as `pipec --version` names it
      std::cout << "pipec-launcher " PIPEC_VERSION " (commit " PIPEC_GIT_COMMIT ")\n";
      return kExitSucceeded;
    }
    std::string error, help;
    auto options = parse_options(args, error, help);
    if (!options) {
      if (error.empty()) {
        std::cout << help;
        return kExitSucceeded;
      }
      std::cerr << "pipec-launcher: error: " << error << "\n"
                << "Try 'pipec-launcher " << pipec::rules::launcher_flag(pipec::rules::LauncherOption::Help)
                << "' for more information.\n";
      return kExitBadArguments;
    }
    if (const char* uid = std::getenv("POD_UID")) options->pod_uid = uid;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    std::unique_ptr<KubeClient> client;
    ConnectFn connect = [&](std::string& why) -> KubeClient* {
      auto config = load_kube_config(options->kubeconfig, InClusterPaths{}, why);
      if (!config) return nullptr;
      client = std::make_unique<KubeClient>(std::move(*config));
      return client.get();
    };
    return run_launcher(*options, connect, std::cout, std::cerr, g_stop);
  } catch (const std::exception& e) {
    std::cerr << "pipec-launcher: internal error: " << e.what() << "\n";
    return kExitApiError;
  }
}
