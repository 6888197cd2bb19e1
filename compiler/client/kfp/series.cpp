// The shape of a ReadArtifact answer was read from the KFP API server: 1.8's
// ReadArtifact (backend/src/apiserver/server/run_server.go) and HEAD's streaming handler
// (backend/src/apiserver/server/run_artifact_server.go) both answer `{"data": BASE64}` of
// the object Argo stored under the node's artifact key; Argo stores an output artifact as a
// gzip'd tar of the path's base name, and KFP's own reader of such an artifact (its
// metrics, backend/src/common/util/tgz.go) takes exactly one regular file.

#include "compiler/client/kfp/series.hpp"
#include "compiler/client/kfp/libarchive.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/base/sparkline.hpp"
#include "input/base64.hpp"
#include "input/json.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "rules/metrics_cli.hpp"

namespace pipec::client::kfp {

namespace {

using nlohmann::json;
using input::member;
using input::member_text;

// The one member of a gzip'd tar, as unpack_series_answer() says.
bool read_one_member(std::string_view bytes, std::string& text, std::string& why) {
  std::unique_ptr<archive, ArchiveReadDeleter> reader(archive_read_new());
  if (!reader) {
    why = "cannot initialise libarchive";
    return false;
  }
  archive_read_support_filter_gzip(reader.get());
  archive_read_support_format_tar(reader.get());
  archive_entry* entry = nullptr;
  int first = archive_read_open_memory(reader.get(), bytes.data(), bytes.size());
  if (first == ARCHIVE_OK) first = archive_read_next_header(reader.get(), &entry);
  if (first == ARCHIVE_EOF) {
    why = "the archive is empty";
    return false;
  }
  if (first != ARCHIVE_OK) {
    why = "not a readable gzip'd tar: " + archive_problem(reader.get());
    return false;
  }
  const char* path = archive_entry_pathname(entry);
  std::string name = path ? path : "";
  if (name != rules::metrics_cli::kSeriesFileName || archive_entry_filetype(entry) != AE_IFREG) {
    why = fmt::format("the archive holds '{}', not the regular file {}", name,
                      rules::metrics_cli::kSeriesFileName);
    return false;
  }
  std::string too_large = fmt::format("{} in the archive is larger than {} once unpacked", name,
                                      input::size_text(input::kMaxSeriesFileBytes));
  if (archive_entry_size_is_set(entry) &&
      static_cast<std::uint64_t>(archive_entry_size(entry)) > input::kMaxSeriesFileBytes) {
    why = too_large;
    return false;
  }
  text.clear();
  char buffer[65536];
  la_ssize_t n;
  while ((n = archive_read_data(reader.get(), buffer, sizeof buffer)) > 0) {
    if (text.size() + static_cast<std::size_t>(n) > input::kMaxSeriesFileBytes) {
      why = too_large;
      return false;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  int rc = n < 0 ? ARCHIVE_FATAL : archive_read_next_header(reader.get(), &entry);
  if (rc == ARCHIVE_EOF) return true;
  why = rc == ARCHIVE_OK || rc == ARCHIVE_WARN
            ? fmt::format("the archive holds more than one member ('{}' after {})",
                          archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "", name)
            : "broken gzip'd tar: " + archive_problem(reader.get());
  return false;
}

// Control characters (a terminal's escapes) as spaces: names come from the server.
std::string printable(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return text;
}

// One line, whatever the server said (a failure's hints follow on their own lines).
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The series file of one step, or false with why it could not be had.
bool fetch_series(KfpApi& api, std::string_view run_id, const SeriesStep& step, std::string& text,
                  std::string& why) {
  std::string path = fmt::format("/apis/v1beta1/runs/{}/nodes/{}/artifacts/{}:read", url_encode(run_id),
                                 url_encode(step.node_id), rules::metrics_cli::kArgoSeriesArtifact);
  std::string answer;
  bool too_large = false;
  ApiStatus status = api.get_text(fmt::format("cannot read its artifact {}", rules::metrics_cli::kArgoSeriesArtifact),
                                  path, [&](std::string_view piece) {
                                    if (answer.size() + piece.size() > input::kMaxSeriesAnswerBytes) {
                                      too_large = true;
                                      return false;
                                    }
                                    answer.append(piece);
                                    return true;
                                  },
                                  "an artifact");
  if (too_large) {
    why = fmt::format("the ReadArtifact answer is larger than {}, more than pipec reads",
                      input::size_text(input::kMaxSeriesAnswerBytes));
    return false;
  }
  if (!status) {
    why = first_line(status.message);
    return false;
  }
  return unpack_series_answer(answer, text, why);
}

}  // namespace

std::optional<std::vector<SeriesStep>> series_steps(std::string_view workflow_manifest) {
  if (workflow_manifest.empty()) return std::nullopt;
  json workflow = input::parse_json(workflow_manifest);
  const json& status = member(workflow, "status");
  if (!status.is_object()) return std::nullopt;
  std::vector<std::pair<std::string, SeriesStep>> found;  // started_at, step
  if (const json& nodes = member(status, "nodes"); nodes.is_object()) {
    for (const auto& [key, node] : nodes.items()) {
      if (member_text(node, "type") != "Pod") continue;
      const json& artifacts = member(member(node, "outputs"), "artifacts");
      if (!artifacts.is_array()) continue;
      bool listed = std::any_of(artifacts.begin(), artifacts.end(), [](const json& a) {
        return member_text(a, "name") == rules::metrics_cli::kArgoSeriesArtifact;
      });
      if (!listed) continue;
      std::string id = member_text(node, "id").empty() ? key : member_text(node, "id");
      std::string name = member_text(node, "displayName");
      found.push_back({member_text(node, "startedAt"), {id, name.empty() ? id : name}});
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SeriesStep> out;
  for (auto& [started, step] : found) out.push_back(std::move(step));
  return out;
}

bool unpack_series_answer(std::string_view answer, std::string& text, std::string& why) {
  json parsed = input::parse_json(answer);
  const json& data = member(parsed, "data");
  if (!data.is_string()) {
    why = "the answer is not ReadArtifact's {\"data\": BASE64}";
    return false;
  }
  std::optional<std::string> bytes = input::base64_decode(data.get_ref<const std::string&>());
  if (!bytes) {
    why = "the answer's data is not base64";
    return false;
  }
  if (bytes->size() < 2 || static_cast<unsigned char>((*bytes)[0]) != 0x1f ||
      static_cast<unsigned char>((*bytes)[1]) != 0x8b) {
    why = "the artifact is not a gzip'd tar (Argo's archive of an output)";
    return false;
  }
  return read_one_member(*bytes, text, why);
}

std::string series_section(KfpApi& api, std::string_view run_id,
                           const std::optional<std::vector<SeriesStep>>& steps) {
  if (!steps)
    return fmt::format(
        "series: absent from the server's answer (it holds no workflow status, which lists each "
        "step's artifact {})\n",
        rules::metrics_cli::kArgoSeriesArtifact);
  if (steps->empty())
    return fmt::format("series: none (no step of the run lists the artifact {})\n",
                       rules::metrics_cli::kArgoSeriesArtifact);
  std::vector<SeriesLine> lines;
  std::string notes;
  std::size_t read = 0;
  for (const SeriesStep& step : *steps) {
    if (read == input::kMaxSeriesArtifacts) break;
    ++read;
    std::string text, why;
    std::vector<SeriesLine> series;
    if (!fetch_series(api, run_id, step, text, why) || !read_series(text, series, why)) {
      notes += fmt::format("  {}: series not read: {}\n", printable(step.name), printable(why));
      continue;
    }
    for (SeriesLine& line : series) {
      line.name = printable(step.name + "." + line.name);
      lines.push_back(std::move(line));
    }
  }
  if (steps->size() > read)
    notes += fmt::format("  {} more steps' series not read (at most {} a command)\n",
                         steps->size() - read, input::kMaxSeriesArtifacts);
  return "series:\n" + series_lines(lines, spark_glyphs(false), "  ") + notes;
}

}  // namespace pipec::client::kfp
