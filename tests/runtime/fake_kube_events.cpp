// FakeKube's core/v1 Events and waiting pods: what the launcher reads to say why a job
// waits. The list takes the fieldSelector fields the real API does
// (pkg/apis/core/v1/conversion.go, AddFieldLabelConversionsForEvent, plus
// reportingComponent), with `=`, `==` and `!=`; any other field is a 400 as there.
#include <map>
#include <string>

#include <fmt/format.h>
#include <httplib.h>

#include "tests/runtime/fake_kube.hpp"

namespace pipec::runtime::testing {
namespace {

using nlohmann::json;

// The value of a selectable field of an Event, or nullopt for a field the API refuses.
std::optional<std::string> event_field(const json& e, const std::string& field) {
  static const std::map<std::string, std::pair<const char*, const char*>> kFields = {
      {"involvedObject.kind", {"involvedObject", "kind"}},
      {"involvedObject.namespace", {"involvedObject", "namespace"}},
      {"involvedObject.name", {"involvedObject", "name"}},
      {"involvedObject.uid", {"involvedObject", "uid"}},
      {"involvedObject.apiVersion", {"involvedObject", "apiVersion"}},
      {"involvedObject.resourceVersion", {"involvedObject", "resourceVersion"}},
      {"involvedObject.fieldPath", {"involvedObject", "fieldPath"}},
      {"source", {"source", "component"}},
      {"metadata.name", {"metadata", "name"}},
      {"metadata.namespace", {"metadata", "namespace"}},
  };
  if (field == "reason" || field == "type" || field == "reportingComponent") return e.value(field, "");
  auto it = kFields.find(field);
  if (it == kFields.end()) return std::nullopt;
  const json& object = e.value(it->second.first, json::object());
  return object.value(it->second.second, "");
}

}  // namespace

void FakeKube::add_event(const std::string& kind, const std::string& name, const std::string& type,
                         const std::string& reason, const std::string& message, int copies) {
  std::lock_guard lock(mutex_);
  for (int i = 0; i < copies; ++i) {
    ++rv_;
    // The API names an event <object>.<hex of the time>: one object's events list together.
    std::string event_name = fmt::format("{}.{:016x}", name, rv_);
    kube_events_[event_name] = {
        {"kind", "Event"},
        {"apiVersion", "v1"},
        {"metadata", {{"name", event_name}, {"namespace", "team"}, {"resourceVersion", std::to_string(rv_)}}},
        {"involvedObject",
         {{"kind", kind}, {"namespace", "team"}, {"name", name},
          {"apiVersion", kind == "Pod" ? "v1" : "kubeflow.org/v1"}}},
        {"reason", reason},
        {"message", message},
        {"type", type},
        {"count", 1},
        {"source", {{"component", kind == "Pod" ? "default-scheduler" : "training-operator"}}},
        {"reportingComponent", kind == "Pod" ? "default-scheduler" : "training-operator"}};
  }
  changed_.notify_all();
}

void FakeKube::wait_pod(const std::string& pod, const std::string& reason, const std::string& message) {
  std::lock_guard lock(mutex_);
  auto& p = pods_.at(pod);
  p.object["status"]["phase"] = "Pending";
  p.object["status"]["containerStatuses"][0]["state"] = {{"waiting", {{"reason", reason}, {"message", message}}}};
  p.object["status"]["containerStatuses"][0]["ready"] = false;
  changed_.notify_all();
}

void FakeKube::event_routes() {
  server_->Get(R"(/api/v1/namespaces/([^/]+)/events)", [this](const httplib::Request& req, httplib::Response& res) {
    if (events_403.fetch_sub(1) > 0)
      return send_status(res, 403, "Forbidden",
                         "events is forbidden: User \"system:serviceaccount:team:pipeline-runner\" cannot list "
                         "resource \"events\" in API group \"\" in the namespace \"team\"");
    // "a=b,c!=d": each term a field, an operator and a value.
    struct Term {
      std::string field, value;
      bool equal;
    };
    std::vector<Term> terms;
    std::string selector = req.get_param_value("fieldSelector");
    for (std::size_t at = 0; !selector.empty() && at <= selector.size();) {
      auto comma = std::min(selector.find(',', at), selector.size());
      std::string term = selector.substr(at, comma - at);
      at = comma + 1;
      auto op = term.find_first_of("!=");
      if (op == std::string::npos || op == 0)
        return send_status(res, 400, "BadRequest", fmt::format("invalid field selector: '{}'", term));
      bool equal = term[op] == '=';
      std::size_t value_at = op + (term.compare(op, 2, "==") == 0 || term.compare(op, 2, "!=") == 0 ? 2 : 1);
      terms.push_back({term.substr(0, op), term.substr(value_at), equal});
      if (!event_field(json::object(), terms.back().field))
        return send_status(res, 400, "BadRequest",
                           fmt::format("field label not supported: {}", terms.back().field));
    }
    std::size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
    std::lock_guard lock(mutex_);
    json list = {{"kind", "EventList"}, {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", std::to_string(rv_)}}}, {"items", json::array()}};
    for (const auto& [name, e] : kube_events_) {
      bool match = true;
      for (const auto& t : terms) match = match && (*event_field(e, t.field) == t.value) == t.equal;
      if (!match) continue;
      if (limit > 0 && list["items"].size() == limit) {
        list["metadata"]["continue"] = "more-after-" + name;  // the launcher reads no further
        break;
      }
      list["items"].push_back(e);
    }
    res.set_content(list.dump(), "application/json");
  });
}

// Trainer's progress report: status.trainerStatus replaced (lastUpdatedTime now), MODIFIED.
void FakeKube::set_trainer_status(const std::string& name, const json& trainer_status) {
  std::lock_guard lock(mutex_);
  auto& job = jobs_.at(name);
  job["status"]["trainerStatus"] = trainer_status;
  job["status"]["trainerStatus"]["lastUpdatedTime"] = "2026-11-29T00:00:00Z";
  emit("MODIFIED", job);
}

}  // namespace pipec::runtime::testing
