#include "runtime/tf_pods.hpp"

#include <fmt/format.h>

#include "input/json.hpp"
#include "runtime/job_render.hpp"

namespace pipec::runtime {

using rules::TfReplica;
using rules::kMaxReplicas;
using rules::tf_cluster;
using rules::tf_config;
using rules::tf_replicas;

namespace {

using nlohmann::json;

using input::member;

}  // namespace

TfPods tfjob_to_pods(const json& tfjob, std::string_view job, std::string_view ns, const json& labels,
                     const json& owner, bool master_form) {
  TfPods out;
  if (member(tfjob, "kind") != "TFJob") {
    out.error = "runtime 'pods' runs a tf_job (a TFJob)";
    return out;
  }
  out.specs_ = member(member(tfjob, "spec"), "tfReplicaSpecs");
  for (const auto& r : rules::kTfRoles) {
    const json& spec = member(out.specs_, r.type);
    if (!spec.is_object()) continue;
    const json& n = member(spec, "replicas");
    long count = n.is_number_integer() ? n.get<long>() : 1;
    if (count > kMaxReplicas) {  // checked when the job is rendered; this bounds the memory
      out.error = fmt::format("replica {} of the TFJob has {} replicas; one role has at most {}", r.type,
                              count, kMaxReplicas);
      return out;
    }
    const json& pod_spec = member(member(spec, "template"), "spec");
    if (count > 0 && (!pod_spec.is_object() || !member(pod_spec, "containers").is_array() ||
                      pod_spec["containers"].empty() || !pod_spec["containers"][0].is_object())) {
      out.error = fmt::format("replica {} of the TFJob has no container", r.type);
      return out;
    }
  }
  out.replicas = tf_replicas(tfjob, job, master_form);
  std::vector<std::string> addresses;
  addresses.reserve(out.replicas.size());
  for (const auto& r : out.replicas) addresses.push_back(fmt::format("{}.{}.svc:{}", r.name, ns, kTfPort));
  out.cluster_ = tf_cluster(out.replicas, addresses);
  out.labels_ = labels.is_object() ? labels : json::object();
  out.owner_ = owner;
  out.job_ = std::string(job);
  out.ns_ = std::string(ns);
  out.ok = true;
  return out;
}

json TfPods::pod(std::size_t i) const {
  const TfReplica& r = replicas.at(i);
  const json& spec = member(specs_, r.type);
  json pod_spec = member(member(spec, "template"), "spec");
  std::string restart =
      member(spec, "restartPolicy").is_string() ? member(spec, "restartPolicy").get<std::string>() : "Never";
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
  main["env"].push_back({{"name", "TF_CONFIG"}, {"value", tf_config(cluster_, r)}});
  if (!main["ports"].is_array()) main["ports"] = json::array();
  main["ports"].push_back({{"name", "tfjob-port"}, {"containerPort", kTfPort}});
  // The template's labels and annotations (the user's, the Kueue queue's); in a queue, the
  // pods are one Kueue pod group: admitted together or not at all.
  const json& template_meta = member(member(spec, "template"), "metadata");
  if (const json& l = member(template_meta, "labels"); l.is_object())
    for (const auto& [k, v] : l.items()) pod_labels.emplace(k, v);
  json metadata = {{"name", r.name}, {"namespace", ns_}};
  if (const json& a = member(template_meta, "annotations"); a.is_object() && !a.empty()) metadata["annotations"] = a;
  if (pod_labels.contains(std::string(rules::kKueueQueueLabel))) {
    pod_labels[std::string(rules::kKueuePodGroupLabel)] = job_;
    metadata["annotations"][std::string(rules::kKueuePodGroupCount)] = std::to_string(replicas.size());
  }
  metadata["labels"] = pod_labels;
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
