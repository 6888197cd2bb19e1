#pragma once
// `pipec run --local` (cmd_local.cpp): parsed apart from `pipec run`, which talks to
// Kubeflow Pipelines and lives in pipec-kfp. Its options are described once, here: the
// local parser and pipec-kfp's `run` (whose registry help, the man page and completion
// are made from) both add them with add_local_options().

#include <string>
#include <vector>

#include "compiler/driver/options.hpp"

namespace CLI {
class App;
class Option;
}

namespace pipec::driver {

/// What `pipec run --local` is given.
struct LocalOptions {
  std::string input;
  std::vector<std::string> params;
  std::string params_file;
  int jobs = 0;
  std::string run_dir;
  std::vector<std::string> volumes;  // CLAIM=DIR
  std::string pipeline;              // --pipeline: the pipeline of the file to run
  std::string resume;                // --resume RUN_DIR: reuse that run's results
  std::string cache;                 // --cache DIR: results kept across runs
  std::string from;                  // --from STEP: it and what depends on it run again
  bool local = false;
  bool quiet = false;  // -q: no progress line
  bool ascii = false;  // --ascii: sparklines in ASCII
  CommonOptions common;
};

/// The flag `--local` itself, with its one description.
CLI::Option* add_local_flag(CLI::App& command, bool& local);

/// The options only `run --local` takes (-j, --volume, --run-dir), in the group
/// mode_group("Local options", "--local", true) of `command`.
void add_local_options(CLI::App& command, LocalOptions& options);

/// Whether the command line is `pipec run ... --local ...`.
[[nodiscard]] bool is_local_run(int argc, char** argv);

/// Runs `pipec run --local`; returns the exit status (docs/local.md).
int run_local_command(int argc, char** argv);

}  // namespace pipec::driver
