#pragma once
// Preflight (issue 36): what to ask the Kubernetes API about the objects a pipeline needs,
// and how to judge each answer. One implementation for `pipec preflight` and the launcher's
// pre-check: the callers send the requests (bounded, through input/'s readers) and hand
// the answers here. No I/O. Preflight only reads: every request this file describes is a
// GET, a discovery GET, an access-review POST or a dryRun=All POST.

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipec::rules::preflight {

/// A finding's weight. A 401 or 403 on a read is `unknown`, never `ok`; `--strict` makes
/// unknowns errors (strict_verdict). `skipped`: a value known only at run time.
enum class Verdict { ok, warning, error, unknown, skipped };
[[nodiscard]] const char* verdict_name(Verdict verdict);
[[nodiscard]] Verdict strict_verdict(Verdict verdict, bool strict);

struct Finding {
  Verdict verdict = Verdict::ok;
  std::string check;     ///< the check's id: "pvc.exists", "secret.key", "access.create", ...
  std::string object;    ///< "PersistentVolumeClaim team-a/data"
  long http_status = 0;  ///< the answer's status (0: none arrived)
  std::string message;   ///< one line, at most kMaxMessage bytes
  std::string fix;       ///< what to do about it ("" for ok)
};

inline constexpr std::size_t kMaxMessage = 300;

/// One answer: its HTTP status and its body, parsed by the caller's bounded reader (null
/// when there was none or it was not JSON).
struct Answer {
  long status = 0;
  const nlohmann::json* body = nullptr;
};

/// The objects preflight reads by name.
enum class Kind {
  persistent_volume_claim,
  secret,
  config_map,
  service_account,
  storage_class,
  priority_class,
  local_queue,
  cluster_training_runtime,
  training_runtime
};
[[nodiscard]] const char* kind_name(Kind kind);

/// The GET path of a named object (`ns` ignored for cluster-scoped kinds); nullopt when
/// `name` or `ns` is not a Kubernetes name, so a user's value never becomes a path.
[[nodiscard]] std::optional<std::string> object_path(Kind kind, std::string_view ns,
                                                     std::string_view name);
/// "Kind ns/name", or "Kind name" for a cluster-scoped kind.
[[nodiscard]] std::string object_label(Kind kind, std::string_view ns, std::string_view name);

/// An API kind a pipeline creates, asked through discovery (/apis/GROUP/VERSION), not by
/// reading CRDs.
struct ServedKind {
  std::string_view kind, group, version, plural;
};
[[nodiscard]] const ServedKind* served_kind(std::string_view kind);  ///< MPIJob, TFJob, ...
[[nodiscard]] std::string discovery_path(const ServedKind& kind);

/// A request that POSTs: its path and its body (compact JSON).
struct Post {
  std::string path;
  std::string body;
};
/// Whether `service_account` in `ns` may `verb` `resource` of `group` (a
/// LocalSubjectAccessReview), or, with an empty account, whether the caller may (a
/// SelfSubjectAccessReview). nullopt on a name that is not a Kubernetes name.
[[nodiscard]] std::optional<Post> access_review(std::string_view ns,
                                                std::string_view service_account,
                                                std::string_view verb, std::string_view group,
                                                std::string_view resource);
/// The server-side dry run of creating `manifest` (collection path + "?dryRun=All").
[[nodiscard]] std::string dry_run_path(std::string_view collection_path);

/// An image reference split for the registry's `HEAD /v2/NAME/manifests/REF`.
struct ImageRef {
  std::string registry;    ///< host[:port]; Docker Hub is registry-1.docker.io
  std::string repository;  ///< library/python for "python"
  std::string reference;   ///< the tag or the digest (latest when none)
  std::string manifest_path() const { return "/v2/" + repository + "/manifests/" + reference; }
};
[[nodiscard]] std::optional<ImageRef> parse_image(std::string_view image);

// ---- judging answers. Each returns the findings of one object, in a fixed order.

/// A GET of a named object: 2xx ok, 404 error (absent), anything else unknown.
[[nodiscard]] Finding judge_exists(Kind kind, std::string_view ns, std::string_view name,
                                   const Answer& answer, std::string_view check);
/// Whether a claim mounted by `pods_at_once` pods needs the NodeList to judge its access
/// mode: more than one pod, and ReadWriteOnce is its only writable shared mode (no
/// ReadWriteMany, ReadOnlyMany or ReadWriteOncePod).
[[nodiscard]] bool claim_needs_nodes(const Answer& claim, long long pods_at_once);
/// The nodes pods may land on: not cordoned (spec.unschedulable) and without a NoSchedule
/// or NoExecute taint. nullopt when `nodes` is no NodeList.
[[nodiscard]] std::optional<long long> schedulable_nodes(const nlohmann::json* nodes);
/// A claim: it exists, is Bound (or Pending under a WaitForFirstConsumer storage class:
/// `wait_for_first_consumer`), and, when `pods_at_once` > 1 mount it at once, its access
/// mode lets them: ReadWriteMany or ReadOnlyMany always; ReadWriteOncePod never (error);
/// ReadWriteOnce (it attaches to one node) when the cluster has one schedulable node
/// (`nodes`, the NodeList's answer: ok), not when it has 2 or more (error: pods on other
/// nodes stay in ContainerCreating on Multi-Attach), and a warning when the nodes could
/// not be read (`nodes` null or not 2xx).
[[nodiscard]] std::vector<Finding> judge_claim(std::string_view ns, std::string_view name,
                                               const Answer& answer, long long pods_at_once,
                                               bool wait_for_first_consumer,
                                               const Answer* nodes = nullptr);
/// A Secret or ConfigMap and the keys a step names. Only the keys' names are read.
[[nodiscard]] std::vector<Finding> judge_keys(Kind kind, std::string_view ns, std::string_view name,
                                              const Answer& answer,
                                              const std::vector<std::string>& keys);
/// A discovery answer: the group/version is served and lists the kind.
[[nodiscard]] Finding judge_served(const ServedKind& kind, const Answer& answer);
/// An access review's answer (status.allowed).
[[nodiscard]] Finding judge_access(std::string_view subject, std::string_view verb,
                                   std::string_view resource, std::string_view ns,
                                   const Answer& answer);
/// A Trainer runtime and its ML policy: `policy` is "torch" or "mpi" ("": any runtime will do).
[[nodiscard]] std::vector<Finding> judge_runtime(Kind kind, std::string_view ns,
                                                 std::string_view name, const Answer& answer,
                                                 std::string_view policy);
/// A ResourceQuotaList against what the largest step needs at once (`needs`: quota
/// resource names such as requests.nvidia.com/gpu, requests.cpu -> amount).
[[nodiscard]] std::vector<Finding> judge_quota(std::string_view ns, const Answer& answer,
                                               const std::map<std::string, double>& needs);
/// A NodeList: some node has `gpus` of `gpu_resource` allocatable, the labels of
/// `node_selector`, and only taints `tolerations` (Kubernetes Toleration objects) cover.
[[nodiscard]] Finding judge_nodes(const Answer& answer, std::string_view gpu_resource, double gpus,
                                  const std::map<std::string, std::string>& node_selector,
                                  const nlohmann::json& tolerations);
/// One container's requests and limits (resource name -> quantity text), as a pod
/// template gives them.
struct ContainerResources {
  std::string name;  ///< "Worker/mpi": the replica and the container
  std::map<std::string, std::string> requests, limits;
};
/// A LimitRangeList against the containers of one step's pods: each request and limit
/// of a container within the min and max of every LimitRange item of type Container
/// (a request without its own value is its limit, as the API defaults it). One error per
/// container and resource out of bounds.
[[nodiscard]] std::vector<Finding> judge_limit_range(std::string_view ns, const Answer& answer,
                                                     const std::vector<ContainerResources>& containers);
/// A dryRun=All create: 2xx ok, and 409 (the name is taken: admission passed before
/// storage refused it); a refusal by admission (a webhook) or validation is an
/// error with the server's message; a 401 or an RBAC 403 is unknown.
[[nodiscard]] Finding judge_dry_run(std::string_view object, const Answer& answer);
/// A registry's answer to HEAD /v2/NAME/manifests/REF.
[[nodiscard]] Finding judge_image(std::string_view image, long status);

/// Whether any finding fails the run: an error, or an unknown under `strict`.
[[nodiscard]] bool fails(const std::vector<Finding>& findings, bool strict);

}  // namespace pipec::rules::preflight
