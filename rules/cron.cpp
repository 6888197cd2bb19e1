// The syntax is robfig/cron's (v3), which both KFP's scheduled workflow controller and
// Argo's cron controller use: KFP with a seconds field, Argo without. Checking it here
// means a bad schedule is refused before anything is sent, naming the field.

#include "rules/cron.hpp"


#include <cctype>
#include <charconv>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace pipec {

std::string cron_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out;
}

namespace {

struct FieldRule {
  const char* name;    // "hour"
  const char* plural;  // "hours"
  int min, max;
  const char* const* names;  // JAN.. or SUN.., indexed from `min`; nullptr if none
  const char* extra;         // added to the range in messages
};

constexpr const char* kMonths[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC", nullptr};
constexpr const char* kDays[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", nullptr};

constexpr FieldRule kRules[6] = {
    {"second", "seconds", 0, 59, nullptr, ""},
    {"minute", "minutes", 0, 59, nullptr, ""},
    {"hour", "hours", 0, 23, nullptr, ""},
    {"day-of-month", "days of the month", 1, 31, nullptr, ""},
    {"month", "months", 1, 12, kMonths, ", JAN-DEC"},
    {"day-of-week", "days of the week", 0, 6, kDays, ", SUN-SAT"},
};

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// One value of a field: a number or (months, days) a name. A number past what an int holds
// is out of the field's range too, not "not a number".
bool parse_value(std::string_view text, const FieldRule& rule, int& out, std::string& error) {
  if (text.empty()) {
    error = "a value is missing";
    return false;
  }
  auto out_of_range = [&] {
    error = fmt::format("{} {} is out of range {}-{}{}", rule.name, text, rule.min, rule.max, rule.extra);
    return false;
  };
  if (rule.names) {
    std::string word = upper(text);
    for (int i = 0; rule.names[i]; ++i)
      if (word == rule.names[i]) {
        out = rule.min + i;
        return true;
      }
  }
  if (all_digits(text)) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec == std::errc::result_out_of_range || out < rule.min || out > rule.max) return out_of_range();
    return true;
  }
  error = fmt::format("'{}' is not a number{}", cron_text(text),
                      rule.names ? fmt::format(" or a name ({})", rule.extra + 2) : "");
  return false;
}

// One comma-separated item: *, ?, a, a-b, with an optional /step.
bool parse_item(std::string_view item, const FieldRule& rule, std::string& error) {
  std::string_view range = item;
  if (auto slash = item.find('/'); slash != std::string_view::npos) {
    range = item.substr(0, slash);
    std::string_view step_text = item.substr(slash + 1);
    int step = 0;
    if (!all_digits(step_text)) {
      error = fmt::format("the step '{}' is not a number", cron_text(step_text));
      return false;
    }
    if (std::from_chars(step_text.data(), step_text.data() + step_text.size(), step).ec != std::errc()) {
      error = fmt::format("the step {} is out of range 1-{}", step_text, std::numeric_limits<int>::max());
      return false;
    }
    if (step <= 0) {
      error = fmt::format("the step must be at least 1 (got {})", step_text);
      return false;
    }
  }
  if (range == "*" || range == "?") return true;
  int low = 0, high = 0;
  if (auto dash = range.find('-'); dash != std::string_view::npos && dash > 0) {
    if (!parse_value(range.substr(0, dash), rule, low, error) ||
        !parse_value(range.substr(dash + 1), rule, high, error))
      return false;
    if (low > high) {
      error = fmt::format("the range '{}' starts after it ends", cron_text(range));
      return false;
    }
    return true;
  }
  return parse_value(range, rule, low, error);
}

bool parse_field(std::string_view text, const FieldRule& rule, std::string& error) {
  std::string why;
  std::string_view rest = text;
  while (true) {
    std::size_t comma = rest.find(',');
    if (!parse_item(rest.substr(0, comma), rule, why)) {
      error = fmt::format("{} field '{}': {}", rule.name, cron_text(text), why);
      return false;
    }
    if (comma == std::string_view::npos) return true;
    rest.remove_prefix(comma + 1);
  }
}

struct Descriptor {
  const char* name;
  const char* fields;  // six fields
};

constexpr Descriptor kDescriptors[] = {
    {"@yearly", "0 0 0 1 1 *"}, {"@annually", "0 0 0 1 1 *"}, {"@monthly", "0 0 0 1 * *"},
    {"@weekly", "0 0 0 * * 0"}, {"@daily", "0 0 0 * * *"},     {"@midnight", "0 0 0 * * *"},
    {"@hourly", "0 0 * * * *"},
};

std::vector<std::string_view> split_blanks(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::string CronSchedule::kfp() const {
  return fmt::format("{} {} {} {} {} {}", fields[0], fields[1], fields[2], fields[3], fields[4],
                     fields[5]);
}

std::string CronSchedule::argo() const {
  if (!descriptor.empty()) return descriptor;
  if (fields[0] != "0") return {};
  return fmt::format("{} {} {} {} {}", fields[1], fields[2], fields[3], fields[4], fields[5]);
}

bool parse_cron(std::string_view text, CronSchedule& out, std::string& error) {
  out = CronSchedule{};
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\0' || static_cast<unsigned char>(c) >= 0x80) {
      error = "a cron expression is one line of ASCII fields separated by spaces";
      return false;
    }
  }
  std::vector<std::string_view> words = split_blanks(text);
  if (words.empty()) {
    error = "the cron expression is empty";
    return false;
  }
  if (words[0].front() == '@') {
    std::string name(words[0]);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == "@every") {
      error = "'@every' is not taken here: give the interval with --every (e.g. --every 6h)";
      return false;
    }
    for (const Descriptor& d : kDescriptors) {
      if (name != d.name) continue;
      if (words.size() != 1) {
        error = fmt::format("'{}' takes no fields after it", cron_text(words[0]));
        return false;
      }
      std::vector<std::string_view> fields = split_blanks(d.fields);
      for (int i = 0; i < 6; ++i) out.fields[i] = std::string(fields[static_cast<std::size_t>(i)]);
      out.descriptor = name;
      return true;
    }
    error = fmt::format("unknown descriptor '{}' (expected @yearly, @annually, @monthly, @weekly, "
                        "@daily, @midnight or @hourly)",
                        cron_text(words[0]));
    return false;
  }
  if (words.size() != 5 && words.size() != 6) {
    error = fmt::format("expected 5 fields (minute hour day-of-month month day-of-week) or 6 "
                        "(seconds first), got {}",
                        words.size());
    return false;
  }
  std::size_t first = words.size() == 5 ? 1 : 0;
  out.fields[0] = "0";
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!parse_field(words[i], kRules[first + i], error)) return false;
    out.fields[first + i] = std::string(words[i]);
  }
  return true;
}

bool time_zone_name(std::string_view name, std::string& error) {
  // Go's rules for a name: not empty, no "..", no leading '/' or '\\'.
  bool shape = !name.empty() && name.size() <= 255 && name.front() != '/' &&
               name.find("..") == std::string_view::npos;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
          c == '+'))
      shape = false;
  if (!shape)
    error = fmt::format("'{}' is not a time zone name (e.g. UTC, Europe/Berlin, America/New_York)",
                        cron_text(name));
  return shape;
}

}  // namespace pipec
