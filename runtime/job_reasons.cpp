#include "runtime/job_reasons.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "input/json.hpp"
#include "input/utf8.hpp"

namespace pipec::runtime {

namespace {

using nlohmann::json;
using input::member;
using input::member_text;

long long integer(const json& j, const char* key) {
  const json& v = member(j, key);
  return v.is_number_integer() ? v.get<long long>() : 0;
}

// "worker" -> "workers" for a count other than one; "ps" stays.
std::string counted(std::string_view role, std::size_t total) {
  std::string out(role.empty() ? "pod" : role);
  if (total != 1 && out.back() != 's') out += 's';
  return out;
}

std::string reason_key(const std::string& reason, const std::string& message) {
  return message.empty() ? reason : reason + ": " + message;
}

}  // namespace

std::string one_line(std::string_view text, std::size_t max_bytes) {
  std::string out;
  bool cut = false;
  for (std::size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t len = utf8_sequence_length(text, i);
    std::string piece;
    if (len == 0) {
      piece = "?";
      len = 1;
    } else if (len == 1) {
      piece = c < 0x20 || c == 0x7f ? " " : std::string(1, static_cast<char>(c));
    } else {
      char32_t cp = utf8_code_point(text, i, len);
      piece = is_bidi_control(cp) ? "?" : std::string(text.substr(i, len));
    }
    i += len;
    if (piece == " " && (out.empty() || out.back() == ' ')) continue;
    if (out.size() + piece.size() > max_bytes) {
      cut = true;
      break;
    }
    out += piece;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (cut) out += "...";
  return out;
}

std::vector<PodReport> read_pods(const json& list, std::string_view type_label, std::string_view index_label) {
  std::vector<PodReport> pods;
  const json& items = member(list, "items");
  if (!items.is_array()) return pods;
  for (const auto& p : items) {
    if (!p.is_object()) continue;
    PodReport pod;
    pod.name = member_text(member(p, "metadata"), "name");
    const json& labels = member(p, "metadata", "labels");
    pod.role = member_text(labels, type_label);
    pod.index = member_text(labels, index_label);
    pod.phase = member_text(member(p, "status"), "phase");
    for (const char* statuses : {"initContainerStatuses", "containerStatuses"}) {
      for (const auto& cs : member(p, "status", statuses)) {
        std::string container = member_text(cs, "name");
        const json& waiting = member(cs, "state", "waiting");
        std::string reason = member_text(waiting, "reason");
        if (!reason.empty() && reason != "ContainerCreating" && reason != "PodInitializing")
          pod.waiting.push_back({container, one_line(reason, kMaxReasonMessageBytes),
                                 one_line(member_text(waiting, "message"), kMaxReasonMessageBytes)});
        auto bad = [](const json& term) {
          return term.is_object() && (integer(term, "exitCode") != 0 || member_text(term, "reason") == "OOMKilled");
        };
        const json& now = member(cs, "state", "terminated");
        const json& before = member(cs, "lastState", "terminated");
        if (bad(now))
          pod.terminated.push_back({container, one_line(member_text(now, "reason"), kMaxReasonMessageBytes),
                                    integer(now, "exitCode"), 0});
        else if (bad(before))
          pod.terminated.push_back({container, one_line(member_text(before, "reason"), kMaxReasonMessageBytes),
                                    integer(before, "exitCode"), std::max(1LL, integer(cs, "restartCount"))});
      }
    }
    pods.push_back(std::move(pod));
  }
  return pods;
}

std::vector<EventReport> read_events(const json& list, std::size_t max_items) {
  std::vector<EventReport> events;
  const json& items = member(list, "items");
  if (!items.is_array()) return events;
  std::size_t read = 0;
  for (const auto& e : items) {
    if (read++ >= max_items) break;
    if (member_text(e, "type") != "Warning") continue;
    EventReport event;
    const json& object = member(e, "involvedObject");
    event.kind = one_line(member_text(object, "kind"), kMaxReasonMessageBytes);
    event.name = one_line(member_text(object, "name"), kMaxReasonMessageBytes);
    event.reason = one_line(member_text(e, "reason"), kMaxReasonMessageBytes);
    event.message = one_line(member_text(e, "message"), kMaxReasonMessageBytes);
    if (event.reason.empty() && event.message.empty()) continue;
    events.push_back(std::move(event));
  }
  return events;
}

std::vector<WaitReason> wait_reasons(const std::vector<PodReport>& pods, const std::vector<EventReport>& events) {
  // One entry per distinct reason, in the order first met; for the pods, how many of
  // each role (and phase) give it.
  struct Entry {
    std::string key, object;  // object: who gives it when that is not one of the pods
    std::vector<std::pair<std::string, std::string>> groups;  // (role, phase), in order met
    std::map<std::pair<std::string, std::string>, std::set<std::string>> members;
  };
  std::vector<Entry> entries;
  std::map<std::string, std::size_t> at;  // entry key -> index
  auto entry = [&](const std::string& key, const std::string& object) -> Entry& {
    std::string id = object + '\n' + key;
    auto [it, added] = at.emplace(id, entries.size());
    if (added) entries.push_back({key, object, {}, {}});
    return entries[it->second];
  };
  std::map<std::string, std::size_t> role_total;
  std::map<std::string, const PodReport*> by_name;
  for (const auto& pod : pods) {
    ++role_total[pod.role];
    by_name[pod.name] = &pod;
  }
  auto add_pod = [&](Entry& e, const PodReport& pod) {
    std::pair group{pod.role, pod.phase};
    auto& names = e.members[group];
    if (names.empty()) e.groups.push_back(group);
    names.insert(pod.name);
  };
  for (const auto& pod : pods)
    for (const auto& w : pod.waiting) add_pod(entry(reason_key(w.reason, w.message), ""), pod);
  for (const auto& ev : events) {
    std::string key = reason_key(ev.reason.empty() ? "(no reason)" : ev.reason, ev.message);
    auto pod = ev.kind == "Pod" ? by_name.find(ev.name) : by_name.end();
    if (pod != by_name.end()) add_pod(entry(key, ""), *pod->second);
    else entry(key, ev.kind.empty() ? ev.name : ev.kind + " " + ev.name);
  }
  std::vector<WaitReason> out;
  for (const auto& e : entries) {
    std::string who = e.object;
    for (const auto& group : e.groups) {
      std::size_t total = role_total[group.first];
      who += fmt::format("{}{} of {} {}{}", who.empty() ? "" : ", ", e.members.at(group).size(), total,
                         counted(group.first, total), group.second.empty() ? "" : " " + group.second);
    }
    out.push_back({e.object.empty() ? e.key : e.object + ": " + e.key, who + ": " + e.key});
  }
  return out;
}

std::vector<std::string> ReasonLog::fresh(const std::vector<WaitReason>& reasons) {
  std::vector<std::string> lines;
  for (const auto& r : reasons) {
    if (seen_.count(r.key)) continue;
    if (seen_.size() >= kMaxReasonsShown) {
      if (!capped_) lines.push_back(fmt::format("more reasons are not shown (at most {})", kMaxReasonsShown));
      capped_ = true;
      continue;
    }
    seen_.insert(r.key);
    last_ = r.text;
    lines.push_back(r.text);
  }
  return lines;
}

std::string reasons_summary(const std::vector<WaitReason>& reasons) {
  constexpr std::size_t kNamed = 3;
  std::string out;
  for (std::size_t i = 0; i < reasons.size() && i < kNamed; ++i) out += (i ? "; " : "") + reasons[i].text;
  if (reasons.size() > kNamed) out += fmt::format("; and {} more", reasons.size() - kNamed);
  return out;
}

std::vector<std::string> termination_lines(const std::vector<PodReport>& pods) {
  std::vector<std::pair<const PodReport*, const PodReport::Terminated*>> ended;
  for (const auto& pod : pods)
    for (const auto& t : pod.terminated) ended.push_back({&pod, &t});
  std::stable_partition(ended.begin(), ended.end(), [](const auto& e) { return e.second->reason == "OOMKilled"; });
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < ended.size() && i < kMaxTerminationsShown; ++i) {
    const auto& [pod, t] = ended[i];
    std::string who = pod->role.empty() ? "pod " + pod->name
                                        : fmt::format("{}{} (pod {})", pod->role, pod->index.empty() ? "" : " " + pod->index,
                                                      pod->name);
    std::string how = t->reason.empty() ? fmt::format("exit code {}", t->exit_code)
                                        : fmt::format("{} (exit code {})", t->reason, t->exit_code);
    lines.push_back(fmt::format("{}: container {} terminated: {}{}", who, t->container, how,
                                t->restarts > 0 ? fmt::format(", then restarted ({} restarts)", t->restarts) : ""));
  }
  if (ended.size() > kMaxTerminationsShown)
    lines.push_back(fmt::format("and {} more containers terminated with an error", ended.size() - kMaxTerminationsShown));
  return lines;
}

}  // namespace pipec::runtime
