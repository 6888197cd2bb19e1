// FakeKube's answers to preflight's reads: named objects and their collections (claims,
// Secrets, ConfigMaps, ServiceAccounts, quotas, limit ranges, nodes, storage and priority
// classes, Trainer runtimes, Kueue queues), discovery of API groups/versions, and
// Local/SelfSubjectAccessReviews evaluated from a list of Roles, as the API answers them;
// the admission webhooks a create meets (a label policy, Trainer's).
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "tests/runtime/fake_kube.hpp"

namespace pipec::runtime::testing {
namespace {

using nlohmann::json;

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), "*") != names.end() ||
         std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

int FakeKube::creates() {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& r : requests_)
    n += r.rfind("POST ", 0) == 0 && r.find("accessreviews") == std::string::npos &&
         r.find("dryRun=") == std::string::npos;
  return n;
}

void FakeKube::put_object(const std::string& path, json object) {
  std::lock_guard lock(mutex_);
  objects_[path] = std::move(object);
}

void FakeKube::serve_api(const std::string& group_version, std::vector<std::string> plurals) {
  std::lock_guard lock(mutex_);
  served_[group_version] = std::move(plurals);
}

bool FakeKube::serves_locked(const std::string& group_version, const std::string& plural) const {
  if (served_.empty()) return true;
  auto served = served_.find(group_version);
  return served != served_.end() &&
         std::find(served->second.begin(), served->second.end(), plural) != served->second.end();
}

void FakeKube::add_role(const std::string& subject, const std::string& group,
                        std::vector<std::string> resources, std::vector<std::string> verbs) {
  std::lock_guard lock(mutex_);
  roles_.push_back({subject, group, std::move(resources), std::move(verbs)});
}

void FakeKube::image_absent(const std::string& repository_reference) {
  std::lock_guard lock(mutex_);
  absent_images_.push_back(repository_reference);
}

void FakeKube::forbid(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  forbidden_.push_back(prefix);
}

void FakeKube::require_label(const std::string& label, const std::string& webhook) {
  std::lock_guard lock(mutex_);
  required_labels_[label] = webhook;
}

std::optional<std::string> FakeKube::admission_refusal_locked(const std::string& plural, const std::string& ns,
                                                          json& job) {
  for (const auto& [label, webhook] : required_labels_)
    if (!job.is_object() || !job.value("metadata", json::object()).value("labels", json::object()).contains(label))
      return fmt::format("admission webhook \"{}\" denied the request: the {} has no label '{}', which every "
                         "job in this namespace must carry",
                         webhook, plural, label);
  if (plural != "trainjobs" || trainer_runtimes_.empty()) return std::nullopt;
  // Trainer's validating webhook: the ClusterTrainingRuntime must exist (core/
  // clustertrainingruntime.go ValidateObjects), or the TrainingRuntime of the job's
  // namespace (core/trainingruntime.go); controller-runtime denies with 403.
  std::string runtime = job["spec"]["runtimeRef"].value("name", std::string());
  const bool namespaced = job["spec"]["runtimeRef"].value("kind", std::string()) == "TrainingRuntime";
  if (namespaced && !objects_.count("/apis/trainer.kubeflow.org/v1alpha1/namespaces/" + ns + "/trainingruntimes/" + runtime))
    return fmt::format("admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request: "
                       "spec.RuntimeRef: Invalid value: trainingruntimes.trainer.kubeflow.org \"{}\" not found",
                       runtime);
  if (!namespaced && !trainer_runtimes_.count(runtime))
    return fmt::format("admission webhook \"validator.trainjob.trainer.kubeflow.org\" denied the request: "
                       "spec.RuntimeRef: Invalid value: v1alpha1.RuntimeRef{{Name:\"{0}\", "
                       "APIGroup:(*string)(0xc000f3a2d0), Kind:(*string)(0xc000f3a2e0)}}: "
                       "clustertrainingruntimes.trainer.kubeflow.org \"{0}\" not found: specified "
                       "clusterTrainingRuntime must be created before the TrainJob is created",
                       runtime);
  return std::nullopt;
}

void FakeKube::object_routes() {
  auto& s = *server_;
  // A named object, or its collection (a List of the objects under it).
  auto get = [this](const httplib::Request& req, httplib::Response& res) {
    if (reads_403.fetch_sub(1) > 0)
      return send_status(
          res, 403, "Forbidden",
          fmt::format("User \"system:serviceaccount:team:runner\" cannot get {}", req.path));
    std::lock_guard lock(mutex_);
    for (const auto& prefix : forbidden_)
      if (req.path.rfind(prefix, 0) == 0)
        return send_status(
            res, 403, "Forbidden",
            fmt::format("User \"tester\" cannot get {}: no RBAC policy matched", req.path));
    if (auto it = objects_.find(req.path); it != objects_.end())
      return res.set_content(it->second.dump(), "application/json");
    const std::string runtimes = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/";
    if (req.path.rfind(runtimes, 0) == 0) {
      auto runtime = trainer_runtimes_.find(req.path.substr(runtimes.size()));
      if (runtime != trainer_runtimes_.end())
        return res.set_content(
            json{{"kind", "ClusterTrainingRuntime"},
                 {"metadata", {{"name", runtime->first}}},
                 {"spec", {{"mlPolicy", {{"numNodes", 1}, {runtime->second, json::object()}}}}}}
                .dump(),
            "application/json");
    }
    const bool collection = !req.matches[req.matches.size() - 1].matched ||
                            req.matches[req.matches.size() - 1].str().empty();
    if (!collection)
      return send_status(res, 404, "NotFound", fmt::format("{} not found", req.path));
    json list = {{"kind", "List"}, {"items", json::array()}};
    for (const auto& [path, object] : objects_)
      if (path.rfind(req.path + "/", 0) == 0 &&
          path.find('/', req.path.size() + 1) == std::string::npos)
        list["items"].push_back(object);
    res.set_content(list.dump(), "application/json");
  };
  s.Get(
      R"(/api/v1/namespaces/[^/]+/(?:persistentvolumeclaims|secrets|configmaps|serviceaccounts|resourcequotas|limitranges)(/[^/]+)?)",
      get);
  s.Get(R"(/api/v1/nodes(/[^/]+)?)", get);
  s.Get(
      R"(/apis/(?:storage\.k8s\.io/v1/storageclasses|scheduling\.k8s\.io/v1/priorityclasses|trainer\.kubeflow\.org/v1alpha1/clustertrainingruntimes|trainer\.kubeflow\.org/v1alpha1/namespaces/[^/]+/trainingruntimes|kueue\.x-k8s\.io/v1beta1/namespaces/[^/]+/localqueues)(/[^/]+)?)",
      get);

  // Discovery: an APIResourceList per served group/version.
  s.Get(R"(/apis/([^/]+)/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    const std::string group_version = req.matches[1].str() + "/" + req.matches[2].str();
    // Until serve_api is called, the operators and Trainer are installed.
    static const std::map<std::string, std::vector<std::string>> kInstalled = {
        {"kubeflow.org/v1", {"tfjobs", "pytorchjobs"}},
        {"kubeflow.org/v2beta1", {"mpijobs"}},
        {"trainer.kubeflow.org/v1alpha1",
         {"trainjobs", "clustertrainingruntimes", "trainingruntimes"}}};
    const auto& served = served_.empty() ? kInstalled : served_;
    auto it = served.find(group_version);
    if (it == served.end())
      return send_status(res, 404, "NotFound", "the server could not find the requested resource");
    json list = {
        {"kind", "APIResourceList"}, {"groupVersion", group_version}, {"resources", json::array()}};
    for (const auto& plural : it->second)
      list["resources"].push_back(
          {{"name", plural}, {"namespaced", true}, {"verbs", {"create", "get", "list"}}});
    res.set_content(list.dump(), "application/json");
  });

  // Access reviews: allowed when a Role of the subject grants the verb on the resource.
  auto review = [this](const httplib::Request& req, httplib::Response& res) {
    if (reads_403.fetch_sub(1) > 0)
      return send_status(res, 403, "Forbidden", "cannot create localsubjectaccessreviews");
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) return send_status(res, 400, "BadRequest", "not JSON");
    const json& spec = body["spec"];
    const json& attributes = spec.value("resourceAttributes", json::object());
    const std::string subject = spec.value("user", std::string());
    bool allowed = false;
    {
      std::lock_guard lock(mutex_);
      allowed = roles_.empty();  // until add_role is called, RBAC is off
      for (const auto& role : roles_)
        allowed = allowed || (role.subject == subject &&
                              (role.group == "*" || role.group == attributes.value("group", "")) &&
                              listed(role.resources, attributes.value("resource", "")) &&
                              listed(role.verbs, attributes.value("verb", "")));
    }
    body["status"] = {{"allowed", allowed}};
    if (!allowed) body["status"]["reason"] = "no RBAC policy matched";
    res.status = 201;
    res.set_content(body.dump(), "application/json");
  };
  s.Post(R"(/apis/authorization\.k8s\.io/v1/namespaces/[^/]+/localsubjectaccessreviews)", review);

  // The registry's manifests (distribution spec: HEAD, answered by the GET handler).
  s.Get(R"(/v2/(.+)/manifests/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string ref = req.matches[2].str();
    const std::string image = req.matches[1].str() + (ref.rfind("sha256:", 0) == 0 ? "@" : ":") + ref;
    std::lock_guard lock(mutex_);
    if (std::find(absent_images_.begin(), absent_images_.end(), image) != absent_images_.end()) {
      res.status = 404;
      return res.set_content(R"({"errors":[{"code":"MANIFEST_UNKNOWN"}]})", "application/json");
    }
    res.set_header("Docker-Content-Digest", "sha256:" + std::string(64, '0'));
    res.set_content("{}", "application/vnd.oci.image.manifest.v1+json");
  });
  s.Post(R"(/apis/authorization\.k8s\.io/v1/selfsubjectaccessreviews)", review);
}

}  // namespace pipec::runtime::testing
