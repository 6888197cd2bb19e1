#pragma once
// The launcher's pre-check (issue 36): the questions one rendered training job raises about
// the cluster, asked by ask_preflight() and judged by rules/preflight, as `pipec preflight`'s
// are. No I/O.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "kube/preflight.hpp"

namespace pipec::runtime {

/// What the job's step runs as and where.
struct JobPrecheck {
  /// The job as rendered (an operator's MPIJob, TFJob or PyTorchJob): its pods' claims,
  /// Secrets and their keys, ConfigMaps and their keys, image pull Secrets, service
  /// accounts and priority classes, each asked once (a claim with the pods that mount it
  /// at once, a Secret with every key named).
  const nlohmann::json* rendered = nullptr;
  /// What the launcher creates (the rendered job, or the TrainJob made of it): its kind is
  /// served, the launcher's own identity may create, get, list, watch and delete it (and
  /// list pods), and a dryRun=All create of it is admitted. A TrainJob's runtime exists
  /// and has the ML policy of the rendered kind (mpi for an MPIJob, else torch; any for a
  /// train_job's own TrainJob).
  const nlohmann::json* created = nullptr;
  /// Runtime "pods": the launcher creates Pods and Services, not a job (no discovery, no
  /// dry run; the reviews ask for pods and services).
  bool pods = false;
};

/// The questions, in a fixed order: the job's objects (in the order the pods name them),
/// then the served kind, the runtime, the access reviews and the dry run, then
/// pod_questions() of the rendered job.
[[nodiscard]] std::vector<kube::PreflightQuestion> job_questions(const JobPrecheck& job);

/// What the rendered job's pods ask of the namespace and the nodes: the LimitRanges admit
/// every container's requests and limits (when any container has one), and for each
/// distinct pod template that needs GPUs (a limit of a resource with a `/` other than
/// hugepages) or a nodeSelector, some node holds one replica of it.
[[nodiscard]] std::vector<kube::PreflightQuestion> pod_questions(const nlohmann::json& rendered);

}  // namespace pipec::runtime
