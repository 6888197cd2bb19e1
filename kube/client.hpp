#pragma once
// Kubernetes API access over libcurl: in-cluster or kubeconfig credentials, plain
// requests and streamed GETs (watches, followed logs).

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace pipec::kube {

/// Where the API server is and how to authenticate. `server` is a URL
/// (`https://10.0.0.1:443`; tests use `http://127.0.0.1:PORT`).
struct KubeConfig {
  std::string server;
  std::string namespace_name;  ///< the default namespace ("" when unknown)
  std::string token;           ///< a bearer token, or
  std::string token_file;      ///< a file holding it, re-read when it changes (rotation)
  std::string ca_file, ca_data;                    ///< PEM
  std::string client_cert_file, client_cert_data;  ///< PEM
  std::string client_key_file, client_key_data;    ///< PEM
  bool insecure_skip_tls_verify = false;
};

/// The service-account files of a pod; overridable for tests.
struct InClusterPaths {
  std::string token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

/// In-cluster configuration from KUBERNETES_SERVICE_HOST/PORT and the service-account
/// files. Returns nullopt and sets `error` when they are missing.
[[nodiscard]] std::optional<KubeConfig> in_cluster_config(const InClusterPaths& paths,
                                                          std::string& error);

/// The current context of a kubeconfig file (token, token file or client certificate;
/// `*-data` fields are base64; relative paths are taken from the file's folder).
[[nodiscard]] std::optional<KubeConfig> kubeconfig_from_file(const std::string& path,
                                                             std::string& error);

/// `explicit_path` if given, else in-cluster when KUBERNETES_SERVICE_HOST is set, else
/// $KUBECONFIG (its first entry) or ~/.kube/config.
[[nodiscard]] std::optional<KubeConfig> load_kube_config(const std::string& explicit_path,
                                                         const InClusterPaths& paths,
                                                         std::string& error);

/// The outcome of one request. `status` is 0 when no response arrived; `error` then says
/// why (connection refused, dropped stream, cancelled, ...). For a 2xx stream, `body`
/// is empty (the data went to the callback).
struct HttpResponse {
  long status = 0;
  std::string body;
  std::string error;
  bool cancelled = false;
  bool ok() const { return status >= 200 && status < 300 && error.empty(); }
};

/// What carries one request instead of libcurl (the fuzz targets' fake API server):
/// `on_data` is set for a streamed GET, whose 2xx body goes to it in pieces.
using KubeTransport = std::function<HttpResponse(
    std::string_view method, const std::string& path, const std::string& body,
    const std::function<bool(std::string_view)>* on_data, const std::function<bool()>* cancel)>;

/// A client of one API server. Thread-safe: each call uses its own curl handle.
class KubeClient {
 public:
  explicit KubeClient(KubeConfig config);
  /// The same over `transport` (tests): everything but the transfer itself is the same.
  KubeClient(KubeConfig config, KubeTransport transport);

  const KubeConfig& config() const { return config_; }

  /// One request; `path` starts with `/` and holds the query. A 401 re-reads the token
  /// file and retries once.
  HttpResponse request(std::string_view method, const std::string& path,
                       const std::string& body = {}, long timeout_ms = 30000);

  /// A streamed GET: each received piece of a 2xx body goes to `on_data` (return false to
  /// stop; libcurl hands over at most 16 KiB a call). `cancel` is polled while waiting
  /// (every 50 ms). `on_wait`, if given, is called whenever everything received so far has
  /// gone to `on_data` and the transfer is about to wait for more: the moment to write out
  /// what `on_data` gathered. A 401 is retried once, as above.
  HttpResponse stream(const std::string& path, const std::function<bool(std::string_view)>& on_data,
                      const std::function<bool()>& cancel, const std::function<void()>& on_wait = {});

 private:
  std::string bearer_token();
  HttpResponse perform(std::string_view method, const std::string& path, const std::string& body,
                       long timeout_ms, const std::function<bool(std::string_view)>* on_data,
                       const std::function<bool()>* cancel, const std::function<void()>* on_wait = nullptr);

  KubeConfig config_;
  KubeTransport transport_;
};

/// Percent-encodes a query value.
[[nodiscard]] std::string url_encode(std::string_view text);

}  // namespace pipec::kube
