#pragma once
// pipec-launcher's command line (docs/runtime.md, "Command line"), from the one table
// rules/launcher_cli.def: the compiler builds the argv with it, the launcher parses it and
// prints `--help` from it, `pipec run --local` reads a call with the same parser. No I/O.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pipec::rules {

enum class LauncherOption {
#define PIPEC_LAUNCHER_OPTION(id, word, shape, field, metavar, help) id,
#include "rules/launcher_cli.def"
};

/// What an option takes: nothing, one text (the last given wins), a text each time it is
/// given, or a duration.
enum class OptionShape { Flag, Text, List, Duration };

struct LauncherOptionInfo {
  LauncherOption id;
  std::string_view word;  ///< "--manifest"
  OptionShape shape;
  std::string_view metavar;  ///< "JSON"; "" for a flag
  std::string_view help;     ///< lines split by '\n'
};

/// Every option, in the table's order.
[[nodiscard]] std::span<const LauncherOptionInfo> launcher_options();
[[nodiscard]] const LauncherOptionInfo& launcher_option(LauncherOption id);
/// The option's word, "--manifest".
[[nodiscard]] inline std::string launcher_flag(LauncherOption id) { return std::string(launcher_option(id).word); }

/// What a bound value is and how it goes in (docs/runtime.md, "Binding kinds"). Count,
/// Tolerations, EnvMap, NodeSelector, GpuResource, CleanPodPolicy and SuccessPolicy change
/// the job's shape, so any training argument can be a run-time value.
enum class BindingKind {
#define PIPEC_BINDING_KIND(id, word, help) id,
#include "rules/launcher_cli.def"
};

struct BindingKindInfo {
  BindingKind id;
  std::string_view word;  ///< "env-map"
  std::string_view help;
};
[[nodiscard]] std::span<const BindingKindInfo> binding_kinds();
[[nodiscard]] std::string_view binding_kind_word(BindingKind kind);
[[nodiscard]] std::optional<BindingKind> binding_kind_named(std::string_view word);
/// "string, int, ..., clean-pod-policy or success-policy", for messages.
[[nodiscard]] std::string binding_kind_list();

/// The argv words of one option: `{"--manifest", value}`, or `{"--keep-job"}` for a flag.
void add_launcher_arg(std::vector<std::string>& argv, LauncherOption id, std::string value = {});
/// A `--bind` word: `POINTER=NAME:KIND`.
[[nodiscard]] std::string binding_arg(std::string_view pointer, std::string_view name, BindingKind kind);
/// A `--value` word: `NAME=TEXT`.
[[nodiscard]] std::string value_arg(std::string_view name, std::string_view text);

/// One option as given: which, and its value text ("" for a flag).
struct LauncherArg {
  LauncherOption id;
  std::string value;
};

/// Splits a launcher command line (without argv[0]) into options: a value is the next
/// word or follows '=' (`--step-name=x`). Returns nullopt with `error` set for an unknown
/// option or a missing value; with `error` empty when `-h`/`--help` was given.
[[nodiscard]] std::optional<std::vector<LauncherArg>> split_launcher_args(std::span<const std::string> args,
                                                                          std::string& error);

/// `pipec-launcher --help`: every option and binding kind of the table, and the exit codes.
[[nodiscard]] std::string launcher_usage();

}  // namespace pipec::rules
