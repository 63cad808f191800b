// StrCat over std::string_view as well: Debian's Abseil is built with its own
// absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0), which absl::StrCat
// takes and std::string_view does not convert to.
#ifndef HLOGYM_HLO_STR_CAT_H_
#define HLOGYM_HLO_STR_CAT_H_

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace hlogym {
namespace str_cat_internal {

inline absl::string_view Conv(std::string_view s) { return absl::string_view(s.data(), s.size()); }
template <typename T>
const T& Conv(const T& t) {
  return t;
}

}  // namespace str_cat_internal

template <typename... A>
std::string StrCat(const A&... a) {
  return absl::StrCat(str_cat_internal::Conv(a)...);
}

}  // namespace hlogym

#endif  // HLOGYM_HLO_STR_CAT_H_
