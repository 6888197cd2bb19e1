#include "runtime/preflight_job.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "input/json.hpp"
#include "rules/quantities.hpp"

namespace pipec::runtime {
using kube::PreflightQuestion;
namespace {

using nlohmann::json;
using Q = PreflightQuestion;
using input::member;
using input::member_text;

// The questions about named objects, merged: one per (what, name), keys and pods added up.
class Needs {
 public:
  Q& need(Q::What what, const std::string& name) {
    for (auto& q : questions_)
      if (q.what == what && q.name == name) return q;
    Q q;
    q.what = what;
    q.name = name;
    q.pods_at_once = 0;
    return questions_.emplace_back(std::move(q));
  }
  void key(Q::What what, const std::string& name, const std::string& key) {
    if (name.empty()) return;
    auto& keys = need(what, name).keys;
    if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::vector<Q> take() { return std::move(questions_); }

 private:
  std::vector<Q> questions_;
};

bool optional_ref(const json& ref) {
  const json& optional = member(ref, "optional");
  return optional.is_boolean() && optional.get<bool>();
}

void container_needs(const json& container, Needs& needs) {
  const json& env = member(container, "env");
  if (env.is_array())
    for (const auto& var : env) {
      const json& from = member(var, "valueFrom");
      for (auto [field, what] : {std::pair{"secretKeyRef", Q::What::secret},
                                 std::pair{"configMapKeyRef", Q::What::config_map}}) {
        const json& ref = member(from, field);
        if (ref.is_object() && !optional_ref(ref))
          needs.key(what, member_text(ref, "name"), member_text(ref, "key"));
      }
    }
  const json& env_from = member(container, "envFrom");
  if (env_from.is_array())
    for (const auto& source : env_from)
      for (auto [field, what] : {std::pair{"secretRef", Q::What::secret},
                                 std::pair{"configMapRef", Q::What::config_map}}) {
        const json& ref = member(source, field);
        if (ref.is_object() && !optional_ref(ref)) needs.key(what, member_text(ref, "name"), {});
      }
}

// One pod template's needs; `pods` of them run at once.
void pod_needs(const json& spec, long long pods, Needs& needs) {
  const json& volumes = member(spec, "volumes");
  if (volumes.is_array())
    for (const auto& volume : volumes) {
      if (auto claim = member_text(member(volume, "persistentVolumeClaim"), "claimName");
          !claim.empty())
        needs.need(Q::What::claim, claim).pods_at_once += pods;
      for (auto [field, name_field, what] :
           {std::tuple{"secret", "secretName", Q::What::secret},
            std::tuple{"configMap", "name", Q::What::config_map}}) {
        const json& source = member(volume, field);
        if (!source.is_object() || optional_ref(source)) continue;
        const auto name = member_text(source, name_field);
        needs.key(what, name, {});
        const json& items = member(source, "items");
        if (items.is_array())
          for (const auto& item : items) needs.key(what, name, member_text(item, "key"));
      }
    }
  for (const char* list : {"initContainers", "containers"}) {
    const json& containers = member(spec, list);
    if (containers.is_array())
      for (const auto& container : containers) container_needs(container, needs);
  }
  const json& pull = member(spec, "imagePullSecrets");
  if (pull.is_array())
    for (const auto& secret : pull)
      if (auto name = member_text(secret, "name"); !name.empty())
        needs.need(Q::What::pull_secret, name);
  if (auto account = member_text(spec, "serviceAccountName"); !account.empty())
    needs.need(Q::What::service_account, account);
  if (auto priority = member_text(spec, "priorityClassName"); !priority.empty())
    needs.need(Q::What::priority_class, priority);
}

// The replica specs of an operator's job (mpiReplicaSpecs, tfReplicaSpecs, ...).
const json& replica_specs(const json& job) {
  const json& spec = member(job, "spec");
  if (spec.is_object())
    for (const auto& [key, value] : spec.items())
      if (key.size() > 12 && key.compare(key.size() - 12, 12, "ReplicaSpecs") == 0) return value;
  return member(spec, "mpiReplicaSpecs");  // null
}

Q access(const std::string& verb, std::string name, std::string group = {},
         std::string resource = {}) {
  Q q;
  q.what = Q::What::access;
  q.name = std::move(name);
  q.verb = verb;
  q.group = std::move(group);
  q.resource = std::move(resource);
  return q;
}

std::map<std::string, std::string> texts(const json& object) {
  std::map<std::string, std::string> out;
  if (object.is_object())
    for (const auto& [key, value] : object.items())
      if (value.is_string()) out[key] = value.get<std::string>();
  return out;
}

}  // namespace

std::vector<PreflightQuestion> pod_questions(const json& rendered) {
  std::vector<rules::preflight::ContainerResources> containers;
  std::vector<Q> out;
  const json& roles = replica_specs(rendered);
  if (!roles.is_object()) return out;
  for (const auto& [role, replica] : roles.items()) {
    const json& spec = member(replica, "template", "spec");
    Q nodes;
    nodes.what = Q::What::nodes;
    nodes.name = role;
    const json& list = member(spec, "containers");
    if (list.is_array())
      for (const auto& container : list) {
        const json& resources = member(container, "resources");
        rules::preflight::ContainerResources c{role + "/" + member_text(container, "name"),
                                               texts(member(resources, "requests")),
                                               texts(member(resources, "limits"))};
        for (const auto& [resource, text] : c.limits) {
          const auto amount = rules::quantity_value(text);
          if (resource.find('/') == std::string::npos || resource.rfind("hugepages-", 0) == 0 ||
              !amount || *amount <= nodes.gpus)
            continue;
          nodes.gpu_resource = resource;
          nodes.gpus = *amount;
        }
        if (!c.requests.empty() || !c.limits.empty()) containers.push_back(std::move(c));
      }
    nodes.node_selector = texts(member(spec, "nodeSelector"));
    const json& tolerations = member(spec, "tolerations");
    nodes.tolerations = tolerations.is_array() ? tolerations.dump() : "[]";
    if (nodes.gpus <= 0 && nodes.node_selector.empty()) continue;
    const bool asked = std::any_of(out.begin(), out.end(), [&](const Q& q) {
      return q.gpu_resource == nodes.gpu_resource && q.gpus == nodes.gpus &&
             q.node_selector == nodes.node_selector && q.tolerations == nodes.tolerations;
    });
    if (!asked) out.push_back(std::move(nodes));
  }
  if (!containers.empty()) {
    Q limits;
    limits.what = Q::What::limit_range;
    limits.name = member_text(rendered, "kind");
    limits.containers = std::move(containers);
    out.insert(out.begin(), std::move(limits));
  }
  return out;
}

std::vector<PreflightQuestion> job_questions(const JobPrecheck& job) {
  Needs needs;
  if (job.rendered != nullptr) {
    const json& roles = replica_specs(*job.rendered);
    if (roles.is_object())
      for (const auto& [role, replica] : roles.items()) {
        const json& count = member(replica, "replicas");
        const long long pods = count.is_number_integer() ? count.get<long long>() : 1;
        if (pods > 0) pod_needs(member(replica, "template", "spec"), pods, needs);
      }
  }
  auto out = needs.take();
  for (auto& q : out) q.pods_at_once = std::max(1LL, q.pods_at_once);
  if (job.pods) {
    for (const char* resource : {"pods", "services"}) out.push_back(access("create", {}, "", resource));
    out.push_back(access("list", {}, "", "pods"));
    if (job.rendered != nullptr)
      for (auto& q : pod_questions(*job.rendered)) out.push_back(std::move(q));
    return out;
  }
  if (job.created == nullptr) return out;
  const std::string kind = member_text(*job.created, "kind");
  Q served;
  served.what = Q::What::served;
  served.name = kind;
  out.push_back(served);
  if (kind == "TrainJob") {
    const json& ref = member(*job.created, "spec", "runtimeRef");
    Q runtime;
    runtime.what = Q::What::runtime;
    runtime.name = member_text(ref, "name");
    // An operator's job made into a TrainJob needs the runtime of its kind; a train_job's
    // own TrainJob names its runtime in its own terms, and any runtime will do.
    const std::string rendered_kind = job.rendered != nullptr ? member_text(*job.rendered, "kind") : "";
    runtime.policy = rendered_kind == "TrainJob" ? "" : rendered_kind == "MPIJob" ? "mpi" : "torch";
    if (member_text(ref, "kind") == "TrainingRuntime")
      runtime.runtime_kind = rules::preflight::Kind::training_runtime;
    out.push_back(runtime);
  }
  for (const char* verb : {"create", "get", "list", "watch", "delete"}) out.push_back(access(verb, kind));
  out.push_back(access("list", {}, "", "pods"));
  Q dry_run;
  dry_run.what = Q::What::dry_run;
  dry_run.name = kind;
  dry_run.manifest = job.created->dump();
  out.push_back(std::move(dry_run));
  if (job.rendered != nullptr)
    for (auto& q : pod_questions(*job.rendered)) out.push_back(std::move(q));
  return out;
}

}  // namespace pipec::runtime
