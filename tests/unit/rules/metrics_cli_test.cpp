// rules/metrics_cli: the command line both writers wrap a container's command with is the
// one pipec-metrics reads back.
#include "rules/metrics_cli.hpp"

#include <gtest/gtest.h>

namespace pipec::rules::metrics_cli {
namespace {

TEST(MetricsCli, AWrappedCommandIsReadBackAsWritten) {
  Call<std::string> call{"/.pipec/pipec-metrics", {"acc:PERCENTAGE:max", "loss"}, "out/m.txt",
                         "/m.json", "/s/series", "{{$}}"};
  auto argv = wrap_command(call, {"python", "-c", "print('acc=1')", "--", "--metric"});
  ASSERT_EQ(argv.front(), "/.pipec/pipec-metrics");
  Parsed p;
  std::string why;
  ASSERT_TRUE(parse({argv.begin() + 1, argv.end()}, p, why)) << why;
  EXPECT_EQ(p.specs, (std::vector<std::string>{"acc:PERCENTAGE:max", "loss"}));
  EXPECT_EQ(p.from, "out/m.txt");
  EXPECT_EQ(p.metrics_file, "/m.json");
  EXPECT_EQ(p.series_file, "/s/series");
  EXPECT_EQ(series_path(p.metrics_file, p.series_file), "/s/series");
  EXPECT_EQ(p.executor_input, "{{$}}");
  // Everything after the first `--` is the command, words that look like options too.
  EXPECT_EQ(p.command, (std::vector<std::string>{"python", "-c", "print('acc=1')", "--", "--metric"}));
  EXPECT_FALSE(p.install);
}

TEST(MetricsCli, OptionsLeftOutKeepTheirDefaults) {
  Call<std::string> call{"pipec-metrics", {"acc"}, {}, {}, {}, {}};
  auto argv = wrap_command(call, {"true"});
  EXPECT_EQ(argv, (std::vector<std::string>{"pipec-metrics", "--metric", "acc", "--", "true"}));
  Parsed p;
  std::string why;
  ASSERT_TRUE(parse({argv.begin() + 1, argv.end()}, p, why)) << why;
  EXPECT_EQ(p.metrics_file, kDefaultMetricsFile);
  EXPECT_EQ(p.from, "");
  // The series beside the metrics file: the path the Argo artifact metric-series names.
  EXPECT_EQ(series_path(p.metrics_file, p.series_file), kDefaultSeriesFile);
}

TEST(MetricsCli, RefusesMissingValuesUnknownWordsAndNoCommand) {
  Parsed p;
  std::string why;
  EXPECT_FALSE(parse({"--metric"}, p, why));
  EXPECT_EQ(why, "--metric needs a spec");
  EXPECT_FALSE(parse({"--metrics", "x", "--", "true"}, p, why));
  EXPECT_EQ(why, "unknown argument '--metrics'");
  EXPECT_FALSE(parse({"--metric", "acc"}, p, why));
  EXPECT_EQ(why, "no command after --");
  Parsed install;
  ASSERT_TRUE(parse({"--install", "/x/pipec-metrics"}, install, why));
  EXPECT_EQ(install.install, "/x/pipec-metrics");
}

TEST(MetricsCli, VisualOutputsAreReadBackAsKindNameAndPath) {
  Call<std::string> call{"pipec-metrics"};
  call.visuals = {visual_word("html", "page", "/tmp/a:b.html")};
  auto argv = wrap_command(call, {"true"});
  EXPECT_EQ(argv, (std::vector<std::string>{"pipec-metrics", "--visual", "html:page:/tmp/a:b.html", "--", "true"}));
  Parsed p;
  std::string why;
  ASSERT_TRUE(parse({argv.begin() + 1, argv.end()}, p, why)) << why;
  ASSERT_EQ(p.visuals.size(), 1u);
  EXPECT_EQ(p.visuals[0].kind, "html");
  EXPECT_EQ(p.visuals[0].name, "page");
  EXPECT_EQ(p.visuals[0].path, "/tmp/a:b.html");  // the path may hold a colon
  EXPECT_TRUE(p.specs.empty());
  for (const char* bad : {"html", "html:page", ":page:/x", "html::/x", "html:page:"}) {
    Parsed q;
    EXPECT_FALSE(parse({"--visual", bad, "--", "true"}, q, why)) << bad;
    EXPECT_EQ(why, std::string("--visual needs KIND:NAME:PATH, got '") + bad + "'");
  }
}

TEST(MetricsCli, UsageNamesEveryOption) {
  for (const char* word : {kInstall, kMetric, kFrom, kMetricsFile, kSeriesFile, kExecutorInput, kVisual})
    EXPECT_NE(usage().find(word), std::string::npos) << word;
}

}  // namespace
}  // namespace pipec::rules::metrics_cli
