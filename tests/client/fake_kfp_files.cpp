// Pipeline files: what the fake reads from an upload (a YAML or JSON file, or a .tar.gz
// or .zip holding one; an Argo Workflow or a KFP v2 pipeline spec) and make_archive, which
// the tests upload.
#include "tests/client/fake_kfp.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <yaml-cpp/yaml.h>

#include "tests/client/fake_kfp_detail.hpp"

namespace pipec::client::testing {

using nlohmann::json;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

json yaml_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(yaml_json(item));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& item : node) out[item.first.Scalar()] = yaml_json(item.second);
      return out;
    }
    case YAML::NodeType::Scalar: {
      if (node.Tag() == "!") return node.Scalar();
      json parsed = json::parse(node.Scalar(), nullptr, false);
      return parsed.is_discarded() || parsed.is_object() || parsed.is_array() ? json(node.Scalar()) : parsed;
    }
    default:
      return nullptr;
  }
}

}  // namespace

namespace detail {

bool read_pipeline_file(const std::string& filename, const std::string& bytes, std::string& yaml,
                        std::string& error) {
  if (ends_with(filename, ".yaml") || ends_with(filename, ".yml") || ends_with(filename, ".json")) {
    yaml = bytes;
    return true;
  }
  bool zip = bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K';
  bool tgz = bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
             static_cast<unsigned char>(bytes[1]) == 0x8b;
  if (!zip && !tgz) {
    error = "Unexpected pipeline file format. Support .zip, .tar.gz, .json or YAML.";
    return false;
  }
  archive* a = archive_read_new();
  if (zip) {
    archive_read_support_format_zip(a);
  } else {
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
  }
  bool found = false;
  std::string first_name, first;
  if (archive_read_open_memory(a, bytes.data(), bytes.size()) == ARCHIVE_OK) {
    archive_entry* entry;
    bool have_first = false;
    while (archive_read_next_header(a, &entry) == ARCHIVE_OK) {
      std::string name = archive_entry_pathname(entry);
      std::string content(static_cast<std::size_t>(archive_entry_size(entry)), '\0');
      if (!content.empty()) archive_read_data(a, content.data(), content.size());
      if (name == "pipeline.yaml") {
        yaml = content;
        found = true;
        break;
      }
      if (!have_first) {
        have_first = true;
        first_name = name;
        first = content;
      }
    }
  }
  archive_read_free(a);
  if (found) return true;
  if (!ends_with(first_name, ".yaml") && !ends_with(first_name, ".yml")) {
    error = "Error decompress the pipeline file: Expecting a pipeline.yaml file inside the "
            "tarball. Got: " + first_name;
    return false;
  }
  yaml = first;
  return true;
}

bool is_argo_workflow(const std::string& yaml, std::vector<std::string>& parameter_names) {
  try {
    YAML::Node root = YAML::Load(yaml);
    if (!root.IsMap() || !root["kind"] || root["kind"].as<std::string>() != "Workflow") return false;
    if (root["apiVersion"].as<std::string>().rfind("argoproj.io/", 0) != 0) return false;
    if (root["spec"] && root["spec"]["arguments"] && root["spec"]["arguments"]["parameters"])
      for (const auto& p : root["spec"]["arguments"]["parameters"])
        parameter_names.push_back(p["name"].as<std::string>());
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

json v2_spec(const std::string& yaml) {
  try {
    std::vector<YAML::Node> docs = YAML::LoadAll(yaml);
    if (docs.empty() || !docs[0].IsMap() || !docs[0]["pipelineInfo"] || !docs[0]["root"]) return nullptr;
    return yaml_json(docs[0]);
  } catch (const YAML::Exception&) {
    return nullptr;
  }
}

}  // namespace detail

std::string make_archive(const std::vector<std::pair<std::string, std::string>>& members, bool zip) {
  std::string out;
  archive* a = archive_write_new();
  if (zip) {
    archive_write_set_format_zip(a);
  } else {
    archive_write_add_filter_gzip(a);
    archive_write_set_format_pax_restricted(a);
  }
  archive_write_open(
      a, &out, nullptr,
      [](archive*, void* user, const void* buffer, std::size_t length) -> la_ssize_t {
        static_cast<std::string*>(user)->append(static_cast<const char*>(buffer), length);
        return static_cast<la_ssize_t>(length);
      },
      nullptr);
  for (const auto& [name, content] : members) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(content.size()));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_write_header(a, entry);
    archive_write_data(a, content.data(), content.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

}  // namespace pipec::client::testing
