// A container op's retries that know why (`retries {on: [...], memory_factor: F,
// memory_max: Q}`, read by Checker::retry_map): what to retry on and each attempt's memory
// are decided here, once (rules/retry.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>

#include "compiler/sema/checker.hpp"
#include "rules/quantities.hpp"
#include "rules/retry.hpp"

namespace pipec::sema::detail {

// `on: ["oom", "evicted", "exit:137", "message:connection reset"]`: the failures a retry
// may fix, each once.
void Checker::retry_on(const ast::Expression& e, ir::ContainerOp& c) {
  std::vector<std::string> seen;
  for (const Value& v : words(e, "'on'")) {
    std::string why;
    std::string text = v.is_literal() && v.type.kind == TypeKind::String ? ir::literal_text(v.literal) : "";
    auto on = text.empty() ? std::nullopt : rules::parse_retry_on(text, why);
    if (!on) {
      diags_.error(v.range, why.empty() ? "items of 'on' are literal strings: \"oom\", \"evicted\", "
                                          "\"exit:N\" or \"message:TEXT\""
                                        : why);
      continue;
    }
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) {
      diags_.error(v.range, fmt::format("'{}' is listed twice in 'on'", text));
      continue;
    }
    if (seen.size() == rules::kMaxRetryOn) {
      diags_.error(v.range, fmt::format("'on' lists at most {} reasons", rules::kMaxRetryOn));
      break;
    }
    seen.push_back(text);
    c.retry_on.push_back(std::move(*on));
  }
  if (const auto* list = node<ast::ListExpr>(strip(e)); list && list->items.empty())
    diags_.error(range_of(e), "'on' lists the failures to retry (\"oom\", \"evicted\", \"exit:N\", "
                              "\"message:TEXT\"); leave it out to retry every failure");
}

// Each attempt's memory, from the op's literal `resources {memory: ...}` (after the whole
// body is read: `resources` may come after `retries`).
void Checker::retry_memory(ir::ContainerOp& c) {
  if (!memory_factor_at_ || !c.retries || *c.retries > rules::kMaxGrowingRetries) return;
  const Value* memory = nullptr;
  for (const auto& [key, v] : c.resources)
    if (key == "memory") memory = &v;
  std::string base = memory && memory->is_literal() ? ir::literal_text(memory->literal) : "";
  if (base.empty() || !rules::quantity_value(base)) {
    diags_.error(*memory_factor_at_, "'memory_factor' grows the op's memory: give it a literal 'resources' "
                                     "memory such as {memory: \"4Gi\"}");
    return;
  }
  if (!c.retry_memory_max.empty() && *rules::quantity_value(c.retry_memory_max) < *rules::quantity_value(base)) {
    diags_.error(*memory_factor_at_, fmt::format("'memory_max' ({}) is below the op's memory ({})",
                                                 c.retry_memory_max, base));
    return;
  }
  for (long long attempt = 0; attempt <= *c.retries; ++attempt)
    c.retry_memory.push_back(
        rules::grown_memory(base, c.retry_memory_factor, c.retry_memory_max, static_cast<int>(attempt)));
}

}  // namespace pipec::sema::detail
