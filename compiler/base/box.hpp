#pragma once

// Box<T>: an optional value kept on the heap. It does what the project uses of
// std::optional<T> (a test for a value, *, ->, assignment from a T, an optional<T> or
// nullopt, deep copies) in one pointer. Node types held once per step (ir::Step, ir::Loop, sema::Stmt) use it for
// large members that most nodes leave empty, such as a step's `when` condition, so
// that a pipeline of many plain steps stays small in memory.

#include <memory>
#include <optional>
#include <utility>

namespace pipec {

template <typename T>
class Box {
 public:
  Box() = default;
  Box(std::nullopt_t) {}  // NOLINT: converts as std::optional does
  Box(T value) : p_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as std::optional
  Box(std::optional<T> value)  // NOLINT: as std::optional
      : p_(value ? std::make_unique<T>(std::move(*value)) : nullptr) {}
  Box(const Box& other) : p_(other.p_ ? std::make_unique<T>(*other.p_) : nullptr) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& other) {
    if (this != &other) p_ = other.p_ ? std::make_unique<T>(*other.p_) : nullptr;
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  ~Box() = default;

  explicit operator bool() const { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace pipec
