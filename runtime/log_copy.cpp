// LogCopier: kubelet log lines -> cursor -> stdout and the metric scraper.
// Every byte the training prints passes here, so the work per line is a search for the
// newline, the cursor's timestamp check and one copy into a batch; the batch (one piece of
// the stream) is written and scanned for metrics at once.
#include "runtime/log_copy.hpp"

#include <cstring>
#include <ostream>

#include "input/limits.hpp"
#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"

namespace pipec::runtime {

namespace {
constexpr std::size_t kMaxBatch = 256 << 10;  // write at the latest when this much is gathered
}  // namespace

LogCopier::LogCopier(LogCursor& cursor, std::ostream& out, MetricScraper& scraper)
    : cursor_(cursor), out_(out), scraper_(scraper) {
  cursor_.begin_read();
}

LogCopier::~LogCopier() { flush_batch(); }

void LogCopier::flush() { flush_batch(); }

// `raw` is one line of the stream without its '\n'. Everything after the timestamp is
// copied as it is, a '\r' included (a CRLF line, a progress bar's redraws).
void LogCopier::copy_line(std::string_view raw) {
  auto line = cursor_.accept(raw);
  if (!line) return;  // printed before this reconnect
  batch_.append(*line);
  batch_.push_back('\n');
}

void LogCopier::flush_batch() {
  if (!batch_.empty()) {
    out_.write(batch_.data(), static_cast<std::streamsize>(batch_.size()));
    scraper_.feed_lines(batch_);
    batch_.clear();
  }
  out_.flush();
}

void LogCopier::feed(std::string_view data) {
  const char* p = data.data();
  const char* end = p + data.size();
  if (in_long_line_) {  // the rest of a line too long to hold
    const auto* nl = static_cast<const char*>(std::memchr(p, '\n', data.size()));
    if (!nl) {
      long_line(data);
      return;
    }
    long_line(std::string_view(p, static_cast<std::size_t>(nl + 1 - p)));
    in_long_line_ = false;
    p = nl + 1;
  } else if (!partial_.empty()) {  // the line the last piece ended in
    const auto* nl = static_cast<const char*>(std::memchr(p, '\n', data.size()));
    if (!nl) {
      partial_.append(data);
      if (partial_.size() > input::kMaxLogLineBytes) {
        // The cursor decides on the line's timestamp, which is in what is held.
        flush_batch();
        auto line = cursor_.accept(partial_);
        long_line_shown_ = line.has_value();
        in_long_line_ = true;
        if (line) long_line(*line);
        partial_.clear();
      }
      return;
    }
    partial_.append(p, static_cast<std::size_t>(nl - p));
    copy_line(partial_);
    partial_.clear();
    p = nl + 1;
  }
  while (p < end) {
    const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    if (!nl) break;
    copy_line(std::string_view(p, static_cast<std::size_t>(nl - p)));
    p = nl + 1;
  }
  partial_.assign(p, static_cast<std::size_t>(end - p));
  if (batch_.size() >= kMaxBatch) flush_batch();
}

void LogCopier::long_line(std::string_view piece) {
  if (!long_line_shown_) return;
  out_.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  out_.flush();
  scraper_.feed(piece);
}

void LogCopier::finish() {
  if (in_long_line_) {  // it gets its '\n' too
    long_line("\n");
    in_long_line_ = false;
  }
  if (!partial_.empty()) {  // a last line without '\n' gets one (docs/runtime.md)
    copy_line(partial_);
    partial_.clear();
  }
  flush_batch();
}

}  // namespace pipec::runtime
