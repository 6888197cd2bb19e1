// Every option of the one table (rules/launcher_cli.def), built as the compiler builds it,
// is parsed by pipec-launcher's parse_options() into its field, and `--help` lists it.
#include "rules/launcher_cli.hpp"
#include "runtime/launcher.hpp"

#include <gtest/gtest.h>

namespace pipec::runtime {
namespace {

using std::chrono::milliseconds;
using rules::LauncherOption;

// A valid value for an option of each field's type, and what the field holds after it.
std::string sample(LauncherOption id, const std::string&) {
  if (id == LauncherOption::ExecutorInput) return R"({"outputs":{"outputFile":"/tmp/out.json"}})";
  return "a value, = {{x}}";
}
std::string sample(LauncherOption, const std::vector<std::string>&) { return "x=y"; }
std::string sample(LauncherOption, const milliseconds&) { return "1m30s"; }
std::string sample(LauncherOption, const bool&) { return ""; }

void expect_set(const std::string& field, const std::string& value) { EXPECT_EQ(field, value); }
void expect_set(const std::vector<std::string>& field, const std::string& value) {
  ASSERT_FALSE(field.empty());
  EXPECT_EQ(field.back(), value);
}
void expect_set(const milliseconds& field, const std::string&) { EXPECT_EQ(field, milliseconds(90000)); }
void expect_set(const bool& field, const std::string&) { EXPECT_TRUE(field); }

TEST(LauncherOptions, EveryTableEntryIsBuiltAndParsedIntoItsField) {
  int checked = 0;
#define PIPEC_LAUNCHER_OPTION(id_, word_, shape_, field_, metavar_, help_)                               \
  {                                                                                                     \
    SCOPED_TRACE(word_);                                                                                \
    const LauncherOption id = LauncherOption::id_;                                                      \
    LauncherOptions defaults;                                                                           \
    std::string value = sample(id, defaults.field_);                                                    \
    std::vector<std::string> args;                                                                      \
    if (id != LauncherOption::Manifest) args = {"--manifest", "{}"};                                    \
    if (id != LauncherOption::StepName) args.insert(args.end(), {"--step-name", "s"});                 \
    rules::add_launcher_arg(args, id, value);                                                           \
    std::string error, usage;                                                                           \
    auto o = parse_options(args, error, usage);                                                         \
    if (id == LauncherOption::Help) {                                                                   \
      EXPECT_FALSE(o);                                                                                  \
      EXPECT_EQ(error, "");                                                                             \
      EXPECT_EQ(usage, rules::launcher_usage());                                                        \
    } else if (id == LauncherOption::Version) {                                                         \
      EXPECT_FALSE(o);                                                                                  \
      EXPECT_EQ(error, "option '--version' is given alone");                                           \
    } else {                                                                                            \
      ASSERT_TRUE(o) << error;                                                                          \
      expect_set(o->field_, value);                                                                     \
      if (id != LauncherOption::Manifest) {                                                             \
        EXPECT_EQ(o->manifest, "{}");                                                                   \
      }                                                                                                 \
    }                                                                                                   \
    ++checked;                                                                                          \
  }
#include "rules/launcher_cli.def"
  EXPECT_EQ(checked, static_cast<int>(rules::launcher_options().size()));
}

TEST(LauncherOptions, HelpIsTheTablesUsage) {
  std::string error, help;
  EXPECT_FALSE(parse_options({"--manifest", "{}", "-h"}, error, help));
  EXPECT_EQ(error, "");
  for (const auto& o : rules::launcher_options())
    EXPECT_NE(help.find("\n  " + std::string(o.word)), std::string::npos) << o.word;
  for (const auto& k : rules::binding_kinds())
    EXPECT_NE(help.find("\n  " + std::string(k.word) + " "), std::string::npos) << k.word;
}

TEST(LauncherOptions, DurationsAndMissingOptions) {
  std::string error, help;
  EXPECT_FALSE(parse_options({"--manifest", "{}", "--step-name", "s", "--log-grace", "soon"}, error, help));
  EXPECT_EQ(error, "--log-grace expects a duration (e.g. 90s, 30m, 4h, 2d, 0), got 'soon'");
  auto o = parse_options({"--manifest", "{}", "--step-name", "s", "--running-timeout="}, error, help);
  ASSERT_TRUE(o) << error;  // "" is none
  EXPECT_EQ(o->running_timeout, milliseconds(0));
  EXPECT_FALSE(parse_options({"--step-name", "s"}, error, help));
  EXPECT_EQ(error, "missing --manifest");
}

}  // namespace
}  // namespace pipec::runtime
