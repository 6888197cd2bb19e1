#pragma once
// The training jobs `pipec preflight` sends to the API as dryRun=All creates (issue 36):
// each training step's launcher call (compiler/training, as the writers build it) with
// the values known at submission, rendered by the launcher's own `--dry-run`
// (runtime/launcher), so the object asked about is the one the launcher would create.

#include <map>
#include <string>
#include <vector>

#include "compiler/ir/ir.hpp"

namespace pipec::driver {

struct RenderedJob {
  const ir::Step* step = nullptr;
  std::string source;   ///< the job as rendered (an operator's MPIJob, TFJob, PyTorchJob or a TrainJob)
  std::string created;  ///< what the launcher creates: the job, or the TrainJob made of it
  bool pods = false;    ///< runtime "pods": the launcher creates Pods and Services, no job
  std::string skipped;  ///< non-empty: not rendered, and why
};

struct RenderOptions {
  std::map<std::string, std::string> params;  ///< the parameters' values at submission
};

/// One entry per training step of `pipeline` (its DAG, loops and exit handler; the
/// training steps of a pipeline called as a step are listed skipped), in source order:
/// the launcher call of its plan (built by the lowering with the build's options).
[[nodiscard]] std::vector<RenderedJob> render_training_jobs(const ir::Pipeline& pipeline,
                                                            const RenderOptions& options);

}  // namespace pipec::driver
