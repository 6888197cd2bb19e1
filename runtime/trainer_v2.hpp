#pragma once
// Where a training step runs (its `runtime` argument, docs/training-ops.md "Runtimes"),
// and the Kubeflow Trainer v2 TrainJob that runs what a rendered PyTorchJob describes.
// Pure: no I/O. The launcher converts the job it rendered; the compiler's tests convert
// the same way to validate the TrainJobs of the examples.

#include <string>
#include <string_view>

namespace pipec::runtime {

/// The runtimes a training op may name: "" (the build's default), "operator" (the
/// training operator's CRDs: MPIJob, TFJob, PyTorchJob), for a PyTorchJob or MPIJob "trainer-v2"
/// (a TrainJob), for a TFJob "pods" (plain Pods and Services, runtime/tf_pods.hpp). `kind` is the job's kind. The compiler checks literals with
/// it and the launcher run-time values.
[[nodiscard]] bool is_training_runtime(std::string_view kind, std::string_view runtime);

/// The kinds of runtime a TrainJob may name (its runtimeRef.kind): "" (ClusterTrainingRuntime),
/// "ClusterTrainingRuntime" or "TrainingRuntime" (a namespaced one, in the TrainJob's
/// namespace). The compiler checks literals with it and the launcher run-time values.
[[nodiscard]] bool is_trainer_runtime_kind(std::string_view kind);

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
