#ifndef HLOGYM_HLO_ARRAY_ALLOCATOR_H_
#define HLOGYM_HLO_ARRAY_ALLOCATOR_H_

#include <cstddef>
#include <new>

namespace hlogym {

// Memory for array data: literals and the evaluator's values. Arrays of 2 MiB or more are aligned
// to 2 MiB and marked for transparent huge pages, so that writing a fresh 256 MiB output takes
// about 128 page faults instead of 65,000 (the faults had cost a third of an evaluation that only
// wrote its output). Smaller arrays come from malloc as usual. Never returns null.
void* AllocateArrayBytes(std::size_t bytes);
void FreeArrayBytes(void* data) noexcept;

// The same as a standard allocator, for std::vector.
template <typename T>
struct ArrayAllocator {
  using value_type = T;
  ArrayAllocator() = default;
  template <typename U>
  ArrayAllocator(const ArrayAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(AllocateArrayBytes(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { FreeArrayBytes(p); }
  template <typename U>
  bool operator==(const ArrayAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_ARRAY_ALLOCATOR_H_
