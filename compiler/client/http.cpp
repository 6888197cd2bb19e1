// CurlTransport: one libcurl easy handle behind HttpTransport. Guarantees: TLS peer and
// host verification stay on unless TransportOptions says otherwise; no header value
// (the bearer token among them) is ever copied into an error message; redirects are not
// followed (a redirect would resend the Authorization header to another host).

#include "compiler/client/http.hpp"

#include <algorithm>
#include <cstdint>

#include <curl/curl.h>
#include <fmt/format.h>

#include "input/limits.hpp"
#include "input/read.hpp"

namespace pipec::client {

namespace {

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};

void ensure_global_init() {
  static CurlGlobal global;
  (void)global;
}

// An answer longer than the bound ends the transfer (returning less than given makes
// libcurl stop with CURLE_WRITE_ERROR), rather than growing without end. With a
// BodyStream that accepts the answer, the pieces go there instead (unbounded).
struct BodySink {
  CURL* curl = nullptr;
  HttpResponse* response = nullptr;
  const BodyStream* stream = nullptr;
  bool decided = false;  // whether the stream was asked
  bool too_large = false;
  bool stopped = false;  // the stream's receiver ended the transfer
};

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  HttpResponse& response = *sink->response;
  if (sink->stream && !sink->decided) {
    sink->decided = true;
    long status = 0;
    char* type = nullptr;
    curl_easy_getinfo(sink->curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(sink->curl, CURLINFO_CONTENT_TYPE, &type);
    response.streamed = sink->stream->accept && sink->stream->accept(status, type ? type : "");
  }
  if (response.streamed) {
    if (sink->stream->write(std::string_view(data, size * count))) return size * count;
    sink->stopped = true;
    return 0;
  }
  if (response.body.size() + size * count > input::kMaxAnswerBytes) {
    sink->too_large = true;
    return 0;
  }
  response.body.append(data, size * count);
  return size * count;
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// FNV-1a, to derive a boundary from the content (deterministic bodies for tests).
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// A filename safe inside the quoted Content-Disposition parameter.
std::string safe_filename(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? std::string("pipeline.yaml") : out;
}

}  // namespace

std::pair<std::string, std::string> multipart_body(const FilePart& part) {
  std::uint64_t seed = fnv1a(part.content);
  std::string boundary;
  do {
    boundary = fmt::format("----pipec-{:016x}", seed);
    seed = fnv1a(boundary, seed);
  } while (part.content.find(boundary) != std::string::npos);
  std::string body;
  body.reserve(part.content.size() + 256);
  body += "--" + boundary + "\r\n";
  body += fmt::format("Content-Disposition: form-data; name=\"{}\"; filename=\"{}\"\r\n",
                      safe_filename(part.field), safe_filename(part.filename));
  body += "Content-Type: application/octet-stream\r\n\r\n";
  body += part.content;
  body += "\r\n--" + boundary + "--\r\n";
  return {std::move(body), "multipart/form-data; boundary=" + boundary};
}

std::string url_encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned>(c));
    }
  }
  return out;
}

void set_request_timeout(TransportOptions& options, std::chrono::milliseconds timeout) {
  auto seconds = std::chrono::ceil<std::chrono::seconds>(timeout);
  options.stall_timeout = std::max(seconds, std::chrono::seconds(1));
  options.connect_timeout = std::min<std::chrono::milliseconds>(timeout, kMaxConnectTimeout);
  options.timeout = std::chrono::milliseconds(0);
}

struct CurlTransport::Impl {
  TransportOptions options;
  CURL* handle = nullptr;
};

CurlTransport::CurlTransport(TransportOptions options) : impl_(std::make_unique<Impl>()) {
  ensure_global_init();
  impl_->options = std::move(options);
  impl_->handle = curl_easy_init();
}

CurlTransport::~CurlTransport() {
  if (impl_->handle) curl_easy_cleanup(impl_->handle);
}

Status CurlTransport::send(const HttpRequest& request, HttpResponse& response) {
  CURL* curl = impl_->handle;
  if (!curl) return Status::error("cannot initialise libcurl");
  curl_easy_reset(curl);
  const TransportOptions& opt = impl_->options;

  response = HttpResponse{};
  char errbuf[CURL_ERROR_SIZE] = {0};
  std::string body;
  std::string content_type = request.content_type;
  const std::string* payload = &request.body;
  if (request.file) {
    auto [multipart, type] = multipart_body(*request.file);
    body = std::move(multipart);
    content_type = std::move(type);
    payload = &body;
  }

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&](const std::string& line) {
    curl_slist* next = curl_slist_append(headers.get(), line.c_str());
    if (next) {
      (void)headers.release();
      headers.reset(next);
    }
  };
  for (const auto& [name, value] : request.headers) {
    // A line break would end the header and start another: refuse, naming only the header
    // (its value may be a secret).
    if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
      return Status::error(fmt::format("the {} header holds a line break or a NUL byte", name));
    add_header(name + ": " + value);
  }
  if (!content_type.empty()) add_header("Content-Type: " + content_type);
  add_header("Expect:");  // no 100-continue round trip for uploads

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "pipec");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(opt.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(opt.timeout.count()));
  if (opt.stall_timeout.count() > 0) {
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, kLowSpeedBytes);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(opt.stall_timeout.count()));
  }
  // A Content-Length over the bound is refused before the body comes (a streamed body
  // has no bound).
  if (!request.stream)
    curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE,
                     static_cast<curl_off_t>(input::kMaxAnswerBytes));
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, opt.verify_tls ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, opt.verify_tls ? 2L : 0L);
  if (!opt.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, opt.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
  BodySink sink{curl, &response, request.stream};
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, payload->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload->size()));
    if (request.method != "POST") curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  CURLcode code = curl_easy_perform(curl);
  curl_off_t connect_time = 0;
  response.connected =
      curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connect_time) == CURLE_OK &&
      connect_time > 0;
  char* content_type_header = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type_header) == CURLE_OK &&
      content_type_header)
    response.content_type = content_type_header;
  if (code != CURLE_OK) {
    bool too_large = sink.too_large || code == CURLE_FILESIZE_EXCEEDED;
    response.failure = too_large                          ? SendFailure::TooLarge
                       : code == CURLE_OPERATION_TIMEDOUT ? SendFailure::TimedOut
                                                          : SendFailure::Other;
    std::string detail =
        too_large      ? "the answer is larger than " + input::size_text(input::kMaxAnswerBytes)
        : sink.stopped ? std::string("the receiver of the answer stopped it")
        : errbuf[0]    ? std::string(errbuf)
                       : std::string(curl_easy_strerror(code));
    response.body.clear();
    return Status::error(detail);
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  char* location = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location)
    response.location = location;
  return Status::ok();
}

}  // namespace pipec::client
