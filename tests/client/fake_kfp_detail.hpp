#pragma once
// What the parts of FakeKfp share (fake_kfp.cpp, fake_kfp_files.cpp and the routes of
// fake_kfp_v1beta1.cpp and fake_kfp_v2beta1.cpp): the servers' error bodies and what an
// uploaded pipeline file holds. Not for the tests themselves: they use fake_kfp.hpp.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
struct Response;
}

namespace pipec::client::testing::detail {

/// grpc-gateway error bodies: HEAD (v2) or, with `legacy`, 1.8 (v1.16, with `error` and
/// api.Error details).
nlohmann::json grpc_error(bool legacy, int code, const std::string& message);
/// The upload endpoints' `{"error_message","error_details"}`.
nlohmann::json upload_error(const std::string& message, const std::string& details);
void send_json(httplib::Response& res, int status, const nlohmann::json& body);

/// The server's ReadPipelineFile: extension, then magic; pipeline.yaml else first entry.
bool read_pipeline_file(const std::string& filename, const std::string& bytes, std::string& yaml,
                        std::string& error);
/// Whether `yaml` is an Argo Workflow; its parameters' names go to `parameter_names`.
bool is_argo_workflow(const std::string& yaml, std::vector<std::string>& parameter_names);
/// The first document of a KFP v2 pipeline spec as JSON, or null if it is not one.
nlohmann::json v2_spec(const std::string& yaml);

}  // namespace pipec::client::testing::detail
