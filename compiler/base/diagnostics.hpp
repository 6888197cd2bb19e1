#pragma once

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/base/source_manager.hpp"

namespace pipec {

enum class Severity { Error, Warning, Note };

/// One message about the user's input. A note belongs to the error or warning before it.
struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;  // may be invalid: then the message has no location
  std::string message;
};

/// The diagnostics of a compilation, in the order they were reported. Passes append;
/// only the driver renders (see render()).
class Diagnostics {
 public:
  void error(SourceRange range, std::string message);
  void warning(SourceRange range, std::string message);
  void note(SourceRange range, std::string message);
  void add(Diagnostic diagnostic);

  bool has_errors() const { return error_count_ > 0; }
  std::size_t error_count() const { return error_count_; }
  std::size_t warning_count() const { return warning_count_; }
  const std::vector<Diagnostic>& all() const { return items_; }
  bool empty() const { return items_.empty(); }

  /// Stops recording after this many errors (the rest are counted only), so that a
  /// pathological input cannot produce an unbounded report. The last item then says so,
  /// and render() gives it the count: "too many errors: 100 shown, N more not shown".
  static constexpr std::size_t kMaxErrors = 100;
  /// The errors counted but not recorded (0 below kMaxErrors).
  std::size_t errors_not_shown() const { return error_count_ > kMaxErrors ? error_count_ - kMaxErrors : 0; }

 private:
  std::vector<Diagnostic> items_;
  // Located warnings already recorded (file, offsets, message): an op's warning found
  // again for each step that calls it is shown once, and its notes with it.
  std::set<std::tuple<FileId, std::uint32_t, std::uint32_t, std::string>> warned_;
  bool skipping_notes_ = false;
  std::size_t error_count_ = 0;
  std::size_t warning_count_ = 0;
  bool dropping_ = false;
};

enum class DiagnosticFormat { Text, Json };

struct RenderOptions {
  DiagnosticFormat format = DiagnosticFormat::Text;
  bool color = false;
};

/// Writes diagnostics as clang does (`path:line:col: error: message`, the line and a
/// caret with tildes under the range), or as one JSON object per line.
void render(const Diagnostics& diags, const SourceManager& sources, std::ostream& out,
            const RenderOptions& options);

/// Whether colour should be used on the stream with this file descriptor:
/// only on a terminal, never with NO_COLOR set, always with FORCE_COLOR set.
bool want_color(int fd);

}  // namespace pipec
