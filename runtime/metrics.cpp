// The scraper runs on every byte the training prints, so the scan is a vectorised search
// for the two separators; only around a separator does it look at names and numbers.
#include "runtime/metrics.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <system_error>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pipec::runtime {
namespace {

constexpr std::size_t kMaxCarry = 1 << 20;  // a longer "line" is scanned in pieces

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Characters that end a name on its left.
bool is_name_boundary(char c) {
  switch (c) {
    case ' ': case '\t': case '\n': case '\r': case ',': case ';': case '(': case '[':
    case '{': case '"': case '\'': case '|': case ':': case '=':
      return true;
    default:
      return false;
  }
}

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

}  // namespace

std::string sanitize_metric_name(std::string_view name) {
  std::string out;
  bool in_run = false;
  for (char c : name) {
    if (out.empty() && !is_alpha(c)) continue;
    if (is_alnum(c) || c == '-' || c == '_') {
      out.push_back(c);
      in_run = false;
    } else if (!in_run) {
      out.push_back('-');
      in_run = true;
    }
  }
  if (out.size() > 64) out.resize(64);
  while (!out.empty() && !is_alnum(out.back())) out.pop_back();
  return out;
}

std::optional<MetricSpec> parse_metric_spec(std::string_view spec, std::string& error) {
  MetricSpec m;
  // The name may itself hold ':' (rare); options are the trailing known words.
  std::string_view rest = spec;
  for (int i = 0; i < 2; ++i) {
    auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) break;
    auto word = rest.substr(colon + 1);
    if (word == "RAW" || word == "PERCENTAGE") {
      m.format = std::string(word);
    } else if (word == "last" || word == "max" || word == "min") {
      m.aggregation = word == "max" ? Aggregation::Max
                      : word == "min" ? Aggregation::Min
                                      : Aggregation::Last;
    } else {
      break;
    }
    rest = rest.substr(0, colon);
  }
  m.name = std::string(rest);
  m.reported = sanitize_metric_name(m.name);
  bool has_space = m.name.find_first_of(" \t\r\n=") != std::string::npos;
  if (m.name.empty() || has_space || m.reported.empty()) {
    error = fmt::format(
        "metric '{}' cannot be reported: a name needs a letter and no spaces or '=' "
        "(expected NAME[:RAW|PERCENTAGE][:last|max|min], e.g. images/sec:RAW:max)",
        spec);
    return std::nullopt;
  }
  return m;
}

MetricScraper::MetricScraper(std::vector<MetricSpec> specs)
    : specs_(std::move(specs)), values_(specs_.size()), warned_(specs_.size(), false) {
  for (const auto& s : specs_) {
    if (s.name.size() < 64) length_mask_ |= std::uint64_t{1} << s.name.size();
    else long_names_ = true;
  }
}

void MetricScraper::record(std::size_t index, double v) {
  auto& slot = values_[index];
  switch (specs_[index].aggregation) {
    case Aggregation::Last: slot = v; break;
    case Aggregation::Max: slot = slot ? std::max(*slot, v) : v; break;
    case Aggregation::Min: slot = slot ? std::min(*slot, v) : v; break;
  }
}

// `sep` points at '=' or ':' inside [begin, end).
void MetricScraper::candidate(const char* begin, const char* sep, const char* end) {
  const char* name_end = sep;
  while (name_end > begin && (name_end[-1] == ' ' || name_end[-1] == '\t') && *sep == '=')
    --name_end;
  const char* name_begin = name_end;
  while (name_begin > begin && !is_name_boundary(name_begin[-1])) --name_begin;
  auto len = static_cast<std::size_t>(name_end - name_begin);
  if (len == 0) return;
  if (len < 64 ? !((length_mask_ >> len) & 1) : !long_names_) return;
  std::size_t index = specs_.size();
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].name.size() == len && std::memcmp(specs_[i].name.data(), name_begin, len) == 0) {
      index = i;
      break;
    }
  }
  if (index == specs_.size()) return;
  const char* p = sep + 1;
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (p < end && *p == '+') ++p;
  auto result = [&] {
    double v = 0;
    auto r = std::from_chars(p, end, v);
    return std::pair{r, v};
  }();
  auto [r, v] = result;
  if (r.ec == std::errc::result_out_of_range) {
    v = HUGE_VAL;  // reported below as not finite
  } else if (r.ec != std::errc()) {
    return;
  }
  if (r.ptr < end && !is_value_end(*r.ptr)) return;
  if (!std::isfinite(v)) {
    if (!warned_[index]) {
      warned_[index] = true;
      warnings_.push_back(fmt::format("metric '{}' value '{}' ignored: not a finite number",
                                      specs_[index].name, std::string_view(p, r.ptr - p)));
    }
    return;
  }
  record(index, v);
}

void MetricScraper::scan(std::string_view region) {
  if (specs_.empty()) return;
  const char* begin = region.data();
  const char* end = begin + region.size();
  const char* p = begin;
#if defined(__SSE2__)
  const __m128i eq = _mm_set1_epi8('=');
  const __m128i colon = _mm_set1_epi8(':');
  const char* line_end = begin;  // the end of the line of the last separator
  while (end - p >= 16) {
    __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(block, eq), _mm_cmpeq_epi8(block, colon))));
    while (mask) {
      const char* sep = p + __builtin_ctz(mask);
      mask &= mask - 1;
      // The line around the separator: names and values never cross a newline.
      const char* line_begin = sep;
      while (line_begin > begin && line_begin[-1] != '\n' && sep - line_begin < 256) --line_begin;
      if (sep >= line_end) {
        line_end = static_cast<const char*>(std::memchr(sep, '\n', end - sep));
        if (!line_end) line_end = end;
      }
      candidate(line_begin, sep, line_end);
    }
    p += 16;
  }
#endif
  for (; p < end; ++p) {
    if (*p != '=' && *p != ':') continue;
    const char* line_begin = p;
    while (line_begin > begin && line_begin[-1] != '\n' && p - line_begin < 256) --line_begin;
    const char* line_end = static_cast<const char*>(std::memchr(p, '\n', end - p));
    candidate(line_begin, p, line_end ? line_end : end);
  }
}

void MetricScraper::feed(std::string_view bytes) {
  if (!carry_.empty()) {
    auto nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      carry_.append(bytes);
      if (carry_.size() > kMaxCarry) {
        scan(carry_);
        carry_.clear();
      }
      return;
    }
    carry_.append(bytes.substr(0, nl));
    scan(carry_);
    carry_.clear();
    bytes.remove_prefix(nl + 1);
  }
  auto last_nl = bytes.rfind('\n');
  if (last_nl == std::string_view::npos) {
    carry_.assign(bytes);
    return;
  }
  scan(bytes.substr(0, last_nl));
  carry_.assign(bytes.substr(last_nl + 1));
}

void MetricScraper::finish() {
  if (!carry_.empty()) scan(carry_);
  carry_.clear();
}

std::vector<std::string> MetricScraper::take_warnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

std::string MetricScraper::metrics_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (!values_[i]) continue;
    list.push_back({{"name", specs_[i].reported},
                    {"numberValue", *values_[i]},
                    {"format", specs_[i].format}});
  }
  return nlohmann::json{{"metrics", list}}.dump() + "\n";
}

bool write_file_atomically(const std::string& path, std::string_view content, std::string& error) {
  namespace fs = std::filesystem;
  fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    error = fmt::format("cannot write '{}': {}", path, std::strerror(errno));
    return false;
  }
  const char* p = content.data();
  std::size_t left = content.size();
  bool ok = true;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) { ok = false; break; }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ok = ok && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  int saved = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) { ok = false; saved = errno; }
  if (!ok) {
    ::unlink(tmp.c_str());
    error = fmt::format("cannot write '{}': {}", path, std::strerror(saved));
  }
  return ok;
}

}  // namespace pipec::runtime
