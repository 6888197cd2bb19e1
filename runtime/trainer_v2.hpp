#pragma once
// Where a training step runs (its `runtime` argument, docs/training-ops.md "Runtimes"),
// and the Kubeflow Trainer v2 TrainJob that runs what a rendered PyTorchJob describes.
// Pure: no I/O. The launcher converts the job it rendered; the compiler's tests convert
// the same way to validate the TrainJobs of the examples.

#include <string>
#include <string_view>

namespace pipec::runtime {

/// The manager of pipec's runtime patch (spec.runtimePatches[].manager), and the
/// replicated job and container it patches: `node`, which every runtime Trainer v2.3
/// ships has (torch-distributed: replicatedJobs[name=node], containers[name=node]).
inline constexpr std::string_view kTrainerPatchManager = "pipec.dev/launcher";
inline constexpr std::string_view kTrainerNodeJob = "node";

/// The runtimes a training op may name: "" (the build's default), "operator" (the
/// training operator's CRDs: MPIJob, TFJob, PyTorchJob), for a PyTorchJob or MPIJob "trainer-v2"
/// (a TrainJob), for a TFJob "pods" (plain Pods and Services, runtime/tf_pods.hpp); a
/// TrainJob (`train_job`) runs on "" or "trainer-v2" only. `kind` is the job's kind. The
/// compiler checks literals with it and the launcher run-time values.
[[nodiscard]] bool is_training_runtime(std::string_view kind, std::string_view runtime);

/// The kinds of runtime a TrainJob may name (its runtimeRef.kind): "" (ClusterTrainingRuntime),
/// "ClusterTrainingRuntime" or "TrainingRuntime" (a namespaced one, in the TrainJob's
/// namespace). The compiler checks literals with it and the launcher run-time values.
[[nodiscard]] bool is_trainer_runtime_kind(std::string_view kind);

/// A dataset's or model's storageUri as the TrainJob CRD (v2.3.0) accepts it: "" or
/// scheme://rest (a scheme of [A-Za-z][A-Za-z0-9+.-]*, a non-empty rest), e.g.
/// "hf://tatsu-lab/alpaca", "s3://bucket/path".
[[nodiscard]] bool is_storage_uri(std::string_view text);

/// The variables Trainer v2.3 sets in the trainer's container and a TrainJob's
/// spec.trainer.env may not (its webhook refuses them): torch's PET_NNODES,
/// PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT and MPI's
/// OMPI_MCA_orte_default_hostfile, OMPI_MCA_plm_rsh_args, OMPI_MCA_orte_keep_fqdn_hostnames,
/// OMPI_MCA_orte_set_default_slots.
[[nodiscard]] bool is_trainer_reserved_env(std::string_view name);

/// What a TrainJob of `train_job` must be once its values are in (the launcher's check of
/// run-time values; the compiler checks literals by the same rules): a runtimeRef name
/// (a Kubernetes name) and kind, numNodes 1 to rules::kMaxReplicas, numProcPerNode >= 1,
/// each initializer's storageUri (is_storage_uri) and secretRef name (a Kubernetes
/// name). Returns "" or what is wrong.
[[nodiscard]] std::string trainjob_problem(std::string_view trainjob);

/// The ClusterTrainingRuntime a TrainJob names when the step names none, per job kind.
[[nodiscard]] std::string default_trainer_runtime(std::string_view kind);

struct TrainJobResult {
  bool ok = false;
  std::string job;  // the TrainJob JSON
  std::string error;
};

/// The TrainJob (trainer.kubeflow.org/v1alpha1) for a rendered PyTorchJob, with
/// runtimeRef `runtime_name` ("" = default_trainer_runtime) of kind `runtime_kind` (""
/// = ClusterTrainingRuntime).
/// One node per PyTorchJob replica (master and workers), numProcPerNode = nprocPerNode,
/// the container's image, env and resources; volumes, mounts, node selector and
/// tolerations as a runtimePatches entry (manager pipec.dev/launcher) on the runtime's
/// `node` job. What a patch cannot add is done by the command: it clones `sync_source`
/// (the git-sync init container's script; `git` must be in the image), enters the working
/// directory, and exports MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK from Trainer's
/// PET_* variables, so a command written for the PyTorchJob runs unchanged.
[[nodiscard]] TrainJobResult pytorchjob_to_trainjob(std::string_view pytorchjob, std::string_view runtime_name,
                                                    std::string_view runtime_kind = {});

/// The TrainJob for a rendered MPIJob, on an MPI runtime (`mlPolicy.mpi`; default
/// deepspeed-distributed, which Trainer ships): the launcher's image, command (after the
/// same git clone and working directory as above) and env as the trainer's, one node per
/// MPIJob worker, slotsPerWorker as numProcPerNode, the workers' resources per node;
/// volumes, mounts, node selector and tolerations patched into both the `launcher` and
/// the `node` jobs. The node pods run the runtime's image (a TrainJob sets the image of
/// the launcher only): the runtime must hold the program (docs/training-ops.md).
[[nodiscard]] TrainJobResult mpijob_to_trainjob(std::string_view mpijob, std::string_view runtime_name,
                                                std::string_view runtime_kind = {});

/// pytorchjob_to_trainjob or mpijob_to_trainjob, by the job's kind.
[[nodiscard]] TrainJobResult to_trainjob(std::string_view job, std::string_view runtime_name,
                                         std::string_view runtime_kind = {});

}  // namespace pipec::runtime
