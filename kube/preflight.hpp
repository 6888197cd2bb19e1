#pragma once
// Preflight's requests to the Kubernetes API (issue 36): each question a pipeline's step
// raises, asked with GETs, discovery, access-review POSTs and dryRun=All POSTs only, at
// most `concurrency` at once, each within a time bound, each answer read through input/'s
// bounded JSON reader, and judged by rules/preflight. The launcher's pre-check and
// `pipec preflight` ask through this one function.

#include <map>
#include <string>
#include <vector>

#include "rules/preflight.hpp"
#include "kube/client.hpp"

namespace pipec::kube {

/// One question about the cluster. A claim mounted by more than one pod whose only
/// access mode is ReadWriteOnce asks the NodeList too (rules/preflight judge_claim).
struct PreflightQuestion {
  enum class What {
    claim,            ///< a PersistentVolumeClaim `name`, mounted by `pods_at_once` pods
    secret,           ///< a Secret `name` and its `keys`
    config_map,       ///< a ConfigMap `name` and its `keys`
    pull_secret,      ///< an image pull Secret `name`
    service_account,  ///< a ServiceAccount `name`
    priority_class,   ///< a PriorityClass `name`
    runtime,          ///< a Trainer runtime `name` (of `runtime_kind`) whose ML policy is `policy`
    served,           ///< the API kind `name` (MPIJob, TrainJob, ...) is served
    access,           ///< `subject` (a service account, "" the caller) may `verb` `name`'s kind,
                      ///< or with `resource` set, `resource` of API `group` ("" the core API)
    quota,            ///< ResourceQuota headroom for `needs`
    dry_run,          ///< creating `manifest` (of kind `name`) passes admission
    local_queue,      ///< a Kueue LocalQueue `name`
    limit_range,      ///< the namespace's LimitRanges admit `containers` (one step's pods)
    nodes,            ///< some node holds a replica of `name`: `gpus` of `gpu_resource`, the
                      ///< labels of `node_selector`, taints `tolerations` (JSON) cover
  };
  What what = What::claim;
  std::string name;
  std::vector<std::string> keys;
  long long pods_at_once = 1;
  std::string policy;
  std::string subject;
  std::string verb = "create";
  std::map<std::string, double> needs;
  std::string manifest;
  rules::preflight::Kind runtime_kind = rules::preflight::Kind::cluster_training_runtime;
  std::string group, resource;
  std::vector<rules::preflight::ContainerResources> containers;
  std::string gpu_resource;
  double gpus = 0;
  std::map<std::string, std::string> node_selector;
  std::string tolerations = "[]";
};

struct PreflightLimits {
  int concurrency = 8;      ///< requests in flight at once
  long timeout_ms = 10000;  ///< each request's bound
};

/// Asks every question in namespace `ns`; the findings of question i are element i (never
/// empty: an unaskable question, such as a name that is not a Kubernetes name, is an
/// error finding of its own).
[[nodiscard]] std::vector<std::vector<rules::preflight::Finding>> ask_preflight(
    KubeClient& client, const std::string& ns, const std::vector<PreflightQuestion>& questions,
    const PreflightLimits& limits = {});

}  // namespace pipec::kube
