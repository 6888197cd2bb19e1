#include "input/yaml.hpp"

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "input/limits.hpp"

namespace pipec::input {
namespace {

// Runs `f` on another thread and fails if it has not returned within `seconds`: a hang
// shows as a failure, not as a test that never ends (the thread is then left behind).
template <typename F>
bool returns_within(int seconds, F f) {
  auto done = std::make_shared<std::promise<void>>();
  auto future = done->get_future();
  std::thread([done, f]() mutable {
    f();
    done->set_value();
  }).detach();
  return future.wait_for(std::chrono::seconds(seconds)) == std::future_status::ready;
}

constexpr const char* kBillionLaughs =
    "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";

TEST(LoadYaml, BillionLaughsIsRefusedAtTheAliasThatPassesTheBound) {
  YAML::Node root;
  std::string error;
  EXPECT_FALSE(load_yaml(kBillionLaughs, root, error));
  EXPECT_EQ(error.rfind("line 6, column 8: ", 0), 0u) << error;  // the first *e
  EXPECT_NE(error.find("aliases expand to more than 100000 nodes"), std::string::npos) << error;
}

TEST(LoadYaml, AFewAliasesAreFine) {
  YAML::Node root;
  std::string error;
  ASSERT_TRUE(load_yaml("base: &base {lr: 0.1, layers: [8, 4]}\nrun1: *base\nrun2: *base\n", root, error))
      << error;
  EXPECT_EQ(root["run2"]["layers"][1].as<int>(), 4);
}

TEST(LoadYaml, DeepFlowNestingIsRefusedWithItsPlace) {
  std::string deep = "a: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  YAML::Node root;
  std::string error;
  EXPECT_FALSE(load_yaml(deep, root, error));
  EXPECT_EQ(error, "line 1, column 259: nesting deeper than 256 levels");
}

TEST(LoadYaml, DeepBlockNestingIsRefused) {
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "- ";
  deep += "x\n";
  YAML::Node root;
  std::string error;
  EXPECT_FALSE(load_yaml(deep, root, error));
  EXPECT_NE(error.find("nesting deeper than 256 levels"), std::string::npos) << error;
}

TEST(LoadYaml, NestingAtTheLimitIsAccepted) {
  std::string text = std::string(kMaxNesting, '[') + std::string(kMaxNesting, ']');
  YAML::Node root;
  std::string error;
  EXPECT_TRUE(load_yaml(text, root, error)) << error;
}

TEST(LoadYamlAll, AStrayCommaAfterACompleteNodeEndsWithAnErrorNotAHang) {
  // yaml-cpp 0.7's LoadAll() loops for ever here (jbeder/yaml-cpp#1040).
  bool ok = true;
  std::string error;
  ASSERT_TRUE(returns_within(20, [&] {
    std::vector<YAML::Node> documents;
    ok = load_yaml_all("{\"a\": 1},\n", documents, error);
  }));
  EXPECT_FALSE(ok);
  EXPECT_EQ(error.rfind("line 1, column 9: ", 0), 0u) << error;
}

TEST(LoadYamlAll, ReadsEveryDocument) {
  std::vector<YAML::Node> documents;
  std::string error;
  ASSERT_TRUE(load_yaml_all("a: 1\n---\nb: 2\n---\n", documents, error)) << error;
  ASSERT_GE(documents.size(), 2u);
  EXPECT_EQ(documents[1]["b"].as<int>(), 2);
}

TEST(LoadYaml, YamlCppErrorsAreLocated) {
  YAML::Node root;
  std::string error;
  EXPECT_FALSE(load_yaml("a: [\n", root, error));
  EXPECT_EQ(error.rfind("line ", 0), 0u) << error;
}

}  // namespace
}  // namespace pipec::input
