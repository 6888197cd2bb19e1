// Issue 42: the `pipec` binary against answers that are not KFP's. A 200 answer of HTML,
// broken, cut, deep, non-UTF-8 or wrongly typed JSON was taken as "nothing" (an empty
// table, `run '' (id r1)`, `started run ... (id )`, exit 0), `--wait` polled such answers
// for ever, and a server that never answered (or dripped) held a command 10 minutes.
// Every command now ends, within the --request-timeout, with exit 1 and a message that
// names the host, the status, the content type and the first bytes of what came back.

#include <chrono>
#include <stdexcept>
#include <string_view>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/client/cli_support.hpp"
#include "tests/client/test_support.hpp"

namespace pipec::client {
namespace {

using nlohmann::json;
using testing::ClientCli;
using testing::Result;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct BadAnswer {
  const char* name;
  std::string content_type;
  std::string body;
  std::size_t length = 0;  // > 0: a Content-Length of this many bytes (a lie: the body is longer)
  std::string shown;       // what the message quotes of the body
  std::string problem;     // and says is wrong
  std::string hint;
  bool object = false;  // a JSON object: an action (delete, ...) cannot tell it from KFP's `{}`
};

const std::string kHtml =
    "<!DOCTYPE html>\n<html><head><title>Kubeflow Central "
    "Dashboard</title></head><body></body></html>\n";
const std::string kCut = "the answer is cut short or is not KFP's";
const std::string kOther = "this is not what the KFP API answers here";

std::vector<BadAnswer> bad_answers() {
  std::string deep = "{\"runs\": " + std::string(300, '[') + std::string(300, ']') + "}";
  return {
      {"Html", "text/html; charset=utf-8", kHtml, 0,
       R"("<!DOCTYPE html>\n<html><head><title>Kubeflow)", "not JSON",
       "hint: this is not the KFP API: a path prefix such as /pipeline, or a sign-in page"},
      {"Malformed", "application/json", R"({"runs": [{"id": "r1", "name": "a"},)", 0,
       R"("{\"runs\": [{\"id\")", "not JSON", kCut},
      {"ContentLengthLies", "application/json", R"({"runs": [], "run": {"id": "r1"}, "id": "p1"})",
       12, R"("{\"runs\": [],")", "not JSON", kCut},
      {"Deep", "application/json", deep, 0, R"("{\"runs\": [[[[)", "nesting deeper than 256 levels",
       kCut},
      {"NotUtf8", "application/json", "{\"runs\": [{\"id\": \"r\xff\"}]}", 0,
       R"("{\"runs\": [{\"id\": \"r\xff\"}]}")", "not UTF-8: byte 0xFF", kCut},
      {"WrongTypes", "application/json",
       R"({"runs": {"id": 1}, "run": {"id": 7}, "id": 7, "run_id": 7, "pipelines": 1, "pipeline_id": 7,)"
       R"( "experiments": "x", "experiment_id": 7, "versions": 1, "pipeline_versions": 1, "jobs": 1,)"
       R"( "recurringRuns": 1, "recurring_run_id": 7, "template": 7})",
       0, R"("{\"runs\": {\"id\": 1})", "not a", kOther, true},
  };
}

const BadAnswer& bad_answer(std::string_view name) {
  static const std::vector<BadAnswer> all = bad_answers();
  for (const BadAnswer& bad : all)
    if (bad.name == name) return bad;
  throw std::logic_error("no such bad answer");
}

class ClientAnswers : public ClientCli {
 protected:
  void expect_refused(const Result& r, const std::vector<std::string>& command,
                      const BadAnswer& bad) {
    std::string shown;
    for (const auto& a : command) shown += a + " ";
    SCOPED_TRACE(shown);
    EXPECT_EQ(r.exit, 1) << r.out << r.err;
    EXPECT_TRUE(has(r.err, "the answer from " + fake_.url() +
                               " is not the KFP API's: HTTP 200, content type " + bad.content_type))
        << r.err;
    EXPECT_TRUE(has(r.err, "the answer begins " + bad.shown.substr(0, 1)) && has(r.err, bad.shown))
        << r.err;
    EXPECT_TRUE(has(r.err, bad.problem)) << r.err;
    EXPECT_TRUE(has(r.err, bad.hint)) << r.err;
    EXPECT_FALSE(has(r.out, "(id )")) << r.out;
    EXPECT_FALSE(has(r.out, "items")) << r.out;
    EXPECT_FALSE(has(r.out, "started run")) << r.out;
  }

  // Each listing and verb, of both API versions, on one kind of answer that is not KFP's.
  void expect_every_command_refuses(const BadAnswer& bad);
};

void ClientAnswers::expect_every_command_refuses(const BadAnswer& bad) {
  if (bad.length > 0) {
    fake_.lie_about_length("", bad.body, bad.length);
  } else {
    fake_.answer("", 200, bad.content_type, bad.body);
  }
  std::string typed = data("typed.yaml");
  std::vector<std::vector<std::string>> commands = {
      {"runs", "list"},
      {"runs", "list", "-o", "json"},
      {"runs", "get", "r1"},
      {"runs", "wait", "r1", "--poll", "10ms"},
      {"run", typed, "-p", "data=x"},
      {"run", typed, "-p", "data=x", "--wait", "--poll", "10ms"},
      {"run", "pipeline-1", "-p", "data=x"},
      {"upload", typed},
      {"logs", "r1"},
      {"experiments", "list"},
      {"experiments", "create", "e"},
      {"experiments", "archive", "e"},
      {"pipelines", "list"},
      {"pipelines", "get", "p"},
      {"pipelines", "versions", "p"},
      {"pipelines", "delete", "p"},
      {"schedule", "list"},
      {"schedule", "get", "j1"},
      {"schedule", "create", typed, "-p", "data=x", "--every", "1h"},
      {"runs", "list", "--target", "kfp-v2"},
      {"runs", "get", "r1", "--target", "kfp-v2"},
      {"pipelines", "list", "--target", "kfp-v2"},
      {"schedule", "list", "--target", "kfp-v2"},
      {"upload", data("typed_v2.yaml")},
  };
  if (!bad.object) {
    for (const char* verb : {"stop", "retry", "archive", "delete"})
      commands.push_back({"runs", verb, "r1"});
    commands.push_back({"schedule", "enable", "j1"});
    commands.push_back({"schedule", "delete", "j1", "--target", "kfp-v2"});
  }
  for (auto& command : commands) {
    command.push_back("--host");
    command.push_back(fake_.url());
  }
  std::vector<Result> results = pipec_all(commands);
  for (std::size_t i = 0; i < commands.size(); ++i) expect_refused(results[i], commands[i], bad);
}

TEST_F(ClientAnswers, EveryCommandRefusesAnHtmlPage) {
  expect_every_command_refuses(bad_answer("Html"));
}
TEST_F(ClientAnswers, EveryCommandRefusesMalformedJson) {
  expect_every_command_refuses(bad_answer("Malformed"));
}
TEST_F(ClientAnswers, EveryCommandRefusesAnAnswerCutByItsContentLength) {
  expect_every_command_refuses(bad_answer("ContentLengthLies"));
}
TEST_F(ClientAnswers, EveryCommandRefusesJsonPast256Levels) {
  expect_every_command_refuses(bad_answer("Deep"));
}
TEST_F(ClientAnswers, EveryCommandRefusesBytesThatAreNotUtf8) {
  expect_every_command_refuses(bad_answer("NotUtf8"));
}
TEST_F(ClientAnswers, EveryCommandRefusesMembersOfTheWrongTypes) {
  expect_every_command_refuses(bad_answer("WrongTypes"));
}

// What an operation returns, checked where it matters most: a created run has an id, an
// upload returns a pipeline with an id; an answer without one is an error, not "(id )".
TEST_F(ClientCli, AnAnswerWithoutTheIdTheOperationReturnsIsAnError) {
  fake_.answer("POST /apis/v1beta1/runs", 200, "application/json", R"({"run": {"name": "r"}})");
  Result r = pipec({"run", data("typed.yaml"), "-p", "data=x", "--host", fake_.url()});
  EXPECT_EQ(r.exit, 1) << r.out;
  EXPECT_FALSE(has(r.out, "started run")) << r.out;
  EXPECT_TRUE(has(r.err, "cannot create run")) << r.err;
  EXPECT_TRUE(has(r.err, "the run ('run') has no id: its member 'id' is missing")) << r.err;

  fake_.answer("POST /apis/v1beta1/pipelines/upload?", 200, "application/json", "{}");
  r = pipec({"upload", example("constraints.pipe"), "--host", fake_.url()});
  EXPECT_EQ(r.exit, 1) << r.out;
  EXPECT_FALSE(has(r.out, "uploaded")) << r.out;
  EXPECT_TRUE(
      has(r.err, "cannot upload pipeline 'constraints': the answer from " + fake_.url() +
                     " is not the KFP API's: HTTP 200, content type application/json, 2 bytes: the "
                     "pipeline has no id: its member 'id' is missing\n  the answer begins \"{}\""))
      << r.err;
}

// Issue 42 point 2: `--wait` without --timeout polled answers that were not a run for ever
// ("still starting"); the first such answer now ends it.
TEST_F(ClientCli, WaitEndsOnAnAnswerThatIsNotARun) {
  fake_.answer("GET /apis/v1beta1/runs/", 200, "application/json",
               R"({"run": {}, "pipeline_runtime": {}})");
  Result r = pipec({"run", data("typed.yaml"), "-p", "data=x", "--wait", "--poll", "10ms", "--host",
                    fake_.url()});
  EXPECT_EQ(r.exit, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "started run")) << r.out;
  EXPECT_TRUE(has(r.err, "the run ('run') has no id")) << r.err;
  EXPECT_EQ(fake_.count("GET /apis/v1beta1/runs/"), 1);
}

// Issue 42 point 3: a server that accepts the connection and never answers, or sends a
// byte at a time, held every command 120 s x 5 tries. With --request-timeout 1s each ends
// in a second or two (all run at once here), tried once, saying what happened.
class ClientTimeouts : public ClientCli {
 protected:
  void expect_each_command_times_out() {
    std::string typed = data("typed.yaml");
    std::vector<std::vector<std::string>> commands = {
        {"runs", "list"},        {"runs", "get", "r1"},
        {"runs", "wait", "r1"},  {"run", typed, "-p", "data=x", "--wait"},
        {"upload", typed},       {"logs", "r1"},
        {"experiments", "list"}, {"pipelines", "versions", "p"},
        {"schedule", "list"},    {"runs", "stop", "r1"},
    };
    for (auto& command : commands)
      for (const std::string& a : {std::string("--host"), fake_.url(),
                                   std::string("--request-timeout"), std::string("1s")})
        command.push_back(a);
    auto start = std::chrono::steady_clock::now();
    std::vector<Result> results = pipec_all(commands);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
    for (std::size_t i = 0; i < commands.size(); ++i) {
      SCOPED_TRACE(commands[i][0] + " " + commands[i][1]);
      EXPECT_EQ(results[i].exit, 1) << results[i].err;
      EXPECT_TRUE(has(results[i].err, "no answer from " + fake_.url() + ": ")) << results[i].err;
      EXPECT_TRUE(has(results[i].err,
                      "hint: the server accepted the connection but did not answer in time "
                      "(less than 1024 bytes a second for 1 s)"))
          << results[i].err;
      EXPECT_FALSE(has(results[i].err, "attempts")) << results[i].err;
    }
  }
};

TEST_F(ClientTimeouts, AServerThatNeverAnswersEndsEachCommandWithinTheRequestTimeout) {
  fake_.delay("", std::chrono::seconds(30), -1);
  expect_each_command_times_out();
}

TEST_F(ClientTimeouts, AServerThatDripsEndsEachCommandWithinTheRequestTimeout) {
  fake_.drip("", R"({"runs": [], "run": {"id": "r1"}})" + std::string(200, ' '),
             std::chrono::milliseconds(300));
  expect_each_command_times_out();
}

// The timeout's one option, its variable, and a bad value.
TEST_F(ClientCli, TheRequestTimeoutComesFromTheOptionOrTheEnvironment) {
  fake_.delay("", std::chrono::seconds(30), -1);
  auto start = std::chrono::steady_clock::now();
  Result r = pipec({"runs", "list", "--host", fake_.url()}, {"PIPEC_REQUEST_TIMEOUT=1s"});
  EXPECT_EQ(r.exit, 1) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(has(r.err, "for 1 s")) << r.err;
  r = pipec({"runs", "list", "--host", fake_.url(), "--request-timeout", "0"});
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(r.err,
            "pipec: error: --request-timeout '0': expected a duration of at least 1s, such as 30s "
            "or 2m\n");
  r = pipec({"runs", "list", "--host", fake_.url()}, {"PIPEC_REQUEST_TIMEOUT=soon"});
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(
      r.err,
      "pipec: error: PIPEC_REQUEST_TIMEOUT 'soon': expected a duration of at least 1s, such as 30s "
      "or 2m\n");
}

// Issue 42 point 3: the UI reached but silent is not "give --ui-host".
TEST_F(ClientCli, ALogTheUiDoesNotSendInTimeSaysTheUiWasReached) {
  fake_.answer("GET /apis/v1beta1/runs/r1", 200, "application/json",
               testing::read_data("run_v1_failed.json"));
  fake_.delay("GET /k8s/pod/logs", std::chrono::seconds(30), -1);
  Result r = pipec({"logs", "r1", "fit", "--host", fake_.url(), "--request-timeout", "1s"},
                   {"HOME=/nonexistent"});
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(
      has(r.err, "cannot read the log of pod 'train-x7k2p-fit-3721646052' from the KFP UI at '" +
                     fake_.url() + "': no answer from"))
      << r.err;
  EXPECT_TRUE(has(r.err, "hint: the KFP UI was reached but did not send the log in time")) << r.err;
  EXPECT_FALSE(has(r.err, "--ui-host")) << r.err;
}

// Issue 42 point 4: an answer over 64 MiB is refused once (it was downloaded five times),
// and a step log over 64 MiB is read through the UI all the same: `pipec logs` streams it,
// `runs wait` shows its end.
TEST_F(ClientCli, AnAnswerOver64MiBIsAskedOnceAndALogOfAnySizeIsRead) {
  std::string big =
      "{\"runs\": [], \"pad\": \"" + std::string((std::size_t{64} << 20) + 16, 'x') + "\"}";
  fake_.answer("GET /apis/v1beta1/runs?", 200, "application/json", big);
  Result r = pipec({"runs", "list", "--host", fake_.url()});
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(has(r.err, "cannot list runs: the answer from " + fake_.url() +
                             " is larger than 64 MiB, more than pipec reads (not asked again)"))
      << r.err;
  EXPECT_EQ(fake_.count("GET /apis/v1beta1/runs?"), 1);

  std::string log;
  log.reserve((std::size_t{65} << 20) + 64);
  for (int i = 0; log.size() < (std::size_t{65} << 20); ++i)
    log += "line " + std::to_string(i) + " " + std::string(80, '.') + "\n";
  log += "Traceback (most recent call last):\nValueError: nan loss\n";
  fake_.answer("GET /apis/v1beta1/runs/r1", 200, "application/json",
               testing::read_data("run_v1_failed.json"));
  fake_.answer("GET /k8s/pod/logs", 200, "text/plain; charset=utf-8", log);
  r = pipec({"logs", "r1", "fit", "--host", fake_.url()});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(r.out.size(), log.size());
  EXPECT_TRUE(r.out == log);
  r = pipec({"runs", "wait", "r1", "--host", fake_.url()});
  EXPECT_EQ(r.exit, 4) << r.err;
  EXPECT_TRUE(
      has(r.out, "step 'fit' Failed; the end of its log (pipec logs r1 'fit' for all of it):\n"))
      << r.out.substr(0, 2000);
  EXPECT_TRUE(has(r.out, "  | Traceback (most recent call last):\n  | ValueError: nan loss\n"))
      << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size(), 10000u);
}

// Issue 42 point 5: a run the server does not know is not "still going"; a schedule's
// longest label keeps its space.
TEST_F(ClientCli, WaitOfAnUnknownRunAndTheScheduleTable) {
  Result r = pipec({"runs", "wait", "nope", "--host", fake_.url()});
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(has(r.err, "cannot get run 'nope': HTTP 404 Not Found: Run nope not found."))
      << r.err;
  EXPECT_FALSE(has(r.err, "may still be going")) << r.err;

  fake_.answer(
      "GET /apis/v1beta1/jobs/j1", 200, "application/json",
      R"({"id": "j1", "name": "nightly", "enabled": true, "trigger": {"cron_schedule": {"cron": "0 0 2 * * *"}},)"
      R"( "resource_references": [{"key": {"type": "PIPELINE_VERSION", "id": "v1"}, "relationship": "CREATOR"}]})");
  r = pipec({"schedule", "get", "j1", "--host", fake_.url()});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\npipeline_version_id: v1\n")) << r.out;
  EXPECT_EQ(r.out.rfind("id:" + std::string(18, ' ') + "j1\n", 0), 0u) << r.out;
}

}  // namespace
}  // namespace pipec::client
