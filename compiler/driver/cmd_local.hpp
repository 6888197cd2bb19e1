#pragma once
// `pipec run --local` (cmd_local.cpp): parsed apart from `pipec run`, which talks to
// Kubeflow Pipelines and lives in pipec-kfp.

namespace pipec::driver {

/// Whether the command line is `pipec run ... --local ...`.
[[nodiscard]] bool is_local_run(int argc, char** argv);

/// Runs `pipec run --local`; returns the exit status (docs/local.md).
int run_local_command(int argc, char** argv);

}  // namespace pipec::driver
