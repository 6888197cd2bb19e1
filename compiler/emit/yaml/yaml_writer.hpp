#pragma once

// A small block-style YAML writer for the workflow tree. yaml-cpp's emitter writes about
// 12 MB/s; this one writes the same documents an order of magnitude faster, and its
// quoting is ours to test rule by rule (tests/unit/emit_yaml/yaml_writer_test.cpp parses
// every output back with yaml-cpp).
//
// Layout: two-space indentation, block mappings and sequences (a sequence under a key is
// not indented, as kubectl and PyYAML write it), `[]` / `{}` for empty collections, no
// line folding. Scalars: see scalar_style().

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipec::emit::yaml {

enum class ScalarStyle {
  Plain,         // as is
  SingleQuoted,  // '...' with '' for '
  DoubleQuoted,  // "..." with escapes, for text YAML cannot hold otherwise
  Literal,       // a `|` block, for multi-line text
};

/// How `text` is written so that any YAML 1.1 or 1.2 reader (yaml-cpp, Go's yaml.v2/v3,
/// PyYAML) reads back exactly this string: plain only when it cannot be taken for a
/// number, bool, null, timestamp or another node, and cannot be misread in block context.
[[nodiscard]] ScalarStyle scalar_style(std::string_view text);

/// Appends `text` as a scalar in the style above; `indent` is the indentation of the
/// enclosing block, used by literal blocks.
void append_scalar(std::string& out, std::string_view text, int indent);

/// Appends `doc` (objects keep their key order) as a YAML document ending in a newline.
void append_yaml(std::string& out, const nlohmann::ordered_json& doc);
/// The same for a document whose objects are std::maps (keys in sorted order), written
/// as it is: no copy into an ordered_json, whose insertion is linear per key.
void append_yaml(std::string& out, const nlohmann::json& doc);

// Streaming, for large documents written piece by piece. Every line is written as a
// line break, the indentation, then the content ("line-first"), so pieces join without
// blank lines; a document written this way starts with '\n', which the caller drops.

/// "\n" + `indent` spaces.
void new_line(std::string& out, int indent);

/// One mapping entry at `indent`: "\n<indent>key: <value>" for a scalar or an empty
/// collection, or the key and the collection below it.
void append_entry(std::string& out, std::string_view key, const nlohmann::ordered_json& value,
                  int indent);

/// One mapping entry with a string value: "\n<indent>key: <scalar>".
void append_scalar_entry(std::string& out, std::string_view key, std::string_view value, int indent);

/// One sequence item at `indent`: "\n<indent>- <value>" (a mapping's first key inline).
void append_item(std::string& out, const nlohmann::ordered_json& value, int indent);

}  // namespace pipec::emit::yaml
