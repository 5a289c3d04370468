// Result<T>: a value or a non-OK Status. Member names follow std::expected
// (has_value, value, error) so a later migration to C++23 stays mechanical.
#ifndef GRAINSTORE_RESULT_H_
#define GRAINSTORE_RESULT_H_

#include <cassert>
#include <optional>
#include <utility>

#include "grainstore/status.h"

namespace grainstore {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "Result built from an OK status has no value");
  }

  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return has_value(); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  // The failure; OK when has_value().
  const Status& error() const { return status_; }
  Status status() const { return status_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace grainstore

// Propagates a non-OK Status from an expression returning Status.
#define GRAINSTORE_RETURN_IF_ERROR(expr)            \
  do {                                              \
    ::grainstore::Status _gs_status = (expr);       \
    if (!_gs_status.ok()) return _gs_status;        \
  } while (0)

#endif  // GRAINSTORE_RESULT_H_
