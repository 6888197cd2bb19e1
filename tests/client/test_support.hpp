#pragma once
// Helpers shared by the client's tests.

#include <string>

#include "compiler/client/kfp/api.hpp"

namespace pipec::client::testing {

/// The text of tests/client/data/NAME.
std::string read_data(const std::string& name);

/// A connection to `url` with short timeouts, for tests.
kfp::Connection test_connection(const std::string& url, const std::string& token = {});

/// Retries that do not make the tests slow.
kfp::RetryPolicy fast_retries(int attempts = 3);

}  // namespace pipec::client::testing
