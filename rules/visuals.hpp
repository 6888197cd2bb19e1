#pragma once
// Visual outputs (docs/language.md "Visual outputs"): the kinds of file an op may declare
// for the UIs to render, what each file holds, and what KFP makes of it: the entry of
// KFP v1's `mlpipeline-ui-metadata` (pipec-metrics writes it, `run --local` keeps it, the
// report reads it) and the metadata of KFP v2's `system.ClassificationMetrics`. One rule
// for the compiler, pipec-metrics, the local run and the report. No I/O.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pipec::rules::visuals {

enum class Kind { None, Html, Markdown, Table, ConfusionMatrix, Roc };

/// The largest file put inline into the UI metadata (KFP v1's frontend reads the whole
/// metadata file): a larger one stays in its artifact only, with a warning.
inline constexpr std::size_t kMaxInlineBytes = 4u << 20;

/// The type name of the language (`html`, `markdown`, `table`, `confusion_matrix`, `roc`),
/// or nullopt for another word.
[[nodiscard]] std::optional<Kind> kind_of(std::string_view type_name);
/// The type name of `kind` ("" for None).
[[nodiscard]] std::string_view type_name(Kind kind);
/// The type names, for messages and suggestions.
[[nodiscard]] const std::vector<std::string>& type_names();
/// KFP v1's viewer type: "web-app", "markdown", "table", "confusion_matrix", "roc".
[[nodiscard]] std::string_view v1_type(Kind kind);
/// KFP v2's artifact schema title: system.HTML, system.Markdown, system.ClassificationMetrics
/// (confusion matrix and ROC), system.Artifact (a table, and a plain file).
[[nodiscard]] std::string_view v2_schema_title(Kind kind);
/// Whether KFP v2 needs the file's contents as the artifact's metadata (ClassificationMetrics).
[[nodiscard]] bool v2_needs_metadata(Kind kind);

/// CSV as RFC 4180 reads it (and d3-dsv's csvParseRows, which KFP's frontend uses): `,`
/// between cells, `"` quotes a cell (`""` inside is one `"`), rows end at `\n` or `\r\n`;
/// a last empty line is no row. False with `why` (at which line) on an unclosed quote.
bool parse_csv(std::string_view text, std::vector<std::vector<std::string>>& rows, std::string& why);

/// A confusion matrix: the file's rows `TARGET,PREDICTED,COUNT` (KFP v1's columns), one per
/// pair of labels; the labels in the order they first appear.
struct ConfusionMatrix {
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> counts;  // [target][predicted], the file's text
};
bool parse_confusion_matrix(std::string_view text, ConfusionMatrix& out, std::string& why);

/// An ROC curve: the file's rows `FPR,TPR,THRESHOLD` (KFP v1's columns), numbers.
struct RocPoint {
  std::string fpr, tpr, threshold;  // the file's text
};
bool parse_roc(std::string_view text, std::vector<RocPoint>& out, std::string& why);

/// A table: the file's first row is its header.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
bool parse_table(std::string_view text, Table& out, std::string& why);

/// The `outputs` entry of KFP v1's `mlpipeline-ui-metadata` for a file of `kind` holding
/// `text`, inline (`storage: inline`). False with `why` when the file is not of its kind.
bool ui_metadata_entry(Kind kind, std::string_view text, nlohmann::json& out, std::string& why);

/// The metadata of KFP v2's system.ClassificationMetrics artifact for a confusion matrix
/// (`confusionMatrix`: `annotationSpecs`, `rows`) or an ROC curve (`confidenceMetrics`).
bool classification_metadata(Kind kind, std::string_view text, nlohmann::json& out, std::string& why);

}  // namespace pipec::rules::visuals
