// The YAML writer: every output is parsed back with yaml-cpp and compared with the tree
// it was written from, scalar by scalar, including the quoting rules case by case.
#include "compiler/emit/yaml/yaml_writer.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace pipec::emit::yaml {
namespace {

using Json = nlohmann::ordered_json;

// yaml-cpp's view of a scalar: its text, and whether it was written plain (tag "?"),
// so a resolver would look at it for numbers and bools.
::testing::AssertionResult same_tree(const Json& want, const YAML::Node& got, const std::string& path) {
  if (want.is_object()) {
    if (!got.IsMap()) return ::testing::AssertionFailure() << path << ": not a map";
    if (got.size() != want.size()) return ::testing::AssertionFailure() << path << ": size differs";
    auto it = got.begin();
    for (const auto& [k, v] : want.items()) {
      if (it->first.as<std::string>() != k)
        return ::testing::AssertionFailure() << path << ": key " << it->first.as<std::string>()
                                             << " != " << k;
      if (auto r = same_tree(v, it->second, path + "." + k); !r) return r;
      ++it;
    }
    return ::testing::AssertionSuccess();
  }
  if (want.is_array()) {
    if (!got.IsSequence()) return ::testing::AssertionFailure() << path << ": not a sequence";
    if (got.size() != want.size()) return ::testing::AssertionFailure() << path << ": size differs";
    for (std::size_t i = 0; i < want.size(); ++i)
      if (auto r = same_tree(want[i], got[i], path + "[" + std::to_string(i) + "]"); !r) return r;
    return ::testing::AssertionSuccess();
  }
  if (!got.IsScalar()) return ::testing::AssertionFailure() << path << ": not a scalar";
  std::string text = got.Scalar();
  if (want.is_string()) {
    if (text != want.get<std::string>())
      return ::testing::AssertionFailure() << path << ": got [" << text << "] want [" << want.get<std::string>() << "]";
    if (got.Tag() == "?") {
      // Plain: must not resolve to anything but a string.
      bool b;
      double d;
      if (YAML::convert<bool>::decode(got, b) || YAML::convert<double>::decode(got, d) || got.IsNull())
        return ::testing::AssertionFailure() << path << ": plain [" << text << "] reads as non-string";
    }
    return ::testing::AssertionSuccess();
  }
  if (got.Tag() != "?") return ::testing::AssertionFailure() << path << ": a number or bool was quoted";
  if (want.is_boolean()) return text == (want.get<bool>() ? "true" : "false") ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << path;
  if (want.is_number_integer()) return got.as<long long>() == want.get<long long>() ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << path;
  if (want.is_number_float()) return got.as<double>() == want.get<double>() ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << path;
  return ::testing::AssertionFailure() << path << ": unexpected type";
}

std::string to_yaml(const Json& doc) {
  std::string out;
  append_yaml(out, doc);
  return out;
}

::testing::AssertionResult round_trips(const Json& doc) {
  std::string text = to_yaml(doc);
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return ::testing::AssertionFailure() << "yaml-cpp: " << e.what() << "\n" << text;
  }
  auto r = same_tree(doc, node, "$");
  if (!r) r << "\n--- written:\n" << text;
  return r;
}

std::string scalar(const std::string& s) {
  std::string out;
  append_scalar(out, s, 0);
  return out;
}

TEST(YamlWriter, PlainWhenNothingElseCanBeRead) {
  EXPECT_EQ(scalar("momentum"), "momentum");
  EXPECT_EQ(scalar("Gi10"), "Gi10");
  EXPECT_EQ(scalar("10Gi"), "'10Gi'");  // starts like a number: quoted, to be safe
  EXPECT_EQ(scalar("images/sec"), "images/sec");
  EXPECT_EQ(scalar("GIT_SYNC_BRANCH={{inputs.parameters.b}}"), "GIT_SYNC_BRANCH={{inputs.parameters.b}}");
  EXPECT_EQ(scalar("https://github.com/x/y.git"), "https://github.com/x/y.git");
  EXPECT_EQ(scalar("user-susan:/training"), "user-susan:/training");
  EXPECT_EQ(scalar("--manifest"), "--manifest");
  EXPECT_EQ(scalar("-c"), "-c");
}

TEST(YamlWriter, NumbersBoolsAndNullsAreQuoted) {
  for (const char* s : {"64", "-3", "+1", "0.5", ".5", "1e3", "0x1F", "0o17", "1_000", "2001-12-14",
                        "12:30:00", "true", "False", "yes", "No", "on", "OFF", "y", "n", "null",
                        "~", ".inf", "-.inf", ".nan", "", "<<", "="}) {
    EXPECT_EQ(scalar(s).front(), '\'') << s;
    EXPECT_TRUE(round_trips(Json{{"v", s}})) << s;
  }
}

TEST(YamlWriter, IndicatorsAndSeparatorsAreQuoted) {
  for (const char* s : {"{{inputs.parameters.x}}", "- a", "-", "---", "--- x", "-\tx", "...", "? x", ": x", "[a]", "]", "{a: b}",
                        "# no comment", "&anchor", "*alias", "!tag", "|", ">", "'q'", "\"dq\"",
                        "%YAML", "@at", "`tick`", " lead", "trail ", "a: b", "a #b", "end:", "a\tb",
                        "it's", "x,y", ".hidden", "a:b#c"}) {
    EXPECT_TRUE(round_trips(Json{{"v", s}, {"list", Json::array({s, s})}})) << s;
  }
  EXPECT_EQ(scalar("it's a: b"), "'it''s a: b'");
}

TEST(YamlWriter, MultiLineTextIsALiteralBlock) {
  EXPECT_EQ(scalar("a\nb"), "|-\n  a\n  b");
  EXPECT_EQ(scalar("a\nb\n"), "|\n  a\n  b");
  EXPECT_EQ(scalar("a\n\n"), "|+\n  a\n");
  for (const char* s : {"mpirun python x.py\n  --batch_size \"${PIPEC_batch_size}\"", "a\n\nb", "a\n",
                        "a\n\n\n", "x\n\t tab", "{{x}}\n- y\n# z", "line: one\nkey: two"}) {
    EXPECT_TRUE(round_trips(Json{{"v", s}, {"l", Json::array({s, Json{{"k", s}}})}})) << s;
  }
}

TEST(YamlWriter, AwkwardMultiLineTextIsDoubleQuoted) {
  for (const char* s : {" leading\nspace", "trailing \nspace", "\nstarts with newline", "cr\r\nlf",
                        "only\n ", "\n", "\n\n"}) {
    EXPECT_EQ(scalar(s).front(), '"') << s;
    EXPECT_TRUE(round_trips(Json{{"v", s}})) << s;
  }
}

TEST(YamlWriter, ControlCharactersAndUnicode) {
  std::string nul("a\0b", 3);
  for (const std::string& s : {nul, std::string("bell\a"), std::string("del\x7f"), std::string("caf\xc3\xa9"),
                               std::string("\xe2\x80\xa8sep"), std::string("\xef\xbb\xbf" "bom"),
                               std::string("emoji \xf0\x9f\x98\x80"), std::string("\xc2\x85nel")}) {
    EXPECT_TRUE(round_trips(Json{{"v", s}})) << s;
  }
  EXPECT_EQ(scalar("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(scalar(std::string("a\0b", 3)), "\"a\\0b\"");
}

// NEL, LS and PS are line breaks to YAML 1.1 readers (go-yaml v2, which Argo and
// Kubernetes use): never written raw, in any style.
TEST(YamlWriter, UnicodeLineBreaksAreEscaped) {
  EXPECT_EQ(scalar("a\xc2\x85" "b"), "\"a\\u0085b\"");
  EXPECT_EQ(scalar("a\xe2\x80\xa8" "b"), "\"a\\u2028b\"");
  EXPECT_EQ(scalar("a\xe2\x80\xa9" "b"), "\"a\\u2029b\"");
  EXPECT_EQ(scalar("line one\nline\xe2\x80\xa8two\n"), "\"line one\\nline\\u2028two\\n\"");
  for (const char* s : {"a\xc2\x85" "b", "x\xe2\x80\xa8", "\xe2\x80\xa9", "caf\xc3\xa9 \xe2\x80\xa8 \xc2\x85"})
    EXPECT_TRUE(round_trips(Json{{"v", s}})) << s;
}

TEST(YamlWriter, HostileParameterTextStaysOneString) {
  // inject-check's value: quotes, $(...), backticks, a newline, {{...}} and a fake key.
  std::string hostile = "PWN'\"`$(touch /tmp/pwned)`;\n- injected: {{x}}\n  key: v";
  EXPECT_TRUE(round_trips(Json{{"parameters", Json::array({Json{{"name", "x"}, {"value", hostile}}})}}));
}

TEST(YamlWriter, CollectionsNumbersAndNesting) {
  Json doc = {{"a", Json::array()},
              {"b", Json::object()},
              {"n", 3},
              {"f", 0.25},
              {"t", true},
              {"nested", Json::array({Json::array({"x", Json::array({"y"})}), Json::object(),
                                      Json{{"k", Json::array({1, 2})}, {"m", Json{{"z", "w"}}}}})},
              {"deep", Json{{"a", Json{{"b", Json{{"c", Json::array({"d"})}}}}}}}};
  EXPECT_TRUE(round_trips(doc));
  EXPECT_EQ(to_yaml(Json{{"k", Json::array({"a", Json{{"name", "x"}, {"value", "y"}}})}}),
            "k:\n- a\n- name: x\n  value: 'y'\n");
}

}  // namespace
}  // namespace pipec::emit::yaml
