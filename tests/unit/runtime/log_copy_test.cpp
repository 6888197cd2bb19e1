// LogCopier: the launcher's log path, fed in pieces of every size.
#include "runtime/log_copy.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"

namespace pipec::runtime {

using rules::MetricSpec;
using rules::parse_metric_spec;
namespace {

std::vector<MetricSpec> specs(const std::vector<std::string>& names) {
  std::vector<MetricSpec> out;
  for (const auto& n : names) {
    std::string error;
    out.push_back(*parse_metric_spec(n, error));
  }
  return out;
}

struct Copied {
  std::string out, metrics;
};

// One read of `stream`, handed over in pieces of `piece` bytes (0: all at once).
Copied copy(LogCursor& cursor, const std::string& stream, std::size_t piece,
            const std::vector<std::string>& metrics = {"loss", "acc:max", "Final Cost"},
            bool complete = true) {
  std::ostringstream out;
  MetricScraper scraper(specs(metrics));
  LogCopier copier(cursor, out, scraper);
  if (piece == 0) piece = stream.size() + 1;
  for (std::size_t at = 0; at < stream.size(); at += piece) copier.feed(std::string_view(stream).substr(at, piece));
  if (complete) copier.finish();
  else copier.flush();  // an interrupted read: its complete lines
  scraper.finish();
  return {out.str(), scraper.metrics_json()};
}

const std::string kStream =
    "2026-11-22T19:30:00.1Z epoch 1 loss=0.9 acc: 0.5\n"
    "2026-11-22T19:30:00.2Z (Final Cost: 3.5) loss = 0.8\n"
    "2026-11-22T19:30:01Z \n"
    "2026-11-22T23:59:59.999999999Z acc=0.75 loss=0.7\n"
    "2026-11-23T00:00:00.5Z loss=0.6, acc=0.25\n"
    "2026-11-23T00:00:00.6Z done";

TEST(RuntimeLogCopy, PiecesOfAnySizeCopyTheSameLinesAndMetrics) {
  LogCursor whole_cursor;
  Copied whole = copy(whole_cursor, kStream, 0);
  EXPECT_EQ(whole.out,
            "epoch 1 loss=0.9 acc: 0.5\n(Final Cost: 3.5) loss = 0.8\n\nacc=0.75 loss=0.7\n"
            "loss=0.6, acc=0.25\ndone\n");
  EXPECT_EQ(whole.metrics,
            R"({"metrics":[{"format":"RAW","name":"loss","numberValue":0.6},)"
            R"({"format":"RAW","name":"acc","numberValue":0.75},)"
            R"({"format":"RAW","name":"Final-Cost","numberValue":3.5}]})"
            "\n");
  for (std::size_t piece = 1; piece <= kStream.size(); ++piece) {
    LogCursor cursor;
    Copied c = copy(cursor, kStream, piece);
    EXPECT_EQ(c.out, whole.out) << piece;
    EXPECT_EQ(c.metrics, whole.metrics) << piece;
  }
}

// Scanning a piece's lines at once finds what a scan line by line finds: names and values
// never run across a newline.
TEST(RuntimeLogCopy, OneScanOfManyLinesEqualsOneScanPerLine) {
  const std::string lines[] = {"loss", "=0.5", "x loss", ": 1", "loss=", "2", "acc", ":3 loss:4", "Final", "Cost: 5"};
  std::string stream;
  for (const auto& l : lines) stream += "2026-11-22T19:30:00.1Z " + l + "\n";
  LogCursor cursor;
  Copied c = copy(cursor, stream, 0);
  MetricScraper per_line(specs({"loss", "acc:max", "Final Cost"}));
  for (const auto& l : lines) per_line.feed_line(l);
  EXPECT_EQ(c.metrics, per_line.metrics_json());
  EXPECT_EQ(c.metrics, R"({"metrics":[{"format":"RAW","name":"loss","numberValue":4.0}]})" "\n");
}

// A second read from the cursor's sinceTime prints only what is new, and an interrupted
// read (no finish()) leaves its unterminated line to the next read.
TEST(RuntimeLogCopy, AReadAfterADropRepeatsNothing) {
  LogCursor cursor;
  auto cut = kStream.find("2026-11-22T23:59");
  Copied first = copy(cursor, kStream.substr(0, cut + 20), 7, {"loss"}, /*complete=*/false);
  EXPECT_EQ(first.out, "epoch 1 loss=0.9 acc: 0.5\n(Final Cost: 3.5) loss = 0.8\n\n");
  EXPECT_EQ(cursor.since_time(), "2026-11-22T19:30:01Z");
  Copied second = copy(cursor, kStream.substr(kStream.find("2026-11-22T19:30:01Z")), 5, {"loss"});
  EXPECT_EQ(second.out, "acc=0.75 loss=0.7\nloss=0.6, acc=0.25\ndone\n");
}

// The lines of many pieces go out in one write when the reader waits (flush), or once
// 256 KiB are gathered: not one write per 16 KiB piece.
TEST(RuntimeLogCopy, PiecesAreGatheredUntilTheReaderWaits) {
  struct CountingBuf : std::stringbuf {
    int writes = 0;
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      ++writes;
      return std::stringbuf::xsputn(s, n);
    }
  } buf;
  std::ostream out(&buf);
  LogCursor cursor;
  MetricScraper scraper(specs({"loss"}));
  LogCopier copier(cursor, out, scraper);
  std::string line = "2026-11-22T19:30:00.1Z loss=0.5 " + std::string(60, 'x') + "\n";
  std::string piece;
  while (piece.size() < (16u << 10)) piece += line;
  for (int i = 0; i < 4; ++i) copier.feed(piece);
  EXPECT_EQ(buf.writes, 0);  // gathered
  copier.flush();
  EXPECT_EQ(buf.writes, 1);
  // Each piece prints its lines without their 23-byte timestamps: written whenever 256
  // KiB of them are gathered, then the rest at the end.
  const std::size_t printed_per_piece = piece.size() - piece.size() / line.size() * 23;
  const std::size_t pieces_per_write = ((256u << 10) + printed_per_piece - 1) / printed_per_piece;
  for (int i = 0; i < 40; ++i) copier.feed(piece);
  EXPECT_EQ(buf.writes, 1 + static_cast<int>(40 / pieces_per_write));
  EXPECT_GE(buf.writes, 2);
  copier.finish();
  EXPECT_EQ(buf.writes, 2 + static_cast<int>(40 / pieces_per_write));
  std::string printed = buf.str();
  EXPECT_EQ(static_cast<std::size_t>(std::count(printed.begin(), printed.end(), '\n')), 44 * (piece.size() / line.size()));
}

// Carriage returns reach stdout as the pod printed them; for metrics a '\r' separates like
// a newline, so every redraw of a tqdm-style progress bar is read.
TEST(RuntimeLogCopy, CarriageReturnsAreCopiedAndSeparateRedraws) {
  const std::string bar =
      "\r  0%|          | 0/3 [00:00<?, ?it/s]"
      "\r 33%|###       | 1/3 [00:01<00:02, 1.00it/s, loss=0.9, acc=0.5]"
      "\r 67%|######    | 2/3 [00:02<00:01, 1.00it/s, loss=0.4, acc=0.75]"
      "\rloss=0.6\racc:0.7\r";
  std::string stream = "2026-11-22T19:30:00.1Z Windows line\r\n"
                       "2026-11-22T19:30:00.2Z " + bar + "\n"
                       "2026-11-22T19:30:00.3Z \r\n"
                       "2026-11-22T19:30:00.4Z last\r";
  for (std::size_t piece : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
    LogCursor cursor;
    Copied c = copy(cursor, stream, piece, {"loss", "acc:max", "loss:min"});
    EXPECT_EQ(c.out, "Windows line\r\n" + bar + "\n\r\nlast\r\n") << piece;
  }
  // loss (last) 0.6, acc (max) 0.75, and a second spec of the same name is refused by the
  // launcher, so min is checked on its own.
  LogCursor cursor;
  EXPECT_EQ(copy(cursor, stream, 0, {"loss", "acc:max"}).metrics,
            R"({"metrics":[{"format":"RAW","name":"loss","numberValue":0.6},)"
            R"({"format":"RAW","name":"acc","numberValue":0.75}]})"
            "\n");
  LogCursor again;
  EXPECT_EQ(copy(again, stream, 0, {"loss:min"}).metrics,
            R"({"metrics":[{"format":"RAW","name":"loss","numberValue":0.4}]})" "\n");
}

}  // namespace
}  // namespace pipec::runtime

namespace pipec::runtime {
namespace {

// Issue 25: a line that never ends (a progress bar redrawn with '\r' for hours) was held
// whole until its '\n'. Past 1 MiB it now goes out as it comes: the same bytes, the same
// metrics, and memory bounded.
TEST(RuntimeLogCopy, ALineLongerThanTheBoundGoesOutAsItComes) {
  std::string bar;
  while (bar.size() < (std::size_t{3} << 20)) bar += " 41%|####  | it/s=9.8 loss=1.25\r";
  std::string stream = "2026-11-22T19:30:00.1Z start\n2026-11-22T19:30:00.2Z" + bar +
                       " loss=0.5\n2026-11-22T19:30:00.3Z acc=0.9\n";
  LogCursor whole_cursor;
  Copied whole = copy(whole_cursor, stream, 0);
  EXPECT_EQ(whole.out, "start\n" + bar.substr(1) + " loss=0.5\nacc=0.9\n");  // without the space after the time
  for (std::size_t piece : {std::size_t{16384}, std::size_t{65536}, std::size_t{1000003}}) {
    LogCursor cursor;
    Copied pieces = copy(cursor, stream, piece);
    EXPECT_EQ(pieces.out, whole.out) << piece;
    EXPECT_EQ(pieces.metrics, whole.metrics) << piece;
  }

  // Before the line ends, what passed the bound is already out.
  std::ostringstream out;
  MetricScraper scraper(specs({"loss"}));
  LogCursor cursor;
  LogCopier copier(cursor, out, scraper);
  std::string unfinished = stream.substr(0, stream.find(" loss=0.5"));
  for (std::size_t at = 0; at < unfinished.size(); at += 16384)
    copier.feed(std::string_view(unfinished).substr(at, 16384));
  EXPECT_GT(out.str().size(), std::size_t{2} << 20);
}

// A line printed before a reconnect is not printed again, however long it is.
TEST(RuntimeLogCopy, ALongLineSeenBeforeIsSkippedWhole) {
  std::string bar(std::size_t{2} << 20, '#');
  std::string stream = "2026-11-22T19:30:00.1Z " + bar + "\n2026-11-22T19:30:00.2Z after\n";
  LogCursor cursor;
  Copied first = copy(cursor, stream, 65536);
  EXPECT_EQ(first.out, bar + "\nafter\n");
  Copied again = copy(cursor, stream + "2026-11-22T19:30:00.3Z new\n", 65536);
  EXPECT_EQ(again.out, "new\n");
}

}  // namespace
}  // namespace pipec::runtime
