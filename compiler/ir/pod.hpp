#pragma once

// What a container op's pod is given beside its container's words (ir/invocation.hpp):
// its resources with the GPU resource named, its placement, security context and metadata,
// its retries and caching. Decided once by the lowering (lower::pod_of,
// compiler/lower/pod.cpp); the Argo and KFP v2 writers print it, each in its target's
// terms, and a local run applies what a process can (retries, caching). It holds texts and
// indices into the op's `resources` only, so a copied Pipeline keeps a valid plan.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rules/kubernetes.hpp"
#include "rules/retry.hpp"

namespace pipec::ir {

struct Pod {
  /// One resource of the main container (requests = limits), in source order.
  struct Resource {
    enum class Kind {
      Cpu,
      Memory,
      Gpus,
      GpuVendor,  // `gpu_vendor` from a value: the GPU resource's name is known at run time
    };
    Kind kind = Kind::Cpu;
    /// The Kubernetes resource: "cpu", "memory", the GPU resource ("nvidia.com/gpu" unless
    /// a literal `gpu_vendor` names another: rules::gpu_resource_name); "" for GpuVendor
    /// and for Gpus when a GpuVendor is listed.
    std::string name;
    std::size_t value = 0;  // its value: ContainerOp::resources[value].second
  };
  /// A literal `gpu_vendor` is no entry (it names the Gpus entry); `gpus 0` is none either,
  /// unless the vendor comes from a value (the resource is then named at run time).
  std::vector<Resource> resources;
  /// Whether a GpuVendor entry is listed: the GPU resource is named at run time.
  [[nodiscard]] bool gpu_name_at_run_time() const {
    for (const auto& r : resources)
      if (r.kind == Resource::Kind::GpuVendor) return true;
    return false;
  }

  std::vector<std::pair<std::string, std::string>> node_selector;  // source order
  std::vector<rules::Toleration> tolerations;

  /// The container's securityContext (`run_as_user`, `run_as_group`, `run_as_non_root`).
  struct Security {
    std::optional<long long> user, group;
    std::optional<bool> non_root;
    [[nodiscard]] bool empty() const { return !user && !group && !non_root; }
  };
  Security security;

  /// The pod's labels: Kueue's queue label (`queue`) first, then the op's `labels`, a key
  /// given twice keeping its first place and its last value; the op's `annotations`.
  std::vector<std::pair<std::string, std::string>> labels, annotations;

  /// `retries`: the limit, the policy (Always unless given), the backoff, the failures it
  /// retries (empty: every one) and each attempt's memory (empty: it does not grow).
  struct Retry {
    long long limit = 0;
    std::string policy;
    std::optional<long long> backoff_seconds, factor, max_duration_seconds;
    std::vector<rules::RetryOn> on;
    std::vector<std::string> memory;  // attempt 0, 1, ...: the memory limit
  };
  std::optional<Retry> retry;

  /// `cache`: whether a result may be reused, and for how long (seconds; unset: no bound).
  struct Cache {
    bool reuse = true;
    std::optional<long long> staleness_seconds;  // only when `reuse`
  };
  Cache cache;
};

}  // namespace pipec::ir
