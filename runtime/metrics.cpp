// The scraper runs on every byte the training prints, so the scan is a vectorised search
// for the two separators; only around a separator does it look at names and numbers.
#include "runtime/metrics.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "input/json.hpp"
#include "input/limits.hpp"

namespace pipec::runtime {

using rules::Aggregation;
using rules::MetricSpec;
namespace {

// Where a piece of a "line" longer than input::kMaxLogLineBytes may end: boundaries that
// are not part of any match (a name holds none of them, nor does a value; ' ', '\t', ':'
// and '=' may be inside one).
constexpr char kCutAfter[] = "\n\r,;([{\"'|";

// Characters that end a name on its left: the rule that makes a name reportable.
constexpr const auto& kBoundary = rules::kMetricNameBoundary;

// Characters that may follow a value.
bool is_value_end(char c) {
  switch (c) {
    case ' ': case '\t': case '\n': case '\r': case ',': case ';': case ')': case ']':
    case '}': case '"': case '\'': case '%': case '|':
      return true;
    default:
      return false;
  }
}

constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                             1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                             1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// The common value `-12.345`: at most 15 digits and no exponent, so the digits and the
// power of ten are exact doubles and one division rounds correctly (Clinger's fast path),
// giving what from_chars gives. Returns the end of the number, or nullptr to let
// from_chars decide (an exponent, more digits, no digit, nan, inf).
const char* short_decimal(const char* p, const char* end, double& value) {
  bool negative = p < end && *p == '-';
  if (negative) ++p;
  std::uint64_t mantissa = 0;
  int digits = 0, fraction = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p, ++digits)
    mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
  if (p < end && *p == '.') {
    for (++p; p < end && *p >= '0' && *p <= '9'; ++p, ++digits, ++fraction)
      mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
  }
  if (digits == 0 || digits > 15 || (p < end && (*p == 'e' || *p == 'E'))) return nullptr;
  value = static_cast<double>(mantissa) / kPow10[fraction];
  if (negative) value = -value;
  return p;
}

}  // namespace

MetricScraper::MetricScraper(std::vector<MetricSpec> specs)
    : specs_(std::move(specs)), values_(specs_.size()), series_(specs_.size()), last_at_(specs_.size(), nullptr),
      warned_(specs_.size(), false) {
  // Candidates are looked up by (length, first byte), after a check of the last byte.
  first_.assign(64 * 256, kNone);
  next_.assign(specs_.size(), kNone);
  for (std::size_t i = specs_.size(); i-- > 0;) {
    const auto& name = specs_[i].name;
    if (name.empty()) continue;
    if (name.size() < 64) length_mask_ |= std::uint64_t{1} << name.size();
    max_length_ = std::max(max_length_, name.size());
    last_char_[static_cast<unsigned char>(name.back())] = true;
    auto mark = [this](unsigned char before, unsigned char last) {
      unsigned key = static_cast<unsigned>(before) << 8 | last;
      tail_pairs_[key >> 6] |= std::uint64_t{1} << (key & 63);
    };
    if (name.size() >= 2) {
      mark(static_cast<unsigned char>(name[name.size() - 2]), static_cast<unsigned char>(name.back()));
    } else {
      for (unsigned b = 0; b < 256; ++b)
        if (kBoundary[b]) mark(static_cast<unsigned char>(b), static_cast<unsigned char>(name[0]));
    }
    if (name.find(' ') != std::string::npos) spaced_.insert(spaced_.begin(), i);
    auto& head = first_[std::min<std::size_t>(name.size(), 63) * 256 + static_cast<unsigned char>(name[0])];
    next_[i] = head;
    head = i;
  }
}

// `at` lies in [begin, end), a run of lines. A line's step and epoch are read only for a
// value its series keeps beyond being the last one, once a line; for a value that is only
// the last so far, where it lies is noted and its line read at the end of the scan. Once a
// series thins few values are kept, so most lines with metrics are never read again.
void MetricScraper::record(std::size_t index, double v, const char* begin, const char* at,
                           const char* end) {
  auto& series = series_[index];
  if (series.keeps(v)) {
    auto steps = line_steps(begin, at, end);
    series.add(v, steps.step, steps.epoch);
    last_at_[index] = nullptr;
  } else {
    series.add_last(v);
    last_at_[index] = at;
  }
  auto& slot = values_[index];
  switch (specs_[index].aggregation) {
    case Aggregation::Last: slot = v; break;
    case Aggregation::Max: slot = slot ? std::max(*slot, v) : v; break;
    case Aggregation::Min: slot = slot ? std::min(*slot, v) : v; break;
  }
}

// `sep` points at '=' or ':' inside [begin, end), a run of whole lines. The name is the
// token just before it (at most the longest metric name), the value the number after it;
// neither crosses a newline because '\n' is a boundary and not part of a number.
void MetricScraper::candidate(const char* begin, const char* sep, const char* end) {
  const char* name_end = sep;
  if (*sep == '=')
    while (name_end > begin && (name_end[-1] == ' ' || name_end[-1] == '\t')) --name_end;
  if (name_end == begin || !last_char_[static_cast<unsigned char>(name_end[-1])]) return;
  std::size_t room = static_cast<std::size_t>(name_end - begin);
  const char* limit = name_end - std::min(room, max_length_ + 1);
  const char* name_begin = name_end;
  while (name_begin > limit && !kBoundary[static_cast<unsigned char>(name_begin[-1])]) --name_begin;
  auto len = static_cast<std::size_t>(name_end - name_begin);
  std::size_t index = kNone;
  // Names with spaces (`Final Cost: 0.53`) span several tokens: compared whole first (the
  // longer name wins over its last word), and must start a token themselves.
  for (std::size_t k = 0; k < spaced_.size(); ++k) {
    const auto& name = specs_[spaced_[k]].name;
    auto n = name.size();
    if (static_cast<std::size_t>(name_end - begin) < n || std::memcmp(name_end - n, name.data(), n) != 0) continue;
    const char* start = name_end - n;
    if (start == begin || kBoundary[static_cast<unsigned char>(start[-1])]) {
      index = spaced_[k];
      break;
    }
  }
  if (index == kNone && len > 0 && len <= max_length_ && (len >= 64 || ((length_mask_ >> len) & 1)))
    for (auto i = first_[std::min<std::size_t>(len, 63) * 256 + static_cast<unsigned char>(*name_begin)];
         i != kNone; i = next_[i]) {
      const auto& name = specs_[i].name;
      if (name.size() == len && name.back() == name_end[-1] &&
          std::memcmp(name.data(), name_begin, len) == 0) {
        index = i;
        break;
      }
    }
  if (index == kNone) return;
  const char* p = sep + 1;
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (p < end && *p == '+') {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) return;  // "+-1" is not a number
  }
  double v = 0;
  const char* stop = short_decimal(p, end, v);
  if (!stop) {
    auto r = std::from_chars(p, end, v);
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars leaves `v` alone on overflow and on underflow alike; strtod tells them
      // apart (HUGE_VAL, reported below as not finite, or a value that rounds to 0).
      v = std::strtod(std::string(p, r.ptr).c_str(), nullptr);
    } else if (r.ec != std::errc()) {
      return;
    }
    stop = r.ptr;
  }
  if (stop < end && !is_value_end(*stop)) return;
  if (!std::isfinite(v)) {
    if (!warned_[index]) {
      warned_[index] = true;
      warnings_.push_back(fmt::format("metric '{}' value '{}' ignored: not a finite number",
                                      specs_[index].name, std::string_view(p, stop - p)));
    }
    return;
  }
  record(index, v == 0 ? 0.0 : v, begin, sep, end);  // -0 and underflows report as 0
}

// Most separators (times, "file.py:123", "host:port") fail this without a call: the two
// bytes before the separator must be the last two of some name (for a one-byte name: a
// boundary and the name), or blanks before '='.
inline bool MetricScraper::worth_a_look(const char* begin, const char* sep) const {
  if (sep == begin) return false;
  auto last = static_cast<unsigned char>(sep[-1]);
  if (last == ' ' || last == '\t') return *sep == '=';
  if (!last_char_[last]) return false;
  if (sep - begin == 1) return true;
  unsigned key = static_cast<unsigned>(static_cast<unsigned char>(sep[-2])) << 8 | last;
  return (tail_pairs_[key >> 6] >> (key & 63)) & 1;
}

void MetricScraper::scan(std::string_view region) {
  if (specs_.empty()) return;
  line_begin_ = line_end_ = nullptr;  // pointers into the last region
  const char* begin = region.data();
  const char* end = begin + region.size();
  const char* p = begin;
#if defined(__SSE2__)
  const __m128i eq = _mm_set1_epi8('=');
  const __m128i colon = _mm_set1_epi8(':');
  auto separators = [&](const char* at) {  // bit i: at[i] is '=' or ':'
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(block, eq), _mm_cmpeq_epi8(block, colon)))));
  };
  // 64 bytes a round: one branch for a run of text without any separator.
  while (end - p >= 64) {
    std::uint64_t mask = separators(p) | separators(p + 16) << 16 | separators(p + 32) << 32 |
                         separators(p + 48) << 48;
    while (mask) {
      const char* sep = p + __builtin_ctzll(mask);
      mask &= mask - 1;
      if (worth_a_look(begin, sep)) candidate(begin, sep, end);
    }
    p += 64;
  }
  while (end - p >= 16) {
    std::uint64_t mask = separators(p);
    while (mask) {
      const char* sep = p + __builtin_ctzll(mask);
      mask &= mask - 1;
      if (worth_a_look(begin, sep)) candidate(begin, sep, end);
    }
    p += 16;
  }
#endif
  for (; p < end; ++p)
    if ((*p == '=' || *p == ':') && worth_a_look(begin, p)) candidate(begin, p, end);
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (last_at_[i]) {
      auto steps = line_steps(begin, last_at_[i], end);
      series_[i].set_last_steps(steps.step, steps.epoch);
      last_at_[i] = nullptr;
    }
}

// The step and epoch of the line around `at` in [begin, end), read once a line however
// many values it holds.
LineSteps MetricScraper::line_steps(const char* begin, const char* at, const char* end) {
  if (!(at >= line_begin_ && at < line_end_)) {
    const char* b = at;
    while (b > begin && b[-1] != '\n' && b[-1] != '\r') --b;
    const char* e = at;
    while (e < end && *e != '\n' && *e != '\r') ++e;
    line_begin_ = b;
    line_end_ = e;
    line_steps_ = read_line_steps(std::string_view(b, static_cast<std::size_t>(e - b)));
  }
  return line_steps_;
}

void MetricScraper::feed(std::string_view bytes) {
  if (!carry_.empty()) {
    auto nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      hold(bytes);
      return;
    }
    carry_.append(bytes.substr(0, nl));
    scan(carry_);
    carry_.clear();
    carry_cut_ = std::string::npos;
    bytes.remove_prefix(nl + 1);
  }
  auto last_nl = bytes.rfind('\n');
  if (last_nl != std::string_view::npos) {
    scan(bytes.substr(0, last_nl));
    bytes.remove_prefix(last_nl + 1);
  }
  hold(bytes);
}

// Keeps an incomplete line. A "line" longer than the bound (a progress bar redrawn with
// '\r' only) is scanned up to the last byte that no name or value holds (kCutAfter), found
// in each piece as it comes, so a value is never cut whatever the pieces are, and each byte
// is looked at once. Only a run of 1 MiB without any of them is scanned as it is.
void MetricScraper::hold(std::string_view bytes) {
  if (auto cut = bytes.find_last_of(kCutAfter); cut != std::string_view::npos)
    carry_cut_ = carry_.size() + cut + 1;
  carry_.append(bytes);
  if (carry_.size() <= input::kMaxLogLineBytes) return;
  std::size_t upto = carry_cut_ == std::string::npos ? carry_.size() : carry_cut_;
  scan(std::string_view(carry_).substr(0, upto));
  carry_.erase(0, upto);
  carry_cut_ = std::string::npos;
}

void MetricScraper::finish() {
  if (!carry_.empty()) scan(carry_);
  carry_.clear();
  carry_cut_ = std::string::npos;
}

std::vector<std::string> MetricScraper::take_warnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

bool MetricScraper::scraped(const std::string& reported_name) const {
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (values_[i] && specs_[i].reported == reported_name) return true;
  return false;
}

std::string MetricScraper::metrics_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (!values_[i]) continue;
    list.push_back({{"name", specs_[i].reported},
                    {"numberValue", *values_[i]},
                    {"format", specs_[i].format}});
  }
  for (const auto& [name, value] : reported_)
    if (!scraped(name)) list.push_back({{"name", name}, {"numberValue", value}, {"format", "RAW"}});
  return nlohmann::json{{"metrics", list}}.dump() + "\n";
}

void MetricScraper::set_reported(std::vector<std::pair<std::string, double>> metrics) {
  for (const auto& metric : metrics) {
    const std::string& name = metric.first;
    auto it = std::find_if(reported_series_.begin(), reported_series_.end(),
                           [&](const auto& entry) { return entry.first == name; });
    if (it == reported_series_.end()) it = reported_series_.insert(it, {name, MetricSeries()});
    it->second.add(metric.second);
  }
  reported_ = std::move(metrics);
}

namespace {

nlohmann::json series_entry(const std::string& name, const MetricSeries& series) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : series.points()) {
    nlohmann::json point{{"order", p.order}, {"value", p.value}};
    if (p.step >= 0) point["step"] = p.step;
    if (p.epoch >= 0) point["epoch"] = p.epoch;
    points.push_back(std::move(point));
  }
  return {{"name", name}, {"count", series.count()}, {"stride", series.stride()}, {"points", std::move(points)}};
}

}  // namespace

std::string MetricScraper::series_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (values_[i]) list.push_back(series_entry(specs_[i].reported, series_[i]));
  // A TrainJob's own reports, where no scraped metric has the name (as in metrics_json()).
  for (const auto& [name, series] : reported_series_)
    if (!scraped(name)) {
      list.push_back(series_entry(name, series));
      list.back()["source"] = "trainerStatus";
    }
  return nlohmann::json{{"format", "pipec-metric-series/1"},
                        {"bound", MetricSeries::kDefaultCapacity},
                        {"metrics", std::move(list)}}.dump() + "\n";
}

bool MetricScraper::executor_output(std::string_view executor_input, std::string& output_file,
                                    std::string& out, std::string& error) const {
  using nlohmann::json;
  json input = ::pipec::input::parse_json(executor_input);
  const json* outputs = input.is_object() && input.contains("outputs") ? &input["outputs"] : nullptr;
  if (!outputs || !outputs->is_object() || !outputs->contains("outputFile") ||
      !(*outputs)["outputFile"].is_string() || (*outputs)["outputFile"].get<std::string>().empty()) {
    error = "--executor-input: not a KFP v2 executor input (a JSON object with outputs.outputFile)";
    return false;
  }
  output_file = (*outputs)["outputFile"].get<std::string>();
  json artifact;
  if (outputs->contains("artifacts") && (*outputs)["artifacts"].is_object()) {
    const json& artifacts = (*outputs)["artifacts"];
    auto it = artifacts.find("metrics");
    if (it != artifacts.end() && it->is_object() && it->contains("artifacts") &&
        (*it)["artifacts"].is_array() && !(*it)["artifacts"].empty() && (*it)["artifacts"][0].is_object())
      artifact = (*it)["artifacts"][0];
  }
  if (artifact.is_null()) {
    out = "{}\n";
    return true;
  }
  json metadata = json::object();
  for (std::size_t i = 0; i < specs_.size(); ++i)
    if (values_[i]) metadata[specs_[i].reported] = *values_[i];
  for (const auto& [name, value] : reported_)
    if (!scraped(name)) metadata[name] = value;
  artifact["metadata"] = std::move(metadata);
  out = json{{"artifacts", {{"metrics", {{"artifacts", json::array({std::move(artifact)})}}}}}}.dump() + "\n";
  return true;
}

}  // namespace pipec::runtime
