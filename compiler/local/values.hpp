#pragma once
// Run-time values of a local run (local_run.hpp): the text a value stands for, and `if`
// conditions, with the rules of the Argo lowering (emit/argo/workflow_writer.cpp) so a
// local run and a cluster run decide alike.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/ir.hpp"

namespace pipec::local {

/// A value that cannot be computed: a missing output, a text that is not a number, ...
struct EvalError {
  std::string message;
};

/// The text of a reference (a parameter, loop item, op parameter or step output).
using RefText = std::function<std::string(const ir::Ref&)>;

/// The text a value stands for, as Argo passes it: literals as ir::literal_text, a
/// reference as its text, an interpolation as its pieces put together (values are never
/// re-read), lists and maps with run-time items as compact JSON with the items as strings.
[[nodiscard]] std::string value_text(const ir::Value& value, const RefText& ref);

/// The text of a word of a container (ir::Invocation): text as it is, an op parameter as
/// its value in `args` (a `file` parameter: the path it is placed at). Throws EvalError for
/// a parameter without a value.
[[nodiscard]] std::string word_text(const ir::Word& word, const std::map<std::string, std::string>& args);

/// Whether an `if` condition holds, as its Argo expression evaluates: two ints compare as
/// 64-bit integers, other numbers as floats, bools and a bool value alone by their text
/// (ir::is_true_text: `true`, `True`, ...), anything else as text (byte order). Throws EvalError when a number is not one.
[[nodiscard]] bool condition_holds(const ir::Condition& condition, const RefText& ref);

/// A step output read from outside its loop: the iterations' values as one JSON list,
/// in item order, as Argo aggregates a loop task's output parameter: each value as a
/// JSON string, unless every value is a JSON list or object (an inner loop's list), then
/// those (so nested loops give lists of lists).
[[nodiscard]] std::string collected_text(const std::vector<std::string>& values);

}  // namespace pipec::local
