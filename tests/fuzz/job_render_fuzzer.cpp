// libFuzzer target for the launcher's job rendering (render_job_from_args): the manifest,
// the --bind specs and the --value texts come from the input, one per line after a line
// that says which (`M`, `B`, `V`); a manifest compiled by pipec is the usual seed. Any
// input gives a rendered job or an error; a rendered job is valid JSON. Runtime "pods" and
// Trainer v2 are made from every rendered job too (tfjob_to_pods, to_trainjob).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/job_render.hpp"
#include "runtime/tf_pods.hpp"
#include "runtime/trainer_v2.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string manifest;
  std::vector<std::string> binds, values;
  char section = 'M';
  while (!input.empty()) {
    auto nl = input.find('\n');
    std::string_view line = input.substr(0, nl);
    input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
    if (line == "M" || line == "B" || line == "V") {
      section = line[0];
      continue;
    }
    if (section == 'M') manifest.append(line).push_back('\n');
    else if (section == 'B') binds.emplace_back(line);
    else values.emplace_back(line);
  }
  auto r = pipec::runtime::render_job_from_args(manifest, binds, values);
  if (!r.ok) return 0;
  auto job = nlohmann::json::parse(r.job, nullptr, false);
  if (job.is_discarded()) {
    std::fprintf(stderr, "render_job: the rendered job is not JSON\n");
    std::abort();
  }
  if (job.value("kind", "") == "TFJob") {
    auto pods = pipec::runtime::tfjob_to_pods(job, "job", "ns", nlohmann::json::object(), nlohmann::json());
    if (pods.ok && pods.size() > 0) {
      (void)pods.pod(pods.size() - 1).dump();
      (void)pods.service(0).dump();
    }
  } else {
    (void)pipec::runtime::to_trainjob(r.job, "");
  }
  return 0;
}
