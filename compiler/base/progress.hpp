#pragma once
// A line of progress redrawn in place on a terminal: `run --local`'s and `runs wait`'s.
// Drawn only where progress_wanted() says so (a terminal whose TERM is not "dumb"; the
// command adds its own -q), so that output to a pipe or a file is byte for byte what it is
// without: every other line is written after erasing the progress line
// (kProgressErase), and the progress line is drawn again after it.

#include <string>
#include <string_view>

namespace pipec {

/// Erases the progress line: back to the start of the line, and clear to its end.
inline constexpr std::string_view kProgressErase = "\r\033[K";

/// Whether a progress line may be drawn on file descriptor `fd`: it is a terminal and the
/// environment's TERM is not "dumb".
[[nodiscard]] bool progress_wanted(int fd);

/// The text that draws `text` as the progress line on `fd`'s terminal: kProgressErase,
/// then `text` cut to one character less than the terminal's width (ending in "..." when
/// cut; 80 columns when the width cannot be read), so that it never wraps.
[[nodiscard]] std::string progress_line(int fd, std::string_view text);

}  // namespace pipec
