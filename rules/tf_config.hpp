#pragma once
// TF_CONFIG, as the TFJob operator gives it to each replica: one builder for the launcher's
// runtime "pods" and `pipec run --local`'s replicas. No I/O.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipec::rules {

/// A TFJob replica type and its role in TF_CONFIG, in the order replicas are listed.
struct TfRole {
  const char* type;  ///< Chief, Master, Worker, PS, Evaluator
  const char* role;  ///< chief, master, worker, ps, evaluator
};
inline constexpr std::array<TfRole, 5> kTfRoles = {
    {{"Chief", "chief"}, {"Master", "master"}, {"Worker", "worker"}, {"PS", "ps"}, {"Evaluator", "evaluator"}}};

/// One replica: its role in TF_CONFIG ("chief", "master", "worker", "ps", "evaluator"),
/// its index, and the name of its Pod and Service.
struct TfReplica {
  std::string type;  ///< the TFJob replica type: Chief, Master, Worker, PS, Evaluator
  std::string role;
  int index = 0;
  std::string name;
};

/// The replicas of a rendered TFJob, chief (or master) first, then workers, ps,
/// evaluators, each role in index order (a role without `replicas` has one). `job` names
/// them `<job>-<role>-<index>`. With `master_form` (`chief_role: "master"`), a Chief
/// replica is called "master" in TF_CONFIG (seed 001's form).
[[nodiscard]] std::vector<TfReplica> tf_replicas(const nlohmann::json& tfjob, std::string_view job,
                                                 bool master_form = false);

/// TF_CONFIG's cluster, the same for every replica: {role: ["host:port", ...]} with
/// `addresses[i]` for `replicas[i]`; every role but the evaluator is in it.
[[nodiscard]] nlohmann::json tf_cluster(const std::vector<TfReplica>& replicas,
                                        const std::vector<std::string>& addresses);

/// TF_CONFIG for `self`: {"cluster": cluster, "task": {"type", "index"},
/// "environment": "cloud"}.
[[nodiscard]] std::string tf_config(const nlohmann::json& cluster, const TfReplica& self);

}  // namespace pipec::rules
