// The launcher's command line is one table (rules/launcher_cli.def): every option is
// built and split back the same, every binding kind is written and read back the same,
// and the usage lists each of them.
#include "rules/launcher_cli.hpp"

#include <set>

#include <gtest/gtest.h>

namespace pipec::rules {
namespace {

TEST(LauncherCli, EveryOptionIsBuiltAndSplitBack) {
  std::set<std::string_view> words;
  for (const LauncherOptionInfo& o : launcher_options()) {
    EXPECT_TRUE(words.insert(o.word).second) << "spelt twice: " << o.word;
    EXPECT_EQ(o.word.substr(0, 2), "--") << o.word;
    EXPECT_EQ(&launcher_option(o.id), &o) << o.word;  // the enum and the table agree
    if (o.id == LauncherOption::Help) continue;  // asks for the usage instead
    std::vector<std::string> argv;
    std::string value = o.shape == OptionShape::Flag ? "" : "a value with spaces, = and {{x}}";
    add_launcher_arg(argv, o.id, value);
    ASSERT_EQ(argv.size(), o.shape == OptionShape::Flag ? 1u : 2u) << o.word;
    EXPECT_EQ(argv[0], o.word);
    std::string error;
    auto split = split_launcher_args(argv, error);
    ASSERT_TRUE(split) << o.word << ": " << error;
    ASSERT_EQ(split->size(), 1u);
    EXPECT_EQ((*split)[0].id, o.id) << o.word;
    EXPECT_EQ((*split)[0].value, value) << o.word;
    if (o.shape != OptionShape::Flag) {  // `--word=value` is the same option
      auto joined = split_launcher_args(std::vector<std::string>{std::string(o.word) + "=" + value}, error);
      ASSERT_TRUE(joined) << o.word << ": " << error;
      EXPECT_EQ((*joined)[0].value, value);
    }
  }
}

TEST(LauncherCli, EveryBindingKindIsWrittenAndReadBack) {
  std::set<std::string_view> words;
  for (const BindingKindInfo& k : binding_kinds()) {
    EXPECT_TRUE(words.insert(k.word).second) << "spelt twice: " << k.word;
    EXPECT_EQ(binding_kind_word(k.id), k.word);
    EXPECT_EQ(binding_kind_named(k.word), k.id);
    std::string arg = binding_arg("/spec/a=b", "workers", k.id);
    EXPECT_EQ(arg, "/spec/a=b=workers:" + std::string(k.word));
    EXPECT_NE(binding_kind_list().find(k.word), std::string::npos);
  }
  EXPECT_EQ(words.size(), 16u);  // docs/runtime.md, "Binding kinds"
  EXPECT_FALSE(binding_kind_named("String"));
  EXPECT_FALSE(binding_kind_named(""));
  EXPECT_EQ(binding_kind_list().substr(0, 13), "string, int, ");
  EXPECT_NE(binding_kind_list().find(", success-policy, queue, priority-class or label"), std::string::npos);
}

TEST(LauncherCli, UsageListsEveryOptionAndKind) {
  std::string usage = launcher_usage();
  EXPECT_EQ(usage.rfind("usage: pipec-launcher --manifest JSON --step-name NAME [OPTIONS]\n", 0), 0u);
  for (const LauncherOptionInfo& o : launcher_options()) {
    std::string entry = "\n  " + std::string(o.word) + (o.metavar.empty() ? "" : " " + std::string(o.metavar));
    EXPECT_NE(usage.find(entry), std::string::npos) << o.word;
    std::string first_line(o.help.substr(0, o.help.find('\n')));
    EXPECT_NE(usage.find(first_line), std::string::npos) << o.word;
  }
  for (const BindingKindInfo& k : binding_kinds())
    EXPECT_NE(usage.find("\n  " + std::string(k.word) + " "), std::string::npos) << k.word;
}

TEST(LauncherCli, SplitRefusesUnknownAndIncomplete) {
  std::string error;
  EXPECT_FALSE(split_launcher_args(std::vector<std::string>{"--bogus"}, error));
  EXPECT_EQ(error, "unknown option '--bogus'");
  EXPECT_FALSE(split_launcher_args(std::vector<std::string>{"--keep-job=yes"}, error));
  EXPECT_EQ(error, "unknown option '--keep-job'");
  EXPECT_FALSE(split_launcher_args(std::vector<std::string>{"--manifest"}, error));
  EXPECT_EQ(error, "option '--manifest' needs a value");
  EXPECT_FALSE(split_launcher_args(std::vector<std::string>{"--dry-run", "-h"}, error));
  EXPECT_EQ(error, "");  // help asked
  auto ok = split_launcher_args(std::vector<std::string>{"--value", "--manifest"}, error);
  ASSERT_TRUE(ok) << error;  // a value is the next word, whatever it looks like
  EXPECT_EQ((*ok)[0].value, "--manifest");
}

}  // namespace
}  // namespace pipec::rules
