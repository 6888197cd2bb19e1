#include "compiler/client/kfp/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "input/limits.hpp"
#include "input/read.hpp"
#include "rules/durations.hpp"

namespace pipec::client::kfp {

namespace {

std::string trim(std::string text) {
  const char* space = " \t\r\n";
  std::size_t begin = text.find_first_not_of(space);
  if (begin == std::string::npos) return {};
  std::size_t end = text.find_last_not_of(space);
  return text.substr(begin, end - begin + 1);
}

// A token file: a regular file of bounded size.
bool read_text(const std::string& path, std::string& out, std::string& error) {
  return input::read_file(path, input::kMaxKubeconfigBytes, out, error);
}

}  // namespace

Status resolve_connection(const ConnectionFlags& flags, const GetEnv& getenv, Connection& out,
                          const std::string& default_token_path) {
  out = Connection{};
  auto env = [&](const char* name) -> std::string {
    const char* value = getenv ? getenv(name) : nullptr;
    return value ? std::string(value) : std::string();
  };

  std::string host = trim(flags.host.empty() ? env("KF_PIPELINES_ENDPOINT") : flags.host);
  if (host.empty())
    return Status::error("no Kubeflow Pipelines server: give --host URL or set KF_PIPELINES_ENDPOINT");
  if (host.find("://") == std::string::npos) host = "http://" + host;
  if (host.rfind("http://", 0) != 0 && host.rfind("https://", 0) != 0)
    return Status::error(fmt::format("--host '{}': expected an http:// or https:// URL", host));
  while (!host.empty() && host.back() == '/') host.pop_back();
  out.host = host;

  if (!flags.token.empty()) {
    out.token = trim(flags.token);
    out.token_source = "--token";
  } else if (std::string token = trim(env("KF_PIPELINES_TOKEN")); !token.empty()) {
    out.token = token;
    out.token_source = "KF_PIPELINES_TOKEN";
  } else if (std::string path = env("KF_PIPELINES_SA_TOKEN_PATH"); !path.empty()) {
    std::string text, error;
    if (!read_text(path, text, error))
      return Status::error(fmt::format("cannot read the token file '{}' (KF_PIPELINES_SA_TOKEN_PATH): {}",
                                       path, error));
    out.token = trim(text);
    out.token_source = path;
  } else if (std::string text, error;
             !default_token_path.empty() && read_text(default_token_path, text, error)) {
    out.token = trim(text);
    out.token_source = default_token_path;
  }

  out.cookie = trim(flags.cookie.empty() ? env("KF_PIPELINES_COOKIE") : flags.cookie);
  out.user = trim(flags.user);
  out.namespace_name = trim(flags.namespace_name);
  // Each goes into a header line: a CR, LF or NUL would end it and start another. Say
  // where the value came from, never the value (two of them are secrets).
  const std::pair<const std::string*, std::string> header_values[] = {
      {&out.token, out.token_source.empty() ? "the token" : "the token from " + out.token_source},
      {&out.cookie, flags.cookie.empty() ? "KF_PIPELINES_COOKIE" : "--cookie"},
      {&out.user, "--user"},
  };
  for (const auto& [value, source] : header_values) {
    if (value->find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
      return Status::error(fmt::format("{} holds a line break or a NUL byte; it cannot be sent "
                                       "in an HTTP header",
                                       source));
  }
  // A namespace is a DNS label; the server would refuse anything else.
  const std::string& ns = out.namespace_name;
  bool label = ns.size() <= 63 && (ns.empty() || (ns.front() != '-' && ns.back() != '-')) &&
               std::all_of(ns.begin(), ns.end(), [](char ch) {
                 return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
               });
  if (!label)
    return Status::error(fmt::format("--namespace {:?}: not a Kubernetes namespace (lowercase letters, "
                                     "digits and '-', at most 63)",
                                     ns));
  out.transport.verify_tls = !flags.insecure_skip_tls_verify;
  out.transport.ca_file = flags.ca_file;
  std::string timeout =
      trim(flags.request_timeout.empty() ? env("PIPEC_REQUEST_TIMEOUT") : flags.request_timeout);
  set_request_timeout(out.transport, kDefaultRequestTimeout);
  if (!timeout.empty()) {
    auto value = rules::parse_duration(timeout);
    if (!value || *value < std::chrono::seconds(1))
      return Status::error(fmt::format(
          "{} '{}': expected a duration of at least 1s, such as 30s or 2m",
          flags.request_timeout.empty() ? "PIPEC_REQUEST_TIMEOUT" : "--request-timeout", timeout));
    set_request_timeout(out.transport, *value);
  }
  return Status::ok();
}

std::string redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  std::size_t at = 0;
  while ((at = text.find(secret, at)) != std::string::npos) {
    text.replace(at, secret.size(), "[redacted]");
    at += 10;
  }
  return text;
}

std::string redact_secrets(const Connection& connection, std::string text) {
  text = redact(std::move(text), connection.token);
  if (connection.cookie.empty()) return text;
  text = redact(std::move(text), connection.cookie);
  std::string_view rest = connection.cookie;
  while (!rest.empty()) {
    std::string_view part = rest.substr(0, rest.find(';'));
    rest.remove_prefix(std::min(rest.size(), part.size() + 1));
    if (auto eq = part.find('='); eq != std::string_view::npos && part.size() - eq - 1 >= 8)
      text = redact(std::move(text), std::string(part.substr(eq + 1)));
  }
  return text;
}

RedactedStream::RedactedStream(std::ostream& to, const Connection& connection)
    : std::ostream(nullptr), buffer_(to, connection) {
  rdbuf(&buffer_);
}

RedactedStream::~RedactedStream() { buffer_.flush_line(); }

void RedactedStream::Buffer::flush_line() {
  if (line_.empty()) return;
  to_ << redact_secrets(connection_, std::move(line_));
  line_.clear();
}

RedactedStream::Buffer::int_type RedactedStream::Buffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  line_.push_back(traits_type::to_char_type(c));
  if (c == '\n') flush_line();
  return c;
}

std::streamsize RedactedStream::Buffer::xsputn(const char* s, std::streamsize n) {
  std::string_view text(s, static_cast<std::size_t>(n));
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::size_t take = nl == std::string_view::npos ? text.size() : nl + 1;
    line_.append(text.substr(0, take));
    text.remove_prefix(take);
    if (nl != std::string_view::npos) flush_line();
  }
  return n;
}

int RedactedStream::Buffer::sync() {
  flush_line();
  to_.flush();
  return 0;
}

}  // namespace pipec::client::kfp
