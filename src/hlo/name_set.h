// The set of names taken in a module, cheap to copy: a shared frozen part
// plus the names added since the last freeze. Module clones share the frozen
// part, so cloning does not copy every name.
#ifndef HLOGYM_HLO_NAME_SET_H_
#define HLOGYM_HLO_NAME_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace hlogym {

class NameSet {
 public:
  bool Contains(std::string_view name) const {
    absl::string_view key(name.data(), name.size());
    return recent_.contains(key) || (frozen_ != nullptr && frozen_->contains(key));
  }

  // Adds `name`; false if it was taken already.
  bool Insert(std::string_view name) {
    if (Contains(name)) return false;
    recent_.insert(std::string(name));
    return true;
  }

  // Takes and returns `prefix` when it is free, else the first free "stem.N",
  // numbering on after an existing ".N" suffix of `prefix` (as XLA's name
  // uniquer does). Names are never released, so every number a probe finds
  // taken is remembered per stem (as intervals), and no number is probed twice:
  // a pass that adds thousands of "convert.N", or asks for "add.123" in a module
  // whose adds are numbered densely from the parser, costs a look-up per name.
  std::string Unique(std::string_view prefix);

  // Moves the recent names into a new shared frozen set.
  void Freeze() {
    if (recent_.empty()) return;
    frozen_ = Merged();
    recent_.clear();
  }

  // A copy for a module clone. Folds the recent names into a new shared
  // frozen set when they have grown, so copies stay cheap over long chains
  // of clones (the gym clones on every step).
  // The copy starts without the numbers known taken (a clone stays cheap; it
  // learns them again by probing, each number once).
  NameSet Copy() const {
    NameSet copy;
    if (recent_.size() <= kMaxRecent) {
      copy.frozen_ = frozen_;
      copy.recent_ = recent_;
      return copy;
    }
    copy.frozen_ = Merged();
    return copy;
  }

 private:
  std::shared_ptr<const absl::flat_hash_set<std::string>> Merged() const {
    auto merged = frozen_ != nullptr ? std::make_shared<absl::flat_hash_set<std::string>>(*frozen_)
                                     : std::make_shared<absl::flat_hash_set<std::string>>();
    merged->insert(recent_.begin(), recent_.end());
    return merged;
  }

  static constexpr size_t kMaxRecent = 256;
  std::shared_ptr<const absl::flat_hash_set<std::string>> frozen_;
  absl::flat_hash_set<std::string> recent_;
  // Stem -> the numbers N for which "stem.N" is known to be taken, as disjoint,
  // non-adjacent intervals [first, end) keyed by first.
  using Intervals = absl::btree_map<int64_t, int64_t>;
  absl::flat_hash_map<std::string, Intervals> known_taken_;
};

}  // namespace hlogym

#endif  // HLOGYM_HLO_NAME_SET_H_
