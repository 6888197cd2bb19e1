#pragma once
// The visual outputs of a step (docs/language.md "Visual outputs") read from the files the
// command wrote: KFP v1's `mlpipeline-ui-metadata` and KFP v2's ClassificationMetrics
// metadata. pipec-metrics writes them in the pod; `pipec run --local` keeps the same
// metadata in the step's directory, which `pipec report` reads.

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "rules/visuals.hpp"

namespace pipec::runtime {

struct VisualFile {
  rules::visuals::Kind kind = rules::visuals::Kind::None;
  std::string name;  // the op's output
  std::string path;  // where the command wrote it
};

/// KFP v1's UI metadata, `{"outputs": [...]}`, one inline entry per file in the given order.
/// A file that is missing, larger than rules::visuals::kMaxInlineBytes or not of its kind
/// is left out, with a warning naming the output.
nlohmann::json ui_metadata(const std::vector<VisualFile>& files, std::vector<std::string>& warnings);

/// KFP v2's metadata of each confusion matrix and ROC curve, by output name (the others have
/// none); a file left out as ui_metadata() leaves it, with the same warning.
std::map<std::string, nlohmann::json> classification_metadata(const std::vector<VisualFile>& files,
                                                              std::vector<std::string>& warnings);

}  // namespace pipec::runtime
