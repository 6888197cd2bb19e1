// pipec: compiles .pipe pipelines into Kubeflow Pipelines packages, and uploads and
// runs them. Each command lives in its own file; main() only parses the command line
// and holds the one last-resort catch.

#include <exception>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "compiler/driver/commands.hpp"
#include "compiler/driver/options.hpp"
#include "pipec_version.hpp"
#ifdef PIPEC_HAVE_KFP_COMMANDS
#include "compiler/driver/cmd_kfp.hpp"
#endif

namespace {

int program_main(int argc, char** argv) {
  using namespace pipec::driver;
  CLI::App app{"pipec: a typed pipeline language for Kubeflow Pipelines and Argo Workflows", "pipec"};
  app.set_version_flag("--version", "pipec " PIPEC_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  int exit_code = kExitOk;
  add_check_command(app, exit_code);
  add_build_command(app, exit_code);
#ifdef PIPEC_HAVE_KFP_COMMANDS
  add_kfp_commands(app, exit_code);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pipec: " << e.what() << "\nTry 'pipec --help' for more information.\n";
    return kExitUsage;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return program_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "pipec: error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "pipec: internal error: " << e.what() << '\n';
  }
  return pipec::driver::kExitInternal;
}
