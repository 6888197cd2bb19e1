#pragma once
// A small HTTP layer for the KFP client: requests and responses as values, and an
// HttpTransport interface so that tests can record requests (or fake answers)
// without a network. CurlTransport is the real one (RAII over a libcurl easy handle).

#include <chrono>
#include <functional>
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

/// An answer's body handed on as it comes, instead of kept (a log of any size).
struct BodyStream {
  /// Called once the status and the headers are in: true hands the body to `write` (no
  /// size bound: the receiver bounds what it keeps), false keeps it in the response's
  /// body as any answer (bounded), e.g. for an error's message.
  std::function<bool(long status, std::string_view content_type)> accept;
  /// Gets the body in pieces; false ends the transfer (an error).
  std::function<bool(std::string_view piece)> write;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // absolute, already encoded
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // sent as is when `file` is empty
  std::string content_type;         // for `body`
  std::optional<FilePart> file;     // when set: a multipart/form-data body with this one part
  const BodyStream* stream = nullptr;  // when set, see BodyStream
};

/// Why send() had no (whole) answer: what the caller may retry depends on it.
enum class SendFailure {
  None,
  TooLarge,  // the answer is over input::kMaxAnswerBytes: the same again on a retry
  TimedOut,  // no connection within the connect timeout, or the answer stalled
  Other,     // refused, reset, name or TLS failure, ...
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string location;      // where a 3xx answer points (redirects are never followed)
  std::string content_type;  // the Content-Type header, "" when none
  bool connected = false;    // a connection was made (even when no whole answer came)
  bool streamed = false;     // the body went to the request's BodyStream
  SendFailure failure = SendFailure::None;
};

/// Sends one request and waits for its answer. A non-2xx answer is a response, not an
/// error; the Status is an error only when no answer came (refused, reset, timeout,
/// TLS failure), and `failure` says which. Implementations never put header values in
/// error messages.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual Status send(const HttpRequest& request, HttpResponse& response) = 0;
};

/// The KFP client's defaults (docs/client.md "Timeouts"); --request-timeout sets both.
inline constexpr std::chrono::seconds kDefaultRequestTimeout{30};
inline constexpr std::chrono::seconds kMaxConnectTimeout{10};
/// An answer slower than this many bytes a second for the whole stall time has stalled
/// (a server that sends a byte a second never finishes a request otherwise).
inline constexpr long kLowSpeedBytes = 1024;

struct TransportOptions {
  bool verify_tls = true;       // off only with --insecure-skip-tls-verify
  std::string ca_file;          // extra CA bundle (PEM), "" for the system's
  std::chrono::milliseconds connect_timeout{kMaxConnectTimeout};
  /// The transfer ends when it moves fewer than kLowSpeedBytes a second for this long
  /// (whole seconds, at least 1; 0: no such bound).
  std::chrono::seconds stall_timeout{kDefaultRequestTimeout};
  std::chrono::milliseconds timeout{0};  // the whole request; 0: no bound
};

/// The connect and stall timeouts of one --request-timeout value: stall = `timeout`
/// (rounded up to whole seconds), connect = the shorter of `timeout` and 10 s.
void set_request_timeout(TransportOptions& options, std::chrono::milliseconds timeout);

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
