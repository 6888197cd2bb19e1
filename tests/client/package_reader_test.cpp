#include "compiler/client/kfp/package_reader.hpp"

#include <gtest/gtest.h>

#include "tests/client/fake_kfp.hpp"
#include "tests/client/test_support.hpp"

namespace pipec::client::kfp {
namespace {

using testing::make_archive;

const std::string kYaml = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n";

std::string read(const std::string& bytes, const std::string& filename) {
  std::string yaml;
  Status status = read_workflow_from_package(bytes, filename, yaml);
  return status ? yaml : "error: " + status.message();
}

TEST(ClientPackageReader, ReadsAsTheServerDoes) {
  // By extension first: YAML and JSON are taken as they are.
  EXPECT_EQ(read(kYaml, "p.yaml"), kYaml);
  EXPECT_EQ(read(kYaml, "p.yml"), kYaml);
  EXPECT_EQ(read("{}", "p.json"), "{}");
  // Then by content, whatever the name.
  EXPECT_EQ(read(make_archive({{"pipeline.yaml", kYaml}}), "p.tar.gz"), kYaml);
  EXPECT_EQ(read(make_archive({{"pipeline.yaml", kYaml}}), "package"), kYaml);
  EXPECT_EQ(read(make_archive({{"pipeline.yaml", kYaml}}, true), "p.zip"), kYaml);
  // pipeline.yaml wins over a first entry; else the first entry if it is YAML.
  EXPECT_EQ(read(make_archive({{"README", "x"}, {"pipeline.yaml", kYaml}}), "p.tgz"), kYaml);
  EXPECT_EQ(read(make_archive({{"./pipeline.yaml", kYaml}, {"b.yaml", "b"}}), "p.tgz"), kYaml);
}

TEST(ClientPackageReader, RefusesWhatTheServerRefuses) {
  EXPECT_EQ(read(make_archive({{"./", ""}, {"./pipeline.yaml", kYaml}}), "p.tar.gz"),
            "error: expecting a pipeline.yaml file inside the tar.gz archive, got './' (the "
            "server takes the entry named exactly 'pipeline.yaml', else a first entry ending in "
            ".yaml)");
  EXPECT_EQ(read(make_archive({}, true), "p.zip"), "error: the zip archive is empty");
  EXPECT_EQ(read(kYaml, "p.txt"),
            "error: unexpected pipeline file format: the server takes .zip, .tar.gz, .json or YAML");
  // A gzip'd tar under a .yaml name is sent as YAML: the server does not unpack it either.
  EXPECT_EQ(read(make_archive({{"pipeline.yaml", kYaml}}), "p.yaml").substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(read("\x1f\x8b garbage", "p.tar.gz").rfind("error: ", 0), 0u);
}

// A damaged zip for which libarchive sets no message: formatting its null message was an
// internal error (issue 25, F-C2).
TEST(ClientPackageReader, ADamagedZipWithoutAMessageIsAClearError) {
  EXPECT_EQ(read(testing::read_data("broken-no-message.zip"), "p.zip"),
            "error: broken zip archive: libarchive gives no reason");
}

// Unpacked, an entry may be far larger than its archive: it is bounded.
TEST(ClientPackageReader, AnEntryOver64MiBUnpackedIsRefused) {
  std::string big(std::size_t{64} << 20, ' ');
  big += "x";
  EXPECT_EQ(read(make_archive({{"pipeline.yaml", big}}), "p.tar.gz"),
            "error: 'pipeline.yaml' in the tar.gz archive is larger than 64 MiB once unpacked");
}

}  // namespace
}  // namespace pipec::client::kfp
