#include "runtime/metrics.hpp"
#include "fileio/atomic_file.hpp"

#include <cmath>
#include <filesystem>
#include <optional>
#include <random>
#include <string_view>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace pipec::runtime {

using rules::Aggregation;
using rules::MetricSpec;
using rules::metric_option_problem;
using rules::parse_metric_spec;
using rules::sanitize_metric_name;
namespace {

MetricScraper scraper(std::vector<std::string> specs) {
  std::vector<MetricSpec> out;
  for (const auto& s : specs) {
    std::string error;
    auto m = parse_metric_spec(s, error);
    EXPECT_TRUE(m) << error;
    out.push_back(*m);
  }
  return MetricScraper(std::move(out));
}

TEST(RuntimeMetrics, SanitisesNamesToKfpRule) {
  EXPECT_EQ(sanitize_metric_name("images/sec"), "images-sec");
  EXPECT_EQ(sanitize_metric_name("top-1 acc (%)"), "top-1-acc");
  EXPECT_EQ(sanitize_metric_name("1/loss"), "loss");
  EXPECT_EQ(sanitize_metric_name("val_loss"), "val_loss");
  EXPECT_EQ(sanitize_metric_name("a__"), "a");
  EXPECT_EQ(sanitize_metric_name("42"), "");
  EXPECT_EQ(sanitize_metric_name(std::string(70, 'x')), std::string(64, 'x'));
  EXPECT_EQ(sanitize_metric_name(std::string(63, 'x') + "-y"), std::string(63, 'x'));
}

TEST(RuntimeMetrics, NamesAMisspeltFormatOrAggregation) {
  std::string error;
  EXPECT_FALSE(parse_metric_spec("acc:PERCENT", error));
  EXPECT_EQ(error,
            "metric 'acc:PERCENT': unknown format 'PERCENT'; did you mean 'acc:PERCENTAGE'? (expected "
            "NAME[:RAW|PERCENTAGE][:last|max|min], e.g. images/sec:RAW:max)");
  EXPECT_FALSE(parse_metric_spec("loss:minimum", error));
  EXPECT_EQ(error.substr(0, error.find(" (")),
            "metric 'loss:minimum': unknown aggregation 'minimum'; did you mean 'loss:min'?");
  EXPECT_FALSE(parse_metric_spec("acc:Percentage:max", error));
  EXPECT_EQ(error.substr(0, error.find(" (")),
            "metric 'acc:Percentage:max': unknown format 'Percentage'; did you mean 'acc:PERCENTAGE:max'?");
  EXPECT_EQ(metric_option_problem("acc:PERCENTAGE:last"), "");
  EXPECT_EQ(metric_option_problem("val:acc"), "");  // a name, not an option
}

TEST(RuntimeMetrics, ParsesSpecs) {
  std::string error;
  auto m = parse_metric_spec("images/sec:PERCENTAGE:max", error);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name, "images/sec");
  EXPECT_EQ(m->reported, "images-sec");
  EXPECT_EQ(m->format, "PERCENTAGE");
  EXPECT_EQ(m->aggregation, Aggregation::Max);
  m = parse_metric_spec("loss:min", error);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->format, "RAW");
  EXPECT_EQ(m->aggregation, Aggregation::Min);
  EXPECT_FALSE(parse_metric_spec("", error));
  // Spaces between words are part of the name (seed 003's `Final Cost: 0.53`); the
  // options are still the trailing known words.
  m = parse_metric_spec("Final Cost:PERCENTAGE:min", error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->name, "Final Cost");
  EXPECT_EQ(m->reported, "Final-Cost");
  EXPECT_EQ(m->aggregation, Aggregation::Min);
  for (const char* bad : {" lead", "trail ", "two  spaces", "a\tb"}) EXPECT_FALSE(parse_metric_spec(bad, error)) << bad;
  EXPECT_FALSE(parse_metric_spec("a:b", error));
  EXPECT_EQ(error,
            "metric 'a:b' cannot be reported: a name needs a letter and none of tab, = : , ; "
            "( [ { \" ' |, which end a name in the log, and spaces only between words (expected "
            "NAME[:RAW|PERCENTAGE][:last|max|min], e.g. images/sec:RAW:max)");
  // Each character that ends a name in a log line: such a name could never be found.
  for (const char* bad : {"a=b", "val:acc", "val:acc:max", "top,1", "a;b", "f(x)", "a[0]",
                          "a{b", "a\"b", "it's", "a|b", "a\tb"}) {
    error.clear();
    EXPECT_FALSE(parse_metric_spec(bad, error)) << bad;
    EXPECT_NE(error.find("cannot be reported"), std::string::npos) << bad;
  }
  // The same names without those characters are found in a log.
  auto s = scraper({"val-acc", "top_1", "f.x", "a/b"});
  s.feed("val-acc=0.5 top_1: 2 f.x=3 (a/b=4)\n");
  EXPECT_EQ(s.value(0), 0.5);
  EXPECT_EQ(s.value(1), 2.0);
  EXPECT_EQ(s.value(2), 3.0);
  EXPECT_EQ(s.value(3), 4.0);
}

// Seed 003's job prints `Test-Accuracy: 0.89` and `Final Cost: 0.5333`.
TEST(RuntimeMetrics, NamesWithSpacesAreFoundWhole) {
  std::string error;
  std::vector<MetricSpec> specs;
  for (const char* spec : {"Test-Accuracy", "Final Cost:min", "Cost"}) {
    auto m = parse_metric_spec(spec, error);
    ASSERT_TRUE(m) << error;
    specs.push_back(*m);
  }
  MetricScraper s(specs);
  s.feed("Epoch 1 Final Cost: 0.7 Test-Accuracy: 0.5\n");
  s.feed("Epoch 2 Final Cost: 0.5333, Test-Accuracy: 0.89\n");
  s.feed("Total Cost: 9\n");        // not `Final Cost`; `Cost` is its own token here
  s.feed("xFinal Cost: 0.1\n");     // does not start a token: not `Final Cost`, but `Cost`
  EXPECT_EQ(s.value(2), 0.1);
  s.feed("Final  Cost: 0.2\n");     // two spaces: not `Final Cost`, but `Cost`
  EXPECT_EQ(s.value(0), 0.89);
  EXPECT_EQ(s.value(1), 0.5333);
  EXPECT_EQ(s.value(2), 0.2);
  EXPECT_EQ(s.metrics_json(),
            R"({"metrics":[{"format":"RAW","name":"Test-Accuracy","numberValue":0.89},)"
            R"({"format":"RAW","name":"Final-Cost","numberValue":0.5333},{"format":"RAW","name":"Cost","numberValue":0.2}]})" "\n");
}

TEST(RuntimeMetrics, ReadsSignsExponentsBothSeparatorsAndNonPositiveValues) {
  auto s = scraper({"a", "b", "c", "d", "e", "f", "g"});
  s.feed("a=-0.5 b: 1e-3 c=+2.5E+2 d:0 e = -7, f:-.25\ng=3\n");
  EXPECT_EQ(s.value(0), -0.5);
  EXPECT_EQ(s.value(1), 0.001);
  EXPECT_EQ(s.value(2), 250.0);
  EXPECT_EQ(s.value(3), 0.0);
  EXPECT_EQ(s.value(4), -7.0);
  EXPECT_EQ(s.value(5), -0.25);
  EXPECT_EQ(s.value(6), 3.0);
}

TEST(RuntimeMetrics, UnderflowIsZeroAndDoubleSignsAreNotNumbers) {
  auto s = scraper({"a", "b", "c", "d"});
  s.feed("a=1e-999 b=-1e-400 c=+-3 d=-0\n");
  EXPECT_EQ(s.value(0), 0.0);
  EXPECT_EQ(s.value(1), 0.0);
  EXPECT_FALSE(std::signbit(*s.value(1)));
  EXPECT_FALSE(s.value(2));
  EXPECT_FALSE(std::signbit(*s.value(3)));
  EXPECT_TRUE(s.take_warnings().empty());
  EXPECT_EQ(s.metrics_json(),
            R"({"metrics":[{"format":"RAW","name":"a","numberValue":0.0},)"
            R"({"format":"RAW","name":"b","numberValue":0.0},)"
            R"({"format":"RAW","name":"d","numberValue":0.0}]})" "\n");
  s.feed("c=-1e999\n");
  EXPECT_EQ(s.take_warnings(),
            std::vector<std::string>{"metric 'c' value '-1e999' ignored: not a finite number"});
}

TEST(RuntimeMetrics, MatchesWholeNamesOnly) {
  auto s = scraper({"loss", "images/sec"});
  s.feed("train_loss=9 xloss: 9 loss_avg=9 INFO:root:loss=0.25 rate images/sec=10.5\n");
  EXPECT_EQ(s.value(0), 0.25);
  EXPECT_EQ(s.value(1), 10.5);
  s.feed("loss=1.5abc loss=2e loss=0x10 loss=\n");  // not numbers: ignored
  EXPECT_EQ(s.value(0), 0.25);
  s.feed("(loss=3.5) [loss: 4.5];\n");
  EXPECT_EQ(s.value(0), 4.5);
}

// docs/runtime.md's rule read forwards, the plain way: at each token start where NAME
// follows, blanks (before '=' only), the separator, blanks, a number, a value end. Returns
// the value at the last separator in the line that fits, if any.
std::optional<double> reference_last(const std::string& line, const std::string& name) {
  auto boundary = [](char c) { return std::string_view(" \t,;([{\"'|:=").find(c) != std::string_view::npos; };
  auto value_end = [](char c) { return std::string_view(" \t,;)]}\"'%|").find(c) != std::string_view::npos; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const std::size_t n = line.size();
  std::optional<double> last;
  for (std::size_t i = 0; i + name.size() <= n; ++i) {
    if ((i > 0 && !boundary(line[i - 1])) || line.compare(i, name.size(), name) != 0) continue;
    std::size_t j = i + name.size(), k = j, q;
    while (k < n && (line[k] == ' ' || line[k] == '\t')) ++k;
    if (k < n && line[k] == '=') q = k + 1;
    else if (j < n && line[j] == ':') q = j + 1;
    else continue;
    while (q < n && (line[q] == ' ' || line[q] == '\t')) ++q;
    std::size_t start = q;
    if (q < n && (line[q] == '+' || line[q] == '-')) ++q;
    std::size_t int_begin = q;
    while (q < n && digit(line[q])) ++q;
    std::size_t digits = q - int_begin;
    if (q < n && line[q] == '.') {
      std::size_t frac_begin = ++q;
      while (q < n && digit(line[q])) ++q;
      digits += q - frac_begin;
    }
    if (digits == 0) continue;
    if (q < n && (line[q] == 'e' || line[q] == 'E')) {
      std::size_t e = q + 1;
      if (e < n && (line[e] == '+' || line[e] == '-')) ++e;
      std::size_t exp_begin = e;
      while (e < n && digit(line[e])) ++e;
      if (e > exp_begin) q = e;
    }
    if (q < n && !value_end(line[q])) continue;
    double v = std::strtod(line.substr(start, q - start).c_str(), nullptr);
    if (std::isfinite(v)) last = v == 0 ? 0.0 : v;  // an overflow is dropped
  }
  return last;
}

// The scraper (vectorised search, pair prefilter, backwards name check, short-decimal
// fast path) against reference_last() on random lines.
TEST(RuntimeMetrics, AgreesWithAPlainReadingOfTheRuleOnRandomLines) {
  const std::vector<std::string> names = {"lr", "x", "top-1", "loss", "val_loss"};
  auto s = scraper(names);
  const std::vector<std::string> pieces = {"lr", "x", "top-1", "loss", "val_loss", "=", "=", ":",
                                           ":", " ", "\t", ",", "(", ")", "-", "+", ".", "e",
                                           "0", "1", "25", "9", "_", "%", "|", "\"", "a", "1:2",
                                           " loss=", " x: ", "lr = ", "(top-1:", "-1.5e-3",
                                           "+.5", "2E+2", "1e", "val_loss:", "123456789012345",
                                           "0.1000000000000001", "7.", "-"};
  std::mt19937 rng(12345);
  std::vector<std::optional<double>> expected(names.size());
  int matched_lines = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line;
    for (auto n = 1 + rng() % 14; n > 0; --n) line += pieces[rng() % pieces.size()];
    bool any = false;
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (auto v = reference_last(line, names[k])) {
        expected[k] = v;
        any = true;
      }
    }
    matched_lines += any;
    s.feed_line(line);
    for (std::size_t k = 0; k < names.size(); ++k)
      ASSERT_EQ(s.value(k), expected[k]) << "line " << i << ": " << line << " name " << names[k];
  }
  EXPECT_GT(matched_lines, 1000);  // the lines do exercise the rule
}

TEST(RuntimeMetrics, LastMaxAndMinAggregations) {
  auto s = scraper({"a", "b:max", "c:min"});
  for (const char* v : {"3", "-1", "7", "2"}) s.feed(std::string("a=") + v + " b=" + v + " c=" + v + "\n");
  EXPECT_EQ(s.value(0), 2.0);
  EXPECT_EQ(s.value(1), 7.0);
  EXPECT_EQ(s.value(2), -1.0);
}

TEST(RuntimeMetrics, RejectsNanAndInfinityWithOneWarning) {
  auto s = scraper({"loss"});
  s.feed("loss=1\nloss=nan\nloss=inf\nloss=-Infinity\nloss=1e999\n");
  EXPECT_EQ(s.value(0), 1.0);
  auto w = s.take_warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "metric 'loss' value 'nan' ignored: not a finite number");
}

TEST(RuntimeMetrics, LinesSplitAcrossFeedsAndLongLines) {
  auto s = scraper({"acc"});
  std::string text = "epoch 1 acc=0.5\nepoch 2 acc=0.75\nepoch 3 ac";
  for (char c : text) s.feed(std::string_view(&c, 1));
  EXPECT_EQ(s.value(0), 0.75);
  s.feed("c=0.875");
  EXPECT_EQ(s.value(0), 0.75);  // the line is not finished yet
  s.finish();
  EXPECT_EQ(s.value(0), 0.875);
  // Separators inside 16-byte blocks and at their edges.
  std::string padded = std::string(15, 'x') + " acc=1\n" + std::string(31, ' ') + "acc:2\n";
  s.feed(padded);
  EXPECT_EQ(s.value(0), 2.0);
}

// Issue 25 (F-A1): a progress bar redrawn with '\r' only is one "line" of many MiB. It used
// to be scanned in 1 MiB pieces cut anywhere, so `loss=12.5` cut after `loss=1` was read as
// 1. Whatever the pieces, the values are those of one scan of the whole log.
std::string progress_bar_log(std::size_t cut) {
  std::string bar = " 41%|####      | 41/100 [00:04<00:05, it/s=9.8]\r";
  std::string metric = "loss=12.5";
  std::string pad;
  while (pad.size() < cut - 6) pad += bar;
  pad.resize(cut - 6 - 1);
  return pad + " " + metric + " done\r\n";  // "loss=1" ends at byte `cut`
}

std::vector<std::optional<double>> scrape_in_pieces(const std::string& log, std::size_t piece) {
  auto s = scraper({"loss:min", "it/s:max", "acc"});
  for (std::size_t i = 0; i < log.size(); i += piece) s.feed(std::string_view(log).substr(i, piece));
  s.finish();
  return {s.value(0), s.value(1), s.value(2)};
}

TEST(RuntimeMetrics, ALongLineGivesTheSameValuesHoweverItIsCut) {
  for (std::size_t cut : {std::size_t{17} * 65536, std::size_t{1} << 20, (std::size_t{1} << 20) + 1}) {
    std::string log = progress_bar_log(cut) + "acc=0.5\n" + progress_bar_log(cut / 2);
    auto whole = scraper({"loss:min", "it/s:max", "acc"});
    whole.feed_lines(log);  // one scan: the reference
    std::vector<std::optional<double>> expected{whole.value(0), whole.value(1), whole.value(2)};
    ASSERT_EQ(expected[0], 12.5);
    ASSERT_EQ(expected[1], 9.8);
    ASSERT_EQ(expected[2], 0.5);
    for (std::size_t piece : {std::size_t{1} << 16, std::size_t{4096}, std::size_t{65537}, std::size_t{1000003},
                              (std::size_t{1} << 20) + 7, log.size()})
      EXPECT_EQ(scrape_in_pieces(log, piece), expected) << "cut " << cut << ", pieces of " << piece;
  }
  // Random pieces too.
  std::string log = progress_bar_log(std::size_t{3} << 20);
  std::mt19937 random(25);
  for (int round = 0; round < 5; ++round) {
    auto s = scraper({"loss:min", "it/s:max", "acc"});
    for (std::size_t i = 0; i < log.size();) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, 300000)(random);
      s.feed(std::string_view(log).substr(i, n));
      i += n;
    }
    s.finish();
    EXPECT_EQ(s.value(0), 12.5);
  }
}

TEST(RuntimeMetrics, WritesKfpMetricsFileAtomically) {
  auto s = scraper({"images/sec", "never", "acc:PERCENTAGE"});
  s.feed("images/sec=1.5e3 acc=0.5\n");
  EXPECT_EQ(s.metrics_json(),
            R"({"metrics":[{"format":"RAW","name":"images-sec","numberValue":1500.0},)"
            R"({"format":"PERCENTAGE","name":"acc","numberValue":0.5}]})" "\n");
  namespace fs = std::filesystem;
  auto dir = fs::temp_directory_path() / ("pipec-metrics-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string error;
  auto path = (dir / "a" / "metrics.json").string();
  ASSERT_TRUE(fileio::write_file_atomically(path, s.metrics_json(), error, fileio::Folders::Create)) << error;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), s.metrics_json());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "a"), fs::directory_iterator()), 1);
  EXPECT_FALSE(fileio::write_file_atomically("/proc/nonexistent/x.json", "{}", error, fileio::Folders::Create));
  EXPECT_NE(error.find("cannot write '/proc/nonexistent/x.json'"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipec::runtime
