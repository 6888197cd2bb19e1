// pod_of(): what a container op's pod is given (ir/pod.hpp), decided once here for the
// Argo and KFP v2 writers and the local run.
#include "compiler/lower/plan.hpp"

#include <string>
#include <utility>
#include <vector>

#include "rules/kubernetes.hpp"
#include "rules/quantities.hpp"

namespace pipec::lower {

using namespace pipec::ir;  // the vocabulary lowering speaks

namespace {

using Resource = Pod::Resource;

// The resources in source order, the GPU resource named: a literal `gpu_vendor` names it
// (rules::gpu_resource_name, which sema checked), one from a value leaves it to run time.
std::vector<Resource> resources_of(const ContainerOp& op) {
  std::string gpu = "nvidia.com/gpu";
  bool vendor_at_run_time = false;
  for (const auto& [key, value] : op.resources) {
    if (key != "gpu_vendor") continue;
    vendor_at_run_time = !value.is_literal();
    if (value.is_literal()) gpu = rules::gpu_resource_name(literal_text(value.literal));
  }
  std::vector<Resource> out;
  for (std::size_t i = 0; i < op.resources.size(); ++i) {
    const auto& [key, value] = op.resources[i];
    if (key == "cpu") {
      out.push_back({Resource::Kind::Cpu, "cpu", i});
    } else if (key == "memory") {
      out.push_back({Resource::Kind::Memory, "memory", i});
    } else if (key == "gpus") {
      // No GPU asked for: no resource (a vendor from a value still gets the count).
      if (!vendor_at_run_time && value.is_literal() && literal_text(value.literal) == "0") continue;
      out.push_back({Resource::Kind::Gpus, vendor_at_run_time ? "" : gpu, i});
    } else if (key == "gpu_vendor" && !value.is_literal()) {
      out.push_back({Resource::Kind::GpuVendor, "", i});
    }
  }
  return out;
}

// `labels`: Kueue's queue label, then the op's; a key set again keeps its place.
std::vector<std::pair<std::string, std::string>> labels_of(const ContainerOp& op) {
  std::vector<std::pair<std::string, std::string>> out;
  auto set = [&](const std::string& key, const std::string& value) {
    for (auto& [k, v] : out)
      if (k == key) {
        v = value;
        return;
      }
    out.emplace_back(key, value);
  };
  if (!op.queue.empty()) set(std::string(rules::kKueueQueueLabel), op.queue);
  for (const auto& [k, v] : op.labels) set(k, v);
  return out;
}

}  // namespace

Pod pod_of(const ContainerOp& op) {
  Pod pod;
  pod.resources = resources_of(op);
  pod.node_selector = op.node_selector;
  pod.tolerations = op.tolerations;
  pod.security = {op.run_as_user, op.run_as_group, op.run_as_non_root};
  pod.labels = labels_of(op);
  pod.annotations = op.annotations;
  if (op.retries)
    pod.retry = Pod::Retry{*op.retries,          op.retry_policy, op.retry_backoff_seconds,
                           op.retry_factor,      op.retry_max_duration_seconds,
                           op.retry_on,          op.retry_memory};
  // `cache false` (or a staleness of 0): never reused; `cache "7d"`: reused while that young.
  pod.cache.reuse = op.cache.value_or(true);
  if (pod.cache.reuse) pod.cache.staleness_seconds = op.cache_staleness_seconds;
  return pod;
}

}  // namespace pipec::lower
