#pragma once

namespace CLI {
class App;
}

namespace pipec::driver {

/// Registers `pipec upload` and `pipec run` (the Kubeflow Pipelines client; see
/// docs/client.md). Exit statuses: 0 success, 1 errors (build, overrides, server),
/// 2 bad command line or configuration, 4 the run failed, 5 `--wait` timed out.
void add_kfp_commands(CLI::App& app, int& exit_code);

}  // namespace pipec::driver
