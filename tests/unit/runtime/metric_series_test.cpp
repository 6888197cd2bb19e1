#include "runtime/metric_series.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace pipec::runtime {
namespace {

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-100, 100);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// The expected orders, computed independently: the multiples of the stride (the least
// power of two that leaves at most `capacity` of them), the first least, the first
// greatest, the last.
std::set<std::uint64_t> expected_orders(const std::vector<double>& v, std::size_t capacity) {
  std::uint64_t stride = 1;
  while ((v.size() + stride - 1) / stride > capacity) stride *= 2;
  std::set<std::uint64_t> out;
  for (std::uint64_t i = 0; i < v.size(); i += stride) out.insert(i);
  out.insert(static_cast<std::uint64_t>(std::min_element(v.begin(), v.end()) - v.begin()));
  out.insert(static_cast<std::uint64_t>(std::max_element(v.begin(), v.end()) - v.begin()));
  out.insert(v.size() - 1);
  return out;
}

TEST(MetricSeries, ExactUpToItsCapacity) {
  MetricSeries s(8);
  auto v = random_values(8, 1);
  for (double x : v) s.add(x);
  auto p = s.points();
  ASSERT_EQ(p.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(p[i].order, i);
    EXPECT_EQ(p[i].value, v[i]);
  }
  EXPECT_EQ(s.stride(), 1u);
}

TEST(MetricSeries, ThinnedKeepsFirstLastMinMaxSortedAndBounded) {
  for (std::size_t capacity : {2u, 3u, 7u, 8u, 1024u}) {
    for (std::size_t n : {1u, 2u, 9u, 100u, 1025u, 5000u, 100003u}) {
      auto v = random_values(n, static_cast<unsigned>(n * 31 + capacity));
      MetricSeries s(capacity);
      for (double x : v) s.add(x);
      auto p = s.points();
      EXPECT_LE(p.size(), capacity + 3);
      std::set<std::uint64_t> got;
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (i > 0) {
          EXPECT_LT(p[i - 1].order, p[i].order);
        }
        EXPECT_EQ(p[i].value, v[p[i].order]);  // each point exact
        got.insert(p[i].order);
      }
      EXPECT_EQ(got, expected_orders(v, capacity)) << "capacity " << capacity << ", n " << n;
      EXPECT_EQ(p.front().order, 0u);
      EXPECT_EQ(p.back().order, n - 1);
      EXPECT_EQ(s.count(), n);
    }
  }
}

TEST(MetricSeries, Deterministic) {
  auto v = random_values(50000, 7);
  MetricSeries a(100), b(100);
  for (double x : v) a.add(x), b.add(x);
  auto pa = a.points(), pb = b.points();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].order, pb[i].order);
    EXPECT_EQ(pa[i].value, pb[i].value);
  }
}

TEST(MetricSeries, TheFirstOfEqualExtremesIsKept) {
  MetricSeries s(2);
  for (double x : {5.0, 1.0, 9.0, 1.0, 9.0, 3.0, 4.0, 2.0, 6.0}) s.add(x);
  std::vector<std::uint64_t> orders;
  for (const auto& p : s.points()) orders.push_back(p.order);
  // stride 8 keeps 0 and 8; the least (1.0) first at 1, the greatest (9.0) first at 2.
  EXPECT_EQ(orders, (std::vector<std::uint64_t>{0, 1, 2, 8}));
}

}  // namespace
}  // namespace pipec::runtime
