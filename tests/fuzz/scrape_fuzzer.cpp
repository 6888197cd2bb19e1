// libFuzzer target for the metric scraper and the log copier: the first line of the input
// lists metric specs separated by '|' (a character no reportable name holds), the rest is
// a training log. The same bytes must give the same metrics however the stream is cut into
// pieces: fed whole, cut at points taken from the input, byte by byte (short inputs), and
// as `pipec-metrics --from` reads a file (feed_lines on the whole text). Through the
// launcher's LogCopier (kubelet lines with timestamps) the copied text and the metrics must
// not depend on the cuts either. A difference is a finding (abort).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/log_copy.hpp"
#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"

namespace {

using pipec::runtime::MetricScraper;
using pipec::rules::MetricSpec;

std::vector<MetricSpec> specs_from(std::string_view line) {
  std::vector<MetricSpec> specs;
  std::string why;
  while (!line.empty()) {
    auto bar = line.find('|');
    auto one = line.substr(0, bar);
    line = bar == std::string_view::npos ? std::string_view() : line.substr(bar + 1);
    if (auto s = pipec::rules::parse_metric_spec(one, why)) specs.push_back(std::move(*s));
  }
  if (!pipec::rules::check_metric_specs(specs, why) || specs.empty()) {
    specs.clear();
    for (const char* s : {"loss:min", "accuracy:PERCENTAGE:max", "images/sec", "Final Cost"})
      specs.push_back(*pipec::rules::parse_metric_spec(s, why));
  }
  return specs;
}

// Where to cut: sizes 1..64 from a simple generator seeded by the text.
std::vector<std::size_t> cuts_for(std::string_view log) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : log) h = (h ^ c) * 1099511628211ULL;
  std::vector<std::size_t> sizes;
  for (std::size_t at = 0; at < log.size();) {
    h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    std::size_t n = 1 + (h >> 58);
    sizes.push_back(n);
    at += n;
  }
  return sizes;
}

std::string outcome(MetricScraper& s) {
  std::string text = s.metrics_json();
  for (const auto& w : s.take_warnings()) text += "\nwarning: " + w;
  return text;
}

std::string streamed(const std::vector<MetricSpec>& specs, std::string_view log,
                     const std::vector<std::size_t>& sizes) {
  MetricScraper s(specs);
  std::size_t at = 0;
  for (std::size_t n : sizes) {
    s.feed(log.substr(at, n));
    at += n;
  }
  s.finish();
  return outcome(s);
}

// The log as the kubelet sends it with timestamps=true, copied by the launcher.
std::string copied(const std::vector<MetricSpec>& specs, std::string_view stamped,
                   const std::vector<std::size_t>& sizes, std::string& metrics) {
  MetricScraper s(specs);
  pipec::runtime::LogCursor cursor;
  std::ostringstream out;
  pipec::runtime::LogCopier copier(cursor, out, s);
  std::size_t at = 0;
  for (std::size_t n : sizes) {
    if (at >= stamped.size()) break;
    copier.feed(stamped.substr(at, n));
    at += n;
  }
  if (at < stamped.size()) copier.feed(stamped.substr(at));
  copier.finish();
  s.finish();
  metrics = outcome(s);
  return out.str();
}

[[noreturn]] void differ(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "scrape: %s differ:\n%s\n----\n%s\n", what, a.c_str(), b.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto nl = input.find('\n');
  if (nl == std::string_view::npos) return 0;
  auto specs = specs_from(input.substr(0, nl));
  std::string_view log = input.substr(nl + 1);

  std::string whole = streamed(specs, log, {log.size()});
  std::string cut = streamed(specs, log, cuts_for(log));
  if (cut != whole) differ("metrics fed whole and in pieces", whole, cut);
  if (log.size() <= 4096) {
    std::string bytes = streamed(specs, log, std::vector<std::size_t>(log.size(), 1));
    if (bytes != whole) differ("metrics fed whole and byte by byte", whole, bytes);
  }
  {
    // pipec-metrics --from FILE: the whole file at once, as lines.
    MetricScraper s(specs);
    s.feed_lines(log);
    std::string from = outcome(s);
    if (from != whole) differ("metrics streamed and read --from a file", whole, from);
  }

  // Through the log copier: every line gets a kubelet timestamp.
  std::string stamped;
  for (std::size_t at = 0; at < log.size();) {
    auto end = log.find('\n', at);
    std::string_view line = log.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    stamped += "2026-11-25T10:00:00.000000001Z ";
    stamped.append(line);
    if (end == std::string_view::npos) break;
    stamped += '\n';
    at = end + 1;
  }
  std::string m1, m2;
  std::string once = copied(specs, stamped, {stamped.size()}, m1);
  std::string pieces = copied(specs, stamped, cuts_for(stamped), m2);
  if (once != pieces) differ("copied logs", once, pieces);
  if (m1 != m2) differ("metrics through the log copier", m1, m2);
  return 0;
}
