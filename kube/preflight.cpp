#include "kube/preflight.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "input/json.hpp"
#include "rules/names.hpp"

namespace pipec::kube {
namespace {

namespace pf = rules::preflight;
using nlohmann::json;
using Q = PreflightQuestion;

// One answer read back: its status and its body through the bounded JSON reader (the
// client already bounds its size); `body` is discarded when it is not JSON.
struct Read {
  long status = 0;
  json body;
  pf::Answer answer() const { return {status, body.is_discarded() ? nullptr : &body}; }
};

Read send(KubeClient& client, std::string_view method, const std::string& path,
          const std::string& body, long timeout_ms) {
  auto response = client.request(method, path, body, timeout_ms);
  Read read{response.status, input::parse_json(response.body)};
  return read;
}

pf::Finding unaskable(const Q& q, std::string_view why) {
  return {pf::Verdict::error, "preflight.name", q.name, 0, std::string(why), "fix the name"};
}

std::optional<std::string> path_of(pf::Kind kind, const std::string& ns, const std::string& name) {
  return pf::object_path(kind, ns, name);
}

// The collection a job of `kind` is created in.
std::string collection(const pf::ServedKind& kind, const std::string& ns) {
  return pf::discovery_path(kind) + "/namespaces/" + ns + "/" + std::string(kind.plural);
}

std::vector<pf::Finding> ask_named(KubeClient& client, const std::string& ns, const Q& q, long t) {
  struct Named {
    Q::What what;
    pf::Kind kind;
    const char* check;
  };
  static constexpr Named kNamed[] = {
      {Q::What::pull_secret, pf::Kind::secret, "pullsecret.exists"},
      {Q::What::service_account, pf::Kind::service_account, "serviceaccount.exists"},
      {Q::What::priority_class, pf::Kind::priority_class, "priorityclass.exists"},
      {Q::What::local_queue, pf::Kind::local_queue, "localqueue.exists"},
  };
  for (const auto& named : kNamed) {
    if (named.what != q.what) continue;
    auto path = path_of(named.kind, ns, q.name);
    if (!path) return {unaskable(q, "'" + q.name + "' is not a Kubernetes name")};
    auto read = send(client, "GET", *path, {}, t);
    return {pf::judge_exists(named.kind, ns, q.name, read.answer(), named.check)};
  }
  return {};
}

pf::Finding ask_access(KubeClient& client, const std::string& ns, const Q& q, std::string_view group,
                       std::string_view resource, long t) {
  auto review = pf::access_review(ns, q.subject, q.verb, group, resource);
  if (!review) return unaskable(q, "'" + q.subject + "' is not a Kubernetes name");
  auto read = send(client, "POST", review->path, review->body, t);
  const std::string who =
      q.subject.empty() ? std::string("this user") : "service account " + ns + "/" + q.subject;
  return pf::judge_access(who, q.verb, resource, ns, read.answer());
}

std::vector<pf::Finding> ask(KubeClient& client, const std::string& ns, const Q& q, long t) {
  const std::string not_a_name = "'" + q.name + "' is not a Kubernetes name";
  switch (q.what) {
    case Q::What::claim: {
      auto path = path_of(pf::Kind::persistent_volume_claim, ns, q.name);
      if (!path) return {unaskable(q, not_a_name)};
      auto read = send(client, "GET", *path, {}, t);
      bool wait_for_first_consumer = false;
      const auto& storage_class = input::member(read.body, "spec", "storageClassName");
      const auto& phase = input::member(read.body, "status", "phase");
      if (phase == "Pending" && storage_class.is_string()) {
        if (auto sc = path_of(pf::Kind::storage_class, ns, storage_class.get<std::string>())) {
          auto class_read = send(client, "GET", *sc, {}, t);
          wait_for_first_consumer =
              input::member_text(class_read.body, "volumeBindingMode") == "WaitForFirstConsumer";
        }
      }
      if (!pf::claim_needs_nodes(read.answer(), q.pods_at_once))
        return pf::judge_claim(ns, q.name, read.answer(), q.pods_at_once, wait_for_first_consumer);
      const auto nodes = send(client, "GET", "/api/v1/nodes", {}, t);
      const auto nodes_answer = nodes.answer();
      return pf::judge_claim(ns, q.name, read.answer(), q.pods_at_once, wait_for_first_consumer,
                             &nodes_answer);
    }
    case Q::What::secret:
    case Q::What::config_map: {
      const auto kind = q.what == Q::What::secret ? pf::Kind::secret : pf::Kind::config_map;
      auto path = path_of(kind, ns, q.name);
      if (!path) return {unaskable(q, not_a_name)};
      return pf::judge_keys(kind, ns, q.name, send(client, "GET", *path, {}, t).answer(), q.keys);
    }
    case Q::What::runtime: {
      const auto kind = q.runtime_kind == pf::Kind::training_runtime
                            ? pf::Kind::training_runtime
                            : pf::Kind::cluster_training_runtime;
      auto path = path_of(kind, ns, q.name);
      if (!path) return {unaskable(q, not_a_name)};
      auto read = send(client, "GET", *path, {}, t);
      return pf::judge_runtime(kind, ns, q.name, read.answer(), q.policy);
    }
    case Q::What::access:
      if (!q.resource.empty()) return {ask_access(client, ns, q, q.group, q.resource, t)};
      [[fallthrough]];
    case Q::What::served:
    case Q::What::dry_run: {
      const auto* kind = pf::served_kind(q.name);
      if (kind == nullptr) return {unaskable(q, "'" + q.name + "' is no kind pipec creates")};
      if (q.what == Q::What::served)
        return {pf::judge_served(*kind,
                                 send(client, "GET", pf::discovery_path(*kind), {}, t).answer())};
      if (q.what == Q::What::dry_run) {
        auto read = send(client, "POST", pf::dry_run_path(collection(*kind, ns)), q.manifest, t);
        return {pf::judge_dry_run(std::string(kind->kind) + " in namespace " + ns, read.answer())};
      }
      return {ask_access(client, ns, q, kind->group, kind->plural, t)};
    }
    case Q::What::quota: {
      if (!rules::is_dns1123_label(ns))
        return {unaskable(q, "'" + ns + "' is not a namespace name")};
      auto read = send(client, "GET", "/api/v1/namespaces/" + ns + "/resourcequotas", {}, t);
      return pf::judge_quota(ns, read.answer(), q.needs);
    }
    case Q::What::limit_range: {
      if (!rules::is_dns1123_label(ns))
        return {unaskable(q, "'" + ns + "' is not a namespace name")};
      auto read = send(client, "GET", "/api/v1/namespaces/" + ns + "/limitranges", {}, t);
      return pf::judge_limit_range(ns, read.answer(), q.containers);
    }
    case Q::What::nodes: {
      const auto tolerations = input::parse_json(q.tolerations);
      auto read = send(client, "GET", "/api/v1/nodes", {}, t);
      return {pf::judge_nodes(read.answer(), q.gpu_resource, q.gpus, q.node_selector,
                              tolerations.is_discarded() ? json::array() : tolerations)};
    }
    default:
      return ask_named(client, ns, q, t);
  }
}

}  // namespace

std::vector<std::vector<pf::Finding>> ask_preflight(KubeClient& client, const std::string& ns,
                                                    const std::vector<PreflightQuestion>& questions,
                                                    const PreflightLimits& limits) {
  std::vector<std::vector<pf::Finding>> out(questions.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < questions.size(); i = next++)
      out[i] = ask(client, ns, questions[i], limits.timeout_ms);
  };
  const auto threads = std::min<std::size_t>(std::max(1, limits.concurrency), questions.size());
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  return out;
}

}  // namespace pipec::kube
