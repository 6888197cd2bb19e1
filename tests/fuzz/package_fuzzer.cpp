// libFuzzer target for packages read back (`pipec upload FILE`, `pipec run FILE`):
// load_package_bytes finds the workflow as the KFP server does (by the name's extension,
// else by content: zip, gzip'd tar) and reads its signature (the pipec, KFP SDK and KFP v2
// forms). The first byte picks the file name's extension. Any bytes give a package or a
// message, never a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/client/kfp/flows.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const char* const kNames[] = {"p.yaml", "p.json", "p.tar.gz", "p.zip", "p.tgz", "p.yml", "p", "p.txt"};
  pipec::client::kfp::LocalPackage package;
  auto status = pipec::client::kfp::load_package_bytes(
      std::string(reinterpret_cast<const char*>(data) + 1, size - 1), kNames[data[0] & 7], package);
  if (status) (void)pipec::client::kfp::content_version_name(package);
  return 0;
}
