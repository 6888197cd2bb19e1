#pragma once
// What a 2xx answer must hold to be taken as the KFP API's (docs/client.md "What an answer
// must hold"): UTF-8 JSON, read through the bounded reader (input/json.hpp: nesting and
// size), of the shape of what the operation returns: a run has an id, an upload returns a
// pipeline with an id, a listing's items are objects with ids. Anything else (the Kubeflow
// dashboard's or a sign-in page's HTML, a body a proxy cut short, JSON of other members)
// is not believed: the error names what came back.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/client/http.hpp"

namespace pipec::client::kfp {

/// Which REST API the calls use: v1beta1 for Argo (v1) pipelines, v2beta1 for KFP v2
/// pipeline specs (runs with typed `runtime_config.parameters`).
enum class ApiVersion { V1beta1, V2beta1 };

enum class Kind { Run, Experiment, Pipeline, Version, Schedule };

/// The shape of one operation's answer.
struct Shape {
  std::string noun;                // "run", "pipeline", ... (for the message); "" = any JSON object
  std::string list;                // a listing: the member holding the items (absent: no items)
  std::string wrapper;             // the member holding the thing ("run" of a v1beta1 RunDetail)
  std::string id;                  // the thing's member that must be a non-empty string
  std::vector<std::string> texts;  // the thing's members that must be strings when present
  bool may_be_empty = false;       // an action's answer: an object ({}), or no body at all
};

/// One thing of `kind` (`detail`: a v1beta1 run as RunDetail, its run under "run").
Shape item_shape(Kind kind, ApiVersion version, bool detail = false);
/// A page of a listing of `kind`.
Shape list_shape(Kind kind, ApiVersion version);
/// The answer of an action (terminate, archive, delete, ...): {} or nothing.
Shape action_shape();
/// An object with the non-empty string member `key` (a template: {"template": "..."}).
Shape text_shape(std::string noun, std::string key);

/// Reads `body` as `shape` says into `out`. "" when it holds, else what is wrong ("not
/// JSON: ...", "the run has no id: its member 'run_id' is missing", ...).
std::string read_answer(std::string_view body, const Shape& shape, nlohmann::json& out);

/// Whether an answer is an HTML page (by its Content-Type, else by its first bytes).
bool is_html(const HttpResponse& response);

/// The message of an answer that is not the KFP API's: `what`, the host, the status, the
/// content type, the size and first bytes of the body (escaped), `problem`, and the hint
/// that applies (an HTML page: a path prefix or a sign-in page).
std::string not_kfp_message(std::string_view what, std::string_view host,
                            const HttpResponse& response, std::string_view problem);

}  // namespace pipec::client::kfp
