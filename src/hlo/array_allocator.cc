#include "hlo/array_allocator.h"

#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace hlogym {
namespace {

// Arrays of at least this many bytes are blocks: their size rounded up to a multiple of it (so
// that arrays of nearby sizes share the blocks kept for reuse), kept for reuse when freed.
constexpr std::size_t kBlockBytes = std::size_t{2} << 20;
// The most bytes of freed blocks kept for reuse.
constexpr std::size_t kMaxCachedBytes = std::size_t{1} << 30;

std::size_t RoundedToBlocks(std::size_t bytes) {
  return (bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
}

// Freed blocks kept for reuse, by size. An evaluation frees and allocates arrays of the
// same few sizes over and over, and a block handed back to the system costs the kernel zeroing
// its pages again when the next one is touched: page faults were 43% of the check's time on a
// ResNet training step. A per-size free list of at most kMaxCachedBytes keeps them.
class BlockCache {
 public:
  void* Take(std::size_t rounded) {
    std::lock_guard lock(mu_);
    auto it = free_.find(rounded);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* block = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= rounded;
    return block;
  }
  // False if the cache is full: the caller frees the block.
  bool Keep(void* block, std::size_t rounded) {
    std::lock_guard lock(mu_);
    if (cached_bytes_ + rounded > kMaxCachedBytes) return false;
    free_[rounded].push_back(block);
    cached_bytes_ += rounded;
    return true;
  }
  void Release() {
    std::lock_guard lock(mu_);
    for (auto& [size, blocks] : free_) {
      for (void* block : blocks) std::free(block);
    }
    free_.clear();
    cached_bytes_ = 0;
  }
  std::size_t cached_bytes() {
    std::lock_guard lock(mu_);
    return cached_bytes_;
  }

 private:
  std::mutex mu_;  // guards the two below
  absl::flat_hash_map<std::size_t, std::vector<void*>> free_;
  std::size_t cached_bytes_ = 0;
};

BlockCache& Cache() {
  static BlockCache* cache = new BlockCache;  // never destroyed: blocks may be freed at exit
  return *cache;
}

}  // namespace

void* AllocateArrayBytes(std::size_t bytes) {
  void* data;
  if (bytes >= kBlockBytes) {
    const std::size_t rounded = RoundedToBlocks(bytes);
    if (void* cached = Cache().Take(rounded)) return cached;
    // Ordinary pages, not transparent huge ones (MADV_HUGEPAGE): where the kernel must compact
    // memory to find a 2 MiB page it does so in the fault, and the check of a ResNet-18 training
    // step spent 2 s of system time and more there (docs/performance.md).
    data = std::malloc(rounded);
  } else {
    data = std::malloc(bytes > 0 ? bytes : 1);
  }
  if (data == nullptr) throw std::bad_alloc();
  return data;
}

void FreeArrayBytes(void* data, std::size_t bytes) noexcept {
  if (data != nullptr && bytes >= kBlockBytes && Cache().Keep(data, RoundedToBlocks(bytes))) {
    return;
  }
  std::free(data);
}

void ReleaseCachedArrayBytes() noexcept { Cache().Release(); }

std::size_t CachedArrayBytes() noexcept { return Cache().cached_bytes(); }

}  // namespace hlogym
