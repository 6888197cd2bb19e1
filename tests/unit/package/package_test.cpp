// compiler/package: the format by extension, and packages whose bytes depend on the YAML
// alone, read back with libarchive as KFP's API server reads them (one member,
// `pipeline.yaml`).
#include "compiler/package/package.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pipec {
namespace {

using package::Format;

struct Member {
  std::string name;
  std::string bytes;
  long long mtime = -1;
  long long uid = -1;
  int mode = 0;
};

std::vector<Member> members(const std::string& bytes) {
  std::vector<Member> out;
  archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_zip(a);
  EXPECT_EQ(archive_read_open_memory(a, bytes.data(), bytes.size()), ARCHIVE_OK);
  archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    Member m;
    m.name = archive_entry_pathname(e);
    m.mtime = archive_entry_mtime(e);
    m.uid = archive_entry_uid(e);
    m.mode = archive_entry_perm(e);
    char buf[4096];
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, sizeof buf)) > 0) m.bytes.append(buf, static_cast<size_t>(n));
    out.push_back(std::move(m));
  }
  archive_read_free(a);
  return out;
}

TEST(Package, TheFormatComesFromTheExtensionInAnyCase) {
  Format f{};
  ASSERT_TRUE(package::format_for_path("out/p.tar.gz", f));
  EXPECT_EQ(f, Format::TarGz);
  ASSERT_TRUE(package::format_for_path("Model.TGZ", f));
  EXPECT_EQ(f, Format::TarGz);
  ASSERT_TRUE(package::format_for_path("p.zip", f));
  EXPECT_EQ(f, Format::Zip);
  ASSERT_TRUE(package::format_for_path("OUT.YAML", f));
  EXPECT_EQ(f, Format::Yaml);
  ASSERT_TRUE(package::format_for_path("p.yml", f));
  EXPECT_EQ(f, Format::Yaml);
  for (const char* path : {"p.json", "p.tar", "p", "p.gz", "yaml"}) EXPECT_FALSE(package::format_for_path(path, f)) << path;
}

TEST(Package, YamlIsTheYamlItself) {
  EXPECT_EQ(package::make_package(Format::Yaml, "a: 1\n"), "a: 1\n");
}

TEST(Package, ArchivesHoldOnePipelineYamlWithFixedMetadata) {
  const std::string yaml = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n";
  for (Format f : {Format::TarGz, Format::Zip}) {
    std::vector<Member> got = members(package::make_package(f, yaml));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].name, "pipeline.yaml");
    EXPECT_EQ(got[0].bytes, yaml);
    EXPECT_EQ(got[0].mtime, 0);
    EXPECT_EQ(got[0].uid, 0);
    EXPECT_EQ(got[0].mode, 0644);
  }
}

TEST(Package, TheSameYamlGivesTheSameBytesAndAnotherYamlOthers) {
  for (Format f : {Format::TarGz, Format::Zip}) {
    std::string a = package::make_package(f, "x: 1\n");
    EXPECT_EQ(a, package::make_package(f, "x: 1\n"));
    EXPECT_NE(a, package::make_package(f, "x: 2\n"));
  }
  // The gzip header carries no timestamp (bytes 4-7) and no file name (flag bit 3).
  std::string tgz = package::make_package(Format::TarGz, "x: 1\n");
  ASSERT_GT(tgz.size(), 10u);
  EXPECT_EQ(tgz.substr(4, 4), std::string(4, '\0'));
  EXPECT_EQ(tgz[3] & 0x08, 0);
}

}  // namespace
}  // namespace pipec
