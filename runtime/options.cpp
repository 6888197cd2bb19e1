// parse_options(): the launcher's command line (docs/runtime.md, "Command line").
#include <cstdlib>
#include <functional>
#include <string_view>

#include <fmt/format.h>

#include "runtime/job_render.hpp"
#include "runtime/launcher.hpp"
#include "runtime/metrics.hpp"

namespace pipec::runtime {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kUsage =
    "usage: pipec-launcher --manifest JSON --step-name NAME [OPTIONS]\n"
    "Creates a Kubeflow training job (MPIJob, TFJob, PyTorchJob), follows it, copies the\n"
    "training log to stdout and writes KFP's metrics; see docs/runtime.md.\n"
    "\n"
    "  --manifest JSON            the job for the parameters' default values\n"
    "  --bind POINTER=NAME:KIND   a run-time value replaces the manifest at POINTER\n"
    "                             (KIND: string, int, quantity, bool, env, data)\n"
    "  --value NAME=TEXT          the run-time text of the value NAME\n"
    "  --metric NAME[:FORMAT][:AGG]  a metric to collect (FORMAT RAW|PERCENTAGE, AGG last|max|min)\n"
    "  --metric-value NAME        a metric spec given by the value NAME\n"
    "  --metric-list-value NAME   metric specs given by the value NAME (a JSON list)\n"
    "  --metrics-file PATH        default /tmp/outputs/mlpipeline-metrics.json\n"
    "  --ui-metadata-file PATH    default /tmp/outputs/mlpipeline-ui-metadata.json\n"
    "  --tensorboard PATH         a log directory inside a data volume\n"
    "  --runtime R                operator (default), trainer-v2 (a pytorch_job or mpi_job as a TrainJob)\n"
    "                             or pods (a tf_job as plain Pods and Services with TF_CONFIG)\n"
    "  --tf-chief-role R          with pods: chief (default) or master, the chief's TF_CONFIG name\n"
    "  --trainer-runtime NAME     the TrainJob's ClusterTrainingRuntime (default torch-distributed,\n"
    "                             deepspeed-distributed for an MPIJob)\n"
    "  --executor-input JSON      KFP v2's {{$}}: write the metrics into its ExecutorOutput too\n"
    "  --workflow-name NAME, --step-name NAME\n"
    "  --pending-timeout D, --running-timeout D   e.g. 90s, 30m, 4h, 2d; 0 = none\n"
    "  --keep-job                 do not delete the job after it ends\n"
    "  --dry-run                  check the arguments and values, print the job it would\n"
    "                             create (JSON) and exit, without the cluster\n"
    "  --namespace NS             default: the pod's namespace\n"
    "  --kubeconfig PATH          use a kubeconfig instead of the in-cluster account\n"
    "\n"
    "exit codes: 0 succeeded, 1 failed, 2 bad arguments or value, 3 timeout, 4 API error,\n"
    "5 stopped by a signal\n";

}  // namespace

std::optional<LauncherOptions> parse_options(const std::vector<std::string>& args,
                                             std::string& error, std::string& help) {
  LauncherOptions o;
  error.clear();  // the result speaks for this call only
  bool have_manifest = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h" || arg == "--help") {
      help = std::string(kUsage);
      error.clear();
      return std::nullopt;
    }
    // The flags without a value.
    if (arg == "--keep-job" || arg == "--dry-run") {
      (arg == "--keep-job" ? o.keep_job : o.dry_run) = true;
      continue;
    }
    // Every option with a value, once: what it is called and where its value goes. The
    // compiler writes these words (compiler/emit/kubeflow/launcher_call.cpp); the test
    // launcher.compiler_words runs this parser on every word it can write.
    using Set = std::function<bool(LauncherOptions&, const std::string&, const std::string&)>;
    auto text = [](std::string LauncherOptions::*slot) -> Set {
      return [slot](LauncherOptions& to, const std::string&, const std::string& v) {
        to.*slot = v;
        return true;
      };
    };
    auto list = [](std::vector<std::string> LauncherOptions::*slot) -> Set {
      return [slot](LauncherOptions& to, const std::string&, const std::string& v) {
        (to.*slot).push_back(v);
        return true;
      };
    };
    auto duration = [&error](milliseconds LauncherOptions::*slot) -> Set {
      return [slot, &error](LauncherOptions& to, const std::string& name, const std::string& v) {
        // "" is none: a step's timeout chosen at run time may be left empty.
        auto d = v.empty() ? std::optional<milliseconds>(0) : parse_duration(v);
        if (!d) error = fmt::format("{} expects a duration (e.g. 90s, 30m, 4h, 2d, 0), got '{}'", name, v);
        else to.*slot = *d;
        return d.has_value();
      };
    };
    const std::pair<std::string_view, Set> kValued[] = {
        {"--manifest", text(&LauncherOptions::manifest)},
        {"--bind", list(&LauncherOptions::bind_args)},
        {"--value", list(&LauncherOptions::value_args)},
        {"--metric", list(&LauncherOptions::metric_args)},
        {"--metric-value", list(&LauncherOptions::metric_value_args)},
        {"--metric-list-value", list(&LauncherOptions::metric_list_value_args)},
        {"--metrics-file", text(&LauncherOptions::metrics_file)},
        {"--ui-metadata-file", text(&LauncherOptions::ui_metadata_file)},
        {"--tensorboard", text(&LauncherOptions::tensorboard)},
        {"--executor-input", text(&LauncherOptions::executor_input)},
        {"--runtime", text(&LauncherOptions::runtime)},
        {"--trainer-runtime", text(&LauncherOptions::trainer_runtime)},
        {"--tf-chief-role", text(&LauncherOptions::tf_chief_role)},
        {"--workflow-name", text(&LauncherOptions::workflow_name)},
        {"--step-name", text(&LauncherOptions::step_name)},
        {"--namespace", text(&LauncherOptions::namespace_name)},
        {"--kubeconfig", text(&LauncherOptions::kubeconfig)},
        {"--pending-timeout", duration(&LauncherOptions::pending_timeout)},
        {"--running-timeout", duration(&LauncherOptions::running_timeout)},
        {"--poll-interval", duration(&LauncherOptions::poll_interval)},
        {"--retry-delay", duration(&LauncherOptions::retry_delay)},
        {"--log-grace", duration(&LauncherOptions::log_grace)},
    };
    auto eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
    std::string_view name = std::string_view(arg).substr(0, eq);
    const Set* set = nullptr;
    for (const auto& [flag, s] : kValued)
      if (flag == name) set = &s;
    if (!set) {
      error = fmt::format("unknown option '{}'", name);
      return std::nullopt;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      error = fmt::format("option '{}' needs a value", arg);
      return std::nullopt;
    }
    if (arg == "--manifest") have_manifest = true;
    if (!(*set)(o, arg, value)) return std::nullopt;
  }
  if (!have_manifest) error = "missing --manifest";
  else if (o.step_name.empty()) {
    // The kfp-v2 target gives no --step-name: the pod's name comes from the downward API.
    if (const char* pod = std::getenv("POD_NAME"); pod && *pod) o.step_name = pod;
    else error = "missing --step-name (and POD_NAME is not set)";
  }
  if (error.empty() && !o.executor_input.empty()) {
    // Refused now rather than after the training ran: the same reader writes it at the end.
    std::string file, json;
    (void)MetricScraper({}).executor_output(o.executor_input, file, json, error);
  }
  if (!error.empty()) return std::nullopt;
  return o;
}

}  // namespace pipec::runtime
