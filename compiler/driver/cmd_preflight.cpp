// `pipec preflight FILE.pipe`: compiles as `build` does, collects what the pipeline needs
// of the cluster (compiler/preflight), asks the Kubernetes API about it through the
// launcher's bounded client (kube/preflight) and the image registries, and
// reports each finding as a diagnostic at the line that named the object.

#include "compiler/driver/cmd_preflight.hpp"

#include <algorithm>
#include <deque>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/base/source_manager.hpp"
#include "compiler/client/kfp/parameters.hpp"
#include "compiler/compile/compile.hpp"
#include "compiler/driver/commands.hpp"
#include "compiler/driver/preflight_jobs.hpp"
#include "compiler/preflight/needs.hpp"
#include "input/json.hpp"
#include "kube/client.hpp"
#include "kube/preflight.hpp"
#include "rules/names.hpp"
#include "rules/preflight.hpp"
#include "runtime/preflight_job.hpp"

namespace pipec::driver {
namespace {

namespace pf = rules::preflight;
namespace kfp = client::kfp;
using preflight::Need;
using Q = kube::PreflightQuestion;

constexpr long kTimeoutMs = 10000;  // each request's bound, as ask_preflight's

// The parameters' values at submission: defaults, then the overrides, checked as `pipec
// run` checks them. nullopt after printing the problems.
std::optional<std::map<std::string, std::string>> param_values(const PreflightOptions& options,
                                                               const ir::Pipeline& pipeline) {
  std::vector<std::string> errors;
  std::vector<kfp::Override> overrides;
  if (!options.params_file.empty()) (void)kfp::load_params_file(options.params_file, overrides, errors);
  for (const auto& argument : options.params) {
    kfp::Override o;
    std::string error;
    if (kfp::parse_override(argument, o, error)) overrides.push_back(std::move(o));
    else errors.push_back(error);
  }
  std::vector<std::pair<std::string, std::string>> values;
  if (errors.empty()) {
    kfp::Signature signature;
    std::string error;
    if (!kfp::read_parameters_json(ir::parameters_json(pipeline), signature, error)) errors.push_back(error);
    else (void)kfp::check_overrides(signature, overrides, values, errors);
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::cerr << "pipec: error: " << e << '\n';
    std::cerr << fmt::format("pipec: nothing was asked: {} problem{} with the parameters\n", errors.size(),
                             errors.size() == 1 ? "" : "s");
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (const auto& param : pipeline.params)
    if (param.default_value) out[param.name] = ir::literal_text(*param.default_value);
  for (auto& [name, value] : values) out[name] = std::move(value);
  return out;
}

// The question a need asks the API; nullopt for images (asked of registries) and skipped needs.
std::optional<Q> question_of(const Need& need) {
  if (!need.skipped.empty() || need.what == Need::What::image) return std::nullopt;
  Q q;
  q.name = need.name;
  switch (need.what) {
    case Need::What::claim: q.what = Q::What::claim; q.pods_at_once = need.pods_at_once; break;
    case Need::What::secret: q.what = Q::What::secret; q.keys = need.keys; break;
    case Need::What::config_map: q.what = Q::What::config_map; break;
    case Need::What::pull_secret: q.what = Q::What::pull_secret; break;
    case Need::What::service_account: q.what = Q::What::service_account; break;
    case Need::What::priority_class: q.what = Q::What::priority_class; break;
    case Need::What::local_queue: q.what = Q::What::local_queue; break;
    case Need::What::runtime:
      q.what = Q::What::runtime;
      q.policy = need.policy;
      q.runtime_kind = need.namespaced ? rules::preflight::Kind::training_runtime
                                       : rules::preflight::Kind::cluster_training_runtime;
      break;
    case Need::What::served: q.what = Q::What::served; break;
    case Need::What::access: q.what = Q::What::access; q.subject = need.subject; break;
    case Need::What::quota: q.what = Q::What::quota; q.needs = need.amounts; break;
    case Need::What::image:
    case Need::What::job: return std::nullopt;
  }
  return q;
}

// HEAD /v2/NAME/manifests/REF of the image's registry (or `--registry`), anonymously:
// http for a registry on this machine, https elsewhere.
pf::Finding ask_image(const std::string& image, const std::string& registry) {
  auto ref = pf::parse_image(image);
  if (!ref)
    return {pf::Verdict::error, "image.manifest", "image " + image, 0, "'" + image + "' is not an image reference",
            "fix the image's name"};
  const std::string host = registry.empty() ? ref->registry : registry;
  const bool local = host.rfind("localhost", 0) == 0 || host.rfind("127.0.0.1", 0) == 0;
  kube::KubeConfig config;
  config.server = (local ? "http://" : "https://") + host;
  kube::KubeClient client(config);
  auto answer = client.request("HEAD", ref->manifest_path(), {}, kTimeoutMs);
  return pf::judge_image(image, answer.status);
}

struct Located {
  const Need* need;
  pf::Finding finding;
};

Severity severity_of(pf::Verdict verdict, bool strict) {
  switch (pf::strict_verdict(verdict, strict)) {
    case pf::Verdict::error: return Severity::Error;
    case pf::Verdict::warning:
    case pf::Verdict::unknown: return Severity::Warning;
    default: return Severity::Note;
  }
}

// One finding as a diagnostic at the need's place: text as `check` prints, or its JSON
// object with the check's id, the object, the HTTP status and the verdict added.
void report(const Located& l, const SourceManager& sources, const PreflightOptions& options) {
  const auto& f = l.finding;
  Diagnostics one;
  const std::string verdict = pf::verdict_name(pf::strict_verdict(f.verdict, options.strict));
  std::string message = f.message;
  if (f.verdict == pf::Verdict::unknown || f.verdict == pf::Verdict::skipped) message = std::string(pf::verdict_name(f.verdict)) + ": " + message;
  const bool json = options.common.diagnostics == "json";
  if (!json) message += " [" + f.check + "]";
  one.add({severity_of(f.verdict, options.strict), l.need->range, message});
  if (!f.fix.empty()) one.note(l.need->range, "fix: " + f.fix);
  if (!json) {
    print_diagnostics(one, sources, options.common);
    return;
  }
  std::ostringstream text;
  render(one, sources, text, {DiagnosticFormat::Json, false});
  auto item = nlohmann::json::parse(text.str(), nullptr, false);
  if (!item.is_object()) return;
  item["check"] = f.check;
  item["object"] = f.object;
  item["http_status"] = f.http_status;
  item["verdict"] = verdict;
  std::cerr << item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

std::string object_of(const Need& need, const std::string& ns) {
  if (need.name.empty()) {
    const char* what = need.what == Need::What::claim            ? "PersistentVolumeClaim"
                       : need.what == Need::What::quota          ? "GPU quota"
                       : need.what == Need::What::priority_class ? "PriorityClass"
                       : need.what == Need::What::local_queue    ? "LocalQueue"
                                                                 : "value";
    return std::string(what) + " of step '" + need.step + "'";
  }
  switch (need.what) {
    case Need::What::claim: return pf::object_label(pf::Kind::persistent_volume_claim, ns, need.name);
    case Need::What::secret:
    case Need::What::pull_secret: return pf::object_label(pf::Kind::secret, ns, need.name);
    case Need::What::config_map: return pf::object_label(pf::Kind::config_map, ns, need.name);
    case Need::What::service_account: return pf::object_label(pf::Kind::service_account, ns, need.name);
    case Need::What::priority_class: return pf::object_label(pf::Kind::priority_class, ns, need.name);
    case Need::What::local_queue: return pf::object_label(pf::Kind::local_queue, ns, need.name);
    case Need::What::runtime: return "Trainer runtime of step '" + need.step + "'";
    case Need::What::image: return "image of step '" + need.step + "'";
    case Need::What::job: return need.name + " of step '" + need.step + "'";
    default: return need.name.empty() ? "step '" + need.step + "'" : need.name + " of step '" + need.step + "'";
  }
}

// Asks every question and every registry; the findings in the needs' order.
std::vector<Located> ask(const std::vector<Need>& needs, kube::KubeClient& client, const std::string& ns,
                         const std::string& registry) {
  std::vector<Q> questions;
  std::vector<const Need*> asked;
  for (const auto& need : needs)
    if (auto q = question_of(need)) {
      questions.push_back(std::move(*q));
      asked.push_back(&need);
    }
  auto answers = kube::ask_preflight(client, ns, questions);
  std::map<const Need*, std::vector<pf::Finding>> by_need;
  for (std::size_t i = 0; i < asked.size(); ++i) by_need[asked[i]] = std::move(answers[i]);
  std::map<std::string, pf::Finding> images;  // each image asked once
  std::vector<Located> out;
  for (const auto& need : needs) {
    if (!need.skipped.empty()) {
      out.push_back({&need, {pf::Verdict::skipped, preflight::need_check(need.what), object_of(need, ns), 0,
                             object_of(need, ns) + " is not checked: " + need.skipped, {}}});
      continue;
    }
    if (need.what == Need::What::image) {
      auto it = images.find(need.name);
      if (it == images.end()) it = images.emplace(need.name, ask_image(need.name, registry)).first;
      out.push_back({&need, it->second});
      continue;
    }
    for (auto& f : by_need[&need]) out.push_back({&need, std::move(f)});
  }
  return out;
}

// The rendered training jobs (preflight_jobs.hpp): each one's dryRun=All create, the
// LimitRanges and the nodes, at its step. No dry run is sent for a step with an error
// found already (a missing runtime, a kind not served, a claim): the admission would
// refuse it for that same cause, and the error is reported once. `jobs` holds the needs
// the findings point at.
void ask_jobs(const std::vector<RenderedJob>& rendered, std::deque<Need>& jobs, std::vector<Located>& found,
              kube::KubeClient& client, const std::string& ns) {
  std::set<std::string> failed;
  for (const auto& l : found)
    if (l.finding.verdict == pf::Verdict::error) failed.insert(l.need->step);
  std::vector<Q> questions;
  std::vector<const Need*> asked;
  for (const auto& r : rendered) {
    auto& need = jobs.emplace_back();
    need.what = Need::What::job;
    need.step = r.step->name;
    need.range = r.step->range;
    need.skipped = r.skipped;
    need.name = "the job";
    auto created = input::parse_json(r.created);
    if (need.skipped.empty() && !created.is_object()) need.skipped = "the launcher printed no job";
    if (!need.skipped.empty()) {
      found.push_back({&need, {pf::Verdict::skipped, "dryrun.admitted", object_of(need, ns), 0,
                               object_of(need, ns) + " is not checked: " + need.skipped, {}}});
      continue;
    }
    const auto kind = input::member_text(created, "kind");
    need.name = kind;
    const auto* served = pf::served_kind(kind);
    // No dry run for runtime "pods" (no job is created), nor where its refusal would
    // repeat an error of the step.
    const bool dry_run = !r.pods && !failed.count(need.step);
    if (dry_run && served != nullptr &&
        input::member_text(created, "apiVersion") == std::string(served->group) + "/" + std::string(served->version)) {
      created["metadata"]["namespace"] = ns;
      Q q;
      q.what = Q::What::dry_run;
      q.name = kind;
      q.manifest = created.dump();
      questions.push_back(std::move(q));
      asked.push_back(&need);
    } else if (dry_run) {
      found.push_back({&need, {pf::Verdict::skipped, "dryrun.admitted", object_of(need, ns), 0,
                               object_of(need, ns) + " is not sent: " + input::member_text(created, "apiVersion") +
                                   " is not a version preflight asks about",
                               {}}});
    }
    for (auto& q : runtime::pod_questions(input::parse_json(r.source))) {
      questions.push_back(std::move(q));
      asked.push_back(&need);
    }
  }
  auto answers = kube::ask_preflight(client, ns, questions);
  for (std::size_t i = 0; i < asked.size(); ++i)
    for (auto& f : answers[i]) found.push_back({asked[i], std::move(f)});
}

}  // namespace

int run_preflight(const PreflightOptions& options) {
  if (options.file.size() < 5 || options.file.compare(options.file.size() - 5, 5, ".pipe") != 0) {
    std::cerr << fmt::format("pipec: error: preflight reads a .pipe file, got '{}': a package has no source "
                             "lines to report at\n",
                             options.file);
    return kExitUsage;
  }
  if (!options.service_account.empty() && !rules::is_dns1123_subdomain(options.service_account)) {
    std::cerr << fmt::format("pipec: error: --service-account '{}' is not a Kubernetes name\n",
                             options.service_account);
    return kExitUsage;
  }
  SourceManager sources;
  Diagnostics diags;
  compile::TargetOptions target;
  target.target = options.target;
  target.pipeline = options.pipeline;
  target.service_account = options.service_account;
  target.mpi_v1 = options.mpi_v1;
  target.training_runtime = options.training_runtime;
  compile::Compiled compiled = compile::compile_file(sources, options.file, target, diags);
  print_diagnostics(diags, sources, options.common);
  if (!compiled.pipeline || diags.has_errors()) return kExitErrors;
  auto params = param_values(options, *compiled.pipeline);
  if (!params) return kExitErrors;

  std::string error;
  auto config = kube::load_kube_config(options.kubeconfig, kube::InClusterPaths{}, error);
  if (!config) {
    std::cerr << "pipec: error: " << error << '\n';
    return kExitUsage;
  }
  const std::string ns = !options.namespace_name.empty()  ? options.namespace_name
                         : !config->namespace_name.empty() ? config->namespace_name
                                                           : std::string("default");
  if (!rules::is_dns1123_label(ns)) {
    std::cerr << fmt::format("pipec: error: --namespace '{}' is not a namespace name\n", ns);
    return kExitUsage;
  }
  preflight::NeedsOptions needs_options;
  needs_options.params = std::move(*params);
  needs_options.service_account = options.service_account;
  needs_options.mpi_v1 = options.mpi_v1;
  needs_options.training_runtime = options.training_runtime;
  const auto needs = preflight::collect_needs(*compiled.pipeline, needs_options);
  kube::KubeClient client(*config);
  auto found = ask(needs, client, ns, options.registry);
  RenderOptions render_options;
  render_options.params = needs_options.params;
  std::deque<Need> job_needs;
  ask_jobs(render_training_jobs(*compiled.pipeline, render_options), job_needs, found, client, ns);

  std::vector<pf::Finding> all;
  std::map<pf::Verdict, int> counts;
  for (const auto& l : found) {
    ++counts[pf::strict_verdict(l.finding.verdict, options.strict)];
    all.push_back(l.finding);
    if (l.finding.verdict != pf::Verdict::ok) report(l, sources, options);
  }
  std::cout << fmt::format("preflight: {} checks in namespace {}: {} ok, {} errors, {} warnings, {} unknown, "
                           "{} skipped\n",
                           found.size(), ns, counts[pf::Verdict::ok], counts[pf::Verdict::error],
                           counts[pf::Verdict::warning], counts[pf::Verdict::unknown], counts[pf::Verdict::skipped]);
  return pf::fails(all, options.strict) ? kExitErrors : kExitOk;
}

void add_preflight_options(CLI::App& cmd, PreflightOptions& options, const std::string& group) {
  cmd.add_option("--kubeconfig", options.kubeconfig,
                 "The kubeconfig whose current context is asked (default: in-cluster, $KUBECONFIG, "
                 "~/.kube/config)")
      ->group(group);
  cmd.add_flag("--strict", options.strict, "Make an unknown (a 401 or 403 on a read) an error")->group(group);
  cmd.add_option("--registry", options.registry,
                 "Ask this registry (HOST[:PORT], a mirror) about every image instead of the one its "
                 "name gives")
      ->group(group);
}

void add_preflight_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PreflightOptions>();
  CLI::App* cmd = app.add_subcommand(
      "preflight", "Ask the cluster about everything a .pipe file needs; report each finding at its line");
  cmd->add_option("file", options->file, "The .pipe file")->required();
  add_param_options(*cmd, options->params, options->params_file);
  cmd->add_option("--namespace", options->namespace_name,
                  "Namespace the pipeline runs in (default: the kubeconfig context's, else default)");
  cmd->add_option("--service-account", options->service_account,
                  "Service account the workflow runs as (over the pipeline's own setting)")
      ->default_str("pipeline-runner");
  add_preflight_options(*cmd, *options, "Options");
  cmd->add_option("--target", options->target, "kfp-v1 (Argo, default) or kfp-v2, as build compiles it")
      ->check(CLI::IsMember({"kfp-v1", "kfp-v2"}))
      ->default_str("kfp-v1");
  cmd->add_option("--pipeline", options->pipeline,
                  "The pipeline of the file to build, when several are not called by another");
  cmd->add_flag("--mpi-v1", options->mpi_v1, "As build --mpi-v1: kubeflow.org/v1 MPIJobs");
  add_training_runtime_option(*cmd, options->training_runtime);
  add_common_options(*cmd, options->common);
  cmd->callback([options, &exit_code] { exit_code = run_preflight(*options); });
}

}  // namespace pipec::driver
