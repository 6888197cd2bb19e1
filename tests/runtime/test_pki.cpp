#include "tests/runtime/test_pki.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace pipec::runtime::testing {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "test_pki: OpenSSL failed: %s\n", what);
  std::abort();
}

Key new_key() {
  Key key(EVP_EC_gen("P-256"));
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

// A certificate for `key` named `cn`, signed by `issuer` (itself when null) with
// `issuer_key`, carrying the given v3 extensions (name, value).
Cert new_cert(EVP_PKEY* key, const char* cn, long serial, X509* issuer, EVP_PKEY* issuer_key,
              const std::vector<std::pair<int, const char*>>& extensions) {
  Cert cert(X509_new());
  check(cert && X509_set_version(cert.get(), 2) == 1, "X509_new");
  check(ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial) == 1, "serial");
  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr, "notBefore");
  check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400) != nullptr, "notAfter");
  check(X509_set_pubkey(cert.get(), key) == 1, "pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(cn), -1, -1, 0) == 1,
        "CN");
  X509* signer = issuer ? issuer : cert.get();
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) == 1, "issuer");
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, signer, cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) {
    std::unique_ptr<X509_EXTENSION, Free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
    check(ext && X509_add_ext(cert.get(), ext.get(), -1) == 1, value);
  }
  check(X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

std::string pem(X509* cert) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  check(bio && PEM_write_bio_X509(bio.get(), cert) == 1, "PEM_write_bio_X509");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, Free> bio(BIO_new(BIO_s_mem()));
  check(bio && PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "PEM_write_bio_PrivateKey");
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

struct Ca {
  Key key;
  Cert cert;
};

Ca new_ca(const char* cn, long serial) {
  Ca ca{new_key(), nullptr};
  ca.cert = new_cert(ca.key.get(), cn, serial, nullptr, nullptr,
                     {{NID_basic_constraints, "critical,CA:TRUE"},
                      {NID_key_usage, "critical,keyCertSign,cRLSign"},
                      {NID_subject_key_identifier, "hash"}});
  return ca;
}

}  // namespace

TestPki make_test_pki() {
  TestPki pki;
  Ca ca = new_ca("pipec test CA", 1);
  Key server_key = new_key(), client_key = new_key();
  Cert server = new_cert(server_key.get(), "127.0.0.1", 2, ca.cert.get(), ca.key.get(),
                         {{NID_basic_constraints, "critical,CA:FALSE"},
                          {NID_subject_alt_name, "IP:127.0.0.1"},
                          {NID_ext_key_usage, "serverAuth"},
                          {NID_authority_key_identifier, "keyid"}});
  Cert client = new_cert(client_key.get(), "system:serviceaccount:team:pipeline-runner", 3,
                         ca.cert.get(), ca.key.get(),
                         {{NID_basic_constraints, "critical,CA:FALSE"},
                          {NID_ext_key_usage, "clientAuth"},
                          {NID_authority_key_identifier, "keyid"}});
  pki.ca_cert = pem(ca.cert.get());
  pki.server_cert = pem(server.get());
  pki.server_key = pem(server_key.get());
  pki.client_cert = pem(client.get());
  pki.client_key = pem(client_key.get());
  pki.other_ca_cert = pem(new_ca("some other CA", 4).cert.get());
  return pki;
}

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace pipec::runtime::testing
