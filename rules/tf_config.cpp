#include "rules/tf_config.hpp"

namespace pipec::rules {

using nlohmann::json;

std::vector<TfReplica> tf_replicas(const json& tfjob, std::string_view job, bool master_form) {
  std::vector<TfReplica> out;
  if (!tfjob.is_object() || !tfjob.contains("spec") || !tfjob["spec"].is_object()) return out;
  auto specs = tfjob["spec"].find("tfReplicaSpecs");
  if (specs == tfjob["spec"].end() || !specs->is_object()) return out;
  for (const auto& r : kTfRoles) {
    auto spec = specs->find(r.type);
    if (spec == specs->end() || !spec->is_object()) continue;
    auto n = spec->find("replicas");
    long count = n != spec->end() && n->is_number_integer() ? n->get<long>() : 1;
    std::string role = master_form && std::string_view(r.role) == "chief" ? "master" : r.role;
    for (long i = 0; i < count; ++i)
      out.push_back({r.type, role, static_cast<int>(i), std::string(job) + "-" + r.role + "-" + std::to_string(i)});
  }
  return out;
}

json tf_cluster(const std::vector<TfReplica>& replicas, const std::vector<std::string>& addresses) {
  json cluster = json::object();
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    if (replicas[i].role == "evaluator") continue;  // not part of the training cluster
    cluster[replicas[i].role].push_back(addresses[i]);
  }
  return cluster;
}

std::string tf_config(const json& cluster, const TfReplica& self) {
  json config = {{"cluster", cluster}, {"task", {{"type", self.role}, {"index", self.index}}}, {"environment", "cloud"}};
  return config.dump();
}

}  // namespace pipec::rules
