#include "rules/retry.hpp"

#include "rules/quantities.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

namespace pipec::rules {

namespace {

bool holds(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

std::optional<RetryOn> parse_retry_on(std::string_view item, std::string& why) {
  RetryOn on;
  if (item == "oom") {
    on.kind = RetryOn::Kind::Oom;
    return on;
  }
  if (item == "evicted") {
    on.kind = RetryOn::Kind::Evicted;
    return on;
  }
  if (item.substr(0, 5) == "exit:") {
    std::string_view digits = item.substr(5);
    bool ok = !digits.empty() && digits.size() <= 3;
    for (char ch : digits) ok = ok && ch >= '0' && ch <= '9';
    int code = ok ? std::atoi(std::string(digits).c_str()) : -1;
    if (!ok || code > 255) {
      why = "'exit:' needs an exit code 0-255, as in \"exit:137\"";
      return std::nullopt;
    }
    on.kind = RetryOn::Kind::Exit;
    on.exit_code = code;
    return on;
  }
  if (item.substr(0, 8) == "message:") {
    std::string_view text = item.substr(8);
    if (text.empty() || text.size() > kMaxRetryMessage) {
      why = "'message:' needs a text of 1 to 200 characters, as in \"message:connection reset\"";
      return std::nullopt;
    }
    for (char ch : text) {
      if (ch < 0x20 || ch > 0x7e || ch == '\'' || ch == '"' || ch == '\\' || ch == '{' || ch == '}' || ch == ',') {
        why = "a 'message:' text is printable ASCII without ' \" \\ { } or a comma";
        return std::nullopt;
      }
    }
    on.kind = RetryOn::Kind::Message;
    on.text = std::string(text);
    return on;
  }
  why = "a retry reason is \"oom\", \"evicted\", \"exit:N\" or \"message:TEXT\"";
  return std::nullopt;
}

std::string retry_on_text(const RetryOn& on) {
  switch (on.kind) {
    case RetryOn::Kind::Oom: return "oom";
    case RetryOn::Kind::Evicted: return "evicted";
    case RetryOn::Kind::Exit: return "exit:" + std::to_string(on.exit_code);
    case RetryOn::Kind::Message: return "message:" + on.text;
  }
  return "";
}

std::optional<std::vector<RetryOn>> parse_retry_on_list(std::string_view list, std::string& why) {
  std::vector<RetryOn> out;
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    auto on = parse_retry_on(list.substr(0, comma), why);
    if (!on) return std::nullopt;
    out.push_back(std::move(*on));
    if (out.size() > kMaxRetryOn) {
      why = "at most 20 retry reasons";
      return std::nullopt;
    }
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

bool retry_matches(const RetryOn& on, const Failure& f) {
  switch (on.kind) {
    case RetryOn::Kind::Oom:
      return f.reason == "OOMKilled" || f.exit_code == 137 || holds(f.message, "OOMKilled");
    case RetryOn::Kind::Evicted:
      return f.reason == "Evicted" || holds(f.message, "Evicted") || holds(f.message, "evicted") ||
             holds(f.message, "The node was low on resource");
    case RetryOn::Kind::Exit: return f.exit_code == on.exit_code;
    case RetryOn::Kind::Message: return holds(f.message, on.text);
  }
  return false;
}

bool should_retry(const std::vector<RetryOn>& on, const Failure& failure) {
  if (on.empty()) return true;
  for (const auto& item : on)
    if (retry_matches(item, failure)) return true;
  return false;
}

std::string grown_memory(std::string_view base, double factor, std::string_view max, int attempt) {
  if (attempt <= 0) return std::string(base);
  long double bytes = quantity_value(base).value_or(0) * std::pow(static_cast<long double>(factor), attempt);
  long double mib = std::ceil(bytes / 0x1p20L);
  if (!max.empty() && mib * 0x1p20L >= quantity_value(max).value_or(0)) return std::string(max);
  auto whole = static_cast<unsigned long long>(mib);
  static const char* const kUnits[] = {"Mi", "Gi", "Ti", "Pi"};
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && whole % 1024 == 0 && whole != 0) {
    whole /= 1024;
    ++unit;
  }
  return std::to_string(whole) + kUnits[unit];
}

}  // namespace pipec::rules
