// Every compiled command run for real: the program receives exactly the value, in every
// quoting context, and nothing in a value runs (docs/language.md, "Quoting in shell-form
// commands"). Container ops go through the Argo writer; Argo's substitution is done as
// Argo does it (one pass over `{{...}}` tags: a value is written as it is and never read
// again; `{{=...}}` is an expression). Training ops go through the launcher call and the
// launcher's own job rendering. Each command then runs with /bin/sh and a PATH whose
// `probe` (and `mpirun`) record the argv words they are given.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/emit/argo/workflow_writer.hpp"
#include "tests/unit/training/job_support.hpp"

extern char** environ;

namespace pipec {
namespace {

namespace fs = std::filesystem;
using Words = std::vector<std::string>;

// A value with everything that must stay data: runs of spaces, a glob, both quotes, a
// command substitution, backticks, a shell variable, Argo tags, a newline, a backslash.
const std::string kHostile =
    "a  b * 'q' \"d\" $(touch pwned1) `touch pwned2` ${HOME} {{x}} "
    "{{inputs.parameters.v}}\nline2 \\ end";

class Sandbox {
 public:
  Sandbox() {
    char tmpl[] = "/tmp/pipec-cmd-XXXXXX";
    dir_ = mkdtemp(tmpl);
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "work");
    // probe: one record per call, the program name and its words, NUL-separated.
    std::ofstream probe(dir_ / "bin" / "probe");
    probe << "#!/bin/sh\n"
             "{ printf '%s\\0' \"$(basename \"$0\")\"; for a in \"$@\"; do printf '%s\\0' \"$a\"; done;"
             " printf '\\001'; } >> \"$PROBE_OUT\"\n";
    probe.close();
    fs::permissions(dir_ / "bin" / "probe", fs::perms::owner_all);
    fs::create_symlink(dir_ / "bin" / "probe", dir_ / "bin" / "mpirun");
  }
  ~Sandbox() { fs::remove_all(dir_); }

  /// Runs argv with `env` added to PATH and PROBE_OUT; returns the probe's records.
  std::vector<Words> run(const Words& argv, const std::map<std::string, std::string>& env) {
    fs::path out = dir_ / "records";
    fs::remove(out);
    std::vector<std::string> env_text = {"PATH=" + (dir_ / "bin").string() + ":/usr/bin:/bin",
                                         "PROBE_OUT=" + out.string(), "HOME=/nonexistent-home"};
    for (const auto& [k, v] : env) env_text.push_back(k + "=" + v);
    std::vector<char*> args, envp;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : env_text) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    fs::path cwd = fs::current_path();
    fs::current_path(dir_ / "work");
    pid_t pid = 0;
    std::string program = argv[0] == "sh" ? "/bin/sh" : (dir_ / "bin" / argv[0]).string();
    int rc = posix_spawn(&pid, program.c_str(), nullptr, nullptr, args.data(), envp.data());
    fs::current_path(cwd);
    EXPECT_EQ(rc, 0) << "cannot run " << program;
    int status = 0;
    if (rc == 0) waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit status " << status;
    EXPECT_FALSE(fs::exists(dir_ / "work" / "pwned1")) << "a value ran as a command";
    EXPECT_FALSE(fs::exists(dir_ / "work" / "pwned2")) << "a value ran as a command";
    std::vector<Words> records;
    std::ifstream in(out, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    std::size_t start = 0;
    while (start < all.size()) {
      std::size_t end = all.find('\1', start);
      if (end == std::string::npos) break;
      Words w;
      std::string rec = all.substr(start, end - start);
      std::size_t p = 0;
      while (p < rec.size()) {
        std::size_t z = rec.find('\0', p);
        w.push_back(rec.substr(p, z - p));
        p = z + 1;
      }
      records.push_back(w);
      start = end + 1;
    }
    return records;
  }

 private:
  fs::path dir_;
};

// Argo's substitution of one template string: `{{name}}` from `values`, `{{=expr}}` for
// the brace expressions pipec writes; a value is written as it is, never scanned again.
std::string argo_substitute(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  std::size_t i = 0;
  while (true) {
    std::size_t open = text.find("{{", i);
    if (open == std::string::npos) break;
    std::size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;
    out += text.substr(i, open - i);
    std::string tag = text.substr(open + 2, close - open - 2);
    if (!tag.empty() && tag[0] == '=') {
      // '\u007b...' only: an expr string of escaped braces.
      std::string e = tag.substr(1);
      EXPECT_TRUE(e.size() >= 2 && e.front() == '\'' && e.back() == '\'') << "expression " << e;
      std::string body = e.substr(1, e.size() - 2);
      for (std::size_t k = 0; k + 6 <= body.size(); k += 6) {
        EXPECT_EQ(body.substr(k, 6), "\\u007b") << "expression " << e;
        out += '{';
      }
    } else {
      auto it = values.find(tag);
      EXPECT_NE(it, values.end()) << "Argo could not resolve {{" << tag << "}}";
      if (it != values.end()) out += it->second;
    }
    i = close + 2;
  }
  return out + text.substr(i);
}

YAML::Node compile_workflow(const std::string& text) {
  SourceManager sources;
  FileId file = sources.add("input.pipe", text);
  Diagnostics diags;
  std::string yaml;
  auto program = sema::check_program(sources, file, diags, sema::Host{});
  std::optional<ir::Pipeline> pipeline;
  if (program) pipeline = lower::lower(std::move(*program), diags);
  bool ok = pipeline && emit::argo::write_workflow(*pipeline, emit::argo::WriteOptions{}, yaml, diags);
  std::ostringstream shown;
  render(diags, sources, shown, RenderOptions{});
  EXPECT_TRUE(ok && !diags.has_errors()) << shown.str();
  return ok ? YAML::Load(yaml) : YAML::Node();
}

YAML::Node find_template(const YAML::Node& wf, const std::string& name) {
  for (const auto& t : wf["spec"]["templates"])
    if (t["name"].as<std::string>() == name) return t;
  ADD_FAILURE() << "no template " << name;
  return {};
}

/// Runs a container op's template as the pod would after Argo substituted `inputs`.
std::vector<Words> run_template(Sandbox& box, const YAML::Node& t,
                                const std::map<std::string, std::string>& inputs) {
  std::map<std::string, std::string> values;
  for (const auto& [k, v] : inputs) values["inputs.parameters." + k] = v;
  Words argv;
  for (const char* key : {"command", "args"})
    if (t["container"][key])
      for (const auto& w : t["container"][key]) argv.push_back(argo_substitute(w.as<std::string>(), values));
  std::map<std::string, std::string> env;
  if (t["container"]["env"])
    for (const auto& e : t["container"]["env"])
      env[e["name"].as<std::string>()] = argo_substitute(e["value"].as<std::string>(), values);
  return box.run(argv, env);
}

const char* kContainerOps = R"PIPE(
op bare(v: string) {
  image "busybox"
  command "probe ${v}"
}
op in_word(v: string) {
  image "busybox"
  command "probe --x=${v}.txt pre${v}"
}
op double_quoted(v: string) {
  image "busybox"
  command "probe \"Hello, ${v}!\""
}
op single_quoted(v: string) {
  image "busybox"
  command "probe 'pre ${v} post' 'it''s ${v}'"
}
op substitution(v: string) {
  image "busybox"
  command "probe \"$(printf %s ${v})\" $(printf %s ${v} | wc -l)"
}
op heredoc(v: string) {
  image "busybox"
  command """
    cat > doc.txt <<EOF
    [${v}]
    EOF
    probe "$(cat doc.txt)"
  """
}
op lines(v: string, w: string) {
  image "busybox"
  command """
    probe first \
      --flag ${v} \
      --other "${w}"
    probe second
  """
}
op exec_words(v: string) {
  image "busybox"
  command ["probe", "gs://${v}/out", "${v}", "--v=${v}"]
  args ["tail-${v}"]
}
op env_value(v: string) {
  image "busybox"
  command "probe \"$E\""
  env {E: "pre-${v}"}
}
op json_values(xs: list<string>, m: map<string>) {
  image "busybox"
  command ["probe", "${xs}", "--m=${m}"]
}
op json_shell(xs: list<string>) {
  image "busybox"
  command "probe ${xs} \"in ${xs}\""
}
op braces(v: string) {
  image "busybox"
  command ["probe", "{{workflow.name}}", "{${v}}", "a}}b", "{{{"]
}
op shell_braces(v: string) {
  image "busybox"
  command "probe '{{x}}' \"{{${v}}}\""
}
)PIPE";

TEST(Commands, ContainerOpsReceiveExactlyTheValueInEveryQuotingContext) {
  std::string text = kContainerOps;
  text += R"PIPE(
pipeline p {
  param v: string = "x"
  param xs: list<string> = ["a"]
  param m: map<string> = {k: "v"}
  step s1 = bare(v: v)
  step s2 = in_word(v: v)
  step s3 = double_quoted(v: v)
  step s4 = single_quoted(v: v)
  step s5 = substitution(v: v)
  step s6 = heredoc(v: v)
  step s7 = lines(v: v, w: v)
  step s8 = exec_words(v: v)
  step s9 = env_value(v: v)
  step s10 = json_values(xs: xs, m: m)
  step s11 = json_shell(xs: xs)
  step s12 = braces(v: v)
  step s13 = shell_braces(v: v)
}
)PIPE";
  // The same source with CRLF line ends means the same: compile both.
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  for (const std::string& source : {text, crlf}) {
    YAML::Node wf = compile_workflow(source);
    ASSERT_TRUE(wf) << "does not compile";
    Sandbox box;
    const std::string& v = kHostile;
    std::map<std::string, std::string> in{{"v", v}, {"w", v}};
    EXPECT_EQ(run_template(box, find_template(wf, "bare"), in), (std::vector<Words>{{"probe", v}}));
    EXPECT_EQ(run_template(box, find_template(wf, "in-word"), in),
              (std::vector<Words>{{"probe", "--x=" + v + ".txt", "pre" + v}}));
    EXPECT_EQ(run_template(box, find_template(wf, "double-quoted"), in),
              (std::vector<Words>{{"probe", "Hello, " + v + "!"}}));
    EXPECT_EQ(run_template(box, find_template(wf, "single-quoted"), in),
              (std::vector<Words>{{"probe", "pre " + v + " post", "its " + v}}));
    EXPECT_EQ(run_template(box, find_template(wf, "substitution"), in),
              (std::vector<Words>{{"probe", v, "1"}}));
    EXPECT_EQ(run_template(box, find_template(wf, "heredoc"), in),
              (std::vector<Words>{{"probe", "[" + v + "]"}}));
    EXPECT_EQ(run_template(box, find_template(wf, "lines"), in),
              (std::vector<Words>{{"probe", "first", "--flag", v, "--other", v}, {"probe", "second"}}));
    EXPECT_EQ(run_template(box, find_template(wf, "exec-words"), in),
              (std::vector<Words>{{"probe", "gs://" + v + "/out", v, "--v=" + v, "tail-" + v}}));
    auto exec = find_template(wf, "exec-words")["container"]["command"];
    EXPECT_EQ(exec[0].as<std::string>(), "probe") << "exec form needs no shell";
    EXPECT_EQ(run_template(box, find_template(wf, "env-value"), in),
              (std::vector<Words>{{"probe", "pre-" + v}}));
    std::string xs = R"J(["a b","$(touch pwned1)","{{x}}"])J", m = R"J({"k":"v w"})J";
    EXPECT_EQ(run_template(box, find_template(wf, "json-values"), {{"xs", xs}, {"m", m}}),
              (std::vector<Words>{{"probe", xs, "--m=" + m}}));
    EXPECT_EQ(run_template(box, find_template(wf, "json-shell"), {{"xs", xs}}),
              (std::vector<Words>{{"probe", xs, "in " + xs}}));
    EXPECT_EQ(run_template(box, find_template(wf, "braces"), in),
              (std::vector<Words>{{"probe", "{{workflow.name}}", "{" + v + "}", "a}}b", "{{{"}}));
    EXPECT_EQ(run_template(box, find_template(wf, "shell-braces"), in),
              (std::vector<Words>{{"probe", "{{x}}", "{{" + v + "}}"}}));
  }
}

// The workflow's default value of a list parameter is its JSON text, so the container
// gets the same words as for an override.
TEST(Commands, ListDefaultsReachTheContainerAsJson) {
  YAML::Node wf = compile_workflow(std::string(kContainerOps) + R"PIPE(
pipeline p {
  param xs: list<string> = ["a b", "c"]
  step s = json_shell(xs: xs)
})PIPE");
  ASSERT_TRUE(wf);
  std::string value;
  for (const auto& p : wf["spec"]["arguments"]["parameters"])
    if (p["name"].as<std::string>() == "xs") value = p["value"].as<std::string>();
  EXPECT_EQ(value, R"J(["a b","c"])J");
}

/// Runs every container of a rendered job whose command is `sh -c SCRIPT`.
std::vector<Words> run_job(Sandbox& box, const nlohmann::json& job, const std::string& role_key) {
  std::vector<Words> all;
  for (const auto& [role, spec] : job["spec"][role_key].items()) {
    for (const auto& c : spec["template"]["spec"]["containers"]) {
      if (!c.contains("command") || c["command"][0] != "sh") continue;
      std::map<std::string, std::string> env;
      for (const auto& e : c.value("env", nlohmann::json::array()))
        if (e.contains("value")) env[e["name"].get<std::string>()] = e["value"].get<std::string>();
      Words argv;
      for (const auto& w : c["command"]) argv.push_back(w.get<std::string>());
      auto records = box.run(argv, env);
      for (auto& r : records) {
        r.insert(r.begin(), role);
        all.push_back(r);
      }
    }
  }
  return all;
}

runtime::RenderResult render_values(const testing::TrainOutcome& out,
                                    const std::map<std::string, std::string>& params) {
  std::map<std::string, std::string> texts;
  for (const auto& [input, value] : out.call.inputs) {
    const ir::Ref* r = ir::whole_ref(value);
    EXPECT_TRUE(r) << "input " << input;
    if (!r) continue;
    auto it = params.find(r->name);
    if (it != params.end()) {
      texts[input] = it->second;
    } else {
      for (const auto& p : out.pipeline->params)
        if (p.name == r->name && p.default_value) texts[input] = ir::literal_text(*p.default_value);
    }
  }
  return testing::render(out.call, texts);
}

TEST(Commands, TrainingOpCommandsReceiveExactlyTheValue) {
  const char* script = R"PIPE("""
      probe bare ${v}
      probe word --x=${v}.txt
      probe dq "Hello, ${v}!"
      probe sq 'pre ${v} post'
      probe subst "$(printf %s ${v})"
      probe cont \
        --flag ${v}
    """)PIPE";
  struct Op {
    const char* call;
    const char* specs;
  };
  for (Op op : {Op{"mpi_job(image: \"i\", workers: 1", "mpiReplicaSpecs"},
                Op{"tf_job(image: \"i\", workers: 1, ps: 1, chief: 1", "tfReplicaSpecs"},
                Op{"pytorch_job(image: \"i\", workers: 1", "pytorchReplicaSpecs"}}) {
    std::string text = std::string("use arena\npipeline p {\n  param v: string = \"x\"\n  step t = ") +
                       op.call + ", command: " + script + ")\n}\n";
    auto out = testing::build_train(text);
    ASSERT_TRUE(out.built) << out.diagnostics;
    EXPECT_EQ(testing::parts_of(out.call).manifest_text.find("{{"), std::string::npos);
    auto r = render_values(out, {{"v", kHostile}});
    ASSERT_TRUE(r.ok) << r.error;
    Sandbox box;
    auto records = run_job(box, nlohmann::json::parse(r.job), op.specs);
    ASSERT_FALSE(records.empty()) << op.call;
    const std::string& v = kHostile;
    std::vector<Words> want = {{"probe", "bare", v},          {"probe", "word", "--x=" + v + ".txt"},
                               {"probe", "dq", "Hello, " + v + "!"}, {"probe", "sq", "pre " + v + " post"},
                               {"probe", "subst", v},         {"probe", "cont", "--flag", v}};
    // Every replica that runs the command runs all of it.
    ASSERT_EQ(records.size() % want.size(), 0u) << op.call;
    for (std::size_t i = 0; i < records.size(); ++i) {
      Words got(records[i].begin() + 1, records[i].end());
      EXPECT_EQ(got, want[i % want.size()]) << op.call << " replica " << records[i][0];
    }
  }
}

// The seed pipeline: mpirun gets every flag of the source, with the defaults and with a
// hostile optimizer.
TEST(Commands, SeedTrainingCommandHandsMpirunEveryFlag) {
  std::string path = std::string(PIPEC_SOURCE_DIR) + "/dsl-examples/mpi_run.pipe";
  auto out = testing::build_train(testing::read_text(path), {}, path);
  ASSERT_TRUE(out.built) << out.diagnostics;
  EXPECT_EQ(out.diagnostics, "") << "the seed must build without warnings";
  for (const std::string& optimizer : {std::string("momentum"), kHostile}) {
    auto r = render_values(out, {{"optimizer", optimizer}, {"batch_size", "64"}});
    ASSERT_TRUE(r.ok) << r.error;
    Sandbox box;
    auto records = run_job(box, nlohmann::json::parse(r.job), "mpiReplicaSpecs");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0],
              (Words{"Launcher", "mpirun", "python", "code/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py",
                     "--model", "resnet101", "--batch_size", "64", "--variable_update", "horovod",
                     "--optimizer", optimizer, "--summary_verbosity=3", "--save_summaries_steps=10"}));
  }
}

TEST(Commands, UnsafePlacesAreLocatedErrors) {
  struct Case {
    const char* command;
    const char* message;
  };
  for (Case c : {Case{"echo `cat ${v}`", "inside backticks"},
                 Case{"echo $((${v} + 1))", "inside $((...))"},
                 Case{"cat <<'EOF'\\n${v}\\nEOF", "delimiter is quoted"}}) {
    std::string text = std::string("op o(v: string) {\n  image \"i\"\n  command \"") + c.command +
                       "\"\n}\npipeline p { step s = o(v: \"x\") }\n";
    SourceManager sources;
    FileId file = sources.add("input.pipe", text);
    Diagnostics diags;
    auto program = sema::check_program(sources, file, diags, sema::Host{});
    ASSERT_TRUE(program);
    // The lowering writes the script once for every target (ir::Invocation) and refuses it.
    EXPECT_FALSE(lower::lower(std::move(*program), diags));
    std::ostringstream shown;
    render(diags, sources, shown, RenderOptions{});
    EXPECT_NE(shown.str().find(c.message), std::string::npos) << shown.str();
    EXPECT_NE(shown.str().find("input.pipe:3:"), std::string::npos) << "located: " << shown.str();
  }
}

}  // namespace
}  // namespace pipec
