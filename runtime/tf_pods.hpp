#pragma once
// Distributed TensorFlow without the training operator (a tf_job with runtime "pods"):
// the Pods and headless Services that run what a rendered TFJob describes, each pod with
// the TF_CONFIG the operator would have given it. Pure: no I/O. The launcher creates
// them; `pipec run --local` and the tests use the same TF_CONFIG rule (rules/tf_config).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/tf_config.hpp"

namespace pipec::runtime {

/// The port every replica listens on, as TFJob's default (`tfjob-port`).
inline constexpr int kTfPort = 2222;

/// The Pods and Services of a TFJob, each made when asked for: one pod's TF_CONFIG lists
/// every replica, so all of them at once would take memory growing with the square of
/// the count; one at a time it grows with the count (issue 25).
class TfPods {
 public:
  bool ok = false;
  std::string error;
  std::vector<rules::TfReplica> replicas;

  std::size_t size() const { return replicas.size(); }
  /// The Pod of replica `i` (< size()).
  [[nodiscard]] nlohmann::json pod(std::size_t i) const;
  /// The headless Service of replica `i`, selecting its pod.
  [[nodiscard]] nlohmann::json service(std::size_t i) const;

 private:
  friend TfPods tfjob_to_pods(const nlohmann::json&, std::string_view, std::string_view,
                              const nlohmann::json&, const nlohmann::json&, bool);
  nlohmann::json specs_;    // the TFJob's tfReplicaSpecs
  nlohmann::json cluster_;  // TF_CONFIG's cluster, the same for every pod
  nlohmann::json labels_, owner_;
  std::string job_, ns_;
};

/// The Pods and Services for a rendered TFJob named `job` in namespace `ns`: each pod is
/// its replica's template (restartPolicy from the replica, default Never), labelled as
/// the operator labels its pods (training.kubeflow.org/job-name, replica-type,
/// replica-index) plus `labels`, owned by `owner` (a Pod ownerReference, or null), with
/// the container `tensorflow` given TF_CONFIG and port 2222; each Service is headless and
/// selects its pod. With `master_form`, the chief is called "master" in TF_CONFIG (seed
/// 001's form). A role with 0 replicas has no pod. Every replica's template is checked
/// here, so pod(i) cannot fail.
[[nodiscard]] TfPods tfjob_to_pods(const nlohmann::json& tfjob, std::string_view job, std::string_view ns,
                                   const nlohmann::json& labels, const nlohmann::json& owner,
                                   bool master_form = false);

}  // namespace pipec::runtime
