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

// The items of `on` (a container op's `retries`, a training step's `retry_on`), each
// checked at its place by the one rule (rules::parse_retry_on).
void Checker::retry_on_items(const std::vector<Value>& items, std::vector<rules::RetryOn>& out) {
  std::vector<std::string> seen;
  for (const Value& v : items) {
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
    out.push_back(std::move(*on));
  }
}

std::optional<double> Checker::retry_memory_factor(const Value& v) {
  double f = v.is_literal() && v.literal.is_number() ? v.literal.get<double>() : 0;
  if (f > 1 && f <= 10) return f;
  diags_.error(v.range, "'memory_factor' must be a literal number above 1 and at most 10 (each "
                        "attempt's memory is the last one's times it)");
  return std::nullopt;
}

std::optional<std::string> Checker::retry_memory_max(const Value& v) {
  std::string text = v.is_literal() ? ir::literal_text(v.literal) : "";
  if (v.is_literal() && v.type.kind == TypeKind::String && rules::quantity_value(text)) return text;
  diags_.error(v.range, "'memory_max' must be a literal memory quantity such as \"16Gi\" (the most "
                        "an attempt gets)");
  return std::nullopt;
}

// `on: ["oom", "evicted", "exit:137", "message:connection reset"]`: the failures a retry
// may fix, each once.
void Checker::retry_on(const ast::Expression& e, ir::ContainerOp& c) {
  retry_on_items(words(e, "'on'"), c.retry_on);
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

// A training step's `retry_limit: 3, retry_on: ["oom"], memory_factor: 1.5, memory_max:
// "16Gi"`: the launcher re-creates the failed job (--retry-limit, --retry-on,
// --memory-factor, --memory-max; docs/runtime.md "Retries"). Literals, each checked where
// it is written by the rules of a container op's `retries {limit, on, memory_factor,
// memory_max}`.
void Checker::check_training_retries(const std::vector<std::pair<std::string, Value>>& args, const std::string& op) {
  const Value* limit = nullptr;
  const Value* on = nullptr;
  const Value* factor = nullptr;
  const Value* max = nullptr;
  for (const auto& [name, v] : args) {
    if (name == "retry_limit") limit = &v;
    if (name == "retry_on") on = &v;
    // 0 and "" (the defaults) say none.
    if (name == "memory_factor" && !(v.is_literal() && v.literal.is_number() && v.literal.get<double>() == 0))
      factor = &v;
    if (name == "memory_max" && !(v.is_literal() && ir::literal_text(v.literal).empty())) max = &v;
  }
  long long n = 0;
  if (limit) {
    if (limit->is_literal() && limit->literal.is_number_integer() && limit->literal.get<long long>() >= 0 &&
        limit->literal.get<long long>() <= rules::kMaxGrowingRetries)
      n = limit->literal.get<long long>();
    else
      diags_.error(limit->range, fmt::format("argument 'retry_limit' of {} must be a literal int from 0 to {} (how "
                                             "many times the launcher creates a failed job again)",
                                             op, rules::kMaxGrowingRetries));
  }
  std::vector<rules::RetryOn> reasons;
  if (on) {
    std::vector<Value> items;
    if (on->is_literal() && on->literal.is_array()) {
      for (const auto& item : on->literal) {
        Value word;
        word.literal = item;
        word.type = Type::scalar(item.is_string() ? TypeKind::String : TypeKind::Int);
        word.range = on->range;
        items.push_back(std::move(word));
      }
    } else if (on->kind == Value::Kind::List) {
      items = on->items;
    } else {
      items.push_back(*on);
    }
    retry_on_items(items, reasons);
  }
  std::optional<double> f = factor ? retry_memory_factor(*factor) : std::nullopt;
  if (max) {
    retry_memory_max(*max);
    if (!factor)
      diags_.error(max->range, "'memory_max' bounds a growing memory; say how it grows with 'memory_factor'");
  }
  const bool given = (on && !reasons.empty()) || f;
  if (given && limit && n == 0)
    diags_.error(limit->range, fmt::format("argument 'retry_limit' of {} must be at least 1 with 'retry_on' or "
                                           "'memory_factor'", op));
  if (given && !limit)
    diags_.error((on && !reasons.empty() ? on : factor)->range,
                 fmt::format("'retry_on' and 'memory_factor' need a 'retry_limit' (how many times the "
                             "launcher creates a failed job again)"));
}

}  // namespace pipec::sema::detail
