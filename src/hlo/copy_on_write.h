// CopyOnWrite<T>: a value held behind a shared pointer. Copies share the
// value; the first write through a holder that is not the only one gives it a
// private copy first. Instructions hold their shape and attributes this way,
// so cloning a module (what the gym does on every step) shares them instead
// of copying them, and freeing a clone only drops references.
//
// A reference from get() stays valid while its holder is neither written
// through nor destroyed; a reference from mutable_get() writes to this
// holder's value only until the holder is copied again.
#ifndef HLOGYM_HLO_COPY_ON_WRITE_H_
#define HLOGYM_HLO_COPY_ON_WRITE_H_

#include <atomic>
#include <memory>
#include <utility>

namespace hlogym {

template <typename T>
class CopyOnWrite {
 public:
  explicit CopyOnWrite(T value) : value_(std::make_shared<T>(std::move(value))) {}

  const T& get() const { return *value_; }

  T& mutable_get() {
    if (!IsUnique()) value_ = std::make_shared<T>(*value_);
    return *value_;
  }

  // Replaces the value in place when no one else holds it (references from
  // get() keep seeing the current value, as with a plain member).
  void set(T value) {
    if (IsUnique()) {
      *value_ = std::move(value);
    } else {
      value_ = std::make_shared<T>(std::move(value));
    }
  }

  // Whether both hold the very same value (then they are also equal).
  bool SharesWith(const CopyOnWrite& other) const { return value_ == other.value_; }

 private:
  bool IsUnique() const {
    if (value_.use_count() != 1) return false;
    // Other holders may have released the value from other threads; their
    // reads must happen before our writes.
    std::atomic_thread_fence(std::memory_order_acquire);
    return true;
  }

  std::shared_ptr<T> value_;
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_COPY_ON_WRITE_H_
