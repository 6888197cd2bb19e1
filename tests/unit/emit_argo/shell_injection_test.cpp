// Values never become shell code: compile ops whose commands use a parameter (shell form,
// exec form, words mixing text and values, flag words), substitute hostile values into the
// container exactly as Argo substitutes {{inputs.parameters.X}}, run the resulting argv
// and environment in a real process with /bin/sh, and check that every value arrived as
// its literal text and nothing it contains was executed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/base/source_manager.hpp"
#include "compiler/emit/argo/workflow_writer.hpp"
#include "compiler/lower/lower.hpp"
#include "compiler/sema/check.hpp"

namespace pipec::emit::argo {
namespace {

namespace fs = std::filesystem;

std::string compile(const std::string& text) {
  SourceManager sources;
  FileId file = sources.add("input", text);
  Diagnostics diags;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  EXPECT_TRUE(program && !diags.has_errors());
  if (!program) return "";
  auto pipeline = lower::lower(std::move(*program), diags);
  std::string yaml;
  EXPECT_TRUE(pipeline && write_workflow(*pipeline, WriteOptions{}, yaml, diags));
  return yaml;
}

// Argo's substitution of {{inputs.parameters.NAME}} in one string.
std::string substitute(std::string s, const std::map<std::string, std::string>& inputs) {
  for (const auto& [name, value] : inputs) {
    std::string tag = "{{inputs.parameters." + name + "}}";
    for (std::size_t at = s.find(tag); at != std::string::npos; at = s.find(tag, at + value.size()))
      s.replace(at, tag.size(), value);
  }
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the template's container (command + args, env) with the inputs substituted; the
// process writes what it received to $OUT_FILE. Returns that file's content.
std::string run_container(const YAML::Node& tmpl, const std::map<std::string, std::string>& inputs,
                          const fs::path& out_file) {
  std::vector<std::string> argv;
  for (const char* key : {"command", "args"})
    if (tmpl["container"][key])
      for (const auto& w : tmpl["container"][key]) argv.push_back(substitute(w.as<std::string>(), inputs));
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "OUT_FILE=" + out_file.string()};
  if (tmpl["container"]["env"])
    for (const auto& e : tmpl["container"]["env"])
      env.push_back(e["name"].as<std::string>() + "=" + substitute(e["value"].as<std::string>(), inputs));
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args, envp;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    ::chdir(out_file.parent_path().c_str());
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit " << status;
  return read_file(out_file);
}

YAML::Node template_named(const YAML::Node& doc, const std::string& name) {
  for (const auto& t : doc["spec"]["templates"])
    if (t["name"].as<std::string>() == name) return t;
  return YAML::Node();
}

class ShellInjection : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pipec-inject-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> hostile() const {
    std::string pwned = (dir_ / "pwned").string();
    return {"x; touch " + pwned,
            "$(touch " + pwned + ")",
            "`touch " + pwned + "`",
            "a\" ; touch " + pwned + " ; echo \"",
            "it's ' ; touch " + pwned + " ; '",
            "line one\ntouch " + pwned,
            "{{workflow.name}} ${HOME} $OUT_FILE *",
            "",
            "-n"};
  }
  fs::path dir_;
};

TEST_F(ShellInjection, ShellFormGetsValuesAsQuotedVariables) {
  auto doc = YAML::Load(compile(R"(
op show(msg: string, n: int) {
  image "busybox:1.36"
  command "printf '%s|%s' ${msg} ${n} > \"$OUT_FILE\""
}
pipeline p { param msg: string = "x"
  step s = show(msg: msg, n: 3) })"));
  auto t = template_named(doc, "show");
  for (const auto& value : hostile()) {
    std::string got = run_container(t, {{"msg", value}, {"n", "3"}}, dir_ / "out");
    EXPECT_EQ(got, value + "|3") << value;
    EXPECT_FALSE(fs::exists(dir_ / "pwned")) << value;
  }
}

TEST_F(ShellInjection, ExecFormWordsStayWhole) {
  auto doc = YAML::Load(compile(R"(
op show(msg: string) {
  image "busybox:1.36"
  command ["sh", "-c", "printf '%s|' \"$@\" > \"$OUT_FILE\"", "sh", "${msg}", "--m=${msg}", "pre-${msg}-post", "it's ${msg}"]
}
pipeline p { param msg: string = "x"
  step s = show(msg: msg) })"));
  auto t = template_named(doc, "show");
  for (const auto& value : hostile()) {
    std::string got = run_container(t, {{"msg", value}}, dir_ / "out");
    EXPECT_EQ(got, value + "|--m=" + value + "|pre-" + value + "-post|it's " + value + "|") << value;
    EXPECT_FALSE(fs::exists(dir_ / "pwned")) << value;
  }
}

TEST_F(ShellInjection, ShellFormArgsArePositionalParameters) {
  auto doc = YAML::Load(compile(R"(
op show(msg: string) {
  image "busybox:1.36"
  command "printf '%s|' \"$@\" > \"$OUT_FILE\""
  args ["${msg}", "lit"]
}
pipeline p { param msg: string = "x"
  step s = show(msg: msg) })"));
  auto t = template_named(doc, "show");
  for (const auto& value : hostile()) {
    std::string got = run_container(t, {{"msg", value}}, dir_ / "out");
    EXPECT_EQ(got, value + "|lit|") << value;
    EXPECT_FALSE(fs::exists(dir_ / "pwned")) << value;
  }
}

}  // namespace
}  // namespace pipec::emit::argo
