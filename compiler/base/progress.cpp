#include "compiler/base/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pipec {

bool progress_wanted(int fd) {
  if (isatty(fd) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

std::string progress_line(int fd, std::string_view text) {
  std::size_t columns = 80;
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) columns = size.ws_col;
  std::string out(kProgressErase);
  // One column is left free: a line that fills the last one wraps on some terminals.
  std::size_t room = columns > 1 ? columns - 1 : 1;
  // Count characters, not bytes (a step name is ASCII; a run state from a server may not be).
  std::size_t chars = 0, cut = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars == room - (room > 3 ? 3 : 0) && cut == text.size()) cut = i;
    if (++chars > room) {
      out.append(text.substr(0, cut));
      if (room > 3) out += "...";
      return out;
    }
  }
  out.append(text);
  return out;
}

}  // namespace pipec
