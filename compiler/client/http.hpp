#pragma once
// A small HTTP layer for the KFP client: requests and responses as values, and an
// HttpTransport interface so that tests can record requests (or fake answers)
// without a network. CurlTransport is the real one (RAII over a libcurl easy handle).

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/base/status.hpp"

namespace pipec::client {

/// One file part of a multipart/form-data body.
struct FilePart {
  std::string field;     // e.g. "uploadfile"
  std::string filename;  // sent as the part's filename (the KFP server reads its extension)
  std::string content;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // absolute, already encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // sent as is when `file` is empty
  std::string content_type;         // for `body`
  std::optional<FilePart> file;     // when set: a multipart/form-data body with this one part
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string location;  // where a 3xx answer points (redirects are never followed)
};

/// Sends one request and waits for its answer. A non-2xx answer is a response, not an
/// error; the Status is an error only when no answer came (refused, reset, timeout,
/// TLS failure). Implementations never put header values in error messages.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual Status send(const HttpRequest& request, HttpResponse& response) = 0;
};

struct TransportOptions {
  bool verify_tls = true;       // off only with --insecure-skip-tls-verify
  std::string ca_file;          // extra CA bundle (PEM), "" for the system's
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds timeout{120000};  // whole request
};

/// libcurl. One easy handle, reused (keep-alive); not thread-safe.
class CurlTransport final : public HttpTransport {
 public:
  explicit CurlTransport(TransportOptions options);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  Status send(const HttpRequest& request, HttpResponse& response) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The multipart/form-data body for `part` and its Content-Type header value
/// (with a boundary that does not occur in the content).
std::pair<std::string, std::string> multipart_body(const FilePart& part);

/// Percent-encodes `text` for a URL query or path segment (RFC 3986 unreserved kept).
std::string url_encode(std::string_view text);

}  // namespace pipec::client
