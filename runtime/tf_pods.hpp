#pragma once
// Distributed TensorFlow without the training operator (a tf_job with runtime "pods"):
// the Pods and headless Services that run what a rendered TFJob describes, each pod with
// the TF_CONFIG the operator would have given it. Pure: no I/O. The launcher creates
// them; `pipec run --local` and the tests use the same TF_CONFIG rule.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipec::runtime {

/// The port every replica listens on, as TFJob's default (`tfjob-port`).
inline constexpr int kTfPort = 2222;

/// One replica: its role in TF_CONFIG ("chief", "master", "worker", "ps", "evaluator"),
/// its index, and the name of its Pod and Service.
struct TfReplica {
  std::string type;  // the TFJob replica type: Chief, Master, Worker, PS, Evaluator
  std::string role;
  int index = 0;
  std::string name;
};

/// The replicas of a rendered TFJob, chief (or master) first, then workers, ps,
/// evaluators, each role in index order. `job` names them `<job>-<role>-<index>`.
[[nodiscard]] std::vector<TfReplica> tf_replicas(const nlohmann::json& tfjob, std::string_view job);

/// TF_CONFIG for `self`: {"cluster": {role: ["host:port", ...]}, "task": {"type", "index"},
/// "environment": "cloud"}, as the TFJob operator writes it: every role but the evaluator
/// is in the cluster; `host` gives a replica's address (its Service's DNS name in a
/// cluster, 127.0.0.1 with its own port locally).
[[nodiscard]] std::string tf_config(const std::vector<TfReplica>& replicas, const TfReplica& self,
                                    const std::vector<std::string>& addresses);

struct TfPods {
  bool ok = false;
  std::string error;
  std::vector<TfReplica> replicas;
  std::vector<nlohmann::json> services;  // headless, one per replica, same order
  std::vector<nlohmann::json> pods;      // one per replica, same order
};

/// The Pods and Services for a rendered TFJob named `job` in namespace `ns`: each pod is
/// its replica's template (restartPolicy from the replica, default Never), labelled as
/// the operator labels its pods (training.kubeflow.org/job-name, replica-type,
/// replica-index) plus `labels`, owned by `owner` (a Pod ownerReference, or null), with
/// the container `tensorflow` given TF_CONFIG and port 2222; each Service is headless and
/// selects its pod. With `master_form`, the chief is called "master" in TF_CONFIG (seed
/// 001's form). A role with 0 replicas has no pod.
[[nodiscard]] TfPods tfjob_to_pods(const nlohmann::json& tfjob, std::string_view job, std::string_view ns,
                                   const nlohmann::json& labels, const nlohmann::json& owner,
                                   bool master_form = false);

}  // namespace pipec::runtime
