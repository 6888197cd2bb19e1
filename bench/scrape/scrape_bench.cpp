// Metric-scraper benchmark (not run by ctest; see run.sh).
//   scrape_bench generate PATH MIB   writes a synthetic training log of MIB MiB
//   scrape_bench scan PATH           scrapes it with 10 metrics, reports MB/s and peak RSS
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

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

int generate(const char* path, long mib) {
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
      // A timestamped logger prefix (':' that are not metrics), then one of several shapes.
      buf += fmt::format("2026-11-22 19:{:02}:{:02}.{:06}: I trainer.py:{}] ", (step / 60) % 60,
                         step % 60, r % 1000000, 100 + r % 300);
      switch (r % 10) {
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

int scan(const char* path) {
  std::vector<pipec::runtime::MetricSpec> specs;
  for (const auto& n : kNames) {
    std::string error;
    specs.push_back(*pipec::runtime::parse_metric_spec(n, error));
  }
  pipec::runtime::MetricScraper scraper(std::move(specs));
  int fd = ::open(path, O_RDONLY);
  if (fd < 0) return std::perror(path), 1;
  std::vector<char> buf(1 << 20);
  std::size_t bytes = 0;
  std::chrono::nanoseconds in_scraper{0};
  auto begin = std::chrono::steady_clock::now();
  while (true) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    auto t0 = std::chrono::steady_clock::now();
    scraper.feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    in_scraper += std::chrono::steady_clock::now() - t0;
    bytes += static_cast<std::size_t>(n);
  }
  scraper.finish();
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  double scrape_s = std::chrono::duration<double>(in_scraper).count();
  ::close(fd);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print("bytes: {}\n", bytes);
  fmt::print("scraper: {:.3f} s, {:.0f} MB/s\n", scrape_s, bytes / 1e6 / scrape_s);
  fmt::print("with reads: {:.3f} s, {:.0f} MB/s\n", total_s, bytes / 1e6 / total_s);
  fmt::print("peak RSS: {} KiB\n", usage.ru_maxrss);
  fmt::print("metrics: {}", scraper.metrics_json());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "generate") return generate(argv[2], std::atol(argv[3]));
  if (argc == 3 && std::string(argv[1]) == "scan") return scan(argv[2]);
  std::fprintf(stderr, "usage: scrape_bench generate PATH MIB | scan PATH\n");
  return 2;
}
