#include "tests/client/test_support.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pipec::client::testing {

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(PIPEC_CLIENT_TEST_DATA) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing test data " + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

kfp::Connection test_connection(const std::string& url, const std::string& token) {
  kfp::Connection connection;
  connection.host = url;
  connection.token = token;
  connection.token_source = token.empty() ? "" : "--token";
  connection.transport.connect_timeout = std::chrono::milliseconds(2000);
  connection.transport.timeout = std::chrono::milliseconds(5000);
  return connection;
}

kfp::RetryPolicy fast_retries(int attempts) {
  kfp::RetryPolicy policy;
  policy.get_attempts = attempts;
  policy.first_delay = std::chrono::milliseconds(10);
  policy.max_delay = std::chrono::milliseconds(40);
  return policy;
}

}  // namespace pipec::client::testing
