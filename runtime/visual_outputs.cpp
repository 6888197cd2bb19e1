#include "runtime/visual_outputs.hpp"

#include <string_view>

#include "input/read.hpp"

namespace pipec::runtime {

namespace {

// The file's text, or false with a warning naming the output.
bool read_visual(const VisualFile& f, std::string& text, std::vector<std::string>& warnings) {
  std::string why;
  if (input::read_file(f.path, rules::visuals::kMaxInlineBytes, text, why)) return true;
  warnings.push_back("visual output '" + f.name + "' (" + std::string(rules::visuals::type_name(f.kind)) +
                     "): cannot read " + f.path + ": " + why);
  return false;
}

void not_of_kind(const VisualFile& f, const std::string& why, std::vector<std::string>& warnings) {
  warnings.push_back("visual output '" + f.name + "' (" + std::string(rules::visuals::type_name(f.kind)) +
                     ") at " + f.path + ": " + why);
}

}  // namespace

nlohmann::json ui_metadata(const std::vector<VisualFile>& files, std::vector<std::string>& warnings) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& f : files) {
    std::string text, why;
    if (!read_visual(f, text, warnings)) continue;
    nlohmann::json entry;
    if (!rules::visuals::ui_metadata_entry(f.kind, text, entry, why)) {
      not_of_kind(f, why, warnings);
      continue;
    }
    outputs.push_back(std::move(entry));
  }
  return {{"outputs", std::move(outputs)}};
}

std::map<std::string, nlohmann::json> classification_metadata(const std::vector<VisualFile>& files,
                                                              std::vector<std::string>& warnings) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& f : files) {
    if (!rules::visuals::v2_needs_metadata(f.kind)) continue;
    std::string text, why;
    if (!read_visual(f, text, warnings)) continue;
    nlohmann::json metadata;
    if (!rules::visuals::classification_metadata(f.kind, text, metadata, why)) {
      not_of_kind(f, why, warnings);
      continue;
    }
    out[f.name] = std::move(metadata);
  }
  return out;
}

}  // namespace pipec::runtime
