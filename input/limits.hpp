#pragma once
// Every limit a reader of outside input applies, in one place: the compiler, the KFP
// client, `pipec run --local`, the LSP server, the launcher and pipec-metrics all read
// through input/ (read.hpp, json.hpp, yaml.hpp) with these numbers. The docs state each
// (docs/language.md, docs/client.md, docs/local.md, docs/lsp.md, docs/runtime.md).

#include <cstddef>
#include <cstdint>

namespace pipec::input {

inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

/// A program: a .pipe file, a `use`d file, or standard input (`check -`, `fmt -`, `build -`).
inline constexpr std::uint64_t kMaxSourceBytes = 256 * kMiB;
/// A params file (`--params-file`), for `pipec run` and `pipec run --local`.
inline constexpr std::uint64_t kMaxParamsFileBytes = 16 * kMiB;
/// A step's output value in `pipec run --local` (the file the op writes).
inline constexpr std::uint64_t kMaxStepOutputBytes = 16 * kMiB;
/// A step's metric series file (metric-series.json: at most 50 metrics of 1027 points each
/// as the scraper writes it), read back by run --local, runs get and runs compare.
inline constexpr std::uint64_t kMaxSeriesFileBytes = 16 * kMiB;
/// A KFP ReadArtifact answer holding a step's series (`{"data": BASE64}` of a gzip'd tar
/// of metric-series.json: the base64 of a 16 MiB file that did not compress, and room to
/// spare), read by run --wait, runs wait and runs get; the file in it once unpacked is
/// bounded by kMaxSeriesFileBytes.
inline constexpr std::uint64_t kMaxSeriesAnswerBytes = 24 * kMiB;
/// The steps whose series one command reads from a KFP server (one request each).
inline constexpr std::size_t kMaxSeriesArtifacts = 20;
/// A package or spec read back (`pipec upload`, `pipec run FILE`), and the workflow or
/// spec inside a .tar.gz or .zip once unpacked.
inline constexpr std::uint64_t kMaxPackageBytes = 64 * kMiB;
/// One answer of the KFP API or the Kubernetes API.
inline constexpr std::uint64_t kMaxAnswerBytes = 64 * kMiB;
/// A kubeconfig file, and a token or certificate file it names.
inline constexpr std::uint64_t kMaxKubeconfigBytes = 16 * kMiB;
/// One LSP message body (Content-Length), and one header line.
inline constexpr std::uint64_t kMaxLspMessageBytes = 64 * kMiB;
inline constexpr std::uint64_t kMaxLspHeaderBytes = 8192;
/// A log line held whole (the launcher's log copier, the metric scraper): a longer one is
/// passed on in pieces as it comes.
inline constexpr std::uint64_t kMaxLogLineBytes = 1 * kMiB;
/// One line of a Kubernetes watch stream (one event).
inline constexpr std::uint64_t kMaxWatchEventBytes = 16 * kMiB;
/// Kubernetes events listed for one object in one request (`limit=`), and read of an answer.
inline constexpr std::size_t kMaxEventsListed = 100;

/// The answer of the interpreter that checks a Python op's function when a program is
/// checked (its signature as JSON).
inline constexpr std::uint64_t kMaxPythonCheckBytes = 16 * kMiB;

/// JSON and YAML documents nest at most this deep (as the language's own brackets).
inline constexpr std::size_t kMaxNesting = 256;
/// YAML aliases (`*name`) may add at most this many nodes to what a document writes out.
inline constexpr std::uint64_t kMaxAliasNodes = 100000;

}  // namespace pipec::input
