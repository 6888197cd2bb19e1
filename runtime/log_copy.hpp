#pragma once
// Copying a pod's log stream to stdout: the one path every byte of the training log takes
// (the launcher's log thread, and bench/scrape's stream benchmark).

#include <iosfwd>
#include <string>
#include <string_view>

namespace pipec::runtime {

class LogCursor;
class MetricScraper;

/// One read of a pod's log (`timestamps=true`): splits the stream into lines at '\n', drops
/// what `cursor` says was printed before, writes the rest without the timestamps to `out`
/// byte for byte ('\r' included; a last line without '\n' gets one) and feeds it to
/// `scraper`. Data may be split anywhere between feed() calls. The whole lines are
/// gathered and written (one write, one metric scan) by flush(), which the reader calls
/// when it has handed over what has arrived and waits for more, or as soon as 256 KiB are
/// gathered; so the copy keeps up with the stream without a write per libcurl piece (16
/// KiB), and a line is printed as soon as the stream pauses after it. A line is held whole
/// up to input::kMaxLogLineBytes: past that (a progress bar redrawn with '\r' only, for
/// hours) what is held is copied and scanned at once, and the rest of the line as it comes,
/// so memory stays bounded and the output is the same bytes.
class LogCopier {
 public:
  LogCopier(LogCursor& cursor, std::ostream& out, MetricScraper& scraper);
  /// Writes what is gathered (complete lines only).
  ~LogCopier();
  LogCopier(const LogCopier&) = delete;
  LogCopier& operator=(const LogCopier&) = delete;
  /// The next bytes of the stream.
  void feed(std::string_view data);
  /// Writes and flushes the complete lines gathered so far.
  void flush();
  /// The stream ended normally: copies an unterminated last line too.
  void finish();

 private:
  void copy_line(std::string_view raw);
  void flush_batch();

  LogCursor& cursor_;
  std::ostream& out_;
  MetricScraper& scraper_;
  void long_line(std::string_view piece);

  std::string partial_;  // an incomplete line between feed() calls
  bool in_long_line_ = false;    // partial_ outgrew the bound: the rest goes out as it comes
  bool long_line_shown_ = false;  // ... and the cursor accepted the line
  std::string batch_;    // the lines of one feed() call, as printed
};

}  // namespace pipec::runtime
