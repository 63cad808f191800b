// StepCache: memoized step results keyed by (module fingerprint, pass name).
// Passes are deterministic, so a state revisited with the same pass costs a
// lookup. Thread-safe; shared by the environments of a vectorized environment
// and by forks. Bounded by the number of instructions held by the cached
// result modules (least recently used entries are dropped first); results that
// leave the module unchanged hold no module of their own and count as 1.
#ifndef HLOGYM_GYM_STEP_CACHE_H_
#define HLOGYM_GYM_STEP_CACHE_H_

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "gym/module_state.h"

namespace hlogym {

struct StepOutcome {
  StatePtr next;         // the resulting state (the input state when the pass failed)
  bool changed = false;  // the pass reported a change and the fingerprint differs
  std::string error;     // non-empty when the pass failed
  double pass_ms = 0;    // time the pass (and clone, fingerprint, stats) took
  bool ran = false;      // the pass ran (its pre-check, MayChange, did not rule it out)
};

struct StepCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t entries = 0;
  int64_t instructions = 0;  // held by cached result modules
  int64_t evictions = 0;
};

class StepCache {
 public:
  // A budget of 0 disables caching.
  explicit StepCache(int64_t max_instructions = 2'000'000) : max_instructions_(max_instructions) {}

  std::optional<StepOutcome> Lookup(const Fingerprint& state, std::string_view pass);
  void Insert(const Fingerprint& state, std::string_view pass, const StepOutcome& outcome,
              bool holds_new_module);
  void Clear();
  StepCacheStats stats() const;
  int64_t max_instructions() const { return max_instructions_; }

 private:
  using Key = std::pair<Fingerprint, std::string>;
  struct Entry {
    Key key;
    StepOutcome outcome;
    int64_t weight;
  };
  mutable std::mutex mu_;
  int64_t max_instructions_;
  std::list<Entry> lru_;  // front = most recent
  absl::flat_hash_map<Key, std::list<Entry>::iterator> index_;
  StepCacheStats stats_;
};

}  // namespace hlogym

#endif  // HLOGYM_GYM_STEP_CACHE_H_
