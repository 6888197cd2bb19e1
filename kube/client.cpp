// libcurl stays inside this file. Each call owns an easy handle (RAII), so the watch and
// the log follower can run on two threads without sharing curl state.
#include "kube/client.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include <curl/curl.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "input/base64.hpp"
#include "input/limits.hpp"
#include "input/read.hpp"
#include "input/yaml.hpp"

namespace pipec::kube {
namespace {

// A token, certificate or namespace file: a regular file of bounded size.
std::optional<std::string> read_file(const std::string& path) {
  std::string text, error;
  if (!input::read_file(path, input::kMaxKubeconfigBytes, text, error)) return std::nullopt;
  return text;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct MultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

constexpr long kStreamBufferSize = 512L << 10;

struct Transfer {
  CURL* curl = nullptr;
  std::string body;
  const std::function<bool(std::string_view)>* on_data = nullptr;
  const std::function<bool()>* cancel = nullptr;
  bool stopped_by_callback = false;
  bool cancelled = false;
  bool too_large = false;
};

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::size_t n = size * count;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (t->on_data && status >= 200 && status < 300) {
    if (!(*t->on_data)(std::string_view(data, n))) {
      t->stopped_by_callback = true;
      return 0;
    }
    return n;
  }
  // An answer past the bound ends the transfer (CURLE_WRITE_ERROR) and is an error.
  if (t->body.size() + n > input::kMaxAnswerBytes) {
    t->too_large = true;
    return 0;
  }
  t->body.append(data, n);
  return n;
}

}  // namespace

std::optional<KubeConfig> in_cluster_config(const InClusterPaths& paths, std::string& error) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    error = "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set";
    return std::nullopt;
  }
  KubeConfig c;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  c.server = fmt::format("https://{}:{}", h, port);
  if (!read_file(paths.token)) {
    error = fmt::format("cannot read the service-account token '{}'", paths.token);
    return std::nullopt;
  }
  c.token_file = paths.token;
  c.ca_file = paths.ca;
  if (auto ns = read_file(paths.namespace_file)) c.namespace_name = trim(*ns);
  return c;
}

std::optional<KubeConfig> kubeconfig_from_file(const std::string& path, std::string& error) {
  namespace fs = std::filesystem;
  KubeConfig c;
  try {
    std::string text, problem;
    YAML::Node root;
    if (!input::read_file(path, input::kMaxKubeconfigBytes, text, problem) ||
        !input::load_yaml(text, root, problem)) {
      error = fmt::format("cannot read kubeconfig '{}': {}", path, problem);
      return std::nullopt;
    }
    auto current = root["current-context"] ? root["current-context"].as<std::string>() : "";
    auto find = [&](const char* list, const std::string& name) -> YAML::Node {
      if (root[list] && root[list].IsSequence())
        for (const auto& item : root[list])
          if (item["name"] && item["name"].as<std::string>() == name) return item;
      return YAML::Node();
    };
    YAML::Node context = find("contexts", current)["context"];
    if (!context) {
      error = fmt::format("kubeconfig '{}': current context '{}' is not defined", path, current);
      return std::nullopt;
    }
    auto cluster_name = context["cluster"] ? context["cluster"].as<std::string>() : "";
    auto user_name = context["user"] ? context["user"].as<std::string>() : "";
    if (context["namespace"]) c.namespace_name = context["namespace"].as<std::string>();
    YAML::Node cluster = find("clusters", cluster_name)["cluster"];
    if (!cluster || !cluster["server"]) {
      error = fmt::format("kubeconfig '{}': cluster '{}' has no server", path, cluster_name);
      return std::nullopt;
    }
    c.server = cluster["server"].as<std::string>();
    while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
    fs::path dir = fs::path(path).parent_path();
    auto file_field = [&](const YAML::Node& n, const char* key) -> std::string {
      if (!n || !n[key]) return {};
      fs::path p = n[key].as<std::string>();
      return (p.is_relative() ? dir / p : p).string();
    };
    auto data_field = [&](const YAML::Node& n, const char* key, std::string& out) -> bool {
      if (!n || !n[key]) return true;
      auto decoded = input::base64_decode(n[key].as<std::string>());
      if (!decoded) {
        error = fmt::format("kubeconfig '{}': '{}' is not base64", path, key);
        return false;
      }
      out = *decoded;
      return true;
    };
    c.ca_file = file_field(cluster, "certificate-authority");
    if (!data_field(cluster, "certificate-authority-data", c.ca_data)) return std::nullopt;
    c.insecure_skip_tls_verify =
        cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].as<bool>();
    YAML::Node user = find("users", user_name)["user"];
    if (user) {
      if (user["token"]) c.token = user["token"].as<std::string>();
      c.token_file = file_field(user, "tokenFile");
      c.client_cert_file = file_field(user, "client-certificate");
      c.client_key_file = file_field(user, "client-key");
      if (!data_field(user, "client-certificate-data", c.client_cert_data) ||
          !data_field(user, "client-key-data", c.client_key_data))
        return std::nullopt;
      if (user["exec"] || user["auth-provider"]) {
        error = fmt::format(
            "kubeconfig '{}': user '{}' uses an exec or auth-provider plugin, which the launcher "
            "does not run; use a token or a client certificate",
            path, user_name);
        return std::nullopt;
      }
    }
  } catch (const YAML::Exception& e) {
    error = fmt::format("cannot read kubeconfig '{}': {}", path, e.what());
    return std::nullopt;
  }
  return c;
}

std::optional<KubeConfig> load_kube_config(const std::string& explicit_path,
                                           const InClusterPaths& paths, std::string& error) {
  if (!explicit_path.empty()) return kubeconfig_from_file(explicit_path, error);
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  if (host && *host) return in_cluster_config(paths, error);
  std::string path;
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    path = env;
    path = path.substr(0, path.find(':'));
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    path = std::string(home) + "/.kube/config";
  }
  if (path.empty() || !std::filesystem::exists(path)) {
    error = "no Kubernetes configuration: not in a cluster and no kubeconfig (--kubeconfig, "
            "$KUBECONFIG or ~/.kube/config)";
    return std::nullopt;
  }
  return kubeconfig_from_file(path, error);
}

std::string url_encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~')
      out.push_back(static_cast<char>(c));
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

KubeClient::KubeClient(KubeConfig config) : config_(std::move(config)) { global_init(); }

KubeClient::KubeClient(KubeConfig config, KubeTransport transport)
    : config_(std::move(config)), transport_(std::move(transport)) {}

std::string KubeClient::bearer_token() {
  if (config_.token_file.empty()) return config_.token;
  // Re-read on every request: the kubelet rotates projected tokens and a read is cheap.
  if (auto t = read_file(config_.token_file)) return trim(*t);
  return config_.token;
}

HttpResponse KubeClient::perform(std::string_view method, const std::string& path,
                                 const std::string& body, long timeout_ms,
                                 const std::function<bool(std::string_view)>* on_data,
                                 const std::function<bool()>* cancel, const std::function<void()>* on_wait) {
  if (transport_) return transport_(method, path, body, on_data, cancel);
  HttpResponse response;
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    response.error = "cannot initialise libcurl";
    return response;
  }
  Transfer t;
  t.curl = curl.get();
  t.on_data = on_data;
  t.cancel = cancel;
  std::string url = config_.server + path;
  std::string method_text(method);
  curl_slist* raw = nullptr;
  raw = curl_slist_append(raw, "Accept: application/json");
  // No "Expect: 100-continue": a body is sent at once, not after a wait for the server's
  // interim answer (up to 1 s with a server that gives none).
  if (!body.empty()) raw = curl_slist_append(curl_slist_append(raw, "Content-Type: application/json"), "Expect:");
  auto token = bearer_token();
  if (!token.empty()) raw = curl_slist_append(raw, ("Authorization: Bearer " + token).c_str());
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw);

  CURL* c = curl.get();
  bool ok = curl_easy_setopt(c, CURLOPT_URL, url.c_str()) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method_text.c_str()) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get()) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_WRITEDATA, &t) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
            curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L) == CURLE_OK;
  if (ok && timeout_ms > 0) ok = curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms) == CURLE_OK;
  // A stream (a followed log) is read in large pieces: libcurl's default 16 KiB receive
  // buffer makes one multi-perform, one poll and one write to stdout per 16 KiB.
  if (ok && on_data) ok = curl_easy_setopt(c, CURLOPT_BUFFERSIZE, kStreamBufferSize) == CURLE_OK;
  if (ok && !body.empty())
    ok = curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str()) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size())) == CURLE_OK;
  if (ok && method == "HEAD") ok = curl_easy_setopt(c, CURLOPT_NOBODY, 1L) == CURLE_OK;
  // TLS: the cluster CA (file or data), an optional client certificate.
  if (ok && !config_.ca_file.empty())
    ok = curl_easy_setopt(c, CURLOPT_CAINFO, config_.ca_file.c_str()) == CURLE_OK;
  curl_blob ca{config_.ca_data.data(), config_.ca_data.size(), CURL_BLOB_NOCOPY};
  if (ok && !config_.ca_data.empty()) ok = curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca) == CURLE_OK;
  if (ok && !config_.client_cert_file.empty())
    ok = curl_easy_setopt(c, CURLOPT_SSLCERT, config_.client_cert_file.c_str()) == CURLE_OK;
  if (ok && !config_.client_key_file.empty())
    ok = curl_easy_setopt(c, CURLOPT_SSLKEY, config_.client_key_file.c_str()) == CURLE_OK;
  curl_blob cert{config_.client_cert_data.data(), config_.client_cert_data.size(), CURL_BLOB_NOCOPY};
  curl_blob key{config_.client_key_data.data(), config_.client_key_data.size(), CURL_BLOB_NOCOPY};
  if (ok && !config_.client_cert_data.empty())
    ok = curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM") == CURLE_OK;
  if (ok && !config_.client_key_data.empty())
    ok = curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM") == CURLE_OK;
  if (ok && config_.insecure_skip_tls_verify)
    ok = curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L) == CURLE_OK &&
         curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L) == CURLE_OK;
  if (!ok) {
    response.error = "cannot configure libcurl";
    return response;
  }
  // The multi interface lets the wait be cut short every 50 ms to poll `cancel`.
  CURLcode rc = CURLE_OK;
  {
    std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
    if (!multi || curl_multi_add_handle(multi.get(), c) != CURLM_OK) {
      response.error = "cannot initialise libcurl";
      return response;
    }
    int running = 1;
    bool done = false;
    while (!done) {
      if (curl_multi_perform(multi.get(), &running) != CURLM_OK) {
        rc = CURLE_FAILED_INIT;
        break;
      }
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
        if (msg->msg == CURLMSG_DONE) {
          rc = msg->data.result;
          done = true;
        }
      }
      if (on_wait && *on_wait) (*on_wait)();
      if (done || running == 0) break;
      if (cancel && (*cancel)()) {
        t.cancelled = true;
        rc = CURLE_ABORTED_BY_CALLBACK;
        break;
      }
      curl_multi_poll(multi.get(), nullptr, 0, 50, nullptr);
    }
    curl_multi_remove_handle(multi.get(), c);
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(t.body);
  response.cancelled = t.cancelled;
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && t.stopped_by_callback)) {
    response.error = t.cancelled    ? "cancelled"
                     : t.too_large ? "the answer is larger than " + input::size_text(input::kMaxAnswerBytes)
                                   : curl_easy_strerror(rc);
  }
  return response;
}

HttpResponse KubeClient::request(std::string_view method, const std::string& path,
                                 const std::string& body, long timeout_ms) {
  auto r = perform(method, path, body, timeout_ms, nullptr, nullptr);
  if (r.status == 401 && !config_.token_file.empty())
    r = perform(method, path, body, timeout_ms, nullptr, nullptr);
  return r;
}

HttpResponse KubeClient::stream(const std::string& path,
                                const std::function<bool(std::string_view)>& on_data,
                                const std::function<bool()>& cancel, const std::function<void()>& on_wait) {
  auto r = perform("GET", path, {}, 0, &on_data, &cancel, &on_wait);
  // A 401 carries no data to the callback, so a retry with a re-read token repeats nothing.
  if (r.status == 401 && !config_.token_file.empty())
    r = perform("GET", path, {}, 0, &on_data, &cancel, &on_wait);
  return r;
}

}  // namespace pipec::kube
