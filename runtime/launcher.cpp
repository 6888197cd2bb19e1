// run_launcher(): the whole life of one training job.
// Order matters: every argument and run-time value is checked (exit 2) before the API is
// touched; the UI metadata is written before the job exists; the metrics file is written
// however the job ends; the job is deleted on a stop signal even with --keep-job.
#include "runtime/launcher.hpp"
#include "runtime/launcher_job.hpp"

#include <condition_variable>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fileio/atomic_file.hpp"
#include "input/json.hpp"
#include "input/limits.hpp"
#include "rules/launcher_cli.hpp"
#include "rules/metrics_cli.hpp"
#include "runtime/job_render.hpp"
#include "kube/client.hpp"
#include "runtime/log_copy.hpp"
#include "runtime/log_cursor.hpp"
#include "runtime/metrics.hpp"
#include "runtime/tf_pods.hpp"
#include "runtime/trainer_v2.hpp"

namespace pipec::runtime {
using kube::HttpResponse;
using kube::KubeClient;

using rules::MetricSpec;
using rules::check_metric_specs;
using rules::is_dns1123_subdomain;
using rules::parse_metric_spec;
namespace launcher_detail {

namespace {
using Option = rules::LauncherOption;
}  // namespace

void Launcher::sleep_for(milliseconds d, const std::atomic<bool>* also) {
  auto until = Clock::now() + d;
  while (Clock::now() < until && !stop_ && !(also && *also))
    std::this_thread::sleep_for(std::min<milliseconds>(milliseconds(20), d));
}

// A 403 is either the authorizer's (RBAC: "... is forbidden: User \"...\" cannot VERB
// resource ...") or an admission webhook's refusal of the object ("admission webhook
// \"NAME\" denied the request: REASON"), which no Role changes.
void Launcher::report_api_error(const HttpResponse& r, std::string_view verb,
                                std::string_view res) {
  if (r.status == 403) {
    json body = json::parse(r.body, nullptr, false);
    std::string message = member_text(body, "message");
    static constexpr std::string_view kWebhook = "admission webhook \"";
    static constexpr std::string_view kDenied = "\" denied the request: ";
    if (message.rfind(kWebhook, 0) == 0) {
      auto end = message.find(kDenied, kWebhook.size());
      if (end != std::string::npos) {
        error(fmt::format("cannot {} {} in namespace '{}': the admission webhook {} refused it: {}", verb,
                          res, ns_, message.substr(kWebhook.size(), end - kWebhook.size()),
                          message.substr(end + kDenied.size())));
        return;
      }
    }
    bool rbac = message.find(" is forbidden: User \"") != std::string::npos;
    error(fmt::format("forbidden: cannot {} {} in namespace '{}': {}", verb, res, ns_,
                      status_message(r)));
    if (rbac)
      say("note: the step's service account needs the Role in runtime/deploy/rbac.yaml "
          "(kubectl apply -n " + ns_ + " -f runtime/deploy/rbac.yaml)");
    return;
  }
  error(fmt::format("cannot {} {} in namespace '{}': {}", verb, res, ns_, status_message(r)));
}

// A request retried on 5xx, 429 and no answer. A stop signal sends nothing more: the
// answer is then `cancelled` (status 0) unless a request already got a final one.
HttpResponse Launcher::call(std::string_view method, const std::string& path,
                            const std::string& body) {
  HttpResponse r;
  r.cancelled = true;
  r.error = "stopped by a signal";
  for (int attempt = 0; attempt < std::max(1, o_.api_retries); ++attempt) {
    if (attempt > 0) sleep_for(o_.retry_delay);
    if (stop_) break;
    r = client_->request(method, path, body);
    if (!transient(r)) break;
  }
  return r;
}

bool Launcher::prepare() {
  auto rendered = render_job_from_args(o_.manifest, o_.bind_args, o_.value_args);
  if (!rendered.ok) {
    error(rendered.error);
    return false;
  }
  job_ = json::parse(rendered.job);
  if (!check_retries()) return false;
  grow_memory(job_);
  source_job_ = job_;
  // Where it runs: the operator's CRD as rendered, or Trainer v2's TrainJob made from it.
  const std::string source_kind = member_text(job_, "kind");
  source_kind_ = source_kind;
  if (!is_training_runtime(source_kind, o_.runtime))
    return error(fmt::format("{} '{}': expected 'operator', 'trainer-v2' for a "
                             "pytorch_job or an mpi_job ('trainer-v2' only for a TrainJob), or 'pods' for a tf_job",
                             rules::launcher_flag(Option::Runtime), o_.runtime)),
           false;
  pods_mode_ = o_.runtime == "pods";
  if (!o_.tf_chief_role.empty() && o_.tf_chief_role != "chief" && o_.tf_chief_role != "master")
    return error(fmt::format("{} '{}': expected 'chief' or 'master'", rules::launcher_flag(Option::TfChiefRole),
                             o_.tf_chief_role)),
           false;
  if (o_.runtime == "trainer-v2" || source_kind == "TrainJob") {
    if (!o_.trainer_runtime.empty() && !is_dns1123_subdomain(o_.trainer_runtime))
      return error(fmt::format("{} '{}': not a Kubernetes name", rules::launcher_flag(Option::TrainerRuntime),
                               o_.trainer_runtime)),
             false;
    if (!is_trainer_runtime_kind(o_.trainer_runtime_kind))
      return error(fmt::format("{} '{}': expected 'ClusterTrainingRuntime' or 'TrainingRuntime'",
                               rules::launcher_flag(Option::TrainerRuntimeKind), o_.trainer_runtime_kind)),
             false;
    if (source_kind == "TrainJob") {
      // A train_job's own TrainJob: the options name its runtime when a value gives it.
      json& ref = job_["spec"]["runtimeRef"];
      if (!o_.trainer_runtime.empty()) ref["name"] = o_.trainer_runtime;
      if (!o_.trainer_runtime_kind.empty()) ref["kind"] = o_.trainer_runtime_kind;
      if (std::string problem = trainjob_problem(job_.dump()); !problem.empty()) return error(problem), false;
    } else {
      auto train_job = to_trainjob(source_job_.dump(), o_.trainer_runtime, o_.trainer_runtime_kind);
      if (!train_job.ok) return error(train_job.error), false;
      job_ = json::parse(train_job.job);
    }
  }
  // Metrics: fixed specs, then specs given by run-time values.
  std::vector<MetricSpec> specs;
  std::string why;
  for (const auto& arg : o_.metric_args) {
    auto s = parse_metric_spec(arg, why);
    if (!s) return error(why), false;
    specs.push_back(std::move(*s));
  }
  auto value_text = [&](const std::string& value_name) {
    std::optional<std::string> text;
    for (const auto& v : o_.value_args) {
      std::string n, t, e;
      if (parse_value(v, n, t, e) && n == value_name) text = t;
    }
    return text;
  };
  for (const auto& value_name : o_.metric_value_args) {
    std::optional<std::string> text = value_text(value_name);
    if (!text) return error(fmt::format("no --value for '{}' (--metric-value)", value_name)), false;
    auto s = parse_metric_spec(*text, why);
    if (!s) return error(fmt::format("value '{}': {}", value_name, why)), false;
    specs.push_back(std::move(*s));
  }
  for (const auto& value_name : o_.metric_list_value_args) {
    std::optional<std::string> text = value_text(value_name);
    if (!text) return error(fmt::format("no --value for '{}' (--metric-list-value)", value_name)), false;
    json list = input::parse_json(*text);
    if (list.is_discarded() || !list.is_array())
      return error(fmt::format("value '{}' must be a JSON list of metric specs, got {}", value_name,
                               json(*text).dump())),
             false;
    for (const auto& item : list) {
      auto s = item.is_string() ? parse_metric_spec(item.get<std::string>(), why) : std::nullopt;
      if (!s) {
        if (!item.is_string()) why = "a metric spec must be a string, got " + item.dump();
        return error(fmt::format("value '{}': {}", value_name, why)), false;
      }
      specs.push_back(std::move(*s));
    }
  }
  if (!check_metric_specs(specs, why)) return error(why), false;
  scraper_.emplace(std::move(specs));

  // Where the job goes, what it is called, which pod speaks for it.
  api_version_ = job_["apiVersion"].get<std::string>();
  auto kind = job_["kind"].get<std::string>();
  source_replica_map_ = kind == "MPIJob"       ? "mpiReplicaSpecs"
                        : kind == "TFJob"      ? "tfReplicaSpecs"
                        : kind == "PyTorchJob" ? "pytorchReplicaSpecs"
                                               : "pytorchReplicaSpecs";
  if (kind == "MPIJob") kind_ = {"mpijobs", "mpiReplicaSpecs", "launcher", false};
  if (kind == "TFJob") kind_ = {"tfjobs", "tfReplicaSpecs", "worker", true};
  if (kind == "PyTorchJob") kind_ = {"pytorchjobs", "pytorchReplicaSpecs", "worker", true};
  if (kind == "TrainJob") {
    // The leader: the MPI runtime's launcher job, else node 0. A train_job's runtime is
    // known by name only: its launcher pod when it has one, else node 0 (find_leader_pod).
    kind_ = {"trainjobs", "", source_kind_ == "MPIJob" ? "launcher" : "node", true};
    kind_.launcher_first = source_kind_ == "TrainJob";
    kind_.job_label = "jobset.sigs.k8s.io/jobset-name";
    kind_.type_label = "jobset.sigs.k8s.io/replicatedjob-name";
    kind_.index_label = "jobset.sigs.k8s.io/job-index";
    // Job `node` is one indexed Job of numNodes pods: node 0 is its completion index 0.
    kind_.leader_extra = "batch.kubernetes.io/job-completion-index=0";
    kind_.rank_label = "batch.kubernetes.io/job-completion-index";
  }
  const json& replicas = member(job_, "spec", kind_.replica_map.c_str());
  if (kind == "TFJob" && replicas.contains("Chief")) kind_.leader_type = "chief", kind_.leader_index = false;
  else if (kind != "MPIJob" && replicas.contains("Master")) kind_.leader_type = "master", kind_.leader_index = false;

  // Pods and Services are named <job>-<role>-<index> and must stay DNS-1035 labels (63).
  name_ = rules::job_name_for_step(o_.step_name, pods_mode_ ? rules::kMaxPodsJobName : rules::kMaxJobName);
  json& meta = job_["metadata"];
  if (!meta.is_object()) meta = json::object();
  meta.erase("generateName");
  meta.erase("resourceVersion");
  meta.erase("uid");
  meta["name"] = name_;
  if (!meta["labels"].is_object()) meta["labels"] = json::object();
  if (!o_.workflow_name.empty())
    meta["labels"]["pipelines.kubeflow.org/workflow"] = label_value(o_.workflow_name);
  meta["labels"]["pipelines.kubeflow.org/step"] = label_value(o_.step_name);
  if (!o_.pod_uid.empty()) {
    meta["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                            {"kind", "Pod"},
                                            {"name", o_.step_name},
                                            {"uid", o_.pod_uid},
                                            {"blockOwnerDeletion", false},
                                            {"controller", false}}});
  } else if (!o_.dry_run) {
    warning("POD_UID is not set: the job will not be deleted with the workflow");
  }
  return true;
}

bool Launcher::write_ui_metadata() {
  if (o_.tensorboard.empty()) return true;
  // Find the data volume whose mount holds the log directory (in the job as rendered,
  // before any TrainJob was made of it: the same volumes).
  const json& replicas = member(source_job_, "spec", source_replica_map_.c_str());
  for (const auto& [type, replica] : replicas.items()) {
    const json& spec = member(replica, "template", "spec");
    if (!spec.contains("containers")) continue;
    for (const auto& container : member(spec, "containers")) {
      if (!container.contains("volumeMounts")) continue;
      for (const auto& mount : member(container, "volumeMounts")) {
        auto vname = member_text(mount, "name");
        auto path = member_text(mount, "mountPath");
        if (vname.rfind("data-", 0) != 0) continue;
        while (path.size() > 1 && path.back() == '/') path.pop_back();
        const auto& tb = o_.tensorboard;
        if (!rules::is_inside_mount(tb, path)) continue;
        std::string sub = tb.substr(path.size());
        while (!sub.empty() && sub.front() == '/') sub.erase(sub.begin());
        json volume;
        for (const auto& v : member(spec, "volumes"))
          if (member_text(v, "name") == vname) volume = v;
        if (volume.is_null()) continue;
        json doc = {{"version", 1},
                    {"outputs",
                     json::array({{{"type", "tensorboard"},
                                   {"source", "volume://" + vname + (sub.empty() ? "" : "/" + sub)},
                                   {"pod_template_spec",
                                    {{"spec",
                                      {{"containers", json::array({{{"volumeMounts",
                                                                      json::array({{{"name", vname},
                                                                                    {"mountPath", path}}})}}})},
                                       {"volumes", json::array({volume})}}}}}}})}};
        std::string why;
        if (!fileio::write_file_atomically(o_.ui_metadata_file, doc.dump() + "\n", why, fileio::Folders::Create)) {
          error(why);
          return false;
        }
        return true;
      }
    }
  }
  error(fmt::format("{} '{}' is not inside a data volume of the job", rules::launcher_flag(Option::Tensorboard),
                    o_.tensorboard));
  return false;
}

std::optional<int> Launcher::create_or_adopt() {
  if (pods_mode_) return create_pods();
  auto stopped = [this] {
    say("stopped by a signal before the job was created; nothing was sent after it");
    return kExitStopped;
  };
  auto r = call("POST", jobs_path(), job_.dump());
  if (r.status == 201 || r.status == 200) {
    say(fmt::format("created {} {}/{}", job_["kind"].get<std::string>(), ns_, name_));
    return std::nullopt;  // a stop now ends the following at once, and deletes the job
  }
  if (r.cancelled || (stop_ && transient(r))) return stopped();
  if (r.status == 409) {
    auto g = call("GET", job_path());
    if (g.cancelled || (stop_ && transient(g))) return stopped();
    if (!g.ok()) {
      report_api_error(g, "get", resource());
      return kExitApiError;
    }
    json existing = input::parse_json(g.body);
    std::string step;
    step = member_text(member(existing, "metadata", "labels"), "pipelines.kubeflow.org/step");
    if (step != label_value(o_.step_name)) {
      error(fmt::format("{} '{}' already exists in namespace '{}' and belongs to another step "
                        "(label pipelines.kubeflow.org/step is '{}')",
                        resource(), name_, ns_, step));
      return kExitApiError;
    }
    say(fmt::format("adopted the existing {} {}/{} (the step was restarted)",
                    job_["kind"].get<std::string>(), ns_, name_));
    return std::nullopt;
  }
  report_api_error(r, "create", resource());
  return kExitApiError;
}

bool Launcher::delete_job() {
  if (pods_mode_) return delete_pods(false);
  json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  HttpResponse r;
  for (int attempt = 0; attempt < std::max(1, o_.api_retries); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(o_.retry_delay);  // even when stopping
    r = client_->request("DELETE", job_path(), options.dump());
    if (!transient(r)) break;
  }
  if (r.ok() || r.status == 404) {
    say(fmt::format("deleted job {}", name_));
    return true;
  }
  report_api_error(r, "delete", resource());
  return false;
}

// Runtime "pods": the headless Services first (so every name resolves when the pods
// start), then the Pods, each with its TF_CONFIG. One that exists already is adopted when
// it carries this step's label (a restarted step), else it is an error. Whatever was
// created is deleted again when a later request fails.
bool Launcher::write_metrics() {
  scraper_->finish();
  for (auto& w : scraper_->take_warnings()) warning(w);
  std::string why;
  if (!fileio::write_file_atomically(o_.metrics_file, scraper_->metrics_json(), why, fileio::Folders::Create)) {
    error(why);
    return false;
  }
  auto series_file = rules::metrics_cli::series_path(o_.metrics_file, o_.series_file);
  if (!fileio::write_file_atomically(series_file, scraper_->series_json(), why, fileio::Folders::Create)) {
    error(why);
    return false;
  }
  if (!o_.executor_input.empty()) {
    // KFP v2 reads the metrics from the ExecutorOutput as the metrics artifact's metadata.
    std::string file, output;
    if (!scraper_->executor_output(o_.executor_input, file, output, why) ||
        !fileio::write_file_atomically(file, output, why, fileio::Folders::Create)) {
      error(why);
      return false;
    }
  }
  for (std::size_t i = 0; i < scraper_->specs().size(); ++i)
    if (!scraper_->value(i))
      warning(fmt::format("metric '{}' was not found in the log", scraper_->specs()[i].name));
  return true;
}

int Launcher::run() {
  if (!prepare()) return kExitBadArguments;
  if (o_.dry_run) {
    // Everything is checked that can be without the cluster: print what would be created.
    out_ << job_.dump(2) << '\n' << std::flush;
    return kExitSucceeded;
  }
  if (!write_ui_metadata()) return kExitBadArguments;
  // Only now the API: a bad value never waits for (or fails on) the cluster configuration.
  std::string why;
  client_ = connect_(why);
  // From here on every exit writes the metrics file, so KFP always finds its output.
  if (!client_) {
    error(why);
    write_metrics();
    return kExitApiError;
  }
  ns_ = o_.namespace_name.empty() ? client_->config().namespace_name : o_.namespace_name;
  if (ns_.empty()) {
    error("no namespace: give --namespace");
    write_metrics();
    return kExitBadArguments;
  }
  if (!rules::is_dns1123_label(ns_)) {  // a namespace name; it goes into request paths
    error(fmt::format("namespace '{}' is not a valid namespace name (lower-case letters, digits "
                      "and '-', at most 63)", ns_));
    write_metrics();
    return kExitBadArguments;
  }
  job_["metadata"]["namespace"] = ns_;
  if (auto code = precheck(); code || (code = create_or_adopt())) {
    write_metrics();
    return *code;
  }
  std::thread log_thread([this] { follow_log(); });
  std::thread reasons_thread([this] { watch_reasons(); });
  Outcome outcome = follow();
  job_done_ = true;
  waiting_over_ = true;
  reasons_thread.join();
  // The pending timeout names why the job waits, as of now, on the last line.
  std::string why_pending;
  if (outcome == Outcome::PendingTimeout) {
    read_reasons();
    why_pending = waiting_summary();
  }
  // Runtime "pods": the parameter servers never exit; once the job has ended they go at
  // once, even with --keep-job (whose pods otherwise stay to be looked at).
  if (pods_mode_ && (outcome == Outcome::Succeeded || outcome == Outcome::Failed)) (void)delete_pods(true);

  // Say why it ends, and for an end the job did not reach itself (a timeout, an API error,
  // a stop) delete the job first: its pods may still hold GPUs, and their log only ends
  // when they do. A job that succeeded or failed is deleted after its log and failure
  // report are read.
  int code = kExitSucceeded;
  switch (outcome) {
    case Outcome::Succeeded: break;
    case Outcome::Failed: code = kExitFailed; break;
    case Outcome::PendingTimeout: code = kExitTimeout; break;  // said last, below
    case Outcome::RunningTimeout:
      error(fmt::format("job {} ran longer than {} (--running-timeout)", name_,
                        format_duration(o_.running_timeout)));
      code = kExitTimeout;
      break;
    case Outcome::Stopped:
      say("stopped by a signal; deleting the job");
      code = kExitStopped;
      break;
    case Outcome::Deleted:
      error(fmt::format("job {} was deleted by someone else", name_));
      code = kExitFailed;
      break;
    case Outcome::ApiError: code = kExitApiError; break;
  }
  bool remove = outcome == Outcome::Stopped || (!o_.keep_job && outcome != Outcome::Deleted);
  bool cut_short = outcome != Outcome::Succeeded && outcome != Outcome::Failed &&
                   outcome != Outcome::Deleted;
  std::optional<bool> deleted;
  if (remove && cut_short) deleted = delete_job();
  // Runtime "pods": no operator stops the other pods of a failed job, and the leader's log
  // ends only when its pod does: say why it failed (the failed pod's last lines), then
  // delete everything, then read the leader's log to its end.
  bool reported = false;
  if (pods_mode_ && outcome == Outcome::Failed) {
    report_failure();
    reported = true;
    if (remove) deleted = delete_job();
  }
  {
    // Let the log catch up with the job's end, but not forever; a stop signal cuts it short.
    std::unique_lock lock(log_mutex_);
    auto until = Clock::now() + (outcome == Outcome::Stopped ? milliseconds(0) : o_.log_grace);
    while (!log_finished_ && Clock::now() < until && !(stop_ && outcome != Outcome::Stopped))
      log_cv_.wait_for(lock, milliseconds(20));
  }
  log_abort_ = true;
  log_thread.join();

  if (outcome == Outcome::Succeeded) say(fmt::format("job {} succeeded", name_));
  if (outcome == Outcome::Failed && !reported) report_failure();
  if (outcome == Outcome::Failed) decide_retry();
  remove = remove || retrying_;  // a job to be created again goes, even with --keep-job
  // The log could not be read for lack of permission: the job's outcome stands, but the
  // step's log and metrics are missing, which a success must not hide.
  if ((log_forbidden_ || pods_forbidden_) && code == kExitSucceeded) {
    error(fmt::format("job {} succeeded, but its log could not be read (forbidden), so the step's "
                      "log and metrics are missing",
                      name_));
    code = kExitApiError;
  }
  if (!write_metrics() && code == kExitSucceeded) code = kExitFailed;
  if (remove && !deleted.has_value()) deleted = delete_job();
  if (remove && !*deleted && code == kExitSucceeded) code = kExitApiError;
  retrying_ = retrying_ && *deleted && wait_gone();
  outcome_text_ = code == kExitSucceeded ? "succeeded"
                  : outcome == Outcome::Failed
                      ? "failed" + (failure_texts_.empty() ? "" : ": " + failure_texts_.front())
                      : fmt::format("ended with exit code {}", code);
  if (outcome == Outcome::PendingTimeout)
    error(fmt::format("job {} did not start running within {} (--pending-timeout){}", name_,
                      format_duration(o_.pending_timeout), why_pending.empty() ? "" : ": " + why_pending));
  return code;
}

}  // namespace launcher_detail


int run_launcher(const LauncherOptions& options, KubeClient& client, std::ostream& out,
                 std::ostream& err, const std::atomic<bool>& stop) {
  ConnectFn connect = [&client](std::string&) { return &client; };
  return run_launcher(options, connect, out, err, stop);
}

}  // namespace pipec::runtime
