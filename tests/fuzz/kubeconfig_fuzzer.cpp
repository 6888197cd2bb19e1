// libFuzzer target for kubeconfig files (`pipec-launcher --kubeconfig`, $KUBECONFIG):
// kubeconfig_from_file on the input written to a file of its own. Any content gives a
// configuration or a message, never a crash, a hang or a sanitizer report.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "kube/client.hpp"

using pipec::kube::kubeconfig_from_file;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = [] {
    auto dir = std::filesystem::temp_directory_path() / ("pipec-kubeconfig-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / "config").string();
  }();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::string error;
  (void)pipec::kube::kubeconfig_from_file(path, error);
  return 0;
}
