#include "rules/visuals.hpp"

#include <array>
#include <utility>

namespace pipec::rules::visuals {

namespace {

struct KindRow {
  Kind kind;
  std::string_view name, v1, v2;
};

constexpr std::array<KindRow, 5> kKinds = {{
    {Kind::Html, "html", "web-app", "system.HTML"},
    {Kind::Markdown, "markdown", "markdown", "system.Markdown"},
    {Kind::Table, "table", "table", "system.Artifact"},
    {Kind::ConfusionMatrix, "confusion_matrix", "confusion_matrix", "system.ClassificationMetrics"},
    {Kind::Roc, "roc", "roc", "system.ClassificationMetrics"},
}};

const KindRow* row_of(Kind kind) {
  for (const auto& r : kKinds)
    if (r.kind == kind) return &r;
  return nullptr;
}

// A JSON number (what KFP v2's metadata holds; KFP v1's frontend reads it with `+text` and
// parseInt): the text itself is kept, this only says whether it is one.
bool is_number(std::string_view s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  return !j.is_discarded() && j.is_number();
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}

// The rows back as CSV: a cell with `,`, `"` or a line end is quoted.
std::string to_csv(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i) out += ',';
      const std::string& c = row[i];
      if (c.find_first_of(",\"\r\n") == std::string::npos) {
        out += c;
        continue;
      }
      out += '"';
      for (char ch : c) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      out += '"';
    }
    out += '\n';
  }
  return out;
}

}  // namespace

std::optional<Kind> kind_of(std::string_view type_name) {
  for (const auto& r : kKinds)
    if (r.name == type_name) return r.kind;
  return std::nullopt;
}

std::string_view type_name(Kind kind) {
  const KindRow* r = row_of(kind);
  return r ? r->name : std::string_view();
}

const std::vector<std::string>& type_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& r : kKinds) out.emplace_back(r.name);
    return out;
  }();
  return names;
}

std::string_view v1_type(Kind kind) {
  const KindRow* r = row_of(kind);
  return r ? r->v1 : std::string_view();
}

std::string_view v2_schema_title(Kind kind) {
  const KindRow* r = row_of(kind);
  return r ? r->v2 : std::string_view("system.Artifact");
}

bool v2_needs_metadata(Kind kind) { return kind == Kind::ConfusionMatrix || kind == Kind::Roc; }

bool parse_csv(std::string_view text, std::vector<std::vector<std::string>>& rows, std::string& why) {
  rows.clear();
  std::vector<std::string> row;
  std::string cell;
  std::size_t line = 1, quote_line = 0;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '"' && cell.empty()) {
      quoted = true;
      quote_line = line;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(std::move(cell));
      cell.clear();
      rows.push_back(std::move(row));
      row.clear();
      any = false;
      ++line;
    } else {
      cell += c;
      any = true;
    }
  }
  if (quoted) {
    why = "line " + std::to_string(quote_line) + ": a quote is not closed";
    return false;
  }
  if (any) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return true;
}

bool parse_table(std::string_view text, Table& out, std::string& why) {
  std::vector<std::vector<std::string>> rows;
  if (!parse_csv(text, rows, why)) return false;
  if (rows.empty()) {
    why = "the table is empty: its first row is its header";
    return false;
  }
  out.header = std::move(rows.front());
  out.rows.assign(std::make_move_iterator(rows.begin() + 1), std::make_move_iterator(rows.end()));
  return true;
}

bool parse_confusion_matrix(std::string_view text, ConfusionMatrix& out, std::string& why) {
  std::vector<std::vector<std::string>> rows;
  if (!parse_csv(text, rows, why)) return false;
  out = {};
  auto index = [&](const std::string& label) {
    for (std::size_t i = 0; i < out.labels.size(); ++i)
      if (out.labels[i] == label) return i;
    out.labels.push_back(label);
    return out.labels.size() - 1;
  };
  std::vector<std::array<std::size_t, 2>> at;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    auto& row = rows[r];
    if (row.size() != 3 || trim(row[0]).empty() || trim(row[1]).empty() || !is_number(trim(row[2]))) {
      why = "line " + std::to_string(r + 1) + ": a confusion matrix's row is TARGET,PREDICTED,COUNT";
      return false;
    }
    at.push_back({index(trim(row[0])), index(trim(row[1]))});
  }
  std::size_t n = out.labels.size();
  if (n == 0 || rows.size() != n * n) {
    why = "a confusion matrix of " + std::to_string(n) + " labels has " + std::to_string(n * n) +
          " rows (one per target and predicted label), got " + std::to_string(rows.size());
    return false;
  }
  out.counts.assign(n, std::vector<std::string>(n));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string& cell = out.counts[at[r][0]][at[r][1]];
    if (!cell.empty()) {
      why = "line " + std::to_string(r + 1) + ": the pair " + out.labels[at[r][0]] + "," + out.labels[at[r][1]] +
            " is given twice";
      return false;
    }
    cell = trim(rows[r][2]);
  }
  return true;
}

bool parse_roc(std::string_view text, std::vector<RocPoint>& out, std::string& why) {
  std::vector<std::vector<std::string>> rows;
  if (!parse_csv(text, rows, why)) return false;
  out.clear();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.size() != 3 || !is_number(trim(row[0])) || !is_number(trim(row[1])) || !is_number(trim(row[2]))) {
      why = "line " + std::to_string(r + 1) + ": an ROC curve's row is FPR,TPR,THRESHOLD (numbers)";
      return false;
    }
    out.push_back({trim(row[0]), trim(row[1]), trim(row[2])});
  }
  if (out.empty()) {
    why = "the ROC curve has no point";
    return false;
  }
  return true;
}

bool ui_metadata_entry(Kind kind, std::string_view text, nlohmann::json& out, std::string& why) {
  using nlohmann::json;
  out = {{"type", std::string(v1_type(kind))}, {"storage", "inline"}};
  switch (kind) {
    case Kind::Html:
    case Kind::Markdown: out["source"] = std::string(text); return true;
    case Kind::Table: {
      Table t;
      if (!parse_table(text, t, why)) return false;
      out["format"] = "csv";
      out["header"] = t.header;
      out["source"] = to_csv(t.rows);
      return true;
    }
    case Kind::ConfusionMatrix: {
      ConfusionMatrix m;
      if (!parse_confusion_matrix(text, m, why)) return false;
      std::vector<std::vector<std::string>> rows;
      for (std::size_t i = 0; i < m.labels.size(); ++i)
        for (std::size_t j = 0; j < m.labels.size(); ++j) rows.push_back({m.labels[i], m.labels[j], m.counts[i][j]});
      out["format"] = "csv";
      out["schema"] = json::array({{{"name", "target"}, {"type", "CATEGORY"}},
                                   {{"name", "predicted"}, {"type", "CATEGORY"}},
                                   {{"name", "count"}, {"type", "NUMBER"}}});
      out["labels"] = m.labels;
      out["source"] = to_csv(rows);
      return true;
    }
    case Kind::Roc: {
      std::vector<RocPoint> points;
      if (!parse_roc(text, points, why)) return false;
      std::vector<std::vector<std::string>> rows;
      for (const auto& p : points) rows.push_back({p.fpr, p.tpr, p.threshold});
      out["format"] = "csv";
      out["schema"] = json::array({{{"name", "fpr"}, {"type", "NUMBER"}},
                                   {{"name", "tpr"}, {"type", "NUMBER"}},
                                   {{"name", "thresholds"}, {"type", "NUMBER"}}});
      out["source"] = to_csv(rows);
      return true;
    }
    case Kind::None: break;
  }
  why = "not a visual kind";
  return false;
}

bool classification_metadata(Kind kind, std::string_view text, nlohmann::json& out, std::string& why) {
  using nlohmann::json;
  auto number = [](const std::string& s) { return json::parse(s, nullptr, false); };
  if (kind == Kind::ConfusionMatrix) {
    ConfusionMatrix m;
    if (!parse_confusion_matrix(text, m, why)) return false;
    json specs = json::array(), rows = json::array();
    for (const auto& label : m.labels) specs.push_back({{"displayName", label}});
    for (const auto& counts : m.counts) {
      json row = json::array();
      for (const auto& c : counts) row.push_back(number(c));
      rows.push_back({{"row", std::move(row)}});
    }
    out = {{"confusionMatrix", {{"annotationSpecs", std::move(specs)}, {"rows", std::move(rows)}}}};
    return true;
  }
  if (kind == Kind::Roc) {
    std::vector<RocPoint> points;
    if (!parse_roc(text, points, why)) return false;
    json metrics = json::array();
    for (const auto& p : points)
      metrics.push_back({{"confidenceThreshold", number(p.threshold)},
                         {"recall", number(p.tpr)},
                         {"falsePositiveRate", number(p.fpr)}});
    out = {{"confidenceMetrics", std::move(metrics)}};
    return true;
  }
  why = "only a confusion matrix and an ROC curve are KFP v2 classification metrics";
  return false;
}

}  // namespace pipec::rules::visuals
