#include "runtime/tf_pods.hpp"

#include <fmt/format.h>

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

std::string tf_config(const std::vector<TfReplica>& replicas, const TfReplica& self,
                      const std::vector<std::string>& addresses) {
  json cluster = json::object();
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    if (replicas[i].role == "evaluator") continue;  // not part of the training cluster
    cluster[replicas[i].role].push_back(addresses[i]);
  }
  json config = {{"cluster", std::move(cluster)},
                 {"task", {{"type", self.role}, {"index", self.index}}},
                 {"environment", "cloud"}};
  return config.dump();
}

TfPods tfjob_to_pods(const json& tfjob, std::string_view job, std::string_view ns, const json& labels,
                     const json& owner, bool master_form) {
  TfPods out;
  if (at(tfjob, "kind") != "TFJob") {
    out.error = "runtime 'pods' runs a tf_job (a TFJob)";
    return out;
  }
  out.replicas = tf_replicas(tfjob, job);
  if (master_form)
    for (auto& r : out.replicas)
      if (r.role == "chief") r.role = "master";
  std::vector<std::string> addresses;
  for (const auto& r : out.replicas)
    addresses.push_back(fmt::format("{}.{}.svc:{}", r.name, ns, kTfPort));
  const json& specs = at(at(tfjob, "spec"), "tfReplicaSpecs");
  for (const auto& r : out.replicas) {
    const std::string& type = r.type;
    const json& spec = at(specs, type);
    json pod_spec = at(at(spec, "template"), "spec");
    if (!pod_spec.is_object() || !at(pod_spec, "containers").is_array() || pod_spec["containers"].empty()) {
      out.error = fmt::format("replica {} of the TFJob has no container", type);
      return out;
    }
    std::string restart = at(spec, "restartPolicy").is_string() ? at(spec, "restartPolicy").get<std::string>()
                                                               : "Never";
    // A pod knows Always, OnFailure and Never; ExitCode (a TFJob policy) restarts on failure.
    pod_spec["restartPolicy"] = restart == "Always" || restart == "OnFailure" ? restart
                                : restart == "ExitCode"                      ? "OnFailure"
                                                                             : "Never";
    json pod_labels = labels.is_object() ? labels : json::object();
    pod_labels["training.kubeflow.org/job-name"] = std::string(job);
    pod_labels["training.kubeflow.org/replica-type"] = r.role;
    pod_labels["training.kubeflow.org/replica-index"] = std::to_string(r.index);
    json& main = pod_spec["containers"][0];
    if (!main["env"].is_array()) main["env"] = json::array();
    main["env"].push_back({{"name", "TF_CONFIG"}, {"value", tf_config(out.replicas, r, addresses)}});
    if (!main["ports"].is_array()) main["ports"] = json::array();
    main["ports"].push_back({{"name", "tfjob-port"}, {"containerPort", kTfPort}});
    json metadata = {{"name", r.name}, {"namespace", std::string(ns)}, {"labels", pod_labels}};
    if (owner.is_object()) metadata["ownerReferences"] = json::array({owner});
    out.pods.push_back({{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata}, {"spec", pod_spec}});
    json selector = {{"training.kubeflow.org/job-name", std::string(job)},
                     {"training.kubeflow.org/replica-type", r.role},
                     {"training.kubeflow.org/replica-index", std::to_string(r.index)}};
    out.services.push_back({{"apiVersion", "v1"},
                            {"kind", "Service"},
                            {"metadata", metadata},
                            {"spec",
                             {{"clusterIP", "None"},
                              {"selector", selector},
                              {"ports", json::array({{{"name", "tfjob-port"}, {"port", kTfPort},
                                                      {"targetPort", kTfPort}}})}}}});
  }
  out.ok = true;
  return out;
}

}  // namespace pipec::runtime
