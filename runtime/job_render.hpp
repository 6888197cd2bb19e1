#pragma once
// Applies the launcher's bindings to a job manifest (docs/runtime.md, "Binding kinds").
// Pure: no I/O, no Kubernetes. The compiler's tests call it to render and validate jobs.

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rules/durations.hpp"
#include "rules/kubernetes.hpp"
#include "rules/launcher_cli.hpp"
#include "rules/names.hpp"
#include "rules/quantities.hpp"

namespace pipec::runtime {

/// An environment variable of a training op's `env` that the git-sync init container's
/// clone reads too (GIT_SYNC_BRANCH, GIT_SYNC_REV): the compiler copies literal ones into
/// it, the launcher those of a map given at run time.
[[nodiscard]] bool is_git_sync_setting(std::string_view name);

/// One `--bind POINTER=NAME:KIND`: the value NAME replaces what the manifest holds at
/// the RFC 6901 POINTER. For `data`, POINTER is the replica-spec map
/// (`/spec/mpiReplicaSpecs`, `/spec/tfReplicaSpecs`, `/spec/pytorchReplicaSpecs`) and NAME
/// may list several values, `a,b,c`: each is one entry or a JSON list of entries.
struct Binding {
  std::string pointer;
  std::string name;
  rules::BindingKind kind = rules::BindingKind::String;
};

/// Parses `POINTER=NAME:KIND` (the last `=` before the last `:` separates; a pointer may
/// hold `=`, a name may not). Returns nullopt and sets `error` when malformed.
[[nodiscard]] std::optional<Binding> parse_binding(std::string_view spec, std::string& error);

/// Parses `NAME=TEXT` (only the first `=` separates). Returns false and sets `error`.
[[nodiscard]] bool parse_value(std::string_view spec, std::string& name, std::string& text,
                               std::string& error);

/// The outcome of render_job(): `job` is the rendered JSON document when `ok`;
/// otherwise `error` says what is wrong and names the value, e.g.
/// `value 'workers' must be an integer >= 1, got "two"`.
struct RenderResult {
  bool ok = false;
  std::string job;
  std::string error;
};

/// Applies `bindings` with the run-time texts in `values` (NAME -> TEXT) to `manifest`
/// (one JSON document: an MPIJob, TFJob or PyTorchJob) and checks the result: every
/// bound value has a text, fits its kind, and its pointer exists in the manifest;
/// replica counts are >= 1; `data` entries are `pvc-name:/mount/path` with distinct
/// paths. Values without a binding are ignored (e.g. a metric chosen by a parameter).
[[nodiscard]] RenderResult render_job(std::string_view manifest,
                                      std::span<const Binding> bindings,
                                      const std::map<std::string, std::string>& values);

/// The same from the launcher's argument texts: each of `bind_args` is `POINTER=NAME:KIND`,
/// each of `value_args` is `NAME=TEXT`.
[[nodiscard]] RenderResult render_job_from_args(std::string_view manifest,
                                                std::span<const std::string> bind_args,
                                                std::span<const std::string> value_args);

}  // namespace pipec::runtime
