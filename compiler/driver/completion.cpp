// Bash and zsh completion written from the CLI11 registry (completion.hpp).
#include "compiler/driver/completion.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "compiler/base/diagnostics.hpp"
#include "compiler/base/source_manager.hpp"
#include "compiler/driver/options.hpp"
#include "compiler/syntax/parser.hpp"

namespace pipec::driver {

namespace {

// What completion needs to know of one option, read off the registry.
struct OptionInfo {
  std::vector<std::string> names;  // "-o", "--output"
  std::string help;
  bool takes_value = false;
  bool is_param = false;             // `-p/--param NAME=VALUE`
  std::vector<std::string> choices;  // from a validator described "{a,b,c}" (CLI::IsMember too)
  std::optional<ModeGroup> mode;     // offered only with (or only without) a flag
};

struct CommandInfo {
  std::vector<std::string> path;  // {"run"}; {"runs", "list"} for a command of a command
  std::string help;
  std::vector<OptionInfo> options;
  std::vector<std::string> subcommands;  // the visible ones, by name
  bool has_positional = false;
  std::vector<std::string> positional_choices;  // `completion bash|zsh`: its words, not files
};

bool hidden(const CLI::App* app) { return app->get_group().empty(); }

// The values an option takes, when its type name lists them: "TEXT:{text,json}" (as
// CLI::IsMember describes itself) or a validator described "{a,b,c}[,...]".
std::vector<std::string> choices_of(const CLI::Option* opt) {
  std::string type = opt->get_type_name();
  std::size_t open = type.find('{'), close = type.find('}', open == std::string::npos ? 0 : open);
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string_view list(type.data() + open + 1, close - open - 1);
  while (!list.empty()) {
    std::size_t comma = list.find(',');
    out.emplace_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

std::vector<OptionInfo> options_of(const CLI::App* app) {
  std::vector<OptionInfo> out;
  if (const CLI::Option* help = app->get_help_ptr()) out.push_back({{"-h", "--help"}, help->get_description()});
  if (const CLI::Option* all = app->get_help_all_ptr()) out.push_back({{"--help-all"}, all->get_description()});
  for (const CLI::Option* opt : app->get_options()) {
    if (opt->get_positional() || opt->get_group().empty() || opt == app->get_help_ptr() ||
        opt == app->get_help_all_ptr())
      continue;
    OptionInfo info;
    for (const std::string& s : opt->get_snames()) info.names.push_back("-" + s);
    for (const std::string& l : opt->get_lnames()) {
      info.names.push_back("--" + l);
      if (l == "param") info.is_param = true;
    }
    info.help = opt->get_description();
    info.takes_value = opt->get_items_expected_max() != 0;
    info.choices = choices_of(opt);
    info.mode = parse_mode_group(opt->get_group());
    out.push_back(std::move(info));
  }
  return out;
}

// Every visible command, depth first: `runs`, then `runs list`, ... (the top level is not
// in the list).
void walk(const CLI::App* app, std::vector<std::string> path, std::vector<CommandInfo>& out) {
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (hidden(sub)) continue;
    CommandInfo info;
    info.path = path;
    info.path.push_back(sub->get_name());
    info.help = sub->get_description();
    info.options = options_of(sub);
    for (const CLI::App* child : sub->get_subcommands([](const CLI::App*) { return true; }))
      if (!hidden(child)) info.subcommands.push_back(child->get_name());
    for (const CLI::Option* opt : sub->get_options()) {
      if (!opt->get_positional()) continue;
      info.has_positional = true;
      for (std::string& choice : choices_of(opt)) info.positional_choices.push_back(std::move(choice));
    }
    std::vector<std::string> child_path = info.path;
    out.push_back(std::move(info));
    walk(sub, child_path, out);
  }
}

std::vector<CommandInfo> commands_of(const CLI::App& app) {
  std::vector<CommandInfo> out;
  walk(&app, {}, out);
  return out;
}

std::string join(const std::vector<std::string>& words, std::string_view sep = " ") {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += sep;
    out += w;
  }
  return out;
}

// A word for bash's `compgen -W "..."` and `case` patterns: registry names are plain
// ([-A-Za-z0-9_]), so this only guards against a future name that is not.
std::string shell_word(std::string_view w) {
  std::string out;
  for (char c : w) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) out += '\\';
    out += c;
  }
  return out;
}

std::vector<std::string> shell_words(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const std::string& w : words) out.push_back(shell_word(w));
  return out;
}

// The bash `case` label of a command: its path after a space each (" runs list").
std::string path_key(const std::vector<std::string>& path) {
  std::string key;
  for (const std::string& w : path) key += " " + shell_word(w);
  return key;
}

// Text inside a single-quoted zsh word.
std::string zsh_quoted(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out;
}

// zsh `_arguments` spec text: `[`, `]`, `:` and `\` are special in descriptions, and the
// whole spec is single-quoted.
std::string zsh_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    if (c == '\'') {
      out += "'\\''";
      continue;
    }
    out += c;
  }
  return out;
}

// The options of a command by mode: those offered always, and for each flag that selects
// a mode (options.hpp, mode_group) those offered with it and those offered without it.
struct ModeSplit {
  std::vector<const OptionInfo*> always;
  // flag -> (options offered with it, options offered without it)
  std::vector<std::pair<std::string, std::pair<std::vector<const OptionInfo*>, std::vector<const OptionInfo*>>>>
      by_flag;
};

ModeSplit split_modes(const CommandInfo& c) {
  ModeSplit split;
  for (const OptionInfo& o : c.options) {
    if (!o.mode) {
      split.always.push_back(&o);
      continue;
    }
    auto it = std::find_if(split.by_flag.begin(), split.by_flag.end(),
                           [&](const auto& entry) { return entry.first == o.mode->flag; });
    if (it == split.by_flag.end()) {
      split.by_flag.push_back({o.mode->flag, {}});
      it = split.by_flag.end() - 1;
    }
    (o.mode->with ? it->second.first : it->second.second).push_back(&o);
  }
  return split;
}

std::vector<std::string> names_of(const std::vector<const OptionInfo*>& options) {
  std::vector<std::string> out;
  for (const OptionInfo* o : options)
    for (const std::string& n : o->names) out.push_back(shell_word(n));
  return out;
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  const std::string prog = app.get_name();
  const std::vector<CommandInfo> commands = commands_of(app);
  std::vector<std::string> top = {"--help", "--help-all", "--version"};
  for (const CommandInfo& c : commands)
    if (c.path.size() == 1) top.push_back(shell_word(c.path[0]));

  std::string s;
  s += "# bash completion for " + prog + ": generated by `" + prog +
       " completion bash` from its command registry; do not edit.\n";
  s += "_" + prog + "_pipe_file() {\n"
       "  local w\n"
       "  for w in \"${COMP_WORDS[@]:2}\"; do\n"
       "    case $w in *.pipe) printf '%s\\n' \"$w\"; return ;; esac\n"
       "  done\n"
       "}\n";
  s += "_" + prog + "_params() {\n"
       "  local file\n"
       "  file=$(_" + prog + "_pipe_file)\n"
       "  [[ -n $file ]] || return\n"
       "  local names\n"
       "  names=$(\"${COMP_WORDS[0]}\" __params \"$file\" 2>/dev/null)\n"
       "  COMPREPLY=($(compgen -S = -W \"$names\" -- \"$1\"))\n"
       "  compopt -o nospace 2>/dev/null\n"
       "}\n";
  // Whether a word before the one completed is $1 (a flag that selects a command's mode).
  s += "_" + prog + "_has() {\n"
       "  local w\n"
       "  for w in \"${COMP_WORDS[@]:1:COMP_CWORD-1}\"; do [[ $w == \"$1\" ]] && return 0; done\n"
       "  return 1\n"
       "}\n";
  s += "_" + prog + "() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path=\"\" i words\n"
       "  COMPREPLY=()\n"
       "  # The command (and the commands of commands) on the line: words that name one.\n"
       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
       "    case \"$path ${COMP_WORDS[i]}\" in\n";
  {
    std::vector<std::string> keys;
    for (const CommandInfo& c : commands) keys.push_back("\"" + path_key(c.path) + "\"");
    s += "    " + join(keys, "|") + ") path=\"$path ${COMP_WORDS[i]}\" ;;\n";
  }
  s += "    esac\n"
       "  done\n"
       "  case $path in\n";
  s += "  \"\")\n    COMPREPLY=($(compgen -W \"" + join(top) + "\" -- \"$cur\"))\n    ;;\n";
  for (const CommandInfo& c : commands) {
    s += "  \"" + path_key(c.path) + "\")\n";
    s += "    case $prev in\n";
    for (const OptionInfo& o : c.options) {
      if (!o.takes_value) continue;
      s += "    " + join(shell_words(o.names), "|") + ")\n";
      if (o.is_param)
        s += "      _" + prog + "_params \"$cur\"; return ;;\n";
      else if (!o.choices.empty())
        s += "      COMPREPLY=($(compgen -W \"" + join(shell_words(o.choices)) + "\" -- \"$cur\")); return ;;\n";
      else
        s += "      COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
    }
    s += "    esac\n";
    // `--param=NAME`, `--diagnostics=json`: the value after `=` in the same word.
    for (const OptionInfo& o : c.options) {
      if (!o.takes_value) continue;
      for (const std::string& n : o.names) {
        if (n.size() < 3 || n[1] != '-') continue;
        if (o.is_param)
          s += "    if [[ $cur == " + shell_word(n) + "=* ]]; then _" + prog + "_params \"${cur#*=}\"; "
               "COMPREPLY=(\"${COMPREPLY[@]/#/" + shell_word(n) + "=}\"); return; fi\n";
        else if (!o.choices.empty())
          s += "    if [[ $cur == " + shell_word(n) + "=* ]]; then COMPREPLY=($(compgen -P " + shell_word(n) +
               "= -W \"" + join(shell_words(o.choices)) + "\" -- \"${cur#*=}\")); return; fi\n";
      }
    }
    ModeSplit split = split_modes(c);
    s += "    if [[ $cur == -* ]]; then\n";
    s += "      words=\"" + join(names_of(split.always)) + "\"\n";
    for (const auto& [flag, sets] : split.by_flag) {
      s += "      if _" + prog + "_has " + shell_word(flag) + "; then words+=\" " + join(names_of(sets.first)) +
           "\"; else words+=\" " + join(names_of(sets.second)) + "\"; fi\n";
    }
    s += "      COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n";
    if (!c.subcommands.empty() || c.has_positional) {
      s += "    else\n";
      if (!c.subcommands.empty())
        s += "      COMPREPLY=($(compgen -W \"" + join(shell_words(c.subcommands)) + "\" -- \"$cur\"))\n";
      if (!c.positional_choices.empty())
        s += "      COMPREPLY+=($(compgen -W \"" + join(shell_words(c.positional_choices)) + "\" -- \"$cur\"))\n";
      else if (c.has_positional)
        s += "      compopt -o filenames 2>/dev/null\n"
             "      COMPREPLY+=($(compgen -f -- \"$cur\"))\n";
    }
    s += "    fi\n    ;;\n";
  }
  s += "  esac\n}\n";
  s += "complete -F _" + prog + " " + prog + "\n";
  return s;
}

namespace {

// The `_arguments` specs of some options of a command, one per line.
std::string zsh_specs(const std::vector<const OptionInfo*>& options, const std::string& prog,
                      const std::string& indent) {
  std::string s;
  for (const OptionInfo* o : options) {
    std::string action;
    if (o->takes_value) {
      if (o->is_param)
        action = ":NAME=VALUE:_" + prog + "_params";
      else if (!o->choices.empty())
        action = ":value:(" + join(o->choices) + ")";
      else
        action = ":value:_files";
    }
    std::string excl = o->names.size() > 1 ? "(" + join(o->names) + ")" : "";
    std::string rep = o->is_param ? "*" : "";
    for (const std::string& n : o->names)
      s += indent + "'" + (rep.empty() ? excl : rep) + n + "[" + zsh_text(o->help) + "]" + zsh_quoted(action) + "'\n";
  }
  return s;
}

}  // namespace

std::string zsh_completion(const CLI::App& app) {
  const std::string prog = app.get_name();
  const std::vector<CommandInfo> commands = commands_of(app);
  std::string s = "#compdef " + prog + "\n";
  s += "# zsh completion for " + prog + ": generated by `" + prog +
       " completion zsh` from its command registry; do not edit.\n";
  s += "_" + prog + "_params() {\n"
       "  local file w\n"
       "  for w in \"${words[@]}\"; do [[ $w == *.pipe ]] && { file=$w; break; }; done\n"
       "  [[ -n $file ]] || return 1\n"
       "  local -a names\n"
       "  names=(${(f)\"$(\"${words[1]}\" __params \"$file\" 2>/dev/null)\"})\n"
       "  compadd -S = -- \"${names[@]}\"\n"
       "}\n";
  s += "_" + prog + "() {\n  local -a commands specs\n  local cmdpath=\"\" depth=0 i\n";
  // The command (and the commands of commands) on the line: words that name one.
  s += "  for ((i = 2; i < CURRENT; i++)); do\n    case \"$cmdpath ${words[i]}\" in\n";
  {
    std::vector<std::string> keys;
    for (const CommandInfo& c : commands) keys.push_back("\"" + path_key(c.path) + "\"");
    s += "    " + join(keys, "|") + ") cmdpath=\"$cmdpath ${words[i]}\"; (( depth++ )) ;;\n";
  }
  s += "    esac\n  done\n";
  s += "  case $cmdpath in\n";
  // _describe splits NAME:DESCRIPTION at the first colon; the name's colons are escaped.
  auto describe = [&](const std::vector<const CommandInfo*>& subs, const std::string& indent) {
    std::string out = indent + "commands=(\n";
    for (const CommandInfo* c : subs)
      out += indent + "  '" + zsh_text(c->path.back()) + ":" + zsh_quoted(c->help) + "'\n";
    out += indent + ")\n";
    return out;
  };
  std::vector<const CommandInfo*> top;
  for (const CommandInfo& c : commands)
    if (c.path.size() == 1) top.push_back(&c);
  s += "  \"\")\n" + describe(top, "    ");
  s += "    if [[ $PREFIX == -* ]]; then compadd -- --help --help-all --version\n"
       "    else _describe -t commands 'command' commands; fi\n"
       "    ;;\n";
  for (const CommandInfo& c : commands) {
    s += "  \"" + path_key(c.path) + "\")\n";
    if (!c.subcommands.empty()) {
      std::vector<const CommandInfo*> subs;
      for (const CommandInfo& d : commands)
        if (d.path.size() == c.path.size() + 1 && std::equal(c.path.begin(), c.path.end(), d.path.begin()))
          subs.push_back(&d);
      s += describe(subs, "    ");
      s += "    if [[ $PREFIX != -* ]]; then _describe -t commands 'command' commands; return; fi\n";
    }
    ModeSplit split = split_modes(c);
    s += "    specs=(\n" + zsh_specs(split.always, prog, "      ") + "    )\n";
    for (const auto& [flag, sets] : split.by_flag) {
      s += "    if (( ${words[(I)" + flag + "]} )); then\n      specs+=(\n" + zsh_specs(sets.first, prog, "        ") +
           "      )\n    else\n      specs+=(\n" + zsh_specs(sets.second, prog, "        ") + "      )\n    fi\n";
    }
    if (!c.positional_choices.empty())
      s += "    specs+=('1:value:(" + zsh_quoted(join(c.positional_choices)) + ")')\n";
    else if (c.has_positional)
      s += "    specs+=('*:file:_files')\n";
    s += "    shift $depth words\n    (( CURRENT -= depth ))\n    _arguments -s $specs\n    ;;\n";
  }
  s += "  esac\n}\n_" + prog + " \"$@\"\n";
  return s;
}

std::string registry_listing(const CLI::App& app) {
  std::string s;
  for (const CommandInfo& c : commands_of(app)) {
    s += join(c.path) + "\n";
    // Every command's -h/--help is implicit: help lists it only at the top.
    for (const OptionInfo& o : c.options)
      if (o.names.front() != "-h" && o.names.front() != "--help-all") s += join(c.path) + "\t" + join(o.names) + "\n";
  }
  return s;
}

void add_completion_command(CLI::App& app, int& exit_code) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("completion", "Print the bash or zsh completion script");
  cmd->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  cmd->callback([shell, &app, &exit_code] {
    std::cout << (*shell == "bash" ? bash_completion(app) : zsh_completion(app));
    exit_code = std::cout.flush() ? kExitOk : kExitErrors;
  });
}

void add_registry_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("__commands", "Every command and its options (for tests)");
  cmd->group("");  // hidden
  cmd->callback([&app, &exit_code] {
    std::cout << registry_listing(app);
    exit_code = std::cout.flush() ? kExitOk : kExitErrors;
  });
}

void add_params_command(CLI::App& app, int& exit_code) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("__params", "The pipeline's parameter names (for completion)");
  cmd->group("");  // hidden
  cmd->add_option("file", *file)->required();
  cmd->callback([file, &exit_code] {
    // Only the parse: completion wants the names even while other parts do not check.
    SourceManager sources;
    Diagnostics diags;
    std::string error;
    FileId id = sources.load(*file, error);
    exit_code = kExitOk;
    if (id == kNoFile) return;
    std::optional<syntax::ast::Module> module = syntax::parse(sources, id, diags);
    if (!module) return;
    for (const syntax::ast::TopDecl& decl : module->decls) {
      const auto* pipeline = boost::get<syntax::ast::PipelineDecl>(&decl.get());
      if (!pipeline) continue;
      for (const syntax::ast::Statement& st : pipeline->body.statements)
        if (const auto* param = boost::get<boost::spirit::x3::forward_ast<syntax::ast::ParamDecl>>(&st.get()))
          std::cout << param->get().name.name << '\n';
    }
  });
}

}  // namespace pipec::driver
