// compiler/base/sparkline: the one renderer of a metric's series in the terminal (run
// --local; docs/client.md "Metric series in the terminal").
#include "compiler/base/sparkline.hpp"

#include <cstdlib>

#include <gtest/gtest.h>

namespace pipec {
namespace {

SeriesLine line(std::string name, std::vector<double> values) {
  SeriesLine s;
  s.name = std::move(name);
  for (std::size_t i = 0; i < values.size(); ++i) s.orders.push_back(i);
  s.values = std::move(values);
  s.count = s.values.size();
  return s;
}

TEST(Sparkline, ReadsTheSeriesFileTheScraperWrites) {
  std::vector<SeriesLine> out;
  std::string why;
  ASSERT_TRUE(read_series(R"({"bound":1024,"format":"pipec-metric-series/1","metrics":[
      {"count":3,"name":"loss","points":[{"epoch":1,"order":0,"step":10,"value":0.9},
       {"order":1,"value":0.7},{"order":2,"step":30,"value":0.5}],"stride":1}]})",
                          out, why))
      << why;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "loss");
  EXPECT_EQ(out[0].count, 3u);
  EXPECT_EQ(out[0].values, (std::vector<double>{0.9, 0.7, 0.5}));
  // A point's step and epoch where it has them (the report's x axis), -1 where not.
  EXPECT_EQ(out[0].steps, (std::vector<long long>{10, -1, 30}));
  EXPECT_EQ(out[0].epochs, (std::vector<long long>{1, -1, -1}));
  EXPECT_FALSE(read_series(R"({"format":"pipec-metric-series/1","metrics":[{"name":"a","count":1,
      "points":[{"order":0,"step":-3,"value":1}]}]})", out, why));
  EXPECT_NE(why.find("step"), std::string::npos) << why;
  EXPECT_FALSE(read_series(R"({"format":"pipec-metric-series/1","metrics":[{"name":"a","count":1,
      "points":[{"order":0,"epoch":"2","value":1}]}]})", out, why));
  EXPECT_FALSE(read_series(R"({"format":"other","metrics":[]})", out, why));
  EXPECT_FALSE(read_series(R"({"format":"pipec-metric-series/1","metrics":[{"name":"a","count":1,
      "points":[{"order":5,"value":1}]}]})", out, why));
  EXPECT_NE(why.find("'a'"), std::string::npos) << why;
  EXPECT_FALSE(read_series("[", out, why));
}

TEST(Sparkline, IsFixedWidthFromTheLeastToTheGreatest) {
  auto rising = line("acc", {0, 1, 2, 3, 4, 5, 6, 7});
  // 8 values over 24 columns: each value three columns, one level each.
  EXPECT_EQ(sparkline(rising, SparkGlyphs::Ascii), "___...---~~~===+++***###");
  EXPECT_EQ(sparkline(rising, SparkGlyphs::Unicode), "▁▁▁▂▂▂▃▃▃▄▄▄▅▅▅▆▆▆▇▇▇███");
  // Equal values, and a single one, are the lowest bar throughout.
  EXPECT_EQ(sparkline(line("c", {2, 2, 2}), SparkGlyphs::Ascii), std::string(24, '_'));
  EXPECT_EQ(sparkline(line("one", {5}), SparkGlyphs::Ascii), std::string(24, '_'));
  // 48 values: two a column, shown as their mean.
  std::vector<double> many;
  for (int i = 0; i < 48; ++i) many.push_back(i < 24 ? 0 : 7);
  EXPECT_EQ(sparkline(line("m", many), SparkGlyphs::Ascii), std::string(12, '_') + std::string(12, '#'));
}

TEST(Sparkline, AThinnedSeriesIsPlacedByItsOrder) {
  SeriesLine s;
  s.name = "loss";
  s.count = 1000;
  s.orders = {0, 999};
  s.values = {1, 0};
  // The first value in the first column, the last in the last; between, the left neighbour's.
  EXPECT_EQ(sparkline(s, SparkGlyphs::Ascii), std::string(23, '#') + "_");
}

TEST(Sparkline, LinesGiveFirstLastLeastAndGreatest) {
  std::vector<SeriesLine> series{line("train.loss", {0.9, 0.3, 0.5}), line("acc", {1})};
  EXPECT_EQ(series_lines(series, SparkGlyphs::Ascii, "  "),
            "  train.loss  ########________--------  0.9 -> 0.5  min 0.3  max 0.9  (3 values)\n"
            "  acc         ________________________  1 -> 1  min 1  max 1  (1 value)\n");
  EXPECT_NE(series_lines(series, SparkGlyphs::Unicode, "").find("0.9 → 0.5"), std::string::npos);
}

TEST(Sparkline, AsciiOutsideAUtf8LocaleOrWhenAskedFor) {
  ::setenv("LC_ALL", "C.UTF-8", 1);
  EXPECT_EQ(spark_glyphs(false), SparkGlyphs::Unicode);
  EXPECT_EQ(spark_glyphs(true), SparkGlyphs::Ascii);
  ::setenv("LC_ALL", "C", 1);
  ::setenv("LANG", "en_US.utf8", 1);
  EXPECT_EQ(spark_glyphs(false), SparkGlyphs::Ascii);  // LC_ALL is set: it decides
  ::unsetenv("LC_ALL");
  ::unsetenv("LC_CTYPE");
  EXPECT_EQ(spark_glyphs(false), SparkGlyphs::Unicode);
  ::unsetenv("LANG");
  EXPECT_EQ(spark_glyphs(false), SparkGlyphs::Ascii);
}

}  // namespace
}  // namespace pipec
