#include "runtime/metric_series.hpp"

#include <algorithm>

namespace pipec::runtime {

MetricSeries::MetricSeries(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 2)) {}

void MetricSeries::add(double value) {
  SeriesPoint p{count_++, value};
  if (p.order == 0) min_ = max_ = p;
  if (value < min_.value) min_ = p;
  if (value > max_.value) max_ = p;
  last_ = p;
  if (p.order % stride_ != 0) return;
  if (grid_.size() == capacity_) {
    stride_ *= 2;
    std::erase_if(grid_, [&](const SeriesPoint& q) { return q.order % stride_ != 0; });
    if (p.order % stride_ != 0) return;
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
