// machine_host(): what sema asks of this machine, done here (sema does no I/O of its own).

#include "compiler/compile/host.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include "fileio/atomic_file.hpp"
#include "input/limits.hpp"

extern char** environ;

namespace pipec::compile {

namespace {

// Runs `interpreter -I -c program arg` with `input` on standard input (a memfd, so that no
// pipe can fill while the interpreter has not read) and returns its standard output, at
// most input::kMaxPythonCheckBytes of it; standard error goes to /dev/null.
std::optional<std::string> run_python(const std::string& interpreter, const std::string& program,
                                      const std::string& arg, const std::string& input, bool& missing,
                                      std::string& error) {
  missing = access(interpreter.c_str(), X_OK) != 0;
  if (missing) return std::nullopt;
  int in = memfd_create("pipec-python-source", MFD_CLOEXEC);
  int out[2] = {-1, -1};
  if (in < 0 || pipe2(out, O_CLOEXEC) != 0) {
    error = "cannot make a pipe";
    if (in >= 0) close(in);
    return std::nullopt;
  }
  for (std::size_t done = 0; done < input.size();) {
    ssize_t n = write(in, input.data() + done, input.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  lseek(in, 0, SEEK_SET);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> words = {interpreter, "-I", "-c", program, arg};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, interpreter.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in);
  close(out[1]);
  std::string text;
  char buffer[65536];
  bool too_long = false;
  for (ssize_t n; spawned == 0 && (n = read(out[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0) break;
    if (text.size() + static_cast<std::size_t>(n) > input::kMaxPythonCheckBytes) {
      too_long = true;
      break;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(out[0]);
  int status = 0;
  if (spawned == 0) waitpid(pid, &status, 0);
  if (spawned != 0 || too_long || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = spawned != 0 ? "it could not be started" : "it gave no answer";
    return std::nullopt;
  }
  return text;
}

sema::Host make_host() {
  sema::Host host;
  const char* env = std::getenv("PIPEC_CHECK_PYTHON");
  std::string interpreter = env && *env ? env : kCheckPython;
  host.python_name = interpreter;
  if (interpreter == kCheckPythonOff) {
    host.python_unchecked = "PIPEC_CHECK_PYTHON=off";
  } else {
    host.python_missing_hint = "install Debian's python3, or build without the check: PIPEC_CHECK_PYTHON=off";
    host.run_python = [interpreter](const std::string& program, const std::string& arg, const std::string& input,
                                    bool& missing, std::string& error) {
      return run_python(interpreter, program, arg, input, missing, error);
    };
  }
  host.component_cache = component_cache_dir();
  host.component_cache_missing = "(no $HOME)";
  if (!host.component_cache.empty()) {
    std::string dir = host.component_cache;
    host.save_component = [dir](const std::string& digest, const std::string& bytes, std::string& error) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      return fileio::write_file_atomically((std::filesystem::path(dir) / digest).generic_string(), bytes, error);
    };
  }
  return host;
}

}  // namespace

std::string component_cache_dir() {
  if (const char* d = std::getenv("PIPEC_COMPONENT_CACHE"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/pipec/components";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/pipec/components";
  return "";
}

const sema::Host& machine_host() {
  static const sema::Host host = make_host();
  return host;
}

}  // namespace pipec::compile
