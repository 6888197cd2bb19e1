#pragma once
// YAML (and JSON, which is YAML) from outside: params files, packages and specs read back,
// templates a server returns, kubeconfig. yaml-cpp 0.7 is given the text only once a first
// pass over its events has found it bounded:
// - nesting at most kMaxNesting levels (yaml-cpp itself stops at 2000, deep in the stack);
// - aliases (`*name`) adding at most kMaxAliasNodes nodes: a node an alias names is shared
//   by yaml-cpp, but every reader that walks the tree walks it once per alias, so a few
//   hundred bytes of nested aliases ("billion laughs") would be billions of nodes;
// - no document that starts where the last one did: yaml-cpp 0.7 loops forever, making
//   empty documents, on text its document parser does not take, such as a ',' after a
//   complete node (jbeder/yaml-cpp#1040).

#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace pipec::input {

/// Every document of `text`. On failure returns false and sets `error` to "line L,
/// column C: what" (yaml-cpp's own messages are located the same way).
[[nodiscard]] bool load_yaml_all(std::string_view text, std::vector<YAML::Node>& documents,
                                 std::string& error);

/// The first document of `text` (a null node when there is none), as YAML::Load.
[[nodiscard]] bool load_yaml(std::string_view text, YAML::Node& root, std::string& error);

}  // namespace pipec::input
