#pragma once
// A throw-away certificate authority for the TLS tests: made with OpenSSL at run time (no
// key material in the repository), valid for a day, EC P-256.

#include <string>

namespace pipec::runtime::testing {

/// PEM texts: a CA, a server certificate for 127.0.0.1 and a client certificate, both
/// signed by the CA, and `other_ca`, a CA that signed neither.
struct TestPki {
  std::string ca_cert;
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string other_ca_cert;
};

/// Makes a new TestPki. Aborts the test binary if OpenSSL fails (a broken environment).
[[nodiscard]] TestPki make_test_pki();

/// Standard base64 (what a kubeconfig's `*-data` fields hold).
[[nodiscard]] std::string base64(const std::string& bytes);

}  // namespace pipec::runtime::testing
