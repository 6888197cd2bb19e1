#include "rules/launcher_cli.hpp"

#include <iterator>

namespace pipec::rules {
namespace {

constexpr LauncherOptionInfo kOptions[] = {
#define PIPEC_LAUNCHER_OPTION(id, word, shape, field, metavar, help) \
  {LauncherOption::id, word, OptionShape::shape, metavar, help},
#include "rules/launcher_cli.def"
};

constexpr BindingKindInfo kKinds[] = {
#define PIPEC_BINDING_KIND(id, word, help) {BindingKind::id, word, help},
#include "rules/launcher_cli.def"
};

// `  WORDS` padded to the help column, then the help, its further lines under it.
void usage_entry(std::string& out, std::string words, std::string_view help) {
  constexpr std::size_t kColumn = 29;
  out += "  " + words;
  std::size_t used = 2 + words.size();
  if (used + 1 > kColumn) {
    out += "\n";
    used = 0;
  }
  out.append(kColumn - used, ' ');
  for (char c : help) {
    out.push_back(c);
    if (c == '\n') out.append(kColumn, ' ');
  }
  out += "\n";
}

}  // namespace

std::span<const LauncherOptionInfo> launcher_options() { return kOptions; }

const LauncherOptionInfo& launcher_option(LauncherOption id) { return kOptions[static_cast<std::size_t>(id)]; }

std::span<const BindingKindInfo> binding_kinds() { return kKinds; }

std::string_view binding_kind_word(BindingKind kind) { return kKinds[static_cast<std::size_t>(kind)].word; }

std::optional<BindingKind> binding_kind_named(std::string_view word) {
  for (const auto& k : kKinds)
    if (k.word == word) return k.id;
  return std::nullopt;
}

std::string binding_kind_list() {
  std::string out;
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (i > 0) out += i + 1 == std::size(kKinds) ? " or " : ", ";
    out += kKinds[i].word;
  }
  return out;
}

void add_launcher_arg(std::vector<std::string>& argv, LauncherOption id, std::string value) {
  const LauncherOptionInfo& o = launcher_option(id);
  argv.emplace_back(o.word);
  if (o.shape != OptionShape::Flag) argv.push_back(std::move(value));
}

std::string binding_arg(std::string_view pointer, std::string_view name, BindingKind kind) {
  std::string out(pointer);
  out += '=';
  out += name;
  out += ':';
  out += binding_kind_word(kind);
  return out;
}

std::string value_arg(std::string_view name, std::string_view text) {
  std::string out(name);
  out += '=';
  out += text;
  return out;
}

std::optional<std::vector<LauncherArg>> split_launcher_args(std::span<const std::string> args, std::string& error) {
  error.clear();  // the result speaks for this call only
  std::vector<LauncherArg> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == launcher_option(LauncherOption::Help).word) return std::nullopt;
    auto eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
    std::string_view name = std::string_view(arg).substr(0, eq);
    const LauncherOptionInfo* option = nullptr;
    for (const auto& o : kOptions)
      if (o.word == name) option = &o;
    if (!option || (option->shape == OptionShape::Flag && eq != std::string::npos)) {
      error = "unknown option '" + std::string(name) + "'";
      return std::nullopt;
    }
    if (option->shape == OptionShape::Flag) {
      out.push_back({option->id, {}});
    } else if (eq != std::string::npos) {
      out.push_back({option->id, arg.substr(eq + 1)});
    } else if (i + 1 < args.size()) {
      out.push_back({option->id, args[++i]});
    } else {
      error = "option '" + arg + "' needs a value";
      return std::nullopt;
    }
  }
  return out;
}

std::string launcher_usage() {
  std::string out =
      "usage: pipec-launcher --manifest JSON --step-name NAME [OPTIONS]\n"
      "Creates a Kubeflow training job (MPIJob, TFJob, PyTorchJob), follows it, copies the\n"
      "training log to stdout and writes KFP's metrics; see docs/runtime.md.\n"
      "\n"
      "options (a value as the next argument or after '='):\n";
  for (const auto& o : kOptions)
    usage_entry(out, o.metavar.empty() ? std::string(o.word) : std::string(o.word) + " " + std::string(o.metavar),
                o.help);
  out += "\nbinding kinds (--bind POINTER=NAME:KIND):\n";
  for (const auto& k : kKinds) usage_entry(out, std::string(k.word), k.help);
  out +=
      "\n"
      "exit codes: 0 succeeded, 1 failed, 2 bad arguments or value, 3 timeout, 4 API error,\n"
      "5 stopped by a signal\n";
  return out;
}

}  // namespace pipec::rules
