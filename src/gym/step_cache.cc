#include "gym/step_cache.h"

#include <algorithm>

namespace hlogym {

std::optional<StepOutcome> StepCache::Lookup(const Fingerprint& state, std::string_view pass) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(Key{state, std::string(pass)});
  if (it == index_.end()) {
    ++stats_.misses;
    return std::nullopt;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->outcome;
}

void StepCache::Insert(const Fingerprint& state, std::string_view pass, const StepOutcome& outcome,
                       bool holds_new_module) {
  if (max_instructions_ <= 0) return;
  const int64_t weight =
      holds_new_module && outcome.next ? std::max<int64_t>(1, outcome.next->op_count()) : 1;
  if (weight > max_instructions_) return;
  std::lock_guard<std::mutex> lock(mu_);
  Key key{state, std::string(pass)};
  if (index_.contains(key)) return;  // another thread got there first
  lru_.push_front(Entry{key, outcome, weight});
  index_.emplace(std::move(key), lru_.begin());
  stats_.instructions += weight;
  while (stats_.instructions > max_instructions_ && !lru_.empty()) {
    Entry& last = lru_.back();
    stats_.instructions -= last.weight;
    index_.erase(last.key);
    lru_.pop_back();
    ++stats_.evictions;
  }
  stats_.entries = static_cast<int64_t>(lru_.size());
}

void StepCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  lru_.clear();
  index_.clear();
  stats_.entries = 0;
  stats_.instructions = 0;
}

StepCacheStats StepCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace hlogym
