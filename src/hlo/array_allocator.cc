#include "hlo/array_allocator.h"

#include <sys/mman.h>

#include <cstdlib>

namespace hlogym {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}  // namespace

void* AllocateArrayBytes(std::size_t bytes) {
  void* data;
  if (bytes >= kHugePage) {
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    data = std::aligned_alloc(kHugePage, rounded);
    // Only advice: without transparent huge pages the memory is ordinary pages.
    if (data != nullptr) madvise(data, rounded, MADV_HUGEPAGE);
  } else {
    data = std::malloc(bytes > 0 ? bytes : 1);
  }
  if (data == nullptr) throw std::bad_alloc();
  return data;
}

void FreeArrayBytes(void* data) noexcept { std::free(data); }

}  // namespace hlogym
