#pragma once
// A metric's series: every value the scraper reads, bounded by a deterministic, streaming
// thinning that keeps the first, the last, the minimum and the maximum points exactly.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace pipec::runtime {

/// One value of a metric as read: `order` counts the metric's values from 0 in the order
/// of the log.
struct SeriesPoint {
  std::uint64_t order = 0;
  double value = 0;
  std::int64_t step = -1;   // -1: the line said none
  std::int64_t epoch = -1;
};

/// The step and the epoch a log line says (-1 where it says none): the first whole token
/// `global_step`, else `step`, and `epoch` (also capitalised), each followed by optional
/// blanks, an optional `=` or `:`, optional blanks and an unsigned integer of at most 18
/// digits not followed by a digit or `.` (`step=12`, `global_step: 12`, `Epoch 3/10`).
struct LineSteps {
  std::int64_t step = -1;
  std::int64_t epoch = -1;
};
LineSteps read_line_steps(std::string_view line);

/// Keeps every point while it holds at most `capacity` of them. When a point would make
/// `capacity + 1`, the stride `k` (first 1) doubles and only the points whose order is a
/// multiple of `k` stay; later points are kept when their order is a multiple of `k`. The
/// first point (order 0), the last point, and the first point of the least and of the
/// greatest value are always kept as well, so `points()` holds at most `capacity + 3`.
class MetricSeries {
 public:
  static constexpr std::size_t kDefaultCapacity = 1024;
  explicit MetricSeries(std::size_t capacity = kDefaultCapacity);

  void add(double value, std::int64_t step = -1, std::int64_t epoch = -1);
  /// Whether add(value) would keep the point beyond it being the last one (the grid, the
  /// first point, a new least or greatest value): the scraper reads a line's step and epoch
  /// only for such a point, and for the last point through set_last_steps().
  bool keeps(double value) const {
    return count_ == 0 || (count_ & (stride_ - 1)) == 0 || value < min_.value || value > max_.value;
  }
  /// add(value) for a value keeps() says false of: it only becomes the last point.
  void add_last(double value) { last_ = SeriesPoint{count_++, value, -1, -1}; }
  /// Sets the step and epoch of the last point added (read after add()).
  void set_last_steps(std::int64_t step, std::int64_t epoch) {
    last_.step = step;
    last_.epoch = epoch;
  }
  /// The kept points, sorted by order, each once.
  std::vector<SeriesPoint> points() const;
  /// How many values were added.
  std::uint64_t count() const { return count_; }
  std::uint64_t stride() const { return stride_; }

 private:
  std::size_t capacity_;
  std::uint64_t stride_ = 1;
  std::uint64_t count_ = 0;
  std::vector<SeriesPoint> grid_;  // the points whose order is a multiple of stride_
  SeriesPoint min_, max_, last_;
};

}  // namespace pipec::runtime
