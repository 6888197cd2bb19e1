#include "compiler/client/kfp/parameters.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/client/test_support.hpp"

namespace pipec::client::kfp {
namespace {

using testing::read_data;
using Values = std::vector<std::pair<std::string, std::string>>;

Signature signature_of(const std::string& file) {
  Signature signature;
  std::string error;
  EXPECT_TRUE(read_signature(read_data(file), signature, error)) << error;
  return signature;
}

std::vector<Override> cli(std::initializer_list<const char*> arguments) {
  std::vector<Override> out;
  for (const char* argument : arguments) {
    Override o;
    std::string error;
    EXPECT_TRUE(parse_override(argument, o, error)) << error;
    out.push_back(o);
  }
  return out;
}

// Checks and returns the errors joined by newlines ("" when the overrides pass).
std::string errors_of(const Signature& signature, const std::vector<Override>& overrides,
                      Values* values = nullptr) {
  Values out;
  std::vector<std::string> errors;
  bool ok = check_overrides(signature, overrides, out, errors);
  EXPECT_EQ(ok, errors.empty());
  if (values) *values = out;
  std::string text;
  for (const auto& e : errors) text += e + "\n";
  return text;
}

TEST(ClientParameters, ReadsPipecAnnotationFirst) {
  Signature s = signature_of("typed.yaml");
  EXPECT_EQ(s.source, SignatureSource::PipecParameters);
  EXPECT_EQ(s.name, "train");
  ASSERT_EQ(s.params.size(), 9u);
  EXPECT_EQ(s.params[0].name, "data");
  EXPECT_TRUE(s.params[0].required());
  EXPECT_EQ(s.params[0].type.spelling(), "string");
  EXPECT_EQ(s.params[1].type.spelling(), "int");
  EXPECT_EQ(s.params[1].default_value, "64");
  EXPECT_EQ(s.params[1].min, 1);
  EXPECT_EQ(s.params[1].max, 4096);
  EXPECT_EQ(s.params[2].default_value, "0.001");
  EXPECT_EQ(s.params[3].default_value, "true");
  EXPECT_EQ(s.params[4].allowed, (std::vector<std::string>{"adam", "sgd"}));
  EXPECT_EQ(s.params[5].type.spelling(), "list<int>");
  EXPECT_EQ(s.params[5].default_value, "[64,32]");
  EXPECT_EQ(s.params[6].type.spelling(), "map<string>");
  EXPECT_EQ(s.params[6].default_value, "{}");
}

TEST(ClientParameters, FallsBackToTheKfpPipelineSpec) {
  Signature s = signature_of("kfp-sdk.yaml");
  EXPECT_EQ(s.source, SignatureSource::KfpPipelineSpec);
  EXPECT_EQ(s.name, "sdk-pipeline");
  ASSERT_EQ(s.params.size(), 4u);
  EXPECT_EQ(s.params[0].type.spelling(), "int");
  EXPECT_TRUE(s.params[0].required());
  EXPECT_EQ(s.params[1].type.spelling(), "float");
  EXPECT_EQ(s.params[2].allowed, (std::vector<std::string>{"a", "b"}));  // from the arguments
  EXPECT_EQ(s.params[3].type.spelling(), "any");                          // GCSPath: free text
  EXPECT_EQ(errors_of(s, cli({"epochs=ten"})),
            "parameter 'epochs' (int): 'ten' is not an integer (e.g. 42)\n");
  EXPECT_EQ(errors_of(s, cli({"epochs=3", "mode=c"})),
            "parameter 'mode': 'c' is not one of 'a', 'b'\n");
}

TEST(ClientParameters, FallsBackToTheWorkflowArguments) {
  Signature s = signature_of("plain.yaml");
  EXPECT_EQ(s.source, SignatureSource::WorkflowArguments);
  EXPECT_EQ(s.name, "plain");
  ASSERT_EQ(s.params.size(), 3u);
  EXPECT_EQ(s.params[0].type.spelling(), "any");
  EXPECT_TRUE(s.params[2].required());
  Values values;
  EXPECT_EQ(errors_of(s, cli({"needed=[1, 2]", "color=green"}), &values), "");
  EXPECT_EQ(values, (Values{{"color", "green"}, {"needed", "[1, 2]"}}));
  EXPECT_EQ(errors_of(s, cli({"needed=x", "color=gren"})),
            "parameter 'color': 'gren' is not one of 'red', 'green'; did you mean 'green'?\n");
}

TEST(ClientParameters, RefusesWhatIsNeitherAnArgoWorkflowNorAV2Spec) {
  Signature s;
  std::string error;
  EXPECT_FALSE(read_signature("apiVersion: batch/v1\nkind: Job\n", s, error));
  EXPECT_EQ(error,
            "neither an Argo Workflow (apiVersion argoproj.io/v1alpha1, kind Workflow) nor a "
            "KFP v2 pipeline spec (pipelineInfo, root); pipec runs KFP v1 (Argo) and v2 pipelines");
  EXPECT_FALSE(read_signature("a: [", s, error));
  EXPECT_EQ(error.rfind("the workflow is not valid YAML", 0), 0u) << error;
}

// A KFP v2 spec's root.inputDefinitions: typed, with defaults as canonical texts; the
// platform spec after it is ignored. Values for its runs are JSON values of those types.
TEST(ClientParameters, ReadsAV2SpecsInputDefinitionsAndTypesItsValues) {
  Signature s;
  std::string error;
  ASSERT_TRUE(read_signature(R"(pipelineInfo: {name: train, description: d}
root:
  inputDefinitions:
    parameters:
      n: {parameterType: NUMBER_INTEGER, defaultValue: 3, isOptional: true}
      x: {parameterType: NUMBER_DOUBLE, defaultValue: 0.5, isOptional: true, description: rate}
      s: {parameterType: STRING, defaultValue: '007', isOptional: true}
      l: {parameterType: LIST, defaultValue: [1, "a"], isOptional: true}
      m: {parameterType: STRUCT, defaultValue: {k: v}, isOptional: true}
      b: {parameterType: BOOLEAN}
schemaVersion: 2.1.0
---
platforms: {kubernetes: {}}
)",
                             s, error))
      << error;
  EXPECT_EQ(s.source, SignatureSource::KfpV2PipelineSpec);
  EXPECT_EQ(s.name, "train");
  ASSERT_EQ(s.params.size(), 6u);
  EXPECT_EQ(s.find("n")->default_value, "3");
  EXPECT_EQ(s.find("x")->description, "rate");
  EXPECT_EQ(s.find("s")->default_value, "007");
  EXPECT_EQ(s.find("l")->default_value, R"([1,"a"])");
  EXPECT_EQ(s.find("m")->default_value, R"({"k":"v"})");
  EXPECT_TRUE(s.find("b")->required());
  EXPECT_EQ(s.find("b")->type.kind, ParamKind::Bool);
  EXPECT_TRUE(is_v2_pipeline_spec("pipelineInfo: {name: a}\nroot: {}\n"));
  EXPECT_FALSE(is_v2_pipeline_spec("kind: Workflow\npipelineInfo: {}\nroot: {}\n"));

  EXPECT_EQ(typed_json_value(s.find("n")->type, "12"), "12");
  EXPECT_EQ(typed_json_value(s.find("x")->type, "0.25"), "0.25");
  EXPECT_EQ(typed_json_value(s.find("s")->type, "007"), R"("007")");
  EXPECT_EQ(typed_json_value(s.find("b")->type, "true"), "true");
  EXPECT_EQ(typed_json_value(s.find("l")->type, "[1,2]"), "[1,2]");
  EXPECT_EQ(typed_json_value(ParamType{}, "it's \"$(id)\"\n"), R"("it's \"$(id)\"\n")");
}

TEST(ClientParameters, SplitsAtTheFirstEquals) {
  Override o;
  std::string error;
  ASSERT_TRUE(parse_override("query=a=b", o, error));
  EXPECT_EQ(o.name, "query");
  EXPECT_EQ(o.text, "a=b");
  ASSERT_TRUE(parse_override("empty=", o, error));
  EXPECT_EQ(o.text, "");
  EXPECT_FALSE(parse_override("batch_size", o, error));
  EXPECT_EQ(error, "-p 'batch_size': expected NAME=VALUE (e.g. -p batch_size=64)");
  EXPECT_FALSE(parse_override("=5", o, error));
}

struct Case {
  const char* type;
  const char* text;
  const char* canonical;  // nullptr: rejected with `problem`
  const char* problem;
};

TEST(ClientParameters, ParsesEachTypeToItsCanonicalText) {
  const Case cases[] = {
      {"int", "42", "42", nullptr},
      {"int", "+7", "7", nullptr},
      {"int", "-007", "-7", nullptr},
      {"int", "1.0", nullptr, "'1.0' is not an integer (e.g. 42)"},
      {"int", " 1", nullptr, "' 1' is not an integer (e.g. 42)"},
      {"int", "99999999999999999999", nullptr,
       "'99999999999999999999' is not an integer (e.g. 42)"},
      {"float", "0.5", "0.5", nullptr},
      {"float", "1", "1.0", nullptr},
      {"float", "1e-3", "0.001", nullptr},
      {"float", ".25", "0.25", nullptr},
      {"float", "nan", nullptr, "'nan' is not a number (e.g. 0.5 or 1e-3)"},
      {"float", "1e999", nullptr, "'1e999' is not a number (e.g. 0.5 or 1e-3)"},
      {"bool", "true", "true", nullptr},
      {"bool", "True", nullptr, "'True' is not a bool (true or false)"},
      {"bool", "1", nullptr, "'1' is not a bool (true or false)"},
      {"list<int>", "[1, 2]", "[1,2]", nullptr},
      {"list<int>", "[1, 2.5]", nullptr, "element [1] 2.5 is not an integer"},
      {"list<int>", "[1,", nullptr, "'[1,' is not JSON (e.g. [1, 2])"},
      {"list<int>", "{}", nullptr, "{} is not a list"},
      {"list<float>", "[1, 2.5]", "[1.0,2.5]", nullptr},
      {"list<string>", "[\"a\", 1]", nullptr, "element [1] 1 is not a string"},
      {"list<list<bool>>", "[[true], []]", "[[true],[]]", nullptr},
      {"map<int>", "{\"a\": 1, \"b\": 2}", "{\"a\":1,\"b\":2}", nullptr},
      {"map<int>", "{\"a\": \"x\"}", nullptr, "element [\"a\"] \"x\" is not an integer"},
      {"string", "it's \"$(rm -rf /)\"\n{{workflow.name}}", "it's \"$(rm -rf /)\"\n{{workflow.name}}",
       nullptr},
      {"string", "", "", nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.type) + " " + c.text);
    auto type = parse_param_type(c.type);
    ASSERT_TRUE(type);
    std::string canonical, problem;
    bool ok = canonical_value(*type, c.text, false, canonical, problem);
    if (c.canonical) {
      EXPECT_TRUE(ok) << problem;
      EXPECT_EQ(canonical, c.canonical);
    } else {
      EXPECT_FALSE(ok);
      EXPECT_EQ(problem, c.problem);
    }
  }
}

TEST(ClientParameters, GoodOverridesComeOutInDeclarationOrder) {
  Signature s = signature_of("typed.yaml");
  Values values;
  EXPECT_EQ(errors_of(s,
                      cli({"workers=8", "data=s3://bucket/x", "lr=3e-4", "layers=[128, 64]",
                           "message=say \"hi\"; $(whoami)\n{{inputs.parameters.x}}",
                           "optimizer=sgd", "shuffle=false", "tags={\"team\": \"ml\"}"}),
                      &values),
            "");
  EXPECT_EQ(values, (Values{{"data", "s3://bucket/x"},
                            {"lr", "0.0003"},
                            {"shuffle", "false"},
                            {"optimizer", "sgd"},
                            {"layers", "[128,64]"},
                            {"tags", "{\"team\":\"ml\"}"},
                            {"workers", "8"},
                            {"message", "say \"hi\"; $(whoami)\n{{inputs.parameters.x}}"}}));
}

TEST(ClientParameters, EveryProblemNamesItsParameter) {
  Signature s = signature_of("typed.yaml");
  EXPECT_EQ(errors_of(s, cli({"batchsize=32", "workers=100", "lr=fast", "optimizer=adma",
                              "shuffle=yes", "layers=[1,\"2\"]", "zzz=1", "workers=2",
                              "batch_size=0"})),
            "unknown parameter 'batchsize'; did you mean 'batch_size'?\n"
            "parameter 'workers': 100 is above the maximum 64\n"
            "parameter 'lr' (float): 'fast' is not a number (e.g. 0.5 or 1e-3)\n"
            "parameter 'optimizer': 'adma' is not one of 'adam', 'sgd'; did you mean 'adam'?\n"
            "parameter 'shuffle' (bool): 'yes' is not a bool (true or false)\n"
            "parameter 'layers' (list<int>): element [1] \"2\" is not an integer\n"
            "unknown parameter 'zzz'; the parameters are: data, batch_size, lr, shuffle, "
            "optimizer, layers, tags, workers, message\n"
            "parameter 'workers' is given twice with -p\n"
            "parameter 'batch_size': 0 is below the minimum 1\n"
            "parameter 'data' (string) is required and has no default: give it with -p "
            "data=VALUE\n");
}

TEST(ClientParameters, UnknownNameInAPipelineWithoutParameters) {
  Signature s;
  EXPECT_EQ(errors_of(s, cli({"x=1"})), "unknown parameter 'x'; the pipeline has no parameters\n");
}

TEST(ClientParameters, ParamsFileThenCommandLine) {
  Signature s = signature_of("typed.yaml");
  std::vector<Override> overrides;
  std::vector<std::string> errors;
  ASSERT_TRUE(read_params_file("data: gs://d\nworkers: 4\nlayers: [8, 4]\ntags: {a: b}\n"
                               "message: \"007\"\n",
                               "p.yaml", overrides, errors));
  for (const auto& o : cli({"workers=6"})) overrides.push_back(o);
  Values values;
  EXPECT_EQ(errors_of(s, overrides, &values), "");
  EXPECT_EQ(values, (Values{{"data", "gs://d"},
                            {"layers", "[8,4]"},
                            {"tags", "{\"a\":\"b\"}"},
                            {"workers", "6"},
                            {"message", "007"}}));
}

TEST(ClientParameters, ParamsFileInJsonAndItsErrors) {
  Signature s = signature_of("typed.yaml");
  std::vector<Override> overrides;
  std::vector<std::string> errors;
  ASSERT_TRUE(read_params_file(R"({"data": "x", "lr": 0.01, "message": [1], "workers": 0})",
                               "p.json", overrides, errors));
  EXPECT_EQ(errors_of(s, overrides),
            "parameter 'message' (string) (in p.json): [1] is a list or map, not string\n"
            "parameter 'workers' (in p.json): 0 is below the minimum 1\n");
  overrides.clear();
  EXPECT_FALSE(read_params_file("- a\n- b\n", "list.yaml", overrides, errors));
  EXPECT_FALSE(read_params_file("data:\n", "null.yaml", overrides, errors));
  EXPECT_FALSE(read_params_file("a: [", "bad.yaml", overrides, errors));
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "list.yaml: expected a mapping of parameter names to values");
  EXPECT_EQ(errors[1], "null.yaml: parameter 'data' has no value");
  EXPECT_EQ(errors[2].rfind("bad.yaml: not valid YAML or JSON", 0), 0u) << errors[2];
}

TEST(ClientParameters, DuplicateKeysAreRefusedAsTheLanguageRefusesThem) {
  // In a params file (YAML or JSON), at the top and inside a value, and in a -p JSON value:
  // refused with the place, not the last one winning.
  std::vector<Override> overrides;
  std::vector<std::string> errors;
  EXPECT_FALSE(read_params_file("workers: 2\ndata: x\nworkers: 3\n", "p.yaml", overrides, errors));
  EXPECT_FALSE(read_params_file(R"({"tags": {"a": "b", "a": "c"}})", "p.json", overrides, errors));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "p.yaml:3:1: parameter 'workers' is given twice; keep one");
  EXPECT_EQ(errors[1], "p.json: parameter 'tags': duplicate key 'a' at line 1, column 21; keep one");
  Signature s = signature_of("typed.yaml");
  EXPECT_EQ(errors_of(s, cli({"data=x", R"(tags={"a": "b", "a": "c"})"})),
            "parameter 'tags' (map<string>): '{\"a\": \"b\", \"a\": \"c\"}' has the key 'a' twice; keep one\n");
  EXPECT_EQ(errors_of(s, cli({"data=x", R"(tags={"a": "b", "c": "a"})"})), "");
}

}  // namespace
}  // namespace pipec::client::kfp

namespace pipec::client::kfp {
namespace {

// Issue 25: what a params file or -p may hold that used to abort, hang or grow without end.
TEST(ClientParameters, ParamsFileWithBillionLaughsIsRefused) {
  std::string laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c)
    laughs += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n", c,
                          static_cast<char>(c - 1));
  std::vector<Override> overrides;
  std::vector<std::string> errors;
  EXPECT_FALSE(read_params_file(laughs, "laughs.yaml", overrides, errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("laughs.yaml: not valid YAML or JSON: line 6, column 8: ", 0), 0u) << errors[0];
  EXPECT_NE(errors[0].find("aliases expand to more than 100000 nodes"), std::string::npos) << errors[0];
}

TEST(ClientParameters, ParamsFileThatIsADirectoryOrADeviceIsRefused) {
  std::vector<Override> overrides;
  std::vector<std::string> errors;
  EXPECT_FALSE(load_params_file("/", overrides, errors));
  EXPECT_FALSE(load_params_file("/dev/zero", overrides, errors));
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "cannot read '/': it is a directory");
  EXPECT_EQ(errors[1], "cannot read '/dev/zero': it is not a regular file");
}

TEST(ClientParameters, ValuesThatAreNotUtf8AreRefusedWithTheirPlace) {
  Override o;
  std::string error;
  EXPECT_FALSE(parse_override("message=ab\xFF", o, error));
  EXPECT_EQ(error, "-p 'message=ab\\xFF': byte 0xFF at byte 3 of the value is not UTF-8");
  EXPECT_FALSE(parse_override("na\xC3=x", o, error));
  EXPECT_EQ(error, "-p 'na\\xC3=x': byte 0xC3 at byte 3 of the name is not UTF-8");
  EXPECT_TRUE(parse_override("message=caf\xC3\xA9", o, error)) << error;

  std::vector<Override> overrides;
  std::vector<std::string> errors;
  EXPECT_FALSE(read_params_file("data: x\nmessage: [ok, \"b\xFF\"]\n", "p.yaml", overrides, errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "p.yaml:2:15: parameter 'message' holds text that is not UTF-8");
}

TEST(ClientParameters, AListValueNestedDeepIsRefusedNotRecursedInto) {
  std::string canonical, problem;
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_FALSE(canonical_value(ParamType{ParamKind::List, {ParamType{}}}, deep, false, canonical, problem));
  EXPECT_NE(problem.find("is not accepted: line 1, column 257: nesting deeper than 256 levels"),
            std::string::npos)
      << problem;
}

TEST(ClientParameters, AnnotationMembersOfAnotherTypeAreErrorsNotExceptions) {
  Signature s;
  std::string error;
  EXPECT_FALSE(read_signature(read_data("annotation-types.yaml"), s, error));
  EXPECT_EQ(error, "annotation pipec.dev/parameters: parameter 'workers': 'required' is \"no\", not a bool");
  EXPECT_FALSE(read_signature(read_data("kfp-sdk-name-number.yaml"), s, error));
  EXPECT_EQ(error, "annotation pipelines.kubeflow.org/pipeline_spec: 'name' is 42, not a string");
}

TEST(ClientParameters, AV2SpecWithATrailingCommaIsAnErrorNotAHang) {
  // yaml-cpp 0.7's LoadAll() never returns on it (jbeder/yaml-cpp#1040).
  Signature s;
  std::string error;
  EXPECT_FALSE(read_signature(read_data("v2-trailing-comma.json"), s, error));
  EXPECT_EQ(error.rfind("the workflow is not valid YAML: line ", 0), 0u) << error;
  EXPECT_FALSE(is_v2_pipeline_spec(read_data("v2-trailing-comma.json")));
}

}  // namespace
}  // namespace pipec::client::kfp
