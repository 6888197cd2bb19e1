// The members checked are those the client reads to decide what happened (ids, names,
// states, the items of a listing), spelled as the specs in shared/kfp-api spell them:
// grpc-gateway leaves out empty members, so an empty listing is `{}`, and a member that is
// absent is not an error unless the operation cannot have done its work without it (an id).

#include "compiler/client/kfp/answer.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "compiler/base/text.hpp"
#include "input/json.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "input/utf8.hpp"

namespace pipec::client::kfp {

namespace {

using json = nlohmann::json;

constexpr std::size_t kShownBytes = 160;

const char* type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "not a value";
  }
}

// One thing of `shape` at `where` ("the run", "item 3 of 'runs'").
std::string check_thing(const json& thing, const Shape& shape, const std::string& where) {
  if (!thing.is_object()) return fmt::format("{} is {}, not an object", where, type_name(thing));
  const json& id = input::member(thing, shape.id);
  if (id.is_null()) return fmt::format("{} has no id: its member '{}' is missing", where, shape.id);
  if (!id.is_string())
    return fmt::format("{}'s member '{}' is {}, not a string", where, shape.id, type_name(id));
  if (id.get_ref<const std::string&>().empty())
    return fmt::format("{} has no id: its member '{}' is empty", where, shape.id);
  for (const std::string& key : shape.texts) {
    const json& value = input::member(thing, key);
    if (!value.is_null() && !value.is_string())
      return fmt::format("{}'s member '{}' is {}, not a string", where, key, type_name(value));
  }
  return {};
}

std::string check_list(const json& answer, const Shape& shape) {
  const json& items = input::member(answer, shape.list);
  if (!items.is_null() && !items.is_array())
    return fmt::format("its member '{}' (the {}s) is {}, not an array", shape.list, shape.noun,
                       type_name(items));
  if (items.is_array()) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string problem =
          check_thing(items[i], shape, fmt::format("{} {} of '{}'", shape.noun, i + 1, shape.list));
      if (!problem.empty()) return problem;
    }
  }
  const json& token = input::member(answer, "next_page_token");
  if (!token.is_null() && !token.is_string())
    return fmt::format("its member 'next_page_token' is {}, not a string", type_name(token));
  const json& total = input::member(answer, "total_size");
  if (!total.is_null() && !total.is_number_integer())
    return fmt::format("its member 'total_size' is {}, not an integer", type_name(total));
  return {};
}

}  // namespace

Shape item_shape(Kind kind, ApiVersion version, bool detail) {
  const bool v2 = version == ApiVersion::V2beta1;
  switch (kind) {
    case Kind::Run:
      return v2 ? Shape{"run", "", "", "run_id", {"display_name", "state"}}
                : Shape{"run", "", detail ? "run" : "", "id", {"name", "status"}};
    case Kind::Experiment:
      return v2 ? Shape{"experiment", "", "", "experiment_id", {"display_name"}}
                : Shape{"experiment", "", "", "id", {"name"}};
    case Kind::Pipeline:
      return v2 ? Shape{"pipeline", "", "", "pipeline_id", {"name", "display_name"}}
                : Shape{"pipeline", "", "", "id", {"name"}};
    case Kind::Version:
      return v2 ? Shape{"pipeline version", "", "", "pipeline_version_id", {"name", "display_name"}}
                : Shape{"pipeline version", "", "", "id", {"name"}};
    case Kind::Schedule:
      return v2 ? Shape{"schedule", "", "", "recurring_run_id", {"display_name"}}
                : Shape{"schedule", "", "", "id", {"name"}};
  }
  return {};
}

Shape list_shape(Kind kind, ApiVersion version) {
  const bool v2 = version == ApiVersion::V2beta1;
  Shape shape = item_shape(kind, version);
  switch (kind) {
    case Kind::Run:
      shape.list = "runs";
      break;
    case Kind::Experiment:
      shape.list = "experiments";
      break;
    case Kind::Pipeline:
      shape.list = "pipelines";
      break;
    case Kind::Version:
      shape.list = v2 ? "pipeline_versions" : "versions";
      break;
    case Kind::Schedule:
      shape.list = v2 ? "recurringRuns" : "jobs";
      break;
  }
  return shape;
}

Shape action_shape() {
  Shape shape;
  shape.may_be_empty = true;
  return shape;
}

Shape text_shape(std::string noun, std::string key) {
  Shape shape;
  shape.noun = std::move(noun);
  shape.id = std::move(key);
  return shape;
}

std::string read_answer(std::string_view body, const Shape& shape, json& out) {
  out = json();
  if (shape.may_be_empty && body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    out = json::object();
    return {};
  }
  if (std::size_t bad = first_invalid_utf8(body); bad != std::string_view::npos)
    return fmt::format("not UTF-8: byte 0x{:02X} at {}", static_cast<unsigned char>(body[bad]),
                       input::place_of(body, bad));
  std::string error;
  if (!input::parse_json(body, out, error)) {
    out = json();
    // nlohmann's "[json.exception.parse_error.101] parse error at ..." without its tag
    if (error.rfind("[json.exception.", 0) == 0 && error.find("] ") != std::string::npos)
      error.erase(0, error.find("] ") + 2);
    return "not JSON: " + error;
  }
  if (!out.is_object()) return fmt::format("the answer is {}, not an object", type_name(out));
  if (shape.noun.empty()) return {};
  if (!shape.list.empty()) return check_list(out, shape);
  if (shape.wrapper.empty()) return check_thing(out, shape, "the " + shape.noun);
  const json& thing = input::member(out, shape.wrapper);
  if (thing.is_null())
    return fmt::format("the answer has no {}: its member '{}' is missing", shape.noun,
                       shape.wrapper);
  return check_thing(thing, shape, fmt::format("the {} ('{}')", shape.noun, shape.wrapper));
}

bool is_html(const HttpResponse& response) {
  if (ascii_lower(response.content_type).find("html") != std::string::npos) return true;
  std::size_t begin = response.body.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return false;
  std::string start = ascii_lower(std::string_view(response.body).substr(begin, 14));
  return start.rfind("<!doctype html", 0) == 0 || start.rfind("<html", 0) == 0 ||
         start.rfind("<head", 0) == 0 || start.rfind("<!--", 0) == 0;
}

std::string not_kfp_message(std::string_view what, std::string_view host,
                            const HttpResponse& response, std::string_view problem) {
  std::string_view body = response.body;
  std::string shown = fmt::format("{:?}", body.substr(0, kShownBytes));
  if (body.size() > kShownBytes) shown += "...";
  std::string text = fmt::format(
      "{}: the answer from {} is not the KFP API's: HTTP {}, {}, {}: {}\n  the answer begins {}",
      what, host, response.status,
      response.content_type.empty() ? "no content type" : "content type " + response.content_type,
      body.empty() ? std::string("no body") : input::size_text(body.size()), problem,
      body.empty() ? std::string("with nothing") : shown);
  std::string hint;
  if (is_html(response)) {
    hint =
        "this is not the KFP API: a path prefix such as /pipeline, or a sign-in page (then give "
        "--cookie or --token); check --host";
  } else if (problem.rfind("not JSON", 0) == 0 || problem.rfind("not UTF-8", 0) == 0) {
    hint =
        "the answer is cut short or is not KFP's: a proxy in front of the server, or another "
        "server at --host";
  } else {
    hint =
        "this is not what the KFP API answers here: another server at --host, or --target names "
        "the other API version (kfp-v1: v1beta1, kfp-v2: v2beta1)";
  }
  return text + "\n  hint: " + hint;
}

}  // namespace pipec::client::kfp
