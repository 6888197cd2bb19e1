// Golden tests for check_program(): every bad-<case>.pipe in this folder must give
// exactly bad-<case>.stderr (text diagnostics, no colour, paths relative to this
// folder). PIPEC_UPDATE_GOLDEN=1 rewrites the expected files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/base/diagnostics.hpp"
#include "compiler/compile/host.hpp"
#include "compiler/lower/lower.hpp"
#include "compiler/sema/check.hpp"
#include "stdlib/embedded_stdlib.hpp"

namespace pipec {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = PIPEC_GOLDEN_CHECK_DIR;
const fs::path kSourceDir = PIPEC_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct Result {
  std::string diagnostics;
  bool ok = false;
};

// Runs check + lower on `path`, from `dir`, so that names stay relative.
Result check_file(const fs::path& dir, const std::string& path) {
  fs::path saved = fs::current_path();
  fs::current_path(dir);
  SourceManager sources;
  Diagnostics diags;
  std::string error;
  Result result;
  FileId file = sources.load(path, error);
  if (file == kNoFile) {
    result.diagnostics = "cannot read: " + error;
  } else {
    auto program = sema::check_program(sources, file, diags, compile::machine_host());
    result.ok = program && lower::lower(std::move(*program), diags) && !diags.has_errors();
    std::ostringstream out;
    render(diags, sources, out, RenderOptions{});
    result.diagnostics = out.str();
  }
  fs::current_path(saved);
  return result;
}

std::vector<std::string> bad_cases() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("bad-", 0) == 0 && entry.path().extension() == ".pipe") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class CheckGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckGolden, MatchesExpectedDiagnostics) {
  const std::string name = GetParam();
  fs::path expected_path = kGoldenDir / (name.substr(0, name.size() - 5) + ".stderr");
  Result result = check_file(kGoldenDir, name);
  EXPECT_FALSE(result.ok) << "a bad case must fail";
  if (const char* update = std::getenv("PIPEC_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::ofstream(expected_path, std::ios::binary) << result.diagnostics;
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path))
      << expected_path << " is missing; run with PIPEC_UPDATE_GOLDEN=1";
  EXPECT_EQ(result.diagnostics, read_file(expected_path));
  // Same input, same bytes.
  EXPECT_EQ(check_file(kGoldenDir, name).diagnostics, result.diagnostics);
}

INSTANTIATE_TEST_SUITE_P(Cases, CheckGolden, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id = info.param.substr(0, info.param.size() - 5);
                           std::replace(id.begin(), id.end(), '-', '_');
                           return id;
                         });

TEST(CheckGoldenFolder, HasEnoughCases) { EXPECT_GE(bad_cases().size(), 45u); }

// Every example checks without a single diagnostic.
TEST(Examples, CheckCleanly) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "dsl-examples")) {
    if (entry.path().extension() != ".pipe") continue;
    ++count;
    Result result = check_file(kSourceDir, "dsl-examples/" + entry.path().filename().string());
    EXPECT_TRUE(result.ok) << entry.path();
    EXPECT_EQ(result.diagnostics, "") << entry.path();
  }
  EXPECT_GE(count, 8);
}

// Every stdlib module checks when a pipeline uses it.
TEST(Examples, StdlibModulesCheckCleanly) {
  ASSERT_FALSE(stdlib::modules().empty());
  for (const auto& module : stdlib::modules()) {
    SourceManager sources;
    Diagnostics diags;
    FileId file =
        sources.add("main.pipe", "use " + std::string(module.name) + "\npipeline t {\n}\n");
    auto program = sema::check_program(sources, file, diags, compile::machine_host());
    std::ostringstream out;
    render(diags, sources, out, RenderOptions{});
    EXPECT_TRUE(program) << module.name;
    EXPECT_EQ(out.str(), "") << module.name;
  }
}

}  // namespace
}  // namespace pipec
