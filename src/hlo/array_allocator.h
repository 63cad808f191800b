#ifndef HLOGYM_HLO_ARRAY_ALLOCATOR_H_
#define HLOGYM_HLO_ARRAY_ALLOCATOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace hlogym {

// Memory for array data: literals and the evaluator's values. Arrays of 2 MiB or more, freed, are
// kept for reuse, up to 1 GiB (array_allocator.cc says why), until ReleaseCachedArrayBytes: memory
// fresh from the kernel costs a page fault and the zeroing of each page on first touch.
// Smaller arrays come from malloc as usual. Never returns null.
void* AllocateArrayBytes(std::size_t bytes);
// `bytes`: what AllocateArrayBytes was asked for.
void FreeArrayBytes(void* data, std::size_t bytes) noexcept;
// Hands the freed blocks kept for reuse back to the system: CheckEquivalent does at its end, so
// that a process (a Ray worker, a Python session) holds them only while it checks.
void ReleaseCachedArrayBytes() noexcept;
// Bytes of freed blocks kept for reuse now.
std::size_t CachedArrayBytes() noexcept;

// The same as a standard allocator, for std::vector.
template <typename T>
struct ArrayAllocator {
  using value_type = T;
  ArrayAllocator() = default;
  template <typename U>
  ArrayAllocator(const ArrayAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(AllocateArrayBytes(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { FreeArrayBytes(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const ArrayAllocator<U>&) const noexcept {
    return true;
  }
};

// A vector whose data comes from AllocateArrayBytes: for an evaluator's temporaries the size of
// an array (a canonicalized operand, a rearranged result), so that they reuse freed blocks too.
template <typename T>
using ArrayVector = std::vector<T, ArrayAllocator<T>>;

}  // namespace hlogym

#endif  // HLOGYM_HLO_ARRAY_ALLOCATOR_H_
