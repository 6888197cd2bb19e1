#include "compiler/tools/report_visuals.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "input/json.hpp"
#include "input/read.hpp"
#include "rules/visuals.hpp"

namespace pipec::tools::detail {

namespace {

using Json = nlohmann::json;

constexpr std::uint64_t kMaxMetadataFile = 64ull << 20;

std::string text_of(const Json& entry, const char* key) {
  const Json& m = input::member(entry, key);
  return m.is_string() ? m.get<std::string>() : std::string();
}

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 2]);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

// HTML in a frame that runs no script (`sandbox=""`) and, by the policy put before the
// document, fetches nothing; base64 in a data: URL, so the page holds none of its markup.
void write_html(std::string& out, const std::string& html) {
  static constexpr std::string_view kPolicy =
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:\"/>\n";
  out += fmt::format("<iframe sandbox=\"\" width=\"800\" height=\"400\" title=\"HTML output\" "
                     "src=\"data:text/html;charset=utf-8;base64,{}\"></iframe>\n",
                     base64(std::string(kPolicy) + html));
}

void write_table(std::string& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  out += "<table class=\"visual\">\n<tr>";
  for (const auto& h : header) out += "<th>" + esc(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& c : row) out += "<td>" + esc(c) + "</td>";
    out += "</tr>\n";
  }
  out += "</table>\n";
}

// A heat map: a row per target label, a column per predicted one, each cell's shade its
// count against the greatest, labelled with the count as the file has it.
void write_confusion(std::string& out, const rules::visuals::ConfusionMatrix& m) {
  std::size_t n = m.labels.size();
  double cell = std::max(12.0, std::min(48.0, 480.0 / static_cast<double>(n)));
  double left = 110, top = 40;
  double greatest = 0;
  for (const auto& row : m.counts)
    for (const auto& c : row) greatest = std::max(greatest, std::strtod(c.c_str(), nullptr));
  double side = cell * static_cast<double>(n);
  out += fmt::format("<svg width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" "
                     "class=\"confusion\">\n",
                     left + side + 10, top + side + 30);
  out += fmt::format("<text x=\"{:.1f}\" y=\"12\" font-size=\"11\" text-anchor=\"middle\">predicted</text>\n",
                     left + side / 2);
  out += fmt::format("<text x=\"4\" y=\"{:.1f}\" font-size=\"11\">target</text>\n", top - 6);
  for (std::size_t i = 0; i < n; ++i) {
    double at = static_cast<double>(i) * cell;
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\">{}</text>\n",
                       left + at + cell / 2, top - 6, esc(m.labels[i]));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{}</text>\n",
                       left - 6, top + at + cell / 2 + 4, esc(m.labels[i]));
    for (std::size_t j = 0; j < n; ++j) {
      double v = std::strtod(m.counts[i][j].c_str(), nullptr);
      double share = greatest > 0 ? std::clamp(v / greatest, 0.0, 1.0) : 0.0;
      // From white to the first run colour (#1f77b4).
      auto mix = [&](int to) { return static_cast<int>(255 - share * (255 - to) + 0.5); };
      out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"rgb({},{},{})\" "
                         "stroke=\"#ccc\"/>\n",
                         left + static_cast<double>(j) * cell, top + at, cell, cell, mix(0x1f), mix(0x77), mix(0xb4));
      if (cell >= 20)
        out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
                           left + static_cast<double>(j) * cell + cell / 2, top + at + cell / 2 + 4,
                           share > 0.5 ? "#fff" : "#222", esc(m.counts[i][j]));
    }
  }
  out += "</svg>\n";
}

// The curve's points (false positive rate, true positive rate) on [0, 1] squared, with the
// diagonal of a guess.
void write_roc(std::string& out, const std::vector<rules::visuals::RocPoint>& points) {
  constexpr double kLeft = 50, kTop = 10, kSide = 300;
  auto x = [&](const std::string& v) { return kLeft + std::clamp(std::strtod(v.c_str(), nullptr), 0.0, 1.0) * kSide; };
  auto y = [&](const std::string& v) {
    return kTop + kSide - std::clamp(std::strtod(v.c_str(), nullptr), 0.0, 1.0) * kSide;
  };
  out += fmt::format("<svg class=\"roc\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\">\n",
                     kLeft + kSide + 20, kTop + kSide + 40);
  out += fmt::format("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{2}\" fill=\"none\" stroke=\"#999\"/>\n",
                     kLeft, kTop, kSide);
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#bbb\" stroke-dasharray=\"4 4\"/>\n",
                     kLeft, kTop + kSide, kLeft + kSide, kTop);
  std::string line;
  for (const auto& p : points) line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", x(p.fpr), y(p.tpr));
  out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n", line);
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">0</text>\n", kLeft,
                     kTop + kSide + 14);
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">1</text>\n", kLeft + kSide,
                     kTop + kSide + 14);
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">1</text>\n", kLeft - 4, kTop + 8);
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">false positive rate</text>\n",
                     kLeft + kSide / 2, kTop + kSide + 32);
  out += fmt::format("<text x=\"12\" y=\"{0}\" font-size=\"11\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 12 {0})\">true positive rate</text>\n",
                     kTop + kSide / 2);
  out += "</svg>\n";
}

// One entry of the UI metadata, drawn; a malformed one is named, not drawn.
void write_entry(std::string& out, const Json& entry) {
  std::string type = text_of(entry, "type"), source = text_of(entry, "source"), why;
  std::vector<std::vector<std::string>> rows;
  if (type == "web-app") return write_html(out, source);
  if (type == "markdown") {
    out += "<pre class=\"markdown\">" + esc(source) + "</pre>\n";
    return;
  }
  if (type == "table" && rules::visuals::parse_csv(source, rows, why)) {
    std::vector<std::string> header;
    for (const auto& h : input::member(entry, "header"))
      if (h.is_string()) header.push_back(h.get<std::string>());
    return write_table(out, header, rows);
  }
  if (type == "confusion_matrix") {
    rules::visuals::ConfusionMatrix m;
    if (rules::visuals::parse_confusion_matrix(source, m, why)) return write_confusion(out, m);
  }
  if (type == "roc") {
    std::vector<rules::visuals::RocPoint> points;
    if (rules::visuals::parse_roc(source, points, why)) return write_roc(out, points);
  }
  out += "<p>not drawn: " + esc(why.empty() ? "an unknown kind" : why) + "</p>\n";
}

}  // namespace

std::string esc(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case ':': out += text.substr(i + 1, 2) == "//" ? "&#58;" : ":"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += "\xEF\xBF\xBD";
        else out += c;
    }
  }
  return out;
}

std::string clip(const std::string& text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t n = bytes;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n) + "...";
}

bool read_report_visuals(const std::string& dir, ReportRun& run, std::string& error) {
  run.visuals.clear();
  for (const auto& step : input::member(run.summary, "steps")) {
    std::string name = text_of(step, "step");
    // A step's directory is its name (a called pipeline's step: CALL/STEP): nothing outside
    // the run directory is read.
    if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos) continue;
    std::string path = dir + "/steps/" + name + "/mlpipeline-ui-metadata.json", text, why;
    if (!input::read_file(path, kMaxMetadataFile, text, why)) continue;  // a step without visual outputs
    Json doc;
    if (!input::parse_json(text, doc, why) || !input::member(doc, "outputs").is_array()) {
      error = fmt::format("'{}': {}", path, why.empty() ? "not UI metadata (no \"outputs\" list)" : why);
      return false;
    }
    if (!doc["outputs"].empty()) run.visuals.emplace_back(name, std::move(doc["outputs"]));
  }
  return true;
}

void write_visuals(std::string& out, const ReportRun& run) {
  if (run.visuals.empty()) return;
  out += "<h3>Visual outputs</h3>\n";
  for (const auto& [step, entries] : run.visuals)
    for (const auto& entry : entries) {
      std::string type = text_of(entry, "type");
      out += fmt::format("<figure class=\"visual\">\n<figcaption>{}: {}</figcaption>\n", esc(step), esc(type));
      write_entry(out, entry);
      out += "</figure>\n";
    }
}

}  // namespace pipec::tools::detail
