// pipec: compiles .pipe pipelines into Kubeflow Pipelines packages, and uploads and
// runs them. Each command lives in its own file; main() only parses the command line
// and holds the one last-resort catch.

#include <limits.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "compiler/base/spellcheck.hpp"
#include "compiler/driver/cmd_local.hpp"
#include "compiler/driver/commands.hpp"
#include "compiler/driver/completion.hpp"
#include "compiler/driver/options.hpp"
#include "compiler/local/spawner.hpp"
#include "pipec_git_commit.hpp"
#include "pipec_version.hpp"
#ifdef PIPEC_HAVE_KFP_COMMANDS
#include "compiler/driver/cmd_kfp.hpp"
#include "compiler/driver/cmd_preflight.hpp"
#endif

namespace {

#ifndef PIPEC_HAVE_KFP_COMMANDS
// `pipec upload` and `pipec run` live in `pipec-kfp`, installed beside `pipec`: the
// client's libraries (libcurl and what it pulls in) would otherwise be loaded and
// relocated on every `pipec build`, which costs more than compiling a small pipeline.
// `pipec` hands every word that is not one of its own commands over with exec, so the
// user sees one program: those commands, `completion`, any command registered in
// pipec-kfp only, and the help (`--help`, `--help-all`, no command at all), since only
// pipec-kfp's registry holds every command and option.
bool hands_over(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return true;
  std::string_view first = argv[1];
  if (first == "--version") return false;
  // `component fetch` downloads, so it is pipec-kfp's; so is `component`'s help, which lists it.
  if (first == "component" && argc > 2 && (std::string_view(argv[2]) == "fetch" || argv[2][0] == '-')) return true;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == first) return false;
  return true;
}

// Where pipec-kfp is: beside pipec (the build tree), else where `cmake --install` and the
// Debian package put it, PIPEC_KFP_FROM_BINDIR relative to pipec's own directory.
int exec_kfp(char** argv) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string path = "pipec-kfp";
  if (n > 0) {
    std::string exe(self, static_cast<std::size_t>(n));
    std::string dir = exe.substr(0, exe.rfind('/') + 1);
    path = dir + "pipec-kfp";
    if (access(path.c_str(), X_OK) != 0) path = dir + PIPEC_KFP_FROM_BINDIR;
  }
  execv(path.c_str(), argv);
  std::cerr << "pipec: error: cannot run '" << path << "' for '" << (argv[1] ? argv[1] : "--help")
            << "': " << std::strerror(errno) << " (it is built and installed with pipec)\n";
  return pipec::driver::kExitUsage;
}
#endif

// --help-all (and pipec(1), made from it) expands commands of commands too: `runs list`
// with its options under `runs`, where CLI11 lists only the names below the first level.
class ExpandingFormatter : public CLI::Formatter {
 public:
  std::string make_expanded(const CLI::App* sub) const override {
    if (sub->get_subcommands({}).empty()) return CLI::Formatter::make_expanded(sub);
    // The command, its description, positionals and options, then each command of it in
    // full, all indented under the command's name.
    std::string body = make_description(sub) + make_positionals(sub) + make_groups(sub, CLI::AppFormatMode::Sub) +
                       make_subcommands(sub, CLI::AppFormatMode::All);
    std::string out = sub->get_display_name(true) + "\n";
    for (std::size_t at = 0; at < body.size();) {
      std::size_t end = body.find('\n', at);
      if (end == std::string::npos) end = body.size();
      if (end > at) out += "  " + body.substr(at, end - at) + "\n";  // blank lines dropped
      at = end + 1;
    }
    return out;
  }
};

int program_main(int argc, char** argv) {
  using namespace pipec::driver;
  CLI::App app{"pipec: a typed pipeline language for Kubeflow Pipelines and Argo Workflows", "pipec"};
  app.formatter(std::make_shared<ExpandingFormatter>());
  app.set_version_flag("--version", "pipec " PIPEC_VERSION " (commit " PIPEC_GIT_COMMIT ")");
  app.set_help_all_flag("--help-all", "Print this help and every command's options");
  app.require_subcommand(1);
  app.fallthrough(false);
  // `run --local` runs here, in both programs: it needs no Kubeflow client.
  if (is_local_run(argc, argv)) return run_local_command(argc, argv);
  int exit_code = kExitOk;
  add_check_command(app, exit_code);
  add_build_command(app, exit_code);
  add_graph_command(app, exit_code);
  add_report_command(app, exit_code);
  add_fmt_command(app, exit_code);
  add_lsp_command(app, exit_code);
  add_params_command(app, exit_code);
  add_component_command(app, exit_code);
#ifdef PIPEC_HAVE_KFP_COMMANDS
  add_kfp_commands(app, exit_code);
  add_preflight_command(app, exit_code);
  add_registry_command(app, exit_code);
  add_completion_command(app, exit_code);  // last: it lists the commands registered before it
#else
  if (hands_over(app, argc, argv)) return exec_kfp(argv);
#endif
  // Name what is wrong before CLI11 would say only "A subcommand is required".
  std::vector<std::string> commands;  // what the user may type; hidden ones are not offered
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_group().empty()) commands.push_back(sub->get_name());
  if (argc < 2) {
    std::string list;
    for (std::size_t i = 0; i < commands.size(); ++i)
      list += (i == 0 ? "" : i + 1 == commands.size() ? " or " : ", ") + commands[i];
    std::cerr << "pipec: error: a command is required: " << list
              << "\nTry 'pipec --help' for more information.\n";
    return kExitUsage;
  }
  if (std::string_view first = argv[1]; first != "--help" && first != "-h" && first != "--help-all" &&
                                         first != "--version" && first != "__params" && first != "__commands" &&
                                         std::find(commands.begin(), commands.end(), first) == commands.end()) {
    bool option = !first.empty() && first[0] == '-';
    std::cerr << "pipec: error: unknown " << (option ? "option" : "command") << " '" << first << "'";
    if (!option) {
      if (std::string near = pipec::spellcheck(first, commands); !near.empty())
        std::cerr << "; did you mean '" << near << "'?";
    }
    std::cerr << "\nTry 'pipec --help' for more information.\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pipec: error: " << e.what() << "\nTry 'pipec --help' for more information.\n";
    return kExitUsage;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // The sandbox spawner of a local run (compiler/local/spawner.hpp): the run starts this
  // program again as its helper, before anything here grows the process.
  if (argc == 4 && std::string_view(argv[1]) == "--local-spawner")
    return pipec::local::spawner_main(std::atoi(argv[2]), argv[3]);
  // A compile allocates and frees in phases (AST, checked program, IR, text). Keep freed
  // memory in the heap instead of handing it back and faulting it in again in the next
  // phase, and take large blocks from the heap too: page faults were a quarter of the
  // time of a 5,000-step build (bench/README.md).
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TOP_PAD, 512 << 20);
#ifdef MADV_HUGEPAGE
  // The page faults left were a quarter of the CPU time of a 5,000-step build on this VM
  // (bench/README.md). Grow the heap now by 512 MiB more than it needs (address space,
  // untouched, so not yet memory) and ask for transparent huge pages there, as glibc's
  // glibc.malloc.hugetlb=1 tunable would: a kernel in "madvise" mode then faults it in 2 MiB
  // at a time. With 64 MiB, a 50,000-step build (210 MiB) took 36,000 faults past it and
  // was 30 % slower a step than a 5,000-step one. Growth past it gets normal pages; a
  // kernel that ignores the advice changes only the speed.
  if (char* start = static_cast<char*>(sbrk(0)); start != reinterpret_cast<char*>(-1)) {
    void* volatile grow = malloc(1 << 20);  // more than the heap has left: brk moves
    free(grow);
    char* end = static_cast<char*>(sbrk(0));
    auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    auto first = (reinterpret_cast<std::uintptr_t>(start) + page - 1) & ~(page - 1);
    if (page > 0 && reinterpret_cast<std::uintptr_t>(end) > first)
      madvise(reinterpret_cast<void*>(first), reinterpret_cast<std::uintptr_t>(end) - first, MADV_HUGEPAGE);
  }
#endif
  try {
    return program_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "pipec: error: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "pipec: internal error: " << e.what() << '\n';
  }
  return pipec::driver::kExitInternal;
}
