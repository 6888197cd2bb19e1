// The machine's sema::Host (compiler/compile/host.hpp): the one place where checking meets
// this machine. Its interpreter runs a program with the input on standard input and gives
// back what it printed; an interpreter that is not there is `missing`, not an error; the
// component cache is the folder the environment names, and saving there writes the file.

#include "compiler/compile/host.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace pipec::compile {
namespace {

TEST(MachineHost, ItsInterpreterReadsTheInputAndItsAnswerComesBack) {
  if (access(kCheckPython, X_OK) != 0) GTEST_SKIP() << kCheckPython << " is not here";
  const sema::Host& host = machine_host();
  ASSERT_TRUE(host.run_python);
  bool missing = false;
  std::string error;
  auto out = host.run_python("import sys; print(sys.argv[1], sys.stdin.read()[::-1])", "name", "abc", missing,
                             error);
  ASSERT_TRUE(out) << error;
  EXPECT_FALSE(missing);
  EXPECT_EQ(*out, "name cba\n");
  // A program that fails gives no answer, with a reason.
  out = host.run_python("raise SystemExit(3)", "x", "", missing, error);
  EXPECT_FALSE(out);
  EXPECT_FALSE(missing);
  EXPECT_EQ(error, "it gave no answer");
}

TEST(MachineHost, TheComponentCacheIsTheFolderTheEnvironmentNames) {
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  ::unsetenv("PIPEC_COMPONENT_CACHE");
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(component_cache_dir(), "/tmp/xdg/pipec/components");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/tmp/h", 1);
  EXPECT_EQ(component_cache_dir(), "/tmp/h/.cache/pipec/components");
  ::unsetenv("HOME");
  EXPECT_EQ(component_cache_dir(), "");
  ::setenv("PIPEC_COMPONENT_CACHE", "/tmp/cache", 1);
  EXPECT_EQ(component_cache_dir(), "/tmp/cache");
  ::unsetenv("PIPEC_COMPONENT_CACHE");
  if (!home.empty()) ::setenv("HOME", home.c_str(), 1);
}

}  // namespace
}  // namespace pipec::compile
