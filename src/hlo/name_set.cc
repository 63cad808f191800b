#include "hlo/name_set.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hlogym {
namespace {

// The first number at or after `n` not in `taken`.
int64_t FirstNotKnownTaken(const absl::btree_map<int64_t, int64_t>& taken, int64_t n) {
  auto it = taken.upper_bound(n);
  if (it == taken.begin()) return n;
  --it;  // the interval starting at or before n
  return it->second > n ? it->second : n;
}

// Adds `n` (not yet in `taken`), merging it with the intervals that end at n or start at n + 1.
void MarkTaken(absl::btree_map<int64_t, int64_t>& taken, int64_t n) {
  int64_t first = n, end = n + 1;
  auto next = taken.find(n + 1);
  if (next != taken.end()) {
    end = next->second;
    taken.erase(next);
  }
  auto it = taken.lower_bound(n);
  if (it != taken.begin() && std::prev(it)->second == n) {
    std::prev(it)->second = end;
    return;
  }
  taken.emplace(first, end);
}

}  // namespace

std::string NameSet::Unique(std::string_view prefix) {
  if (Insert(prefix)) return std::string(prefix);
  std::string_view stem = prefix;
  int64_t n = 1;
  const size_t dot = prefix.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < prefix.size() && prefix.size() - dot - 1 < 18 &&
      std::all_of(prefix.begin() + dot + 1, prefix.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    stem = prefix.substr(0, dot);
    int64_t suffix = 0;
    if (absl::SimpleAtoi(absl::string_view(prefix.data() + dot + 1, prefix.size() - dot - 1),
                         &suffix)) {
      n = suffix + 1;
    }
  }
  const std::string stem_key(stem);
  Intervals& taken = known_taken_[stem_key];
  while (true) {
    n = FirstNotKnownTaken(taken, n);
    std::string candidate = absl::StrCat(stem_key, ".", n);
    const bool free = Insert(candidate);
    MarkTaken(taken, n);
    if (free) return candidate;
    ++n;
  }
}

}  // namespace hlogym
