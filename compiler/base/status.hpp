#pragma once

#include <string>
#include <utility>

namespace pipec {

/// The outcome of an operation on the environment (files, network, archives), as
/// opposed to a problem in the user's source, which is a Diagnostic.
class [[nodiscard]] Status {
 public:
  static Status ok() { return Status(); }
  static Status error(std::string message) { return Status(std::move(message)); }

  bool is_ok() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string& message() const { return message_; }

 private:
  Status() = default;
  explicit Status(std::string message) : failed_(true), message_(std::move(message)) {}
  bool failed_ = false;
  std::string message_;
};

#define PIPEC_UNREACHABLE() __builtin_unreachable()

}  // namespace pipec
