// The order of the sources is the KFP UI's (handlers/pod-logs.ts): the pod, then the
// archive. pipec asks the UI's server first because it holds both and needs only the KFP
// credentials; the Kubernetes API needs a kubeconfig with `pods/log` rights.

#include "compiler/client/kfp/logs.hpp"

#include <functional>
#include <ostream>

#include <fmt/format.h>

#include "rules/names.hpp"
#include "compiler/client/kfp/commands.hpp"
#include "compiler/client/kfp/flows.hpp"
#include "compiler/client/kfp/resources.hpp"
#include "kube/client.hpp"

namespace pipec::client::kfp {

namespace {

std::string text(const Record& record, const char* key) {
  auto it = record.find(key);
  return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Where Argo puts a pod's archived log with the KFP UI server's default key format
// (frontend/server/configs.ts: ARGO_KEYFORMAT, ARGO_ARCHIVE_BUCKETNAME).
std::string archive_hint(const std::string& workflow, const std::string& pod) {
  return fmt::format(
      "an installation that archives logs (Argo's archiveLogs, and the KFP UI server's "
      "ARGO_ARCHIVE_LOGS=true) keeps them in its artifact store, by default "
      "mlpipeline/artifacts/{}/YYYY/MM/DD/{}/main.log, and the UI's endpoint reads them from "
      "there",
      workflow.empty() ? "WORKFLOW" : workflow, pod);
}

// One step's log from the UI's server, handed to `write` as it comes (a log has no size
// bound); false with `why` set when it could not.
bool from_ui(const LogsArgs& logs, const Connection& connection, HttpTransport& transport,
             const std::string& pod, const std::string& ns,
             const std::function<bool(std::string_view)>& write, ApiStatus& why) {
  Connection ui = connection;
  if (!logs.ui_host.empty()) ui.host = logs.ui_host;
  while (!ui.host.empty() && ui.host.back() == '/') ui.host.pop_back();
  KfpApi api(transport, ui);
  std::string path = "/k8s/pod/logs?podname=" + url_encode(pod) + "&runid=" + url_encode(logs.run_id);
  if (!ns.empty()) path += "&podnamespace=" + url_encode(ns);
  why = api.get_text(
      fmt::format("cannot read the log of pod '{}' from the KFP UI at '{}'", pod, ui.host), path,
      write);
  return why.ok;
}

// What to do when the UI's endpoint gave no log: another address if it was not the UI
// that answered (nothing, 404, a page), else the Kubernetes API.
std::string ui_hint(const ApiStatus& why) {
  bool the_ui_failed =
      why.reached && why.http_status != 404 && (why.http_status < 200 || why.http_status >= 300);
  if (!the_ui_failed) return "give --ui-host with the KFP UI's address, or --kubeconfig";
  return why.http_status == 0 ? "the KFP UI was reached but did not send the log in time: give a "
                                "longer --request-timeout, or "
                                "read it from the Kubernetes API with --kubeconfig"
                              : "the KFP UI was reached but could not give the log: read it from "
                                "the Kubernetes API with "
                                "--kubeconfig";
}

}  // namespace

int logs_command(const LogsArgs& logs, const OperateArgs& args, const Connection& connection,
                 HttpTransport& transport, std::ostream& shown_out, std::ostream& shown_err) {
  // Whatever a server answers, the connection's secrets are never printed.
  RedactedStream out(shown_out, connection), err(shown_err, connection);
  KfpApi api(transport, connection, args.retry);
  if (args.v2) api.set_api_version(ApiVersion::V2beta1);
  Record run;
  if (ApiStatus status = get(api, Kind::Run, logs.run_id, run); !status) {
    print_error(err, status.message);
    return kExitErrors;
  }
  std::vector<Record> steps;
  std::string names;
  for (const Record& step : run["steps"]) {
    if (text(step, "pod").empty()) continue;
    names += (names.empty() ? "'" : ", '") + text(step, "name") + "'";
    // A step as the source names it (say_hello) finds its task (say-hello): pipec names
    // tasks with to_dns1123, as the workflow writer does.
    if (logs.step.empty() || logs.step == text(step, "name") || logs.step == text(step, "id") ||
        logs.step == text(step, "pod") || to_dns1123(logs.step) == text(step, "name"))
      steps.push_back(step);
  }
  if (steps.empty()) {
    print_error(err, logs.step.empty()
                         ? fmt::format("run '{}' has no step with a pod yet", logs.run_id)
                         : fmt::format("run '{}' has no step '{}'{}", logs.run_id, logs.step,
                                       names.empty() ? "" : "; its steps: " + names));
    return kExitErrors;
  }
  std::string ns = text(run, "namespace");
  if (ns.empty()) ns = connection.namespace_name;
  // The workflow's name (for the archive's path): an Argo node id is WORKFLOW-HASH. A v2
  // task id says nothing of it.
  std::string workflow;
  if (!args.v2) {
    workflow = text(steps.front(), "id");
    workflow = workflow.substr(0, workflow.rfind('-'));
  }

  std::optional<kube::KubeClient> kube;
  std::string kube_error;
  auto kube_client = [&]() -> kube::KubeClient* {
    if (kube) return &*kube;
    if (!kube_error.empty()) return nullptr;
    auto config = kube::load_kube_config(logs.kubeconfig, kube::InClusterPaths{}, kube_error);
    if (!config) {
      if (kube_error.empty()) kube_error = "no Kubernetes configuration";
      return nullptr;
    }
    kube.emplace(std::move(*config));
    return &*kube;
  };

  int status = kExitOk;
  for (const Record& step : steps) {
    const std::string pod = text(step, "pod");
    const std::string name = text(step, "name");
    if (steps.size() > 1)
      out << fmt::format("==> step '{}' (pod {}) <==\n", name, pod) << std::flush;
    ApiStatus ui_status;
    bool shown = false, ended_with_newline = true;
    auto show = [&](std::string_view piece) {
      out << piece;
      if (!piece.empty()) {
        shown = true;
        ended_with_newline = piece.back() == '\n';
      }
      return static_cast<bool>(out);
    };
    if (!logs.follow && !logs.kube_only) {
      bool read = from_ui(logs, connection, transport, pod, ns, show, ui_status);
      if (!ended_with_newline) out << '\n';
      out << std::flush;
      if (read) continue;
      if (shown) {  // part of the log is out: another source would show it twice
        print_error(err, ui_status.message);
        status = kExitErrors;
        continue;
      }
    }
    kube::KubeClient* client = kube_client();
    if (!client) {
      std::string message = fmt::format("cannot read the log of step '{}' (pod {})", name, pod);
      if (!ui_status.ok && !ui_status.message.empty()) message += "\n  " + ui_status.message;
      message += fmt::format("\n  and no Kubernetes API to ask: {}", kube_error);
      message += "\n  hint: " + ui_hint(ui_status);
      print_error(err, message);
      status = kExitErrors;
      continue;
    }
    std::string pod_ns = ns.empty() ? client->config().namespace_name : ns;
    if (pod_ns.empty()) pod_ns = "kubeflow";
    std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/log?container=main",
                                   kube::url_encode(pod_ns), kube::url_encode(pod));
    kube::HttpResponse answer;
    ended_with_newline = true;
    if (logs.follow) {
      answer = client->stream(path + "&follow=true",
                              [&](std::string_view data) {
                                out << data << std::flush;
                                if (!data.empty()) ended_with_newline = data.back() == '\n';
                                return static_cast<bool>(out);
                              },
                              [] { return false; });
    } else {
      answer = client->request("GET", path);
      if (answer.ok()) {
        out << answer.body;
        if (!answer.body.empty()) ended_with_newline = answer.body.back() == '\n';
      }
    }
    if (!ended_with_newline) out << '\n';
    out << std::flush;
    if (answer.ok()) continue;
    status = kExitErrors;
    if (answer.status == 404) {
      std::string message = fmt::format(
          "the pod '{}' of step '{}' is gone (garbage-collected: Argo's podGC or the workflow's "
          "TTL removed it, or the node was cleaned up)",
          pod, name);
      if (!ui_status.ok && !ui_status.message.empty())
        message += "\n  the KFP UI did not have it either: " + ui_status.message;
      message += "\n  hint: " + archive_hint(workflow, pod);
      print_error(err, message);
      continue;
    }
    std::string message = fmt::format("cannot read the log of pod '{}' from the Kubernetes API at '{}': ",
                                      pod, client->config().server);
    if (answer.status == 0) {
      message += answer.error;
    } else {
      auto [server_text, details] = server_message(answer.body);
      message += fmt::format("HTTP {}{}", answer.status, server_text.empty() ? "" : ": " + server_text);
      if (answer.status == 403) message += "\n  hint: the identity needs 'get' on pods/log in namespace '" + pod_ns + "'";
    }
    print_error(err, message);
  }
  return status;
}

void print_failed_steps(KfpApi& api, const std::string& run_id, std::ostream& out, int lines) {
  Record run;
  if (!get(api, Kind::Run, run_id, run)) return;
  std::string ns = text(run, "namespace");
  if (ns.empty()) ns = api.connection().namespace_name;
  for (const Record& step : run["steps"]) {
    const std::string state = text(step, "state"), pod = text(step, "pod"), name = text(step, "name");
    if (pod.empty() || !is_final_status(state) || is_success_status(state)) continue;
    LogsArgs logs;
    logs.run_id = run_id;
    // Only the end is shown: keep a window of the last bytes, whatever the log's size.
    constexpr std::size_t kTailBytes = 64 * 1024;
    std::string body;
    auto keep = [&](std::string_view piece) {
      body.append(piece);
      if (body.size() > 2 * kTailBytes) body.erase(0, body.size() - kTailBytes);
      return true;
    };
    ApiStatus why;
    if (!from_ui(logs, api.connection(), api.transport(), pod, ns, keep, why)) {
      out << fmt::format("step '{}' {}: see its log with: pipec logs {} '{}'\n", name, state, run_id, name);
      continue;
    }
    std::vector<std::string_view> tail;
    std::string_view rest = body;
    if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
    while (!rest.empty() && static_cast<int>(tail.size()) < lines) {
      std::size_t nl = rest.rfind('\n');
      tail.push_back(nl == std::string_view::npos ? rest : rest.substr(nl + 1));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(0, nl);
    }
    out << fmt::format("step '{}' {}; the end of its log (pipec logs {} '{}' for all of it):\n", name,
                       state, run_id, name);
    for (auto it = tail.rbegin(); it != tail.rend(); ++it) out << "  | " << *it << '\n';
  }
  out << std::flush;
}

}  // namespace pipec::client::kfp
