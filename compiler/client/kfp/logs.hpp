#pragma once
// `pipec logs RUN [STEP] [--follow]`: a step's log, read as the KFP UI reads it, so a user
// with only the KFP endpoint and a token can read it, else from the Kubernetes API.
//
// 1. The KFP UI's server: GET HOST/k8s/pod/logs?podname=POD&runid=RUN[&podnamespace=NS]
//    (kubeflow/pipelines frontend/server/app.ts and handlers/pod-logs.ts). It reads the
//    pod's log, and when the pod is gone, the log Argo archived (if the installation
//    archives logs). Through the Kubeflow ingress this is the same HOST as the API
//    (https://HOST/pipeline); in the cluster the UI is its own service (--ui-host).
// 2. Else, or with --follow, the Kubernetes API with a kubeconfig (or in-cluster
//    credentials), as pipec-launcher reads logs: GET /api/v1/namespaces/NS/pods/POD/log
//    ?container=main[&follow=true].
// A pod that is gone gets a message saying so and where archived logs would be.

#include <iosfwd>
#include <string>

#include "compiler/client/http.hpp"
#include "compiler/client/kfp/config.hpp"
#include "compiler/client/kfp/operate.hpp"

namespace pipec::client::kfp {

struct LogsArgs {
  std::string run_id;
  std::string step;         // a step's name, node/task id or pod; "" = every step
  bool follow = false;      // stream until the container ends (Kubernetes API)
  std::string ui_host;      // the KFP UI's address; "" = the API's host
  std::string kubeconfig;   // "" = in-cluster, $KUBECONFIG or ~/.kube/config
  bool kube_only = false;   // skip the UI's endpoint
};

/// Returns 0, or 1 when a log could not be read (every reason printed).
int logs_command(const LogsArgs& logs, const OperateArgs& args, const Connection& connection,
                 HttpTransport& transport, std::ostream& out, std::ostream& err);

/// For `run --wait` and `runs wait` when a run failed: each failed step that had a pod,
/// with the last `lines` lines of its log from the UI's server, or how to read it.
void print_failed_steps(KfpApi& api, const std::string& run_id, std::ostream& out, int lines = 20);

}  // namespace pipec::client::kfp
