#include "tests/runtime/fake_kube.hpp"

#include <ctime>
#include <regex>
#include <stdexcept>

#include <fmt/format.h>
#include <httplib.h>

namespace pipec::runtime::testing {
namespace {

using nlohmann::json;

std::string status_json(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"},   {"apiVersion", "v1"}, {"metadata", json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason},
              {"code", code}}
      .dump();
}


// Go's RFC3339Nano: trailing zeros of the fraction are dropped.
std::string rfc3339_nano(std::int64_t sec, std::int32_t nanos) {
  std::time_t t = static_cast<std::time_t>(sec);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (nanos) {
    std::string frac = fmt::format("{:09}", nanos);
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out + "Z";
}

std::optional<std::int64_t> parse_rfc3339_seconds(const std::string& s) {
  std::tm tm{};
  if (s.size() < 20 || !strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
  return static_cast<std::int64_t>(timegm(&tm));
}

bool labels_match(const json& labels, const std::string& selector) {
  std::size_t start = 0;
  while (start <= selector.size()) {
    auto comma = selector.find(',', start);
    auto term = selector.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto eq = term.find('=');
    if (eq == std::string::npos) return false;
    auto key = term.substr(0, eq), value = term.substr(eq + 1);
    if (!labels.is_object() || labels.value(key, std::string("\x01")) != value) return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

}  // namespace

void send_status(httplib::Response& res, int code, const std::string& reason, const std::string& message) {
  res.status = code;
  res.set_content(status_json(code, reason, message), "application/json");
}

FakeKube::FakeKube() : server_(std::make_unique<httplib::Server>()) { start(); }

FakeKube::FakeKube(const FakeKubeTls& tls)
    : server_(std::make_unique<httplib::SSLServer>(
          tls.cert_file.c_str(), tls.key_file.c_str(),
          tls.client_ca_file.empty() ? nullptr : tls.client_ca_file.c_str())),
      tls_(true) {
  if (!server_->is_valid()) throw std::runtime_error("FakeKube: bad TLS certificate or key");
  start();
}

void FakeKube::start() {
  // Followed streams hold a worker each; leave room for several at once.
  server_->new_task_queue = [] { return new httplib::ThreadPool(32); };
  server_->set_keep_alive_max_count(1);
  routes();
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeKube::~FakeKube() {
  stopping_ = true;
  changed_.notify_all();
  server_->stop();
  thread_.join();
}

void FakeKube::emit(const std::string& type, json& object) {
  object["metadata"]["resourceVersion"] = std::to_string(++rv_);
  events_.push_back({rv_, type, object});
  changed_.notify_all();
}

void FakeKube::routes() {
  auto& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    std::string line = req.method + " " + req.path;
    std::string query;
    for (const auto& [k, v] : req.params) query += (query.empty() ? "?" : "&") + k + "=" + v;
    std::string token = req.get_header_value("Authorization");
    bool accepted = true;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(line + query);
      tokens_.push_back(token);
      if (!accepted_tokens_.empty()) {
        accepted = false;
        for (const auto& t : accepted_tokens_) accepted = accepted || token == "Bearer " + t;
      }
    }
    if (!accepted) {
      send_status(res, 401, "Unauthorized", "Unauthorized");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // The training operator's jobs, and Kubeflow Trainer v2's TrainJobs.
  const std::string jobs =
      R"(/apis/(kubeflow\.org/v1|kubeflow\.org/v2beta1|trainer\.kubeflow\.org/v1alpha1)/namespaces/([^/]+)/(mpijobs|tfjobs|pytorchjobs|trainjobs))";

  s.Post(jobs, [this](const httplib::Request& req, httplib::Response& res) {
    std::string plural = req.matches[3], ns = req.matches[2];
    json job = json::parse(req.body, nullptr, false);
    std::string name = job.is_object() ? job["metadata"].value("name", std::string()) : "";
    const bool dry_run = req.get_param_value("dryRun") == "All";
    int forced = dry_run ? 0 : create_status.load();
    if (forced == 403) {  // the authorizer (RBAC)
      std::string group = plural == "trainjobs" ? "trainer.kubeflow.org" : "kubeflow.org";
      return send_status(res, 403, "Forbidden",
                         fmt::format("{}.{} is forbidden: User "
                                     "\"system:serviceaccount:{}:pipeline-runner\" cannot create "
                                     "resource \"{}\" in API group \"{}\" in the "
                                     "namespace \"{}\"",
                                     plural, group, ns, plural, group, ns));
    }
    if (forced) return send_status(res, forced, "InternalError", "forced failure");
    if (!dry_run && create_500s.fetch_sub(1) > 0)
      return send_status(res, 500, "InternalError", "etcdserver: leader changed");
    std::lock_guard lock(mutex_);
    if (dry_run && !serves_locked(req.matches[1], plural))
      return send_status(res, 404, "NotFound", "the server could not find the requested resource");
    if (auto refusal = admission_refusal_locked(plural, ns, job))  // the webhooks
      return send_status(res, 403, "Forbidden", *refusal);
    if (dry_run && !jobs_.count(name)) {  // admitted, and nothing is stored
      res.status = 201;
      return res.set_content(job.dump(), "application/json");
    }
    if (jobs_.count(name))  // a dry run too: storage refuses it after admission passed
      return send_status(res, 409, "AlreadyExists",
                         fmt::format("{}.kubeflow.org \"{}\" already exists", plural, name));
    job["metadata"]["uid"] = fmt::format("uid-{}", name);
    job["metadata"]["creationTimestamp"] = rfc3339_nano(log_sec_, 0);
    job["status"] = json::object();
    emit("ADDED", job);
    jobs_[name] = job;
    plurals_[name] = plural;
    if (plural == "trainjobs" && !trainer_runtimes_.empty()) {
      // Trainer builds the JobSet (plugins/jobset: same name, owned by the TrainJob);
      // JobSet creates its Jobs and their pods.
      const json& trainer = job["spec"]["trainer"];
      long nodes = trainer.value("numNodes", 1L);
      bool mpi = trainer_runtimes_[job["spec"]["runtimeRef"].value("name", std::string())] == "mpi";
      json replicated = json::array();
      replicated.push_back({{"name", "node"}, {"pods", mpi ? nodes - 1 : nodes}});
      if (mpi) replicated.push_back({{"name", "launcher"}, {"pods", 1}, {"dependsOn", "node"}});
      jobsets_[name] = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                        {"kind", "JobSet"},
                        {"metadata", {{"name", name}, {"namespace", ns}}},
                        {"spec", {{"replicatedJobs", replicated},
                                  {"successPolicy", mpi ? json{{"operator", "All"}, {"targetReplicatedJobs", {"launcher"}}}
                                                        : json{{"operator", "All"}}}}},
                        {"status", {{"restarts", 0}}}};
      for (long i = 0; i < (mpi ? nodes - 1 : nodes); ++i) add_jobset_pod_locked(name, "node", static_cast<int>(i));
      reconcile_trainer();
    }
    res.status = 201;
    res.set_content(job.dump(), "application/json");
  });

  s.Get(jobs, [this](const httplib::Request& req, httplib::Response& res) {
    if (req.get_param_value("watch") != "true") {
      std::lock_guard lock(mutex_);
      json list = {{"kind", "List"}, {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
                   {"items", json::array()}};
      for (auto& [n, j] : jobs_) list["items"].push_back(j);
      res.set_content(list.dump(), "application/json");
      return;
    }
    if (watch_broken || jobs_broken || watch_500s.fetch_sub(1) > 0)
      return send_status(res, 500, "InternalError", "etcdserver: request timed out");
    if (watch_gone.fetch_sub(1) > 0) {
      // The resourceVersion is too old: one ERROR event, then the stream ends.
      json status = json::parse(status_json(410, "Expired", "too old resource version"));
      res.set_content(json{{"type", "ERROR"}, {"object", status}}.dump() + "\n", "application/json");
      return;
    }
    auto since = std::make_shared<std::uint64_t>(0);
    auto rv_text = req.get_param_value("resourceVersion");
    if (!rv_text.empty()) *since = std::stoull(rv_text);
    std::string field = req.get_param_value("fieldSelector");
    std::string name = field.rfind("metadata.name=", 0) == 0 ? field.substr(14) : "";
    auto sent = std::make_shared<int>(0);
    auto started = std::chrono::steady_clock::now();
    res.set_chunked_content_provider(
        "application/json", [this, since, sent, name, started](std::size_t, httplib::DataSink& sink) {
          if (jobs_broken) return false;  // the server went away: open watches drop
          std::unique_lock lock(mutex_);
          for (const auto& ev : events_) {
            if (ev.rv <= *since) continue;
            if (!name.empty() && ev.object["metadata"].value("name", "") != name) continue;
            int drop = drop_watch_after.load();
            if (drop >= 0 && *sent >= drop) {
              drop_watch_after = -1;
              return false;  // the connection drops in the middle of the watch
            }
            std::string line = json{{"type", ev.type}, {"object", ev.object}}.dump() + "\n";
            *since = ev.rv;
            ++*sent;
            if (!sink.write(line.data(), line.size())) return false;
            if (ev.type == "DELETED") {
              sink.done();
              return true;
            }
          }
          if (stopping_ || std::chrono::steady_clock::now() - started > std::chrono::seconds(20)) {
            sink.done();
            return true;
          }
          changed_.wait_for(lock, std::chrono::milliseconds(50));
          return true;
        });
  });

  s.Get(jobs + "/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
    if (jobs_broken) return send_status(res, 503, "ServiceUnavailable", "the server is shutting down");
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(req.matches[4]);
    if (it == jobs_.end())
      return send_status(res, 404, "NotFound",
                         fmt::format("{}.kubeflow.org \"{}\" not found", std::string(req.matches[3]),
                                     std::string(req.matches[4])));
    res.set_content(it->second.dump(), "application/json");
  });

  s.Delete(jobs + "/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
    if (int forced = delete_status.load())
      return send_status(res, forced, forced == 403 ? "Forbidden" : "InternalError", "forced failure");
    std::lock_guard lock(mutex_);
    auto it = jobs_.find(req.matches[4]);
    if (it == jobs_.end())
      return send_status(res, 404, "NotFound", "not found");
    json job = it->second;
    std::string name = it->first;
    jobs_.erase(it);
    emit("DELETED", job);
    if (jobsets_.erase(name)) {  // the garbage collector: the JobSet, its Jobs and their pods
      for (const auto& pod : jobset_pods_[name]) pods_.erase(pod);
      jobset_pods_.erase(name);
      changed_.notify_all();
    }
    res.set_content(json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}}.dump(),
                    "application/json");
  });

  // JobSets (Trainer's, read-only here).
  s.Get(R"(/apis/jobset\.x-k8s\.io/v1alpha2/namespaces/([^/]+)/jobsets/([^/]+))",
        [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard lock(mutex_);
          auto it = jobsets_.find(req.matches[2]);
          if (it == jobsets_.end())
            return send_status(res, 404, "NotFound",
                               fmt::format("jobsets.jobset.x-k8s.io \"{}\" not found", std::string(req.matches[2])));
          res.set_content(it->second.dump(), "application/json");
        });

  // The core API's pods and services, as runtime "pods" creates them.
  s.Post(R"(/api/v1/namespaces/([^/]+)/(pods|services))", [this](const httplib::Request& req,
                                                                 httplib::Response& res) {
    std::string plural = req.matches[2];
    json object = json::parse(req.body, nullptr, false);
    std::string name = object.is_object() ? object["metadata"].value("name", std::string()) : "";
    if (int forced = create_status.load()) return send_status(res, forced, "InternalError", "forced failure");
    if (create_500s.fetch_sub(1) > 0) return send_status(res, 500, "InternalError", "etcdserver: leader changed");
    std::lock_guard lock(mutex_);
    bool exists = plural == "pods" ? pods_.count(name) > 0 : services_.count(name) > 0;
    if (exists)
      return send_status(res, 409, "AlreadyExists", fmt::format("{} \"{}\" already exists", plural, name));
    object["metadata"]["uid"] = fmt::format("uid-{}", name);
    if (plural == "pods") {
      ++pod_serial_;
      object["metadata"]["creationTimestamp"] = rfc3339_nano(log_sec_ + pod_serial_, 0);
      json statuses = json::array();
      for (const auto& c : object["spec"]["containers"])
        statuses.push_back({{"name", c.value("name", std::string())}, {"restartCount", 0},
                            {"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}});
      object["status"] = {{"phase", "Pending"}, {"containerStatuses", statuses}};
      Pod p;
      p.object = object;
      pods_[name] = std::move(p);
    } else {
      services_[name] = object;
    }
    changed_.notify_all();
    res.status = 201;
    res.set_content(object.dump(), "application/json");
  });
  s.Get(R"(/api/v1/namespaces/([^/]+)/(pods|services)/([^/]+))", [this](const httplib::Request& req,
                                                                        httplib::Response& res) {
    std::string plural = req.matches[2], name = req.matches[3];
    std::lock_guard lock(mutex_);
    if (plural == "pods" && pods_.count(name)) return res.set_content(pods_[name].object.dump(), "application/json");
    if (plural == "services" && services_.count(name)) return res.set_content(services_[name].dump(), "application/json");
    send_status(res, 404, "NotFound", fmt::format("{} \"{}\" not found", plural, name));
  });
  s.Delete(R"(/api/v1/namespaces/([^/]+)/(pods|services)/([^/]+))", [this](const httplib::Request& req,
                                                                           httplib::Response& res) {
    std::string plural = req.matches[2], name = req.matches[3];
    if (int forced = delete_status.load()) return send_status(res, forced, "InternalError", "forced failure");
    std::lock_guard lock(mutex_);
    bool erased = plural == "pods" ? pods_.erase(name) > 0 : services_.erase(name) > 0;
    if (!erased) return send_status(res, 404, "NotFound", fmt::format("{} \"{}\" not found", plural, name));
    changed_.notify_all();
    res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
  });

  s.Get(R"(/api/v1/namespaces/([^/]+)/pods)", [this](const httplib::Request& req,
                                                     httplib::Response& res) {
    if (pods_403.fetch_sub(1) > 0)
      return send_status(res, 403, "Forbidden",
                         "pods is forbidden: User \"system:serviceaccount:team:pipeline-runner\" cannot list "
                         "resource \"pods\" in API group \"\" in the namespace \"team\"");
    if (pods_500s.fetch_sub(1) > 0) return send_status(res, 500, "InternalError", "etcdserver: timeout");
    std::lock_guard lock(mutex_);
    json list = {{"kind", "PodList"}, {"apiVersion", "v1"}, {"items", json::array()}};
    auto selector = req.get_param_value("labelSelector");
    for (auto& [n, p] : pods_)
      if (labels_match(p.object["metadata"]["labels"], selector)) list["items"].push_back(p.object);
    res.set_content(list.dump(), "application/json");
  });

  event_routes();
  object_routes();

  s.Get(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/log)", [this](const httplib::Request& req,
                                                                  httplib::Response& res) {
    std::string pod = req.matches[2];
    {
      std::lock_guard lock(mutex_);
      if (!pods_.count(pod))
        return send_status(res, 404, "NotFound", fmt::format("pods \"{}\" not found", pod));
    }
    if (log_403.fetch_sub(1) > 0)
      return send_status(res, 403, "Forbidden",
                         fmt::format("pods \"{}\" is forbidden: User \"system:serviceaccount:team:"
                                     "pipeline-runner\" cannot get resource \"pods/log\" in API "
                                     "group \"\" in the namespace \"team\"",
                                     pod));
    if (log_500s.fetch_sub(1) > 0) return send_status(res, 500, "InternalError", "proxy error");
    bool follow = req.get_param_value("follow") == "true";
    bool stamps = req.get_param_value("timestamps") == "true";
    bool previous = req.get_param_value("previous") == "true";
    std::int64_t since = 0;
    if (req.has_param("sinceTime")) since = parse_rfc3339_seconds(req.get_param_value("sinceTime")).value_or(0);
    auto format = [stamps](const LogLine& l) {
      return (stamps ? rfc3339_nano(l.sec, l.nanos) + " " : std::string()) + l.text + "\n";
    };
    if (previous) {  // the kubelet keeps the log of the container before the running one
      std::lock_guard lock(mutex_);
      if (pods_[pod].restarts == 0)
        return send_status(res, 400, "BadRequest",
                           fmt::format("previous terminated container \"{}\" in pod \"{}\" not found",
                                       req.get_param_value("container"), pod));
    }
    if (!follow || previous) {
      std::lock_guard lock(mutex_);
      const auto& lines = previous ? pods_[pod].previous : pods_[pod].lines;
      std::size_t first = 0;
      if (req.has_param("tailLines")) {
        auto n = std::stoul(req.get_param_value("tailLines"));
        first = lines.size() > n ? lines.size() - n : 0;
      }
      std::string body;
      for (std::size_t i = first; i < lines.size(); ++i)
        if (lines[i].sec >= since) body += format(lines[i]);
      res.set_content(body, "text/plain");
      return;
    }
    auto next = std::make_shared<std::size_t>(0);
    auto sent = std::make_shared<int>(0);
    int restarts = 0;
    {
      std::lock_guard lock(mutex_);
      restarts = pods_[pod].restarts;
    }
    res.set_chunked_content_provider(
        "text/plain", [this, pod, next, sent, since, format, restarts](std::size_t, httplib::DataSink& sink) {
          std::unique_lock lock(mutex_);
          auto it = pods_.find(pod);
          if (it == pods_.end()) {  // the pod was deleted: its log ends, as the kubelet's does
            sink.done();
            return true;
          }
          auto& p = it->second;
          if (p.restarts != restarts) {  // the container this stream followed has ended
            sink.done();
            return true;
          }
          while (*next < p.lines.size()) {
            const auto& l = p.lines[(*next)++];
            if (l.sec < since) continue;
            int drop = drop_log_after.load();
            if (drop >= 0 && *sent >= drop) {
              drop_log_after = -1;
              return false;  // the stream drops mid-log
            }
            std::string text = format(l);
            ++*sent;
            ++log_lines_sent;
            if (!sink.write(text.data(), text.size())) return false;
          }
          if (p.ended || stopping_) {
            sink.done();
            return true;
          }
          changed_.wait_for(lock, std::chrono::milliseconds(50));
          return true;
        });
  });
}

std::string FakeKube::wait_for_job(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [this] { return !jobs_.empty(); });
  return jobs_.empty() ? "" : jobs_.begin()->first;
}

std::optional<json> FakeKube::job(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(name);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

void FakeKube::put_job(const std::string& plural, json job) {
  std::lock_guard lock(mutex_);
  auto name = job["metadata"]["name"].get<std::string>();
  job["metadata"]["uid"] = "uid-old";
  emit("ADDED", job);
  jobs_[name] = job;
  plurals_[name] = plural;
}

void FakeKube::set_condition(const std::string& name, const std::string& type,
                             const std::string& reason, const std::string& message) {
  std::lock_guard lock(mutex_);
  auto& job = jobs_.at(name);
  json& conds = job["status"]["conditions"];
  if (!conds.is_array()) conds = json::array();
  bool found = false;
  for (auto& c : conds) {
    if (c["type"] == type) {
      c["status"] = "True";
      c["reason"] = reason;
      c["message"] = message;
      found = true;
    } else if (c["type"] != "Created") {
      c["status"] = "False";
    }
  }
  if (!found)
    conds.push_back({{"type", type}, {"status", "True"}, {"reason", reason}, {"message", message},
                     {"lastTransitionTime", rfc3339_nano(log_sec_, 0)}});
  emit("MODIFIED", job);
}

void FakeKube::install_trainer(std::map<std::string, std::string> runtimes) {
  std::lock_guard lock(mutex_);
  trainer_runtimes_ = std::move(runtimes);
}

// A pod of Job `<trainjob>-<replicated_job>-0` with completion index `index`, as JobSet and
// the Job controller make it: Pending, container `node` waiting. Mutex held.
void FakeKube::add_jobset_pod_locked(const std::string& trainjob, const std::string& replicated_job, int index) {
  std::string job = trainjob + "-" + replicated_job + "-0";
  ++pod_serial_;
  std::string pod = fmt::format("{}-{}-{:05x}", job, index, (pod_serial_ * 40503) & 0xfffff);
  Pod p;
  p.object = {{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"metadata",
               {{"name", pod},
                {"namespace", "team"},
                {"creationTimestamp", rfc3339_nano(log_sec_ + pod_serial_, 0)},
                {"labels",
                 {{"jobset.sigs.k8s.io/jobset-name", trainjob},
                  {"jobset.sigs.k8s.io/replicatedjob-name", replicated_job},
                  {"jobset.sigs.k8s.io/job-index", "0"},
                  {"batch.kubernetes.io/job-completion-index", std::to_string(index)},
                  {"job-name", job}}}}},
              {"spec", {{"hostname", fmt::format("{}-{}", job, index)},
                        {"subdomain", trainjob},
                        {"containers", json::array({{{"name", "node"}, {"image", "img"}}})}}},
              {"status",
               {{"phase", "Pending"},
                {"containerStatuses",
                 json::array({{{"name", "node"},
                               {"restartCount", 0},
                               {"ready", false},
                               {"state", {{"waiting", {{"reason", "ContainerCreating"}}}}}}})}}}};
  pods_[pod] = std::move(p);
  jobset_pods_[trainjob].push_back(pod);
  changed_.notify_all();
}

// JobSet's controller (jobset_controller.go: replicatedJobsStatus, FailedJobs, AllJobsCompleted;
// dependsOn Ready), then Trainer's (plugins/jobset Status: the TrainJob's jobsStatus and its
// Complete / Failed conditions copied from the JobSet). Mutex held.
void FakeKube::reconcile_trainer() {
  for (auto& [name, jobset] : jobsets_) {
    json& status = jobset["status"];
    bool terminal = false;
    for (const auto& c : status.value("conditions", json::array()))
      terminal |= (c["type"] == "Completed" || c["type"] == "Failed") && c["status"] == "True";
    json replicated_status = json::array();
    std::string first_failed;
    bool targets_succeeded = true;
    const json& success = jobset["spec"]["successPolicy"];
    for (auto& rj : jobset["spec"]["replicatedJobs"]) {
      std::string rj_name = rj["name"];
      long expected = rj["pods"].get<long>();
      if (rj.contains("dependsOn") && !rj.value("created", false)) {
        // dependsOn Ready: the launcher's Job starts once every node Job is ready (or done).
        bool ready = false;
        for (const auto& st : replicated_status)
          if (st["name"] == rj["dependsOn"])
            ready = st["ready"].get<int>() + st["succeeded"].get<int>() + st["failed"].get<int>() > 0;
        if (ready && !terminal) {
          for (long i = 0; i < expected; ++i) add_jobset_pod_locked(name, rj_name, static_cast<int>(i));
          rj["created"] = true;
        }
      }
      long ready = 0, succeeded = 0, failed = 0, live = 0;
      bool created = !rj.contains("dependsOn") || rj.value("created", false);
      for (const auto& pod : jobset_pods_[name]) {
        auto it = pods_.find(pod);
        if (it == pods_.end()) continue;
        const json& o = it->second.object;
        if (o["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] != rj_name) continue;
        std::string phase = o["status"].value("phase", "");
        bool pod_ready = phase == "Running" && o["status"]["containerStatuses"][0].value("ready", false);
        ready += pod_ready;
        succeeded += phase == "Succeeded";
        failed += phase == "Failed";
        live += phase == "Pending" || phase == "Running";
      }
      bool job_failed = failed > 0;
      bool job_succeeded = created && !job_failed && succeeded >= expected;
      bool job_active = created && !job_failed && !job_succeeded;
      if (job_failed && first_failed.empty()) first_failed = name + "-" + rj_name + "-0";
      bool target = !success.contains("targetReplicatedJobs");
      for (const auto& t : success.value("targetReplicatedJobs", json::array())) target |= t == rj_name;
      if (target) targets_succeeded &= job_succeeded;
      replicated_status.push_back({{"name", rj_name},
                                   {"ready", job_active && ready + succeeded >= expected ? 1 : 0},
                                   {"succeeded", job_succeeded ? 1 : 0},
                                   {"failed", job_failed ? 1 : 0},
                                   {"active", job_active && live > 0 ? 1 : 0},
                                   {"suspended", 0}});
    }
    status["replicatedJobsStatus"] = replicated_status;
    if (!terminal && !first_failed.empty()) {
      status["conditions"] = json::array({{{"type", "Failed"}, {"status", "True"}, {"reason", "FailedJobs"},
                                           {"message", "jobset failed due to one or more job failures (first "
                                                       "failed job: " + first_failed + ")"},
                                           {"lastTransitionTime", rfc3339_nano(log_sec_, 0)}}});
      status["terminalState"] = "Failed";
    } else if (!terminal && targets_succeeded) {
      status["conditions"] = json::array({{{"type", "Completed"}, {"status", "True"},
                                           {"reason", "AllJobsCompleted"}, {"message", "jobset completed successfully"},
                                           {"lastTransitionTime", rfc3339_nano(log_sec_, 0)}}});
      status["terminalState"] = "Completed";
    }
    // Trainer: the TrainJob's status from its JobSet's.
    auto it = jobs_.find(name);
    if (it == jobs_.end()) continue;
    json train_status = it->second["status"];
    if (!train_status.is_object()) train_status = json::object();
    json conditions = train_status.value("conditions", json::array());
    for (const auto& c : status.value("conditions", json::array())) {
      json copy = c;
      if (c["type"] == "Completed") copy["type"] = "Complete";
      bool replaced = false;
      for (auto& old : conditions)
        if (old["type"] == copy["type"]) old = copy, replaced = true;
      if (!replaced) conditions.push_back(copy);
    }
    if (!conditions.empty()) train_status["conditions"] = conditions;
    train_status["jobsStatus"] = replicated_status;
    if (train_status != it->second["status"]) {
      it->second["status"] = train_status;
      emit("MODIFIED", it->second);
    }
  }
}

std::vector<std::string> FakeKube::jobset_pods(const std::string& trainjob, std::size_t at_least,
                                               std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return jobset_pods_[trainjob].size() >= at_least; });
  return jobset_pods_[trainjob];
}

std::optional<json> FakeKube::jobset(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = jobsets_.find(name);
  if (it == jobsets_.end()) return std::nullopt;
  return it->second;
}

void FakeKube::start_pod_unready(const std::string& pod) {
  std::lock_guard lock(mutex_);
  auto& p = pods_.at(pod);
  p.object["status"]["phase"] = "Running";
  p.object["status"]["containerStatuses"][0]["state"] = {{"running", json::object()}};
  p.object["status"]["containerStatuses"][0]["ready"] = false;
  changed_.notify_all();
  reconcile_trainer();
}

void FakeKube::add_jobset_pod(const std::string& pod, const std::string& trainjob,
                              const std::string& replicated_job, int index) {
  add_pod(pod, trainjob, replicated_job, index, "node");
  std::lock_guard lock(mutex_);
  // JobSet's labels: a replicated job (replicas 1) is Job index 0; its pods are the
  // indexed Job's completions (a TrainJob's nodes).
  pods_[pod].object["metadata"]["labels"] = {{"jobset.sigs.k8s.io/jobset-name", trainjob},
                                             {"jobset.sigs.k8s.io/replicatedjob-name", replicated_job},
                                             {"jobset.sigs.k8s.io/job-index", "0"},
                                             {"batch.kubernetes.io/job-completion-index", std::to_string(index)}};
}

void FakeKube::add_pod(const std::string& pod, const std::string& job,
                       const std::string& replica_type, int index, const std::string& container) {
  std::lock_guard lock(mutex_);
  ++pod_serial_;
  Pod p;
  p.object = {{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"metadata",
               {{"name", pod},
                {"namespace", "team"},
                {"creationTimestamp", rfc3339_nano(log_sec_ + pod_serial_, 0)},
                {"labels",
                 {{"training.kubeflow.org/job-name", job},
                  {"training.kubeflow.org/replica-type", replica_type},
                  {"training.kubeflow.org/replica-index", std::to_string(index)}}}}},
              {"spec", {{"containers", json::array({{{"name", container}, {"image", "img"}}})}}},
              {"status",
               {{"phase", "Running"},
                {"containerStatuses",
                 json::array({{{"name", container},
                               {"restartCount", 0},
                               {"state", {{"running", json::object()}}}}})}}}};
  pods_[pod] = std::move(p);
  changed_.notify_all();
}

void FakeKube::log(const std::string& pod, const std::string& text, std::int64_t step_ns) {
  std::lock_guard lock(mutex_);
  std::int64_t total = log_nanos_ + step_ns;
  log_sec_ += total / 1'000'000'000;
  log_nanos_ = static_cast<std::int32_t>(total % 1'000'000'000);
  pods_.at(pod).lines.push_back({log_sec_, log_nanos_, text});
  changed_.notify_all();
}

std::vector<std::string> FakeKube::pod_names() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [n, p] : pods_) out.push_back(n);
  return out;
}

std::vector<std::string> FakeKube::service_names() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [n, s] : services_) out.push_back(n);
  return out;
}

std::optional<json> FakeKube::pod_object(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = pods_.find(name);
  if (it == pods_.end()) return std::nullopt;
  return it->second.object;
}

std::optional<json> FakeKube::service(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = services_.find(name);
  if (it == services_.end()) return std::nullopt;
  return it->second;
}

void FakeKube::start_pod(const std::string& pod) {
  std::lock_guard lock(mutex_);
  auto& p = pods_.at(pod);
  p.object["status"]["phase"] = "Running";
  p.object["status"]["containerStatuses"][0]["state"] = {{"running", json::object()}};
  p.object["status"]["containerStatuses"][0]["ready"] = true;
  reconcile_trainer();
  changed_.notify_all();
}

void FakeKube::end_pod(const std::string& pod, int exit_code, const std::string& reason) {
  std::lock_guard lock(mutex_);
  auto& p = pods_.at(pod);
  p.ended = true;
  p.object["status"]["phase"] = exit_code == 0 ? "Succeeded" : "Failed";
  p.object["status"]["containerStatuses"][0]["state"] = {
      {"terminated", {{"exitCode", exit_code}, {"reason", !reason.empty() ? reason : exit_code ? "Error" : "Completed"}}}};
  reconcile_trainer();
  changed_.notify_all();
}

void FakeKube::restart_container(const std::string& pod, int exit_code) {
  std::lock_guard lock(mutex_);
  auto& p = pods_.at(pod);
  p.previous = std::move(p.lines);
  p.lines.clear();
  p.ended = false;
  ++p.restarts;
  auto& status = p.object["status"]["containerStatuses"][0];
  status["restartCount"] = p.restarts;
  status["lastState"] = {{"terminated", {{"exitCode", exit_code}, {"reason", exit_code ? "Error" : "Completed"}}}};
  status["state"] = {{"running", json::object()}};
  p.object["status"]["phase"] = "Running";
  reconcile_trainer();
  changed_.notify_all();
}

void FakeKube::patch_pod(const std::string& pod, const json& patch) {
  std::lock_guard lock(mutex_);
  pods_.at(pod).object.merge_patch(patch);
  reconcile_trainer();
  changed_.notify_all();
}

void FakeKube::remove_job(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(name);
  if (it == jobs_.end()) return;
  json job = it->second;
  jobs_.erase(it);
  emit("DELETED", job);
}

std::vector<std::string> FakeKube::requests() {
  std::lock_guard lock(mutex_);
  return requests_;
}

int FakeKube::count(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  int n = 0;
  for (const auto& r : requests_) n += r.rfind(prefix, 0) == 0;
  return n;
}

void FakeKube::accept_tokens(std::vector<std::string> tokens) {
  std::lock_guard lock(mutex_);
  accepted_tokens_ = std::move(tokens);
}

std::vector<std::string> FakeKube::tokens_seen() {
  std::lock_guard lock(mutex_);
  return tokens_;
}

}  // namespace pipec::runtime::testing
