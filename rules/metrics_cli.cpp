#include "rules/metrics_cli.hpp"

#include <filesystem>

namespace pipec::rules::metrics_cli {

bool parse(const std::vector<std::string>& args, Parsed& out, std::string& why) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& to, const char* what) {
      if (i + 1 >= args.size()) {
        why = a + " needs " + what;
        return false;
      }
      to = args[++i];
      return true;
    };
    if (a == kInstall) {
      std::string path;
      if (!value(path, "a path")) return false;
      out.install = std::move(path);
      return true;
    } else if (a == kMetric) {
      if (!value(out.specs.emplace_back(), "a spec")) return false;
    } else if (a == kMetricsFile) {
      if (!value(out.metrics_file, "a path")) return false;
    } else if (a == kSeriesFile) {
      if (!value(out.series_file, "a path")) return false;
    } else if (a == kFrom) {
      if (!value(out.from, "a file")) return false;
    } else if (a == kExecutorInput) {
      if (!value(out.executor_input, "KFP v2's executor input")) return false;
    } else if (a == kVisual) {
      std::string word;
      if (!value(word, "KIND:NAME:PATH")) return false;
      std::size_t c1 = word.find(':'), c2 = c1 == std::string::npos ? c1 : word.find(':', c1 + 1);
      if (c2 == std::string::npos || c1 == 0 || c2 == c1 + 1 || c2 + 1 == word.size()) {
        why = "--visual needs KIND:NAME:PATH, got '" + word + "'";
        return false;
      }
      out.visuals.push_back({word.substr(0, c1), word.substr(c1 + 1, c2 - c1 - 1), word.substr(c2 + 1)});
    } else if (a == kEndOfOptions) {
      out.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    } else {
      why = "unknown argument '" + a + "'";
      return false;
    }
  }
  if (out.command.empty()) {
    why = "no command after --";
    return false;
  }
  return true;
}

std::string series_path(const std::string& metrics_file, const std::string& series_file) {
  if (!series_file.empty()) return series_file;
  return (std::filesystem::path(metrics_file).parent_path() / kSeriesFileName).string();
}

std::string usage() {
  return std::string("usage: pipec-metrics ") + kInstall + " PATH\n" +
         "       pipec-metrics " + kMetric + " SPEC... [" + kFrom + " FILE] [" + kMetricsFile +
         " PATH]\n" + "                     [" + kSeriesFile + " PATH] [" + kVisual + " KIND:NAME:PATH]... [" + kExecutorInput +
         " JSON] " + kEndOfOptions +
         " COMMAND...\n";
}

}  // namespace pipec::rules::metrics_cli
