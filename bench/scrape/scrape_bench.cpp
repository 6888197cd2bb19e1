// Metric-scraper and log-streaming benchmark (not run by ctest; see run.sh).
//   scrape_bench generate PATH MIB [PCT] [kubelet]
//                         writes a synthetic training log of MIB MiB; PCT (default 50) of
//                         its lines hold metrics; `kubelet` prefixes each line with the
//                         RFC 3339 timestamp the kubelet adds (timestamps=true)
//   scrape_bench scan PATH      scrapes a log with 10 metrics, reports MB/s and peak RSS
//   scrape_bench stream PATH    the launcher's whole log path on a kubelet log (LogCopier:
//                               timestamps, cursor, copy to stdout, metric scan), read in
//                               16 KiB pieces as libcurl hands them over; the copy goes to
//                               stdout (run.sh sends it to /dev/null), the report to stderr
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <iostream>

#include "runtime/log_copy.hpp"
#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"

namespace {

const std::vector<std::string> kNames = {"images/sec", "loss",      "accuracy",     "lr",
                                         "top-1",      "top-5",     "val_loss",     "val_accuracy",
                                         "grad_norm",  "throughput"};

struct Rng {
  std::uint64_t s = 0x9e3779b97f4a7c15ull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

int generate(const char* path, long mib, int metric_percent, bool kubelet) {
  std::FILE* f = std::fopen(path, "wb");
  if (!f) return std::perror(path), 1;
  Rng rng;
  std::string buf;
  const std::size_t total = static_cast<std::size_t>(mib) << 20;
  std::size_t written = 0;
  long step = 0;
  while (written < total) {
    buf.clear();
    while (buf.size() < (1u << 20)) {
      auto r = rng.next();
      ++step;
      if (kubelet) {  // ten lines a second, increasing; Go's RFC3339Nano drops trailing zeros
        std::time_t t = 1795375801 + step / 10;
        std::tm tm{};
        gmtime_r(&t, &tm);
        std::string frac = fmt::format("{:09}", (step % 10) * 100000000 + (r >> 32) % 100000000);
        while (frac.size() > 1 && frac.back() == '0') frac.pop_back();
        buf += fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{}Z ", tm.tm_year + 1900, tm.tm_mon + 1,
                           tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
      }
      // A timestamped logger prefix (':' that are not metrics), then one of several shapes.
      buf += fmt::format("2026-11-22 19:{:02}:{:02}.{:06}: I trainer.py:{}] ", (step / 60) % 60,
                         step % 60, r % 1000000, 100 + r % 300);
      // Metric lines: shapes 0-4 (50 %); PCT < 50 turns some of them into noise.
      auto shape = r % 10;
      if (shape < 5 && static_cast<int>((r >> 40) % 50) >= metric_percent) shape = 5;
      switch (shape) {
        case 0: case 1: case 2:
          buf += fmt::format("step {} images/sec: {:.1f} loss={:.4f} lr={:.1e}\n", step,
                             1000.0 + (r >> 20) % 500, ((r >> 8) % 10000) / 1e4, 1e-4);
          break;
        case 3:
          buf += fmt::format("epoch {} accuracy={:.4f} top-1: {:.3f} top-5: {:.3f} val_loss=-{:.3e}\n",
                             step / 1000, ((r >> 4) % 1000) / 1e3, ((r >> 9) % 1000) / 1e3,
                             ((r >> 13) % 1000) / 1e3, ((r >> 17) % 1000) / 1e3);
          break;
        case 4:
          buf += fmt::format("eval val_accuracy: {:.4f}, grad_norm={:.3f}, throughput={}\n",
                             ((r >> 5) % 1000) / 1e3, ((r >> 7) % 10000) / 1e2, (r >> 11) % 100000);
          break;
        default:
          buf += fmt::format("worker {} allreduce bucket={} bytes, queue depth {}, "
                             "nccl ring: ok (host=node-{}:9999)\n",
                             r % 8, (r >> 3) % 65536, (r >> 21) % 32, (r >> 27) % 16);
      }
    }
    if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) return std::perror(path), 1;
    written += buf.size();
  }
  return std::fclose(f) == 0 ? 0 : 1;
}

std::vector<pipec::rules::MetricSpec> bench_specs() {
  std::vector<pipec::rules::MetricSpec> specs;
  for (const auto& n : kNames) {
    std::string error;
    specs.push_back(*pipec::rules::parse_metric_spec(n, error));
  }
  return specs;
}

void report(std::FILE* to, std::size_t bytes, double work_s, double total_s, const char* what,
            const std::string& metrics) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::fprintf(to, "bytes: %zu\n", bytes);
  std::fprintf(to, "%s: %.3f s, %.0f MB/s\n", what, work_s, bytes / 1e6 / work_s);
  std::fprintf(to, "with reads: %.3f s, %.0f MB/s\n", total_s, bytes / 1e6 / total_s);
  std::fprintf(to, "peak RSS: %ld KiB\n", usage.ru_maxrss);
  std::fprintf(to, "metrics: %s", metrics.c_str());
}

// Reads `path` in pieces of `piece` bytes and hands each to `consume`; returns the bytes
// read and the time spent in `consume`.
template <typename Consume>
std::size_t read_pieces(int fd, std::size_t piece, std::chrono::nanoseconds& busy, Consume&& consume) {
  std::vector<char> buf(piece);
  std::size_t bytes = 0;
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    auto t0 = std::chrono::steady_clock::now();
    consume(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    busy += std::chrono::steady_clock::now() - t0;
    bytes += static_cast<std::size_t>(n);
  }
  return bytes;
}

int scan(const char* path) {
  pipec::runtime::MetricScraper scraper(bench_specs());
  int fd = ::open(path, O_RDONLY);
  if (fd < 0) return std::perror(path), 1;
  std::chrono::nanoseconds in_scraper{0};
  auto begin = std::chrono::steady_clock::now();
  auto bytes = read_pieces(fd, 1 << 20, in_scraper, [&](std::string_view data) { scraper.feed(data); });
  scraper.finish();
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ::close(fd);
  report(stdout, bytes, std::chrono::duration<double>(in_scraper).count(), total_s, "scraper",
         scraper.metrics_json());
  // The series the scan recorded (metric-series.json): values read, points kept, stride.
  std::string series;
  for (std::size_t i = 0; i < scraper.specs().size(); ++i) {
    const auto& s = scraper.series(i);
    series += fmt::format(" {}={}/{}/{}", scraper.specs()[i].reported, s.count(), s.points().size(), s.stride());
  }
  std::printf("series (values/points/stride):%s\n", series.c_str());
  return 0;
}

int stream(const char* path) {
  pipec::runtime::MetricScraper scraper(bench_specs());
  pipec::runtime::LogCursor cursor;
  int fd = ::open(path, O_RDONLY);
  if (fd < 0) return std::perror(path), 1;
  std::chrono::nanoseconds busy{0};
  auto begin = std::chrono::steady_clock::now();
  std::size_t bytes = 0;
  {
    pipec::runtime::LogCopier copier(cursor, std::cout, scraper);
    bytes = read_pieces(fd, 16 << 10, busy, [&](std::string_view data) {
      copier.feed(data);
      (void)scraper.take_warnings();
    });
    copier.finish();
  }
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  ::close(fd);
  scraper.finish();
  report(stderr, bytes, std::chrono::duration<double>(busy).count(), total_s, "stream",
         scraper.metrics_json());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && argc <= 6 && std::string(argv[1]) == "generate") {
    int pct = argc >= 5 ? std::atoi(argv[4]) : 50;
    bool kubelet = argc == 6 && std::string(argv[5]) == "kubelet";
    return generate(argv[2], std::atol(argv[3]), pct, kubelet);
  }
  if (argc == 3 && std::string(argv[1]) == "scan") return scan(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "stream") return stream(argv[2]);
  std::fprintf(stderr, "usage: scrape_bench generate PATH MIB [PCT] [kubelet] | scan PATH | stream PATH\n");
  return 2;
}
