#include "compiler/driver/commands.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

#include <iostream>
#include <iterator>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "compiler/base/atomic_file.hpp"
#include "compiler/base/time_zone.hpp"
#include "rules/cron.hpp"
#include "rules/names.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/compile/budgets.hpp"
#include "compiler/compile/compile.hpp"
#include "compiler/tools/format.hpp"
#include "compiler/tools/lsp.hpp"
#include "compiler/tools/graph.hpp"
#include "compiler/tools/report.hpp"
#include "compiler/driver/options.hpp"
#include "compiler/driver/summary.hpp"
#include "compiler/package/package.hpp"
#include "compiler/sema/component.hpp"
#include "compiler/tools/component_export.hpp"
#include "compiler/compile/host.hpp"

namespace pipec::driver {

using namespace compile;  // compile_file(), the one path (compiler/compile)
using namespace tools;    // fmt, graph, lsp (compiler/tools)

namespace {

struct CheckOptions {
  std::string input;
  TargetOptions target;
  CommonOptions common;
};

struct BuildOptions {
  std::string input;
  std::string output;
  bool quiet = false;
  TargetOptions target;
  std::string kind = "workflow";  // workflow, workflow-template, cron-workflow (Argo documents)
  std::string cron;
  CommonOptions common;
};

// `dir/name.pipe` -> `dir/name.tar.gz` (a KFP package), or `dir/name.yaml` for an Argo
// WorkflowTemplate or CronWorkflow, which `argo` and kubectl take as YAML; a program from
// standard input goes to stdout.
std::string default_output(const std::string& input, const std::string& kind) {
  if (input == "-") return "-";
  std::string base = input;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".pipe") == 0) base.resize(base.size() - 5);
  return base + (kind == "workflow" ? ".tar.gz" : ".yaml");
}

// --kind, --cron, --timezone and --concurrency-policy into the writer's options; false
// after printing what is wrong (a usage error).
bool document_options(BuildOptions& options) {
  auto fail = [](const std::string& message) {
    std::cerr << "pipec: error: " << message << '\n';
    return false;
  };
  const std::string& kind = options.kind;
  emit::argo::CronOptions& cron = options.target.cron;
  if (kind != "cron-workflow" &&
      (!options.cron.empty() || !cron.timezone.empty() || !cron.concurrency_policy.empty()))
    return fail("--cron, --timezone and --concurrency-policy go with --kind cron-workflow");
  if (kind != "workflow" && options.target.target != "kfp-v1")
    return fail(fmt::format("--kind {} writes an Argo document: it goes with --target kfp-v1", kind));
  if (kind == "workflow-template") options.target.kind = emit::argo::DocumentKind::WorkflowTemplate;
  if (kind != "cron-workflow") return true;
  options.target.kind = emit::argo::DocumentKind::CronWorkflow;
  if (options.cron.empty()) return fail("--kind cron-workflow needs --cron, e.g. --cron '0 2 * * *'");
  CronSchedule schedule;
  std::string error;
  if (!parse_cron(options.cron, schedule, error))
    return fail(fmt::format("--cron '{}': {}", cron_text(options.cron), error));
  cron.schedule = schedule.argo();
  if (cron.schedule.empty())
    return fail(fmt::format("--cron '{}': Argo's cron has no seconds field: the seconds must be 0 "
                            "(or give the 5 fields minute hour day-of-month month day-of-week)",
                            cron_text(options.cron)));
  if (!cron.timezone.empty() && !check_time_zone(cron.timezone, error))
    return fail("--timezone: " + error);
  return true;
}

int run_check(const CheckOptions& options) {
  // Everything `build` does but writing: the same diagnostics, budgets included.
  SourceManager sources;
  Diagnostics diags;
  (void)compile_file(sources, options.input, options.target, diags);
  print_diagnostics(diags, sources, options.common);
  return diags.has_errors() ? kExitErrors : kExitOk;
}

// The pipeline built lives until the process ends: freeing its nodes one at a time, just
// before the exit frees them all at once, was 3 % of a large build (as clang's
// -disable-free). A global holds it, so a leak checker sees it reachable.
void keep_until_exit(std::optional<ir::Pipeline>&& pipeline) {
  static auto* kept = new std::vector<std::optional<ir::Pipeline>>();
  kept->push_back(std::move(pipeline));
}

int run_build(BuildOptions options) {
  if (!document_options(options)) return kExitUsage;
  std::string output = options.output.empty() ? default_output(options.input, options.kind) : options.output;
  package::Format format = package::Format::Yaml;
  if (output != "-" && !package::format_for_path(output, format)) {
    std::cerr << fmt::format(
        "pipec: error: cannot tell the package format of '{}': use .tar.gz, .tgz, .zip, .yaml or .yml\n",
        output);
    return kExitUsage;
  }
  // A KFP package holds a Workflow (pipeline.yaml): KFP reads nothing else from it, and Argo
  // takes a CronWorkflow or WorkflowTemplate as a YAML document, not in a package.
  if (options.kind != "workflow" && format != package::Format::Yaml) {
    std::cerr << fmt::format("pipec: error: --kind {} writes an Argo document, which no KFP package holds "
                             "(KFP reads a Workflow from one): write it as YAML (-o FILE.yaml, or -o -) "
                             "and apply it with kubectl or argo\n",
                             options.kind);
    return kExitUsage;
  }

  if (options.target.launcher_image.empty()) {
    std::cerr << "pipec: error: --launcher-image must name an image\n";
    return kExitUsage;
  }
  if (!options.target.service_account.empty() && !is_dns1123_subdomain(options.target.service_account)) {
    std::cerr << fmt::format("pipec: error: --service-account '{}' is not a Kubernetes name "
                             "(lower-case letters, digits, '-' and '.', at most 253)\n",
                             options.target.service_account);
    return kExitUsage;
  }
  SourceManager sources;
  Diagnostics diags;
  // A .yaml output is the text itself: it goes into the file (a temporary one until the
  // build has passed) piece by piece as it is written, never held whole. A package, or
  // stdout (nothing may reach it from a build that fails), takes the text whole.
  fileio::AtomicFile file;
  std::string error;
  const bool stream = output != "-" && format == package::Format::Yaml && file.open(output, error);
  TextSink to_file;
  if (stream) to_file = [&file](std::string_view piece) { file.write(piece); };
  Compiled compiled = compile_file(sources, options.input, options.target, diags,
                                   output == "-" ? package::Format::Yaml : format, to_file);
  const std::optional<ir::Pipeline>& pipeline = compiled.pipeline;
  print_diagnostics(diags, sources, options.common);
  if (!pipeline || diags.has_errors()) return kExitErrors;  // `file` goes with nothing written

  if (output == "-") {
    std::cout << compiled.text;
    std::cout.flush();
    return std::cout ? kExitOk : kExitErrors;
  }
  const bool written = format == package::Format::Yaml
                           ? stream && file.commit(error)  // else `error` says why it could not open
                           : fileio::write_file_atomically(output, compiled.package, error);
  if (!written) {
    std::cerr << "pipec: error: " << error << '\n';
    return kExitErrors;
  }
  if (!options.quiet)
    print_summary(*pipeline, output, format == package::Format::Yaml ? compiled.text_bytes : compiled.package.size(),
                  std::cout);
  keep_until_exit(std::move(compiled.pipeline));
  return kExitOk;
}

// `pipec graph`: the step DAG, checked as `check` does, written in a format.
int run_graph(const std::string& input, const std::string& format, const std::string& output,
              bool force, const std::string& chosen, const CommonOptions& common) {
  SourceManager sources;
  Diagnostics diags;
  // Checked as `check` checks it: the task names are the Argo workflow's.
  TargetOptions target;
  target.pipeline = chosen;
  std::optional<ir::Pipeline> pipeline = compile_file(sources, input, target, diags).pipeline;
  if (pipeline && !diags.has_errors() && !force) {
    // The KFP UI draws nothing this large, and Graphviz takes minutes on it (10,000 steps:
    // over 150 s): one limit with the build's budget (budgets.hpp).
    std::size_t nodes = 0, edges = 0;
    count_graph(*pipeline, nodes, edges);
    if (std::size_t limit = Budgets{}.ui_nodes; nodes > limit || edges > limit)
      diags.error(pipeline->range,
                  fmt::format("the pipeline has {} steps and loops and {} dependencies; pipec graph "
                              "draws at most {} nodes and {} edges, as the KFP UI does (give --force "
                              "to draw it anyway; Graphviz may take minutes)",
                              nodes, edges, limit, limit));
  }
  print_diagnostics(diags, sources, common);
  if (!pipeline || diags.has_errors()) return kExitErrors;
  std::string text = format == "json"      ? graph_json(*pipeline)
                     : format == "mermaid" ? graph_mermaid(*pipeline)
                                           : graph_dot(*pipeline);
  if (format == "svg") {
    // Graphviz's dot renders it: the dot text on its stdin, the SVG from its stdout.
    std::string dot_in = output == "-" ? std::string() : output + ".dot-input";
    char tmpl[] = "/tmp/pipec-graph-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) {
      std::cerr << "pipec: error: cannot make a temporary file\n";
      return kExitErrors;
    }
    (void)!::write(fd, text.data(), text.size());
    ::close(fd);
    std::string command = std::string("dot -Tsvg < '") + tmpl + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string svg;
    char buffer[4096];
    std::size_t n;
    while (pipe && (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) svg.append(buffer, n);
    int status = pipe ? ::pclose(pipe) : -1;
    ::unlink(tmpl);
    if (status != 0) {
      std::cerr << (WIFEXITED(status) && WEXITSTATUS(status) == 127
                        ? std::string("pipec: error: --format svg needs Graphviz's 'dot' on PATH "
                                      "(Debian: apt-get install graphviz); --format dot writes its input\n")
                        : "pipec: error: dot failed: " + svg + "\n");
      return kExitErrors;
    }
    text = std::move(svg);
  }
  if (output == "-") {
    std::cout << text;
    std::cout.flush();
    return std::cout ? kExitOk : kExitErrors;
  }
  if (Status status = write_file_atomically(output, text); !status) {
    std::cerr << "pipec: error: " << status.message() << '\n';
    return kExitErrors;
  }
  return kExitOk;
}

// The format `pipec graph -o OUT` writes: the one its extension names (.dot/.gv,
// .mmd/.mermaid, .json, .svg) unless --format was given, which must then agree with a
// known extension. An image format pipec does not write (.png, ...) is refused with the
// command that makes one. Returns false after printing why.
bool graph_format_for_output(const std::string& output, bool format_given, std::string& format) {
  if (output == "-") return true;
  std::string ext = output.substr(output.find_last_of('/') + 1);
  ext = ext.find('.') == std::string::npos ? "" : ext.substr(ext.rfind('.') + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string named = ext == "dot" || ext == "gv"          ? "dot"
                      : ext == "mmd" || ext == "mermaid"   ? "mermaid"
                      : ext == "json" || ext == "svg"      ? ext
                                                           : "";
  if (named.empty()) {
    static const std::set<std::string> kImages = {"png", "jpg", "jpeg", "gif", "pdf", "ps", "eps", "bmp", "webp"};
    if (kImages.count(ext)) {
      std::cerr << fmt::format("pipec: error: -o '{}': pipec graph writes dot, mermaid, json or svg, not {}; "
                               "for {} run Graphviz: pipec graph FILE.pipe | dot -T{} -o '{}'\n",
                               output, ext, ext, ext, output);
      return false;
    }
    return true;  // any other name: the format asked for (default dot)
  }
  if (format_given && named != format) {
    std::cerr << fmt::format("pipec: error: --format {} does not match -o '{}', which names {}; give one "
                             "of them or make them agree\n",
                             format, output, named);
    return false;
  }
  format = named;
  return true;
}

}  // namespace

void add_graph_command(CLI::App& app, int& exit_code) {
  struct GraphOptions {
    std::string input, format = "dot", output = "-", pipeline;
    bool force = false;
    CommonOptions common;
  };
  auto options = std::make_shared<GraphOptions>();
  CLI::App* cmd = app.add_subcommand(
      "graph", "Draw the step DAG: loops and conditions as clusters, finally apart, after/data edges");
  cmd->add_option("file", options->input, "The .pipe file, or - for standard input")->required();
  cmd->add_option("--format", options->format,
                  "dot, mermaid, json, or svg (through Graphviz's dot); default: from -o's extension "
                  "(.dot/.gv, .mmd/.mermaid, .json, .svg), else dot")
      ->check(CLI::IsMember({"dot", "mermaid", "json", "svg"}))
      ->default_str("dot");
  cmd->add_option("-o,--output", options->output, "Where to write it (default: standard output)");
  cmd->add_flag("--force", options->force,
                "Draw a graph of more than 1000 nodes or edges (refused otherwise: the KFP UI draws "
                "none, and Graphviz takes minutes)");
  cmd->add_option("--pipeline", options->pipeline,
                  "The pipeline of the file to draw, when several are not called by another");
  add_common_options(*cmd, options->common);
  cmd->callback([options, format_opt = cmd->get_option("--format"), &exit_code] {
    std::string format = options->format;
    if (!graph_format_for_output(options->output, format_opt->count() > 0, format)) {
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_graph(options->input, format, options->output, options->force, options->pipeline,
                          options->common);
  });
}

void add_report_command(CLI::App& app, int& exit_code) {
  struct ReportOptions {
    std::vector<std::string> dirs;
    std::string output;
  };
  auto options = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Write one HTML page of local runs: DAG, timeline, a chart per metric, parameters, metrics");
  cmd->add_option("run_dir", options->dirs, "Run directories of pipec run --local (several: compared)")
      ->required();
  cmd->add_option("-o,--output", options->output, "The page to write, or - for standard output")->required();
  cmd->callback([options, &exit_code] {
    std::vector<ReportRun> runs(options->dirs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::string error;
      if (!read_report_run(options->dirs[i], runs[i], error)) {
        std::cerr << "pipec: error: " << error << '\n';
        exit_code = kExitErrors;
        return;
      }
    }
    std::string page = report_html(runs);
    if (options->output == "-") {
      std::cout << page;
      std::cout.flush();
      exit_code = std::cout ? kExitOk : kExitErrors;
      return;
    }
    if (Status status = write_file_atomically(options->output, page); !status) {
      std::cerr << "pipec: error: " << status.message() << '\n';
      exit_code = kExitErrors;
      return;
    }
    exit_code = kExitOk;
  });
}

namespace {

// `pipec fmt`: each file in the canonical layout (format.hpp), printed, checked or
// rewritten. A file with a syntax error is reported as `check` reports it and left alone;
// a layout that would parse to another program (a defect of fmt) is refused, not written.
int run_fmt(const std::vector<std::string>& files, bool check, bool write, const CommonOptions& common) {
  int result = kExitOk;
  for (const auto& file : files) {
    SourceManager sources;
    Diagnostics diags;
    FileId id = load_input(sources, file, diags);
    Layout layout = id == kNoFile ? Layout{} : format_file(sources, id, diags);
    if (layout.status == Layout::SyntaxError) {
      print_diagnostics(diags, sources, common);
      result = kExitErrors;
      continue;
    }
    std::string text(sources.text(id));
    const std::string& formatted = layout.text;
    if (layout.status == Layout::WouldChangeProgram) {
      std::cerr << fmt::format("pipec: internal error: formatting '{}' would change the program; it is left "
                               "as it is (please report it)\n",
                               file);
      result = kExitErrors;
      continue;
    }
    if (check) {
      if (formatted != text) {
        std::cout << file << '\n';
        if (result == kExitOk) result = 1;
      }
    } else if (write && file != "-") {
      if (formatted == text) continue;
      if (Status status = write_file_atomically(file, formatted); !status) {
        std::cerr << "pipec: error: " << status.message() << '\n';
        result = kExitErrors;
      }
    } else {
      std::cout << formatted;
    }
  }
  std::cout.flush();
  return result;
}

}  // namespace

void add_fmt_command(CLI::App& app, int& exit_code) {
  struct FmtOptions {
    std::vector<std::string> files;
    bool check = false, write = false;
    CommonOptions common;
  };
  auto options = std::make_shared<FmtOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fmt", "Lay out .pipe files canonically (comments and strings kept): print, --check or --write");
  cmd->add_option("files", options->files, "The .pipe files, or - for standard input")->required();
  auto* check = cmd->add_flag("--check", options->check,
                              "Write nothing; list the files that would change and exit 1 if any");
  cmd->add_flag("-w,--write", options->write, "Rewrite the files that change, in place")->excludes(check);
  add_common_options(*cmd, options->common);
  cmd->callback([options, &exit_code] {
    // Printed one after the other, several results would be one text with no boundary.
    if (options->files.size() > 1 && !options->check && !options->write) {
      std::cerr << fmt::format("pipec: error: fmt prints the result of one file; with {} files give --check "
                               "(list those that would change) or --write (rewrite them in place)\n",
                               options->files.size());
      exit_code = kExitUsage;
      return;
    }
    exit_code = run_fmt(options->files, options->check, options->write, options->common);
  });
}

int read_component_file(const std::string& file, const CommonOptions& common, sema::component::Component& c,
                        const sema::component::Fetch& fetch, std::vector<std::string>* saved) {
  SourceManager sources;
  Diagnostics diags;
  std::string error;
  FileId id = sema::component::load_file(sources, file, error);
  if (id == kNoFile) {
    std::cerr << "pipec: error: cannot read '" << file << "': " << error << "\n";
    return kExitUsage;
  }
  bool ok = sema::component::read(sources, id, diags, c) &&
            sema::component::resolve_refs(sources, c, diags, compile::machine_host(), fetch, saved);
  print_diagnostics(diags, sources, common);
  return ok ? kExitOk : kExitErrors;
}

int run_component_show(const std::string& file, const CommonOptions& common) {
  sema::component::Component c;
  if (int code = read_component_file(file, common, c); code != kExitOk) return code;
  std::cout << sema::component::declaration(c);
  return kExitOk;
}

// `pipec component export FILE.pipe OP`: the op as a KFP v1 ComponentSpec.
int run_component_export(const std::string& file, const std::string& op, const std::string& output,
                         const CommonOptions& common) {
  SourceManager sources;
  Diagnostics diags;
  std::string yaml;
  bool ok = tools::export_component_of(sources, file, op, yaml, diags);
  print_diagnostics(diags, sources, common);
  if (!ok) return kExitErrors;
  if (output == "-") {
    std::cout << yaml;
    std::cout.flush();
    return std::cout ? kExitOk : kExitErrors;
  }
  if (Status status = write_file_atomically(output, yaml); !status) {
    std::cerr << "pipec: error: " << status.message() << '\n';
    return kExitErrors;
  }
  return kExitOk;
}

void add_component_command(CLI::App& app, int& exit_code) {
  struct ShowOptions {
    std::string file, op, output = "-";
    CommonOptions common;
  };
  auto options = std::make_shared<ShowOptions>();
  auto exported = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand("component", "KFP components (component.yaml) as ops");
  cmd->require_subcommand(1);
  CLI::App* show = cmd->add_subcommand(
      "show", "Print the op a KFP component.yaml makes, as .pipe source (what `use` imports)");
  show->add_option("file", options->file, "The component.yaml")->required();
  add_common_options(*show, options->common);
  show->callback([options, &exit_code] { exit_code = run_component_show(options->file, options->common); });
  CLI::App* exp = cmd->add_subcommand(
      "export", "Write a container op of a .pipe file as a KFP v1 component.yaml (kfp 1.8 and 2.x load it)");
  exp->add_option("file", exported->file, "The .pipe file that declares (or uses) the op")->required();
  exp->add_option("op", exported->op, "The op's name")->required();
  exp->add_option("-o,--output", exported->output, "Where to write it (default: standard output)");
  add_common_options(*exp, exported->common);
  exp->callback([exported, &exit_code] {
    exit_code = run_component_export(exported->file, exported->op, exported->output, exported->common);
  });
}

void add_lsp_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "lsp", "Language server over stdio for editors: diagnostics, hover, definition, completion, symbols");
  cmd->callback([&exit_code] { exit_code = run_lsp(std::cin, std::cout); });
}

void add_training_runtime_option(CLI::App& cmd, std::string& runtime) {
  cmd.add_option("--training-runtime", runtime,
                  "Where training steps that name no runtime run, a comma-separated list: "
                  "operator (the training operator's CRDs, default), trainer-v2 (a pytorch_job "
                  "as a Kubeflow Trainer v2 TrainJob), pods (a tf_job as plain Pods); each step "
                  "takes the first that fits its op")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            std::string_view list = value;
            while (true) {
              std::string_view one = list.substr(0, list.find(','));
              if (one != "operator" && one != "trainer-v2" && one != "pods")
                return "expected operator, trainer-v2 or pods (comma-separated), got '" + std::string(one) + "'";
              if (one.size() == list.size()) return {};
              list.remove_prefix(one.size() + 1);
            }
          },
          "{operator,trainer-v2,pods}[,...]"))
      ->default_str("operator");
}

void add_check_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand("check", "Parse and check a .pipe file; report every error");
  cmd->add_option("file", options->input, "The .pipe file, or - for standard input")->required();
  cmd->add_option("--target", options->target.target, "Back end whose rules are checked too: kfp-v1 (Argo) or kfp-v2")
      ->check(CLI::IsMember({"kfp-v1", "kfp-v2"}))
      ->default_str("kfp-v1");
  cmd->add_option("--pipeline", options->target.pipeline,
                  "The pipeline of the file to build, when several are not called by another");
  add_common_options(*cmd, options->common);
  cmd->callback([options, &exit_code] { exit_code = run_check(*options); });
}

void add_build_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<BuildOptions>();
  CLI::App* cmd = app.add_subcommand("build", "Compile a .pipe file into a Kubeflow Pipelines package");
  cmd->add_option("file", options->input, "The .pipe file, or - for standard input (then -o defaults to -)")->required();
  cmd->add_option("-o,--output", options->output,
                  "Output: .tar.gz/.tgz (default, beside the input), .zip, .yaml, or - for YAML on stdout");
  cmd->add_option("--service-account", options->target.service_account,
                  "Service account the workflow runs as (over the pipeline's own setting)")
      ->default_str("pipeline-runner");
  cmd->add_option("--launcher-image", options->target.launcher_image,
                  "Image of pipec-launcher for training steps")
      ->default_str(options->target.launcher_image);
  cmd->add_flag("--mpi-v1", options->target.mpi_v1,
                "Emit kubeflow.org/v1 MPIJobs (training-operator) instead of v2beta1 (mpi-operator)");
  add_training_runtime_option(*cmd, options->target.training_runtime);
  cmd->add_option("--target", options->target.target,
                  "kfp-v1: Argo Workflow for KFP v1 (default); kfp-v2: KFP v2 pipeline spec")
      ->check(CLI::IsMember({"kfp-v1", "kfp-v2"}))
      ->default_str("kfp-v1");
  cmd->add_option("--kind", options->kind,
                  "workflow: the Argo Workflow KFP runs (default); workflow-template: an Argo "
                  "WorkflowTemplate; cron-workflow: an Argo CronWorkflow (with --cron); both carry "
                  "the same templates and parameters (default output NAME.yaml)")
      ->check(CLI::IsMember({"workflow", "workflow-template", "cron-workflow"}))
      ->default_str("workflow");
  cmd->add_option("--cron", options->cron,
                  "With --kind cron-workflow: when to run, e.g. '0 2 * * *' (5 fields, or 6 with "
                  "seconds 0), or @daily, @hourly, @weekly, @monthly, @yearly");
  cmd->add_option("--timezone", options->target.cron.timezone,
                  "With --kind cron-workflow: the IANA time zone of --cron, e.g. Europe/Berlin");
  cmd->add_option("--concurrency-policy", options->target.cron.concurrency_policy,
                  "With --kind cron-workflow: when the previous run is still going: Allow, Forbid "
                  "or Replace (Argo's default: Allow)")
      ->check(CLI::IsMember({"Allow", "Forbid", "Replace"}));
  cmd->add_option("--pipeline", options->target.pipeline,
                  "The pipeline of the file to build, when several are not called by another");
  cmd->add_flag("-q,--quiet", options->quiet, "Print no summary");
  cmd->add_flag("--allow-oversize", options->target.allow_oversize,
                "Report the size limits a server would refuse as warnings, not errors (for "
                "measurements, or servers whose limits were raised)");
  add_common_options(*cmd, options->common);
  cmd->callback([options, &exit_code] { exit_code = run_build(*options); });
}

}  // namespace pipec::driver
