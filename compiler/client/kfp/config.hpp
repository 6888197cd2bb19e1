#pragma once
// Where the KFP API is and who we are, resolved as the KFP SDK users know it:
// flags first, then KF_PIPELINES_ENDPOINT, KF_PIPELINES_TOKEN, KF_PIPELINES_SA_TOKEN_PATH,
// and a session cookie for installs behind an auth proxy (KF_PIPELINES_COOKIE).

#include <functional>
#include <ostream>
#include <string>

#include "compiler/base/status.hpp"
#include "compiler/client/http.hpp"

namespace pipec::client::kfp {

/// What the command line said (empty: not given).
struct ConnectionFlags {
  std::string host;
  std::string token;
  std::string cookie;
  std::string user;
  std::string namespace_name;
  std::string ca_file;
  bool insecure_skip_tls_verify = false;
  std::string request_timeout;  // a duration ("30s"); "" = $PIPEC_REQUEST_TIMEOUT, else 30s
};

/// The resolved connection. `token` and `cookie` are secrets: they go only into the
/// Authorization and Cookie headers, never into output, logs or error messages.
struct Connection {
  std::string host;            // scheme://host[:port][/prefix], no trailing '/'
  std::string token;           // bearer token, "" for none
  std::string token_source;    // "--token", "KF_PIPELINES_TOKEN", a file path, or ""
  std::string cookie;          // sent as the Cookie header (`name=value[; ...]`), "" for none
  std::string user;            // sent as kubeflow-userid when set
  std::string namespace_name;  // multi-user installs
  TransportOptions transport;
};

/// Reads an environment variable (nullptr when unset); tests pass their own.
using GetEnv = std::function<const char*(const char*)>;

/// The default in-cluster token file of the KFP SDK.
inline constexpr const char* kDefaultTokenPath = "/var/run/secrets/kubeflow/pipelines/token";

/// Resolves the connection. The host comes from --host, else KF_PIPELINES_ENDPOINT
/// (a missing scheme means http://). The token comes from --token, else
/// KF_PIPELINES_TOKEN, else the file named by KF_PIPELINES_SA_TOKEN_PATH (an error if
/// it cannot be read), else the default in-cluster file when it exists.
/// The cookie comes from --cookie, else KF_PIPELINES_COOKIE (the session cookie an auth
/// proxy such as oauth2-proxy or Dex's authservice sets after login, e.g.
/// `authservice_session=...`).
/// The request timeout comes from --request-timeout, else PIPEC_REQUEST_TIMEOUT, else 30 s
/// (set_request_timeout in http.hpp: the stall timeout, and the connect timeout up to 10 s).
/// Returns an error when there is no host, a token file cannot be read, a value that
/// goes into a header holds a line break or a NUL (it would end the header early), or the
/// request timeout is not a duration of at least 1 s.
Status resolve_connection(const ConnectionFlags& flags, const GetEnv& getenv, Connection& out,
                          const std::string& default_token_path = kDefaultTokenPath);

/// Replaces every occurrence of `secret` in `text` with "[redacted]" (no-op for "").
std::string redact(std::string text, const std::string& secret);

/// `text` with the connection's secrets redacted: the token, the cookie, and each cookie
/// value of 8 characters or more (in case a server quotes just the value).
std::string redact_secrets(const Connection& connection, std::string text);

/// What a command prints, with the connection's secrets redacted whatever a server put in
/// its answers (an id, a name, an error text may quote them). Lines are passed on as they
/// end; the rest when it is destroyed.
class RedactedStream : public std::ostream {
 public:
  RedactedStream(std::ostream& to, const Connection& connection);
  ~RedactedStream() override;

 private:
  class Buffer : public std::streambuf {
   public:
    Buffer(std::ostream& to, const Connection& connection) : to_(to), connection_(connection) {}
    void flush_line();

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

   private:
    std::ostream& to_;
    const Connection& connection_;
    std::string line_;
  };
  Buffer buffer_;
};

}  // namespace pipec::client::kfp
