#pragma once

#include <string>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/text_sink.hpp"
#include "compiler/ir/ir.hpp"

namespace pipec::emit::argo {

/// What the document is: a Workflow (what KFP runs), or the same templates and parameters
/// as an Argo WorkflowTemplate or CronWorkflow (`argo template create`, `argo cron create`).
enum class DocumentKind { Workflow, WorkflowTemplate, CronWorkflow };

struct CronOptions {
  std::string schedule;            // checked 5-field form or descriptor (CronSchedule::argo())
  std::string timezone;            // "" = the controller's
  std::string concurrency_policy;  // Allow, Forbid, Replace; "" = Argo's default (Allow)
};

struct WriteOptions {
  /// --service-account; "" = the pipeline's `settings { service_account ... }`, else
  /// "pipeline-runner" (KFP's).
  std::string service_account;
  /// Image of runtime/'s pipec-launcher, which training steps run.
  std::string launcher_image = "ghcr.io/pipec/pipec-launcher:0.1.0";
  DocumentKind kind = DocumentKind::Workflow;
  CronOptions cron;  // with kind CronWorkflow
};

/// Writes the Argo Workflow (KFP v1 flavour) for `pipeline` as YAML into `out`; with
/// `options.kind`, a WorkflowTemplate (metadata.name instead of generateName) or a
/// CronWorkflow (the same spec under spec.workflowSpec, after the schedule).
/// Deterministic: the same IR and options give the same bytes.
/// With a `sink`, the text goes to it and `out` is left empty: in pieces of about 1 MiB as
/// it is written, never held whole (a CronWorkflow, indented at the end, whole).
/// Returns false if it reported an error (then nothing has gone to the sink).
[[nodiscard]] bool write_workflow(const ir::Pipeline& pipeline, const WriteOptions& options,
                                  std::string& out, Diagnostics& diags, const TextSink& sink = {});

}  // namespace pipec::emit::argo
