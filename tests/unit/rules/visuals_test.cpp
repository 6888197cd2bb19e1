// rules/visuals: the files of the visual kinds read as KFP reads them, into KFP v1's UI
// metadata and KFP v2's classification metrics; malformed files refused with the line.
#include "rules/visuals.hpp"

#include <gtest/gtest.h>

namespace pipec::rules::visuals {
namespace {

using nlohmann::json;

TEST(Visuals, KindsHaveTheirNamesViewersAndArtifactTypes) {
  EXPECT_EQ(kind_of("confusion_matrix"), Kind::ConfusionMatrix);
  EXPECT_EQ(kind_of("file"), std::nullopt);
  EXPECT_EQ(v1_type(Kind::Html), "web-app");
  EXPECT_EQ(v2_schema_title(Kind::Markdown), "system.Markdown");
  EXPECT_EQ(v2_schema_title(Kind::Roc), "system.ClassificationMetrics");
  EXPECT_EQ(v2_schema_title(Kind::None), "system.Artifact");
  EXPECT_EQ(type_names().size(), 5u);
}

TEST(Visuals, CsvQuotesLineEndsAndALastLineWithoutEnd) {
  std::vector<std::vector<std::string>> rows;
  std::string why;
  ASSERT_TRUE(parse_csv("a,\"b,\"\"c\"\"\"\r\n\"x\ny\",\nlast", rows, why)) << why;
  EXPECT_EQ(rows, (std::vector<std::vector<std::string>>{{"a", "b,\"c\""}, {"x\ny", ""}, {"last"}}));
  EXPECT_FALSE(parse_csv("a\n\"open,", rows, why));
  EXPECT_EQ(why, "line 2: a quote is not closed");
}

TEST(Visuals, MarkdownAndHtmlAreInlineAsWritten) {
  json entry;
  std::string why, text = "# A\r\n\tb \xC3\xA9";
  ASSERT_TRUE(ui_metadata_entry(Kind::Markdown, text, entry, why));
  EXPECT_EQ(entry, (json{{"type", "markdown"}, {"storage", "inline"}, {"source", text}}));
}

TEST(Visuals, ATableHasItsHeaderApart) {
  json entry;
  std::string why;
  ASSERT_TRUE(ui_metadata_entry(Kind::Table, "k,v\n\"a,b\",1\n", entry, why));
  EXPECT_EQ(entry["header"], json({"k", "v"}));
  EXPECT_EQ(entry["source"], "\"a,b\",1\n");
  EXPECT_EQ(entry["format"], "csv");
  EXPECT_FALSE(ui_metadata_entry(Kind::Table, "", entry, why));
}

TEST(Visuals, AConfusionMatrixPairsEveryLabel) {
  ConfusionMatrix m;
  std::string why;
  ASSERT_TRUE(parse_confusion_matrix("dog,dog,4\ndog,cat,1\ncat,dog,2\ncat,cat,9\n", m, why)) << why;
  EXPECT_EQ(m.labels, (std::vector<std::string>{"dog", "cat"}));
  EXPECT_EQ(m.counts, (std::vector<std::vector<std::string>>{{"4", "1"}, {"2", "9"}}));
  json meta;
  ASSERT_TRUE(classification_metadata(Kind::ConfusionMatrix, "a,a,1\na,b,2\nb,a,3\nb,b,4", meta, why));
  EXPECT_EQ(meta, json::parse(R"({"confusionMatrix":{"annotationSpecs":[{"displayName":"a"},{"displayName":"b"}],
                                  "rows":[{"row":[1,2]},{"row":[3,4]}]}})"));
  EXPECT_FALSE(parse_confusion_matrix("a,a,1\na,b,2\nb,a,3\n", m, why));
  EXPECT_EQ(why, "a confusion matrix of 2 labels has 4 rows (one per target and predicted label), got 3");
  EXPECT_FALSE(parse_confusion_matrix("a,a,1\na,a,2\n", m, why));
  EXPECT_FALSE(parse_confusion_matrix("a,b,many\n", m, why));
  EXPECT_EQ(why, "line 1: a confusion matrix's row is TARGET,PREDICTED,COUNT");
}

TEST(Visuals, AnRocCurveIsThreeNumbersARow) {
  json entry, meta;
  std::string why;
  ASSERT_TRUE(ui_metadata_entry(Kind::Roc, "0,0,1\n0.5,0.9,0.3\n", entry, why));
  EXPECT_EQ(entry["source"], "0,0,1\n0.5,0.9,0.3\n");
  EXPECT_EQ(entry["schema"][2]["name"], "thresholds");
  ASSERT_TRUE(classification_metadata(Kind::Roc, "0.5,0.9,0.3", meta, why));
  EXPECT_EQ(meta, json::parse(R"({"confidenceMetrics":[{"confidenceThreshold":0.3,"recall":0.9,"falsePositiveRate":0.5}]})"));
  EXPECT_FALSE(ui_metadata_entry(Kind::Roc, "0,0\n", entry, why));
  EXPECT_EQ(why, "line 1: an ROC curve's row is FPR,TPR,THRESHOLD (numbers)");
  EXPECT_FALSE(ui_metadata_entry(Kind::Roc, "0,nan,1\n", entry, why));
  EXPECT_FALSE(classification_metadata(Kind::Html, "x", meta, why));
}

}  // namespace
}  // namespace pipec::rules::visuals
