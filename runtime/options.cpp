// parse_options(): the launcher's command line (docs/runtime.md, "Command line").
#include <cstdlib>
#include <set>
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
    if (arg == "--keep-job") {
      o.keep_job = true;
      continue;
    }
    static const std::set<std::string_view> kValued = {
        "--manifest", "--bind", "--value", "--metric", "--metric-value", "--metrics-file",
        "--ui-metadata-file", "--tensorboard", "--workflow-name", "--step-name", "--namespace",
        "--kubeconfig", "--pending-timeout", "--running-timeout", "--poll-interval",
        "--retry-delay", "--log-grace", "--executor-input", "--runtime", "--trainer-runtime",
        "--tf-chief-role"};
    std::string value;
    auto eq = arg.find('=');
    if (!kValued.count(std::string_view(arg).substr(0, arg.rfind("--", 0) == 0 ? eq : std::string::npos))) {
      error = fmt::format("unknown option '{}'", arg.substr(0, eq));
      return std::nullopt;
    }
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      error = fmt::format("option '{}' needs a value", arg);
      return std::nullopt;
    }
    auto duration = [&](milliseconds& slot) {
      // "" is none: a step's timeout chosen at run time may be left empty.
      auto d = value.empty() ? std::optional<milliseconds>(0) : parse_duration(value);
      if (!d) error = fmt::format("{} expects a duration (e.g. 90s, 30m, 4h, 2d, 0), got '{}'", arg, value);
      else slot = *d;
      return d.has_value();
    };
    if (arg == "--manifest") o.manifest = value, have_manifest = true;
    else if (arg == "--bind") o.bind_args.push_back(value);
    else if (arg == "--value") o.value_args.push_back(value);
    else if (arg == "--metric") o.metric_args.push_back(value);
    else if (arg == "--metric-value") o.metric_value_args.push_back(value);
    else if (arg == "--metric-list-value") o.metric_list_value_args.push_back(value);
    else if (arg == "--metrics-file") o.metrics_file = value;
    else if (arg == "--ui-metadata-file") o.ui_metadata_file = value;
    else if (arg == "--tensorboard") o.tensorboard = value;
    else if (arg == "--executor-input") o.executor_input = value;
    else if (arg == "--runtime") o.runtime = value;
    else if (arg == "--trainer-runtime") o.trainer_runtime = value;
    else if (arg == "--tf-chief-role") o.tf_chief_role = value;
    else if (arg == "--workflow-name") o.workflow_name = value;
    else if (arg == "--step-name") o.step_name = value;
    else if (arg == "--namespace") o.namespace_name = value;
    else if (arg == "--kubeconfig") o.kubeconfig = value;
    else if (arg == "--pending-timeout") { if (!duration(o.pending_timeout)) return std::nullopt; }
    else if (arg == "--running-timeout") { if (!duration(o.running_timeout)) return std::nullopt; }
    else if (arg == "--poll-interval") { if (!duration(o.poll_interval)) return std::nullopt; }
    else if (arg == "--retry-delay") { if (!duration(o.retry_delay)) return std::nullopt; }
    else if (arg == "--log-grace") { if (!duration(o.log_grace)) return std::nullopt; }
    else {
      error = fmt::format("unknown option '{}'", arg);
      return std::nullopt;
    }
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
