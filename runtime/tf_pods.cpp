#include "runtime/tf_pods.hpp"

#include <fmt/format.h>

#include "runtime/job_render.hpp"

namespace pipec::runtime {

namespace {

using nlohmann::json;

const json& at(const json& object, std::string_view key) {
  static const json null;
  if (!object.is_object()) return null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

// TFJob replica types in the order the replicas are listed, with their TF_CONFIG role.
struct Role {
  const char* type;
  const char* role;
};
constexpr Role kRoles[] = {{"Chief", "chief"}, {"Master", "master"}, {"Worker", "worker"},
                           {"PS", "ps"}, {"Evaluator", "evaluator"}};

}  // namespace

std::vector<TfReplica> tf_replicas(const json& tfjob, std::string_view job) {
  std::vector<TfReplica> out;
  const json& specs = at(at(tfjob, "spec"), "tfReplicaSpecs");
  for (const auto& r : kRoles) {
    const json& spec = at(specs, r.type);
    if (!spec.is_object()) continue;
    const json& n = at(spec, "replicas");
    long count = n.is_number_integer() ? n.get<long>() : 1;
    for (long i = 0; i < count; ++i)
      out.push_back({r.type, r.role, static_cast<int>(i), fmt::format("{}-{}-{}", job, r.role, i)});
  }
  return out;
}

namespace {
// TF_CONFIG from its cluster (the same in every pod) and the pod's task.
std::string config_text(const json& cluster, const std::string& role, int index) {
  json config = {{"cluster", cluster}, {"task", {{"type", role}, {"index", index}}}, {"environment", "cloud"}};
  return config.dump();
}
}  // namespace

std::string tf_config(const std::vector<TfReplica>& replicas, const TfReplica& self,
                      const std::vector<std::string>& addresses) {
  json cluster = json::object();
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    if (replicas[i].role == "evaluator") continue;  // not part of the training cluster
    cluster[replicas[i].role].push_back(addresses[i]);
  }
  return config_text(cluster, self.role, self.index);
}

TfPods tfjob_to_pods(const json& tfjob, std::string_view job, std::string_view ns, const json& labels,
                     const json& owner, bool master_form) {
  TfPods out;
  if (at(tfjob, "kind") != "TFJob") {
    out.error = "runtime 'pods' runs a tf_job (a TFJob)";
    return out;
  }
  out.specs_ = at(at(tfjob, "spec"), "tfReplicaSpecs");
  for (const auto& r : kRoles) {
    const json& spec = at(out.specs_, r.type);
    if (!spec.is_object()) continue;
    const json& n = at(spec, "replicas");
    long count = n.is_number_integer() ? n.get<long>() : 1;
    if (count > kMaxReplicas) {  // checked when the job is rendered; this bounds the memory
      out.error = fmt::format("replica {} of the TFJob has {} replicas; one role has at most {}", r.type,
                              count, kMaxReplicas);
      return out;
    }
    const json& pod_spec = at(at(spec, "template"), "spec");
    if (count > 0 && (!pod_spec.is_object() || !at(pod_spec, "containers").is_array() ||
                      pod_spec["containers"].empty() || !pod_spec["containers"][0].is_object())) {
      out.error = fmt::format("replica {} of the TFJob has no container", r.type);
      return out;
    }
  }
  out.replicas = tf_replicas(tfjob, job);
  if (master_form)
    for (auto& r : out.replicas)
      if (r.role == "chief") r.role = "master";
  out.cluster_ = json::object();
  for (const auto& r : out.replicas)
    if (r.role != "evaluator")  // not part of the training cluster
      out.cluster_[r.role].push_back(fmt::format("{}.{}.svc:{}", r.name, ns, kTfPort));
  out.labels_ = labels.is_object() ? labels : json::object();
  out.owner_ = owner;
  out.job_ = std::string(job);
  out.ns_ = std::string(ns);
  out.ok = true;
  return out;
}

json TfPods::pod(std::size_t i) const {
  const TfReplica& r = replicas.at(i);
  const json& spec = at(specs_, r.type);
  json pod_spec = at(at(spec, "template"), "spec");
  std::string restart =
      at(spec, "restartPolicy").is_string() ? at(spec, "restartPolicy").get<std::string>() : "Never";
  // A pod knows Always, OnFailure and Never; ExitCode (a TFJob policy) restarts on failure.
  pod_spec["restartPolicy"] = restart == "Always" || restart == "OnFailure" ? restart
                              : restart == "ExitCode"                      ? "OnFailure"
                                                                           : "Never";
  json pod_labels = labels_;
  pod_labels["training.kubeflow.org/job-name"] = job_;
  pod_labels["training.kubeflow.org/replica-type"] = r.role;
  pod_labels["training.kubeflow.org/replica-index"] = std::to_string(r.index);
  json& main = pod_spec["containers"][0];
  if (!main["env"].is_array()) main["env"] = json::array();
  main["env"].push_back({{"name", "TF_CONFIG"}, {"value", config_text(cluster_, r.role, r.index)}});
  if (!main["ports"].is_array()) main["ports"] = json::array();
  main["ports"].push_back({{"name", "tfjob-port"}, {"containerPort", kTfPort}});
  json metadata = {{"name", r.name}, {"namespace", ns_}, {"labels", pod_labels}};
  if (owner_.is_object()) metadata["ownerReferences"] = json::array({owner_});
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", pod_spec}};
}

json TfPods::service(std::size_t i) const {
  const TfReplica& r = replicas.at(i);
  json pod_labels = labels_;
  pod_labels["training.kubeflow.org/job-name"] = job_;
  pod_labels["training.kubeflow.org/replica-type"] = r.role;
  pod_labels["training.kubeflow.org/replica-index"] = std::to_string(r.index);
  json metadata = {{"name", r.name}, {"namespace", ns_}, {"labels", pod_labels}};
  if (owner_.is_object()) metadata["ownerReferences"] = json::array({owner_});
  json selector = {{"training.kubeflow.org/job-name", job_},
                   {"training.kubeflow.org/replica-type", r.role},
                   {"training.kubeflow.org/replica-index", std::to_string(r.index)}};
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", metadata},
          {"spec",
           {{"clusterIP", "None"},
            {"selector", selector},
            {"ports", json::array({{{"name", "tfjob-port"}, {"port", kTfPort}, {"targetPort", kTfPort}}})}}}};
}

}  // namespace pipec::runtime
