#pragma once
// What a compiled pipeline needs of the cluster (issue 36): every claim, Secret and key,
// ConfigMap, image pull secret, service account, API kind created, Trainer runtime,
// PriorityClass, Kueue queue, GPU quota and image it names, each with the source place of
// the text that named it. Read off the IR (its ops, steps, settings) and the training
// steps' launcher calls, never from YAML. A value known only at run time (a step's output,
// a loop's item, a called pipeline's parameter) is a need with `skipped` saying why.
// `pipec preflight` asks the Kubernetes API about these (rules/preflight judges the answers).

#include <map>
#include <string>
#include <vector>

#include "compiler/base/source_manager.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::preflight {

struct Need {
  enum class What {
    claim,             ///< PersistentVolumeClaim `name`, mounted by `pods_at_once` pods
    secret,            ///< Secret `name` and its `keys` (secret_env; none for a volume)
    config_map,        ///< ConfigMap `name`
    pull_secret,       ///< image pull Secret `name` (settings image_pull_secrets)
    service_account,   ///< ServiceAccount `name` the pods run as
    priority_class,    ///< PriorityClass `name`
    local_queue,       ///< Kueue LocalQueue `name`
    runtime,           ///< ClusterTrainingRuntime `name` (or TrainingRuntime: `namespaced`)
                       ///< whose ML policy is `policy` (torch or mpi)
    served,            ///< the API kind `name` (MPIJob, TFJob, PyTorchJob, TrainJob) is served
    access,            ///< service account `subject` may create `name`'s kind
    quota,             ///< ResourceQuota headroom for `amounts` (one training step at once)
    image,             ///< the image `name` has a manifest in its registry
    job,               ///< the training job step `step` creates, rendered: admitted by a
                       ///< dryRun=All create, within the LimitRanges, placeable on a node.
                       ///< Not collected here (rendering is compiler/training's and the
                       ///< launcher's): `pipec preflight` adds one per training step
  };
  What what = What::claim;
  std::string name;
  std::vector<std::string> keys;
  long long pods_at_once = 1;
  std::string policy;
  bool namespaced = false;
  std::string subject;
  std::map<std::string, double> amounts;
  std::string step;     ///< the step (or "settings") that needs it, for messages
  SourceRange range;    ///< the text that named it
  std::string skipped;  ///< non-empty: known only at run time, and why
};

struct NeedsOptions {
  /// The pipeline's parameters' values at submission (overrides checked, defaults filled):
  /// a training argument given by a parameter takes its value from here.
  std::map<std::string, std::string> params;
  std::string service_account;   ///< `--service-account`; "" = settings, else pipeline-runner
  bool mpi_v1 = false;           ///< kubeflow.org/v1 MPIJobs (`--mpi-v1`)
  std::string training_runtime;  ///< `--training-runtime`: runtimes of steps that name none
};

/// Every need of `pipeline` (the built one, its exit handler and the pipelines it calls),
/// in source order of the steps, each once per place and object.
[[nodiscard]] std::vector<Need> collect_needs(const ir::Pipeline& pipeline, const NeedsOptions& options);

/// The check id a need's findings start with ("pvc", "secret", ...), for a skipped need.
[[nodiscard]] const char* need_check(Need::What what);

}  // namespace pipec::preflight
