#include "rules/preflight.hpp"

#include <array>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "rules/names.hpp"
#include "rules/quantities.hpp"

namespace pipec::rules::preflight {
namespace {

struct KindInfo {
  Kind kind;
  std::string_view name, prefix, plural;
  bool namespaced;
};

constexpr std::array<KindInfo, 9> kKinds = {{
    {Kind::persistent_volume_claim, "PersistentVolumeClaim", "/api/v1", "persistentvolumeclaims",
     true},
    {Kind::secret, "Secret", "/api/v1", "secrets", true},
    {Kind::config_map, "ConfigMap", "/api/v1", "configmaps", true},
    {Kind::service_account, "ServiceAccount", "/api/v1", "serviceaccounts", true},
    {Kind::storage_class, "StorageClass", "/apis/storage.k8s.io/v1", "storageclasses", false},
    {Kind::priority_class, "PriorityClass", "/apis/scheduling.k8s.io/v1", "priorityclasses", false},
    {Kind::local_queue, "LocalQueue", "/apis/kueue.x-k8s.io/v1beta1", "localqueues", true},
    {Kind::cluster_training_runtime, "ClusterTrainingRuntime",
     "/apis/trainer.kubeflow.org/v1alpha1", "clustertrainingruntimes", false},
    {Kind::training_runtime, "TrainingRuntime", "/apis/trainer.kubeflow.org/v1alpha1",
     "trainingruntimes", true},
}};

constexpr std::array<ServedKind, 5> kServed = {{
    {"MPIJob", "kubeflow.org", "v2beta1", "mpijobs"},
    {"TFJob", "kubeflow.org", "v1", "tfjobs"},
    {"PyTorchJob", "kubeflow.org", "v1", "pytorchjobs"},
    {"TrainJob", "trainer.kubeflow.org", "v1alpha1", "trainjobs"},
    {"Workflow", "argoproj.io", "v1alpha1", "workflows"},
}};

const KindInfo& info(Kind kind) {
  for (const auto& entry : kKinds)
    if (entry.kind == kind) return entry;
  return kKinds[0];
}

// A server's text made one line of at most kMaxMessage bytes (cut at a UTF-8 boundary).
std::string one_line(std::string_view text) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (out.size() > kMaxMessage) {
    std::size_t cut = kMaxMessage;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

// The message of a Kubernetes Status body, if any.
std::string status_message(const Answer& answer) {
  if (answer.body == nullptr || !answer.body->is_object()) return {};
  auto it = answer.body->find("message");
  return it != answer.body->end() && it->is_string() ? one_line(it->get<std::string>())
                                                     : std::string();
}

const nlohmann::json* member(const nlohmann::json* object, std::string_view key) {
  if (object == nullptr || !object->is_object()) return nullptr;
  auto it = object->find(std::string(key));
  return it == object->end() ? nullptr : &*it;
}

std::string text_of(const nlohmann::json* value) {
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

// An amount as a quota prints it: 2, 0.5, 1.5e+10.
std::string amount(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

bool is_2xx(long status) { return status >= 200 && status < 300; }

// The finding of an answer that is not a 2xx: 404 absent (error), else unknown.
Finding not_read(std::string check, std::string object, const Answer& answer,
                 std::string_view what) {
  Finding f{Verdict::unknown, std::move(check), std::move(object), answer.status, {}, {}};
  if (answer.status == 404) {
    f.verdict = Verdict::error;
    f.message = f.object + " does not exist (HTTP 404)";
    f.fix = "create it, or name one that exists";
  } else if (answer.status == 401 || answer.status == 403) {
    f.message = "cannot tell whether " + f.object + " " + std::string(what) + ": HTTP " +
                std::to_string(answer.status) + " reading it";
    f.fix = "grant get on it to the identity preflight runs as (docs/preflight.md)";
  } else {
    f.message =
        "cannot tell whether " + f.object + " " + std::string(what) + ": " +
        (answer.status == 0 ? std::string("no answer") : "HTTP " + std::to_string(answer.status));
    const auto why = status_message(answer);
    if (!why.empty()) f.message += ": " + why;
  }
  return f;
}

Finding ok(std::string check, std::string object, long status) {
  return Finding{Verdict::ok, std::move(check), std::move(object), status, {}, {}};
}

}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok:
      return "ok";
    case Verdict::warning:
      return "warning";
    case Verdict::error:
      return "error";
    case Verdict::unknown:
      return "unknown";
    case Verdict::skipped:
      return "skipped";
  }
  return "unknown";
}

Verdict strict_verdict(Verdict verdict, bool strict) {
  return strict && verdict == Verdict::unknown ? Verdict::error : verdict;
}

const char* kind_name(Kind kind) { return info(kind).name.data(); }

std::optional<std::string> object_path(Kind kind, std::string_view ns, std::string_view name) {
  const auto& k = info(kind);
  if (!is_dns1123_subdomain(name)) return std::nullopt;
  std::string path(k.prefix);
  if (k.namespaced) {
    if (!is_dns1123_label(ns)) return std::nullopt;
    path += "/namespaces/" + std::string(ns);
  }
  return path + "/" + std::string(k.plural) + "/" + std::string(name);
}

std::string object_label(Kind kind, std::string_view ns, std::string_view name) {
  const auto& k = info(kind);
  return std::string(k.name) + " " + (k.namespaced ? std::string(ns) + "/" : std::string()) +
         std::string(name);
}

const ServedKind* served_kind(std::string_view kind) {
  for (const auto& entry : kServed)
    if (entry.kind == kind) return &entry;
  return nullptr;
}

std::string discovery_path(const ServedKind& kind) {
  return "/apis/" + std::string(kind.group) + "/" + std::string(kind.version);
}

std::optional<Post> access_review(std::string_view ns, std::string_view service_account,
                                  std::string_view verb, std::string_view group,
                                  std::string_view resource) {
  if (!is_dns1123_label(ns) || (!service_account.empty() && !is_dns1123_subdomain(service_account)))
    return std::nullopt;
  nlohmann::json attributes = {
      {"namespace", ns}, {"verb", verb}, {"group", group}, {"resource", resource}};
  if (service_account.empty())
    return Post{"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                nlohmann::json{{"apiVersion", "authorization.k8s.io/v1"},
                               {"kind", "SelfSubjectAccessReview"},
                               {"spec", {{"resourceAttributes", attributes}}}}
                    .dump()};
  const std::string user =
      "system:serviceaccount:" + std::string(ns) + ":" + std::string(service_account);
  return Post{
      "/apis/authorization.k8s.io/v1/namespaces/" + std::string(ns) + "/localsubjectaccessreviews",
      nlohmann::json{{"apiVersion", "authorization.k8s.io/v1"},
                     {"kind", "LocalSubjectAccessReview"},
                     {"metadata", {{"namespace", ns}}},
                     {"spec",
                      {{"user", user},
                       {"groups",
                        {"system:serviceaccounts", "system:serviceaccounts:" + std::string(ns),
                         "system:authenticated"}},
                       {"resourceAttributes", attributes}}}}
          .dump()};
}

std::string dry_run_path(std::string_view collection_path) {
  return std::string(collection_path) + "?dryRun=All";
}

std::optional<ImageRef> parse_image(std::string_view image) {
  if (image.empty() || image.size() > 512) return std::nullopt;
  for (char c : image)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
          c == '/' || c == ':' || c == '@'))
      return std::nullopt;
  ImageRef ref;
  std::string_view rest = image;
  const auto slash = rest.find('/');
  if (slash != std::string_view::npos) {
    const auto first = rest.substr(0, slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost") {
      ref.registry = std::string(first);
      rest.remove_prefix(slash + 1);
    }
  }
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    ref.reference = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
  } else if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    ref.reference = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  } else {
    ref.reference = "latest";
  }
  if (rest.empty() || ref.reference.empty() || rest.find(':') != std::string_view::npos)
    return std::nullopt;
  ref.repository = std::string(rest);
  if (ref.registry.empty() || ref.registry == "docker.io") {
    ref.registry = "registry-1.docker.io";
    if (ref.repository.find('/') == std::string::npos) ref.repository = "library/" + ref.repository;
  }
  return ref;
}

Finding judge_exists(Kind kind, std::string_view ns, std::string_view name, const Answer& answer,
                     std::string_view check) {
  auto object = object_label(kind, ns, name);
  if (!is_2xx(answer.status))
    return not_read(std::string(check), std::move(object), answer, "exists");
  return ok(std::string(check), std::move(object), answer.status);
}

namespace {

bool has_mode(const Answer& claim, std::string_view wanted) {
  if (const auto* modes = member(member(claim.body, "spec"), "accessModes");
      modes != nullptr && modes->is_array())
    for (const auto& mode : *modes)
      if (mode.is_string() && mode.get<std::string>() == wanted) return true;
  return false;
}

bool shared_mode(const Answer& claim) {
  return has_mode(claim, "ReadWriteMany") || has_mode(claim, "ReadOnlyMany");
}

}  // namespace

bool claim_needs_nodes(const Answer& claim, long long pods_at_once) {
  return is_2xx(claim.status) && pods_at_once > 1 && !shared_mode(claim) &&
         !has_mode(claim, "ReadWriteOncePod");
}

std::optional<long long> schedulable_nodes(const nlohmann::json* nodes) {
  const auto* items = member(nodes, "items");
  if (items == nullptr || !items->is_array()) return std::nullopt;
  long long count = 0;
  for (const auto& node : *items) {
    const auto* spec = member(&node, "spec");
    const auto* cordoned = member(spec, "unschedulable");
    if (cordoned != nullptr && cordoned->is_boolean() && cordoned->get<bool>()) continue;
    bool repels = false;
    if (const auto* taints = member(spec, "taints"); taints != nullptr && taints->is_array())
      for (const auto& taint : *taints) {
        const auto effect = text_of(member(&taint, "effect"));
        repels = repels || effect == "NoSchedule" || effect == "NoExecute";
      }
    count += !repels;
  }
  return count;
}

std::vector<Finding> judge_claim(std::string_view ns, std::string_view name, const Answer& answer,
                                 long long pods_at_once, bool wait_for_first_consumer,
                                 const Answer* nodes) {
  std::vector<Finding> out{
      judge_exists(Kind::persistent_volume_claim, ns, name, answer, "pvc.exists")};
  if (out[0].verdict != Verdict::ok) return out;
  const auto object = out[0].object;
  const auto phase = text_of(member(member(answer.body, "status"), "phase"));
  if (phase != "Bound" && !(phase == "Pending" && wait_for_first_consumer))
    out.push_back(
        {Verdict::error, "pvc.bound", object, answer.status,
         object + " is " + (phase.empty() ? std::string("of no phase") : phase) + ", not Bound",
         "bind it to a volume (a matching PersistentVolume or a storage class that provisions "
         "one)"});
  if (pods_at_once <= 1 || shared_mode(answer)) return out;
  const std::string pods = std::to_string(pods_at_once) + " pods mount it at once";
  const std::string fix = "use a ReadWriteMany claim, or mount it in one replica";
  if (has_mode(answer, "ReadWriteOncePod")) {
    out.push_back({Verdict::error, "pvc.access_mode", object, answer.status,
                   object + " is ReadWriteOncePod but " + pods + ": only one pod may use it",
                   fix});
    return out;
  }
  const auto count = nodes != nullptr && is_2xx(nodes->status) ? schedulable_nodes(nodes->body)
                                                                : std::nullopt;
  if (!count) {
    out.push_back({Verdict::warning, "pvc.access_mode", object, nodes ? nodes->status : 0,
                   object + " is ReadWriteOnce but " + pods + "; the nodes could not be read (" +
                       (nodes == nullptr || nodes->status == 0
                            ? std::string("no answer")
                            : "HTTP " + std::to_string(nodes->status)) +
                       "), so whether they share one node is not known",
                   fix + " (or grant list on nodes to tell)"});
  } else if (*count >= 2) {
    out.push_back({Verdict::error, "pvc.access_mode", object, nodes->status,
                   object + " is ReadWriteOnce but " + pods + " and the cluster has " +
                       std::to_string(*count) +
                       " schedulable nodes: it attaches to one node, pods on the others stay in "
                       "ContainerCreating (Multi-Attach error)",
                   fix});
  } else {
    out.push_back(ok("pvc.access_mode", object, nodes->status));
    out.back().message = object + " is ReadWriteOnce and " + pods +
                         ", but the cluster has one schedulable node: they all share it";
  }
  return out;
}

std::vector<Finding> judge_keys(Kind kind, std::string_view ns, std::string_view name,
                                const Answer& answer, const std::vector<std::string>& keys) {
  const std::string id = kind == Kind::secret ? "secret" : "configmap";
  std::vector<Finding> out{judge_exists(kind, ns, name, answer, id + ".exists")};
  if (out[0].verdict != Verdict::ok) return out;
  const auto* data = member(answer.body, "data");
  const auto* binary = member(answer.body, "binaryData");
  for (const auto& key : keys) {
    if (member(data, key) != nullptr || member(binary, key) != nullptr) continue;
    out.push_back({Verdict::error, id + ".key", out[0].object, answer.status,
                   out[0].object + " has no key '" + one_line(key) + "'",
                   "add the key to it, or name a key it has"});
  }
  return out;
}

Finding judge_served(const ServedKind& kind, const Answer& answer) {
  const std::string object =
      std::string(kind.kind) + " " + std::string(kind.group) + "/" + std::string(kind.version);
  if (answer.status == 404)
    return {Verdict::error,
            "api.served",
            object,
            404,
            std::string(kind.group) + "/" + std::string(kind.version) +
                " is not served: " + std::string(kind.kind) + " cannot be created",
            "install the operator that serves it, or target a version the cluster serves"};
  if (!is_2xx(answer.status)) return not_read("api.served", object, answer, "is served");
  if (const auto* resources = member(answer.body, "resources");
      resources != nullptr && resources->is_array())
    for (const auto& resource : *resources)
      if (text_of(member(&resource, "name")) == kind.plural)
        return ok("api.served", object, answer.status);
  return {Verdict::error,
          "api.served",
          object,
          answer.status,
          std::string(kind.group) + "/" + std::string(kind.version) + " is served but has no " +
              std::string(kind.plural),
          "install the operator that serves it"};
}

Finding judge_access(std::string_view subject, std::string_view verb, std::string_view resource,
                     std::string_view ns, const Answer& answer) {
  const std::string object = std::string(resource) + " in namespace " + std::string(ns);
  const std::string check = "access." + std::string(verb);
  if (!is_2xx(answer.status)) {
    auto f = not_read(check, object, answer, "may be " + std::string(verb) + "d");
    if (f.verdict == Verdict::error) f.verdict = Verdict::unknown;  // 404: no review API
    return f;
  }
  const auto* status = member(answer.body, "status");
  const auto* allowed = member(status, "allowed");
  if (allowed != nullptr && allowed->is_boolean() && allowed->get<bool>())
    return ok(check, object, answer.status);
  Finding f{Verdict::error,
            check,
            object,
            answer.status,
            std::string(subject) + " may not " + std::string(verb) + " " + object,
            {}};
  if (const auto reason = text_of(member(status, "reason")); !reason.empty())
    f.message += ": " + one_line(reason);
  f.fix = "bind it a Role that grants " + std::string(verb) + " on " + std::string(resource) +
          " (runtime/deploy has the launcher's Role)";
  return f;
}

std::vector<Finding> judge_runtime(Kind kind, std::string_view ns, std::string_view name,
                                   const Answer& answer, std::string_view policy) {
  std::vector<Finding> out{judge_exists(kind, ns, name, answer, "runtime.exists")};
  if (out[0].verdict != Verdict::ok || policy.empty()) return out;  // "": any runtime will do
  const auto* ml = member(member(answer.body, "spec"), "mlPolicy");
  if (member(ml, policy) == nullptr)
    out.push_back(
        {Verdict::error, "runtime.policy", out[0].object, answer.status,
         out[0].object + " has no " + std::string(policy) + " ML policy, which this step needs",
         "name a runtime whose mlPolicy is " + std::string(policy)});
  return out;
}

std::vector<Finding> judge_quota(std::string_view ns, const Answer& answer,
                                 const std::map<std::string, double>& needs) {
  const std::string list = "ResourceQuota in namespace " + std::string(ns);
  if (!is_2xx(answer.status)) return {not_read("quota.headroom", list, answer, "leaves room")};
  std::vector<Finding> out;
  const auto* items = member(answer.body, "items");
  if (items == nullptr || !items->is_array()) return out;
  for (const auto& quota : *items) {
    const auto object = "ResourceQuota " + std::string(ns) + "/" +
                        text_of(member(member(&quota, "metadata"), "name"));
    const auto* hard = member(member(&quota, "status"), "hard");
    if (hard == nullptr) hard = member(member(&quota, "spec"), "hard");
    const auto* used = member(member(&quota, "status"), "used");
    for (const auto& [resource, need] : needs) {
      const nlohmann::json* limit = member(hard, resource);
      std::string key = resource;
      if (limit == nullptr && resource.rfind("requests.", 0) == 0 &&
          resource.find('/') == std::string::npos) {
        key = resource.substr(9);  // "cpu" and "memory" stand for their requests
        limit = member(hard, key);
      }
      if (limit == nullptr || !limit->is_string()) continue;
      const auto hard_value = quantity_value(limit->get<std::string>());
      const auto used_value =
          quantity_value(text_of(member(used, key)).empty() ? "0" : text_of(member(used, key)));
      if (!hard_value || !used_value) continue;
      const double room = *hard_value - *used_value;
      if (need > room)
        out.push_back({Verdict::error, "quota.headroom", object, answer.status,
                       object + " leaves " + amount(room) + " " + key + " but the step needs " +
                           amount(need) + " at once",
                       "raise the quota, free some of it, or ask for fewer replicas"});
    }
  }
  return out;
}

namespace {

bool tolerated(const nlohmann::json& taint, const nlohmann::json& tolerations) {
  const auto effect = text_of(member(&taint, "effect"));
  if (effect == "PreferNoSchedule") return true;
  if (!tolerations.is_array()) return false;
  for (const auto& t : tolerations) {
    const auto t_effect = text_of(member(&t, "effect"));
    if (!t_effect.empty() && t_effect != effect) continue;
    const auto key = text_of(member(&t, "key"));
    const auto op = text_of(member(&t, "operator"));
    if (key.empty() && op == "Exists") return true;
    if (key != text_of(member(&taint, "key"))) continue;
    if (op == "Exists" || text_of(member(&t, "value")) == text_of(member(&taint, "value")))
      return true;
  }
  return false;
}

bool fits(const nlohmann::json& node, std::string_view gpu_resource, double gpus,
          const std::map<std::string, std::string>& node_selector,
          const nlohmann::json& tolerations) {
  const auto* labels = member(member(&node, "metadata"), "labels");
  for (const auto& [key, value] : node_selector)
    if (text_of(member(labels, key)) != value) return false;
  if (const auto* taints = member(member(&node, "spec"), "taints");
      taints != nullptr && taints->is_array())
    for (const auto& taint : *taints)
      if (!tolerated(taint, tolerations)) return false;
  if (gpus <= 0) return true;
  const auto have =
      quantity_value(text_of(member(member(member(&node, "status"), "allocatable"), gpu_resource)));
  return have && *have >= gpus;
}

}  // namespace

Finding judge_nodes(const Answer& answer, std::string_view gpu_resource, double gpus,
                    const std::map<std::string, std::string>& node_selector,
                    const nlohmann::json& tolerations) {
  const std::string object = "Nodes";
  if (!is_2xx(answer.status)) return not_read("nodes.fit", object, answer, "can hold a replica");
  if (const auto* items = member(answer.body, "items"); items != nullptr && items->is_array())
    for (const auto& node : *items)
      if (fits(node, gpu_resource, gpus, node_selector, tolerations))
        return ok("nodes.fit", object, answer.status);
  std::string need = gpus > 0 ? amount(gpus) + " " + std::string(gpu_resource) : std::string();
  if (!node_selector.empty())
    need += std::string(need.empty() ? "" : ", ") + "the node_selector's labels";
  return {Verdict::error,
          "nodes.fit",
          object,
          answer.status,
          "no node has " + (need.empty() ? std::string("taints the tolerations cover") : need) +
              " with taints the tolerations cover",
          "ask for fewer GPUs per replica, or fix node_selector and tolerations"};
}

std::vector<Finding> judge_limit_range(std::string_view ns, const Answer& answer,
                                       const std::vector<ContainerResources>& containers) {
  const std::string list = "LimitRange in namespace " + std::string(ns);
  if (!is_2xx(answer.status)) return {not_read("limitrange.bounds", list, answer, "admits the pods")};
  std::vector<Finding> out;
  const auto* items = member(answer.body, "items");
  if (items == nullptr || !items->is_array()) return out;
  for (const auto& range : *items) {
    const auto object = "LimitRange " + std::string(ns) + "/" +
                        text_of(member(member(&range, "metadata"), "name"));
    const auto* limits = member(member(&range, "spec"), "limits");
    if (limits == nullptr || !limits->is_array()) continue;
    for (const auto& item : *limits) {
      if (text_of(member(&item, "type")) != "Container") continue;
      for (const auto& c : containers)
        for (const auto& [field, bound] : {std::pair{"min", -1}, std::pair{"max", 1}}) {
          const auto* bounds = member(&item, field);
          if (bounds == nullptr || !bounds->is_object()) continue;
          for (const auto& [resource, value] : bounds->items()) {
            if (!value.is_string()) continue;
            const auto edge = quantity_value(value.get<std::string>());
            if (!edge) continue;
            // The limit, then the request (the limit when none is given, as the API
            // defaults it): the first out of bounds is the one finding.
            const auto limit = c.limits.find(resource);
            const auto request = c.requests.find(resource);
            const std::pair<const char*, const std::string*> given[] = {
                {"limit", limit != c.limits.end() ? &limit->second : nullptr},
                {"request", request != c.requests.end() ? &request->second : nullptr}};
            for (const auto& [what, text] : given) {
              const auto amount_given = text ? quantity_value(*text) : std::nullopt;
              if (!amount_given || (bound < 0 ? *amount_given >= *edge : *amount_given <= *edge))
                continue;
              out.push_back({Verdict::error, "limitrange.bounds", object, answer.status,
                             "container " + one_line(c.name) + "'s " + resource + " " + what +
                                 " " + one_line(*text) + " is " +
                                 (bound < 0 ? "below " : "above ") + object + "'s " + field +
                                 " " + value.get<std::string>(),
                             std::string("ask for ") + (bound < 0 ? "at least " : "at most ") +
                                 value.get<std::string>() + ", or have the LimitRange changed"});
              break;
            }
          }
        }
    }
  }
  return out;
}

Finding judge_dry_run(std::string_view object, const Answer& answer) {
  // 409 AlreadyExists comes from storage, after admission passed: an object of that name
  // is there already (a restarted launcher adopts its job).
  if (is_2xx(answer.status) || answer.status == 409)
    return ok("dryrun.admitted", std::string(object), answer.status);
  const auto why = status_message(answer);
  const bool webhook = why.find("admission webhook") != std::string::npos;
  if (answer.status == 0 || answer.status == 401 || (answer.status == 403 && !webhook) ||
      answer.status >= 500) {
    auto f = not_read("dryrun.admitted", std::string(object), answer, "is admitted");
    f.verdict = Verdict::unknown;
    return f;
  }
  return {Verdict::error,
          "dryrun.admitted",
          std::string(object),
          answer.status,
          "the API server refuses " + std::string(object) + " (HTTP " +
              std::to_string(answer.status) + ")" + (why.empty() ? std::string() : ": " + why),
          "fix what the message names before the run creates it"};
}

Finding judge_image(std::string_view image, long status) {
  const std::string object = "image " + one_line(image);
  if (is_2xx(status)) return ok("image.manifest", object, status);
  if (status == 404)
    return {Verdict::error,
            "image.manifest",
            object,
            status,
            "the registry has no manifest for " + object + " (HTTP 404)",
            "push the image, or fix its name or tag"};
  return {
      Verdict::unknown,
      "image.manifest",
      object,
      status,
      "cannot tell whether " + object +
          " exists: " + (status == 0 ? std::string("no answer") : "HTTP " + std::to_string(status)),
      status == 401 || status == 403 ? "allow preflight the pull secret, or check it by hand" : ""};
}

bool fails(const std::vector<Finding>& findings, bool strict) {
  for (const auto& f : findings)
    if (strict_verdict(f.verdict, strict) == Verdict::error) return true;
  return false;
}

}  // namespace pipec::rules::preflight
