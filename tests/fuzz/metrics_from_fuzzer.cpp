// libFuzzer target for `pipec-metrics --from FILE` and its KFP v2 output: the first line of
// the input is the executor input (`--executor-input`, KFP v2's {{$}}), the rest is the
// file the command wrote, read as lines (feed_lines), then the metrics JSON and the
// ExecutorOutput are written as pipec-metrics writes them. Both must be JSON. Any input
// gives them or a message, never a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/metrics.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto nl = input.find('\n');
  std::string_view executor_input = input.substr(0, nl);
  std::string_view file = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
  std::vector<pipec::rules::MetricSpec> specs;
  std::string why;
  for (const char* s : {"loss:min", "accuracy:PERCENTAGE:max", "images/sec", "Final Cost"})
    specs.push_back(*pipec::rules::parse_metric_spec(s, why));
  pipec::runtime::MetricScraper scraper(specs);
  scraper.feed_lines(file);
  (void)scraper.take_warnings();
  if (nlohmann::json::parse(scraper.metrics_json(), nullptr, false).is_discarded()) __builtin_trap();
  std::string output_file, output;
  if (scraper.executor_output(executor_input, output_file, output, why) &&
      nlohmann::json::parse(output, nullptr, false).is_discarded())
    __builtin_trap();
  return 0;
}
