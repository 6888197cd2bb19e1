// LogCopier: kubelet log lines -> cursor -> stdout and the metric scraper.
#include "runtime/log_copy.hpp"

#include <ostream>

#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"

namespace pipec::runtime {

LogCopier::LogCopier(LogCursor& cursor, std::ostream& out, MetricScraper& scraper)
    : cursor_(cursor), out_(out), scraper_(scraper) {
  cursor_.begin_read();
}

void LogCopier::emit_line(std::string_view raw) {
  auto line = cursor_.accept(raw);
  if (!line) return;  // printed before this reconnect
  out_ << *line << '\n';
  scraper_.feed_line(*line);
}

void LogCopier::feed(std::string_view data) {
  partial_.append(data);
  std::size_t start = 0, nl;
  while ((nl = partial_.find('\n', start)) != std::string::npos) {
    std::string_view line(partial_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    emit_line(line);
    start = nl + 1;
  }
  partial_.erase(0, start);
  out_.flush();
}

void LogCopier::finish() {
  if (!partial_.empty()) {
    emit_line(partial_);
    partial_.clear();
  }
  out_.flush();
}

}  // namespace pipec::runtime
