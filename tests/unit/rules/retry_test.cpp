// The retry evaluator (rules/retry.hpp), as docs/language.md "Retries that know why" says:
// the compiler, the launcher and run --local decide with it.
#include "rules/retry.hpp"
#include "rules/quantities.hpp"

#include <gtest/gtest.h>

namespace pipec::rules {
namespace {

std::vector<RetryOn> list(std::string_view text) {
  std::string why;
  auto on = parse_retry_on_list(text, why);
  EXPECT_TRUE(on) << text << ": " << why;
  return on ? *on : std::vector<RetryOn>{};
}

struct Case {
  const char* on;
  std::optional<int> exit_code;
  const char* reason;
  const char* message;
  bool retry;
};

TEST(Retry, DecidesAsDocumented) {
  const Case cases[] = {
      // oom: reason OOMKilled, exit 137 (SIGKILL) or a message saying OOMKilled
      {"oom", 137, "OOMKilled", "", true},
      {"oom", 137, "", "", true},  // run --local: killed by SIGKILL
      {"oom", std::nullopt, "", "OOMKilled (exit code 137)", true},  // Argo's node message
      {"oom", 1, "Error", "", false},  // exit 1 is not OOM-like
      {"oom", 143, "Error", "", false},  // SIGTERM is not
      // evicted
      {"evicted", std::nullopt, "Evicted", "", true},
      {"evicted", std::nullopt, "", "The node was low on resource: memory.", true},
      {"evicted", std::nullopt, "", "Pod was evicted", true},
      {"evicted", 137, "OOMKilled", "", false},
      // exit codes
      {"exit:1", 1, "Error", "", true},
      {"exit:3,exit:75", 75, "Error", "", true},
      {"exit:3", 4, "Error", "", false},
      {"exit:0", std::nullopt, "", "", false},  // no exit code: never matches a code
      // message substrings, case-sensitive
      {"message:connection reset", 1, "Error", "read: connection reset by peer", true},
      {"message:connection reset", 1, "Error", "Connection Reset", false},
      // lists: any item matching
      {"oom,exit:1", 1, "Error", "", true},
      {"oom,evicted", 2, "Error", "failed", false},
      // no list: every failure
      {"", 1, "Error", "", true},
      {"", std::nullopt, "", "", true},
  };
  int n = 0;
  for (const auto& c : cases) {
    Failure f{c.exit_code, c.reason, c.message};
    EXPECT_EQ(should_retry(list(c.on), f), c.retry)
        << "case " << n << ": on '" << c.on << "', exit " << (c.exit_code ? *c.exit_code : -1) << ", reason '"
        << c.reason << "', message '" << c.message << "'";
    ++n;
  }
  EXPECT_GE(n, 12);
}

TEST(Retry, ReadsAndWritesItems) {
  std::string why;
  for (const char* text : {"oom", "evicted", "exit:0", "exit:255", "message:CUDA error: out of memory"}) {
    auto on = parse_retry_on(text, why);
    ASSERT_TRUE(on) << text << ": " << why;
    EXPECT_EQ(retry_on_text(*on), text);
  }
  for (const char* text : {"OOM", "exit:", "exit:256", "exit:-1", "exit:1a", "message:", "message:it's",
                           "message:{{x}}", "message:a,b", "message:a\\b", "sometimes"}) {
    why.clear();
    EXPECT_FALSE(parse_retry_on(text, why)) << text;
    EXPECT_FALSE(why.empty()) << text;
  }
  EXPECT_FALSE(parse_retry_on(std::string("message:") + std::string(201, 'x'), why));
  EXPECT_TRUE(parse_retry_on(std::string("message:") + std::string(200, 'x'), why));
  EXPECT_FALSE(parse_retry_on_list("oom,,exit:1", why));
}

TEST(Retry, GrowsMemoryUpToTheMaximum) {
  EXPECT_EQ(grown_memory("2Gi", 1.5, "", 0), "2Gi");
  EXPECT_EQ(grown_memory("2Gi", 1.5, "", 1), "3Gi");
  EXPECT_EQ(grown_memory("2Gi", 1.5, "", 2), "4608Mi");
  EXPECT_EQ(grown_memory("2Gi", 2, "6Gi", 1), "4Gi");
  EXPECT_EQ(grown_memory("2Gi", 2, "6Gi", 2), "6Gi");  // 8Gi, held at the maximum
  EXPECT_EQ(grown_memory("2Gi", 2, "6Gi", 3), "6Gi");
  EXPECT_EQ(grown_memory("1G", 2, "", 1), "1908Mi");  // 2e9 bytes, rounded up to a whole Mi
  EXPECT_EQ(grown_memory("512Mi", 2, "8Gi", 1), "1Gi");
  EXPECT_EQ(*quantity_value("2Gi"), 2147483648.0L);
  EXPECT_EQ(*quantity_value("1500M"), 1.5e9L);
  EXPECT_EQ(*quantity_value("1e3"), 1000.0L);
  EXPECT_FALSE(quantity_value("4GB"));
}

}  // namespace
}  // namespace pipec::rules
