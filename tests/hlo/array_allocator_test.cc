#include "hlo/array_allocator.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace hlogym {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(ArrayAllocatorTest, AFreedLargeBlockServesTheNextArrayOfItsSize) {
  // 3 MiB and 3.5 MiB both round up to a 4 MiB block: the second gets the first's block back,
  // so the kernel does not zero fresh pages for it. (Emptied first: blocks other tests in this
  // process left could have filled the cache, and no block of another size may be taken.)
  ReleaseCachedArrayBytes();
  void* first = AllocateArrayBytes(3 * kMiB);
  std::memset(first, 1, 3 * kMiB);
  FreeArrayBytes(first, 3 * kMiB);
  void* second = AllocateArrayBytes(3 * kMiB + kMiB / 2);
  EXPECT_EQ(second, first);
  // Still written: memory fresh from the kernel would read zero.
  EXPECT_EQ(static_cast<const uint8_t*>(second)[2 * kMiB], 1);
  // A block of another size is not taken for it.
  void* third = AllocateArrayBytes(5 * kMiB);
  EXPECT_NE(third, first);
  FreeArrayBytes(second, 3 * kMiB + kMiB / 2);
  FreeArrayBytes(third, 5 * kMiB);
}

TEST(ArrayAllocatorTest, ReleaseHandsTheKeptBlocksBack) {
  void* block = AllocateArrayBytes(3 * kMiB);
  FreeArrayBytes(block, 3 * kMiB);
  EXPECT_GE(CachedArrayBytes(), 4 * kMiB);
  ReleaseCachedArrayBytes();
  EXPECT_EQ(CachedArrayBytes(), 0u);
}

TEST(ArrayAllocatorTest, SmallArraysAndVectorsStillWork) {
  ArrayVector<double> values(1000, 2.5);
  values.resize(3 * kMiB / sizeof(double), 1.0);
  EXPECT_EQ(values[999], 2.5);
  EXPECT_EQ(values.back(), 1.0);
  void* small = AllocateArrayBytes(0);
  EXPECT_NE(small, nullptr);
  FreeArrayBytes(small, 0);
}

}  // namespace
}  // namespace hlogym
