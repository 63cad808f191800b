#include "hlo/name_set.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hlogym {

std::string NameSet::Unique(std::string_view prefix) {
  if (Insert(prefix)) return std::string(prefix);
  std::string_view stem = prefix;
  int64_t start = 1;
  const size_t dot = prefix.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < prefix.size() && prefix.size() - dot - 1 < 18 &&
      std::all_of(prefix.begin() + dot + 1, prefix.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    stem = prefix.substr(0, dot);
    int64_t suffix = 0;
    if (absl::SimpleAtoi(absl::string_view(prefix.data() + dot + 1, prefix.size() - dot - 1),
                         &suffix)) {
      start = suffix + 1;
    }
  }
  const std::string stem_key(stem);
  int64_t& taken_below = taken_below_[stem_key];
  // Every number below taken_below is taken: start there when that skips nothing untried.
  const bool contiguous = start <= std::max<int64_t>(taken_below, 1);
  int64_t n = contiguous ? std::max<int64_t>(taken_below, start) : start;
  while (true) {
    std::string candidate = absl::StrCat(stem_key, ".", n);
    if (Insert(candidate)) {
      if (contiguous) taken_below = n + 1;
      return candidate;
    }
    ++n;
  }
}

}  // namespace hlogym
