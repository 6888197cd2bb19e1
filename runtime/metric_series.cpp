#include "runtime/metric_series.hpp"

#include <algorithm>
#include <string_view>

#include "rules/metrics.hpp"

namespace pipec::runtime {

MetricSeries::MetricSeries(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 2)) {}

namespace {

// The integer after a step word ending at `at`: blanks, an optional '=' or ':', blanks,
// then 1 to 18 digits not followed by a digit or '.'.
std::int64_t number_after(std::string_view line, std::size_t at) {
  auto blanks = [&] {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
  };
  blanks();
  if (at < line.size() && (line[at] == '=' || line[at] == ':')) ++at;
  blanks();
  std::int64_t n = 0;
  std::size_t digits = 0;
  for (; at < line.size() && line[at] >= '0' && line[at] <= '9'; ++at, ++digits) {
    if (digits == 18) return -1;
    n = n * 10 + (line[at] - '0');
  }
  if (digits == 0 || (at < line.size() && line[at] == '.')) return -1;
  return n;
}

bool starts_token(std::string_view line, std::size_t at) {
  return at == 0 || rules::kMetricNameBoundary[static_cast<unsigned char>(line[at - 1])];
}

}  // namespace

LineSteps read_line_steps(std::string_view line) {
  LineSteps out;
  std::int64_t plain = -1;
  for (std::size_t at = 0; (at = line.find("tep", at)) != std::string_view::npos; at += 3) {
    if (at == 0 || (line[at - 1] != 's' && line[at - 1] != 'S')) continue;
    std::size_t word = at - 1;
    bool global = word >= 7 && (line.substr(word - 7, 7) == "global_" || line.substr(word - 7, 7) == "Global_");
    if (global) word -= 7;
    if (!starts_token(line, word)) continue;
    std::int64_t n = number_after(line, at + 3);
    if (n < 0) continue;
    if (global && out.step < 0) out.step = n;
    if (!global && plain < 0) plain = n;
  }
  if (out.step < 0) out.step = plain;
  for (std::size_t at = 0; (at = line.find("poch", at)) != std::string_view::npos; at += 4) {
    if (at == 0 || (line[at - 1] != 'e' && line[at - 1] != 'E') || !starts_token(line, at - 1)) continue;
    if (std::int64_t n = number_after(line, at + 4); n >= 0) {
      out.epoch = n;
      break;
    }
  }
  return out;
}

void MetricSeries::add(double value, std::int64_t step, std::int64_t epoch) {
  SeriesPoint p{count_++, value, step, epoch};
  if (p.order == 0) min_ = max_ = p;
  if (value < min_.value) min_ = p;
  if (value > max_.value) max_ = p;
  last_ = p;
  if ((p.order & (stride_ - 1)) != 0) return;  // the stride is a power of two
  if (grid_.size() == capacity_) {
    stride_ *= 2;
    std::erase_if(grid_, [&](const SeriesPoint& q) { return (q.order & (stride_ - 1)) != 0; });
    if ((p.order & (stride_ - 1)) != 0) return;
  }
  grid_.push_back(p);
}

std::vector<SeriesPoint> MetricSeries::points() const {
  std::vector<SeriesPoint> out = grid_;
  if (count_ == 0) return out;
  for (const auto& p : {min_, max_, last_}) {
    auto at = std::lower_bound(out.begin(), out.end(), p.order,
                               [](const SeriesPoint& q, std::uint64_t o) { return q.order < o; });
    if (at == out.end() || at->order != p.order) out.insert(at, p);
  }
  return out;
}

}  // namespace pipec::runtime
