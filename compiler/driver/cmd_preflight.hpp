#pragma once

#include <string>
#include <vector>

#include "compiler/driver/options.hpp"

namespace CLI {
class App;
}

namespace pipec::driver {

/// What `pipec preflight` (and `pipec run --preflight`) takes.
struct PreflightOptions {
  std::string file;
  std::string target = "kfp-v1";  ///< kfp-v1 or kfp-v2, as `build --target`
  std::string pipeline;           ///< `--pipeline`
  std::vector<std::string> params;
  std::string params_file;
  std::string namespace_name;   ///< "" = the kubeconfig's, else "default"
  std::string kubeconfig;       ///< "" = in-cluster, $KUBECONFIG or ~/.kube/config
  std::string service_account;  ///< as `build --service-account`
  std::string registry;         ///< ask this registry (host[:port]) about every image
  std::string training_runtime;
  bool mpi_v1 = false;
  bool strict = false;
  CommonOptions common;
};

/// Registers `pipec preflight FILE.pipe`: asks the Kubernetes API about everything the
/// pipeline needs and reports each finding at the line that named it (docs/preflight.md).
/// Exit 0, 1 (an error; an unknown with --strict), 2 (usage or configuration).
void add_preflight_command(CLI::App& app, int& exit_code);

/// `--kubeconfig`, `--strict` and `--registry` in option group `group` (`run --preflight`
/// takes them too).
void add_preflight_options(CLI::App& command, PreflightOptions& options, const std::string& group);

/// Runs preflight; returns the exit code.
int run_preflight(const PreflightOptions& options);

}  // namespace pipec::driver
