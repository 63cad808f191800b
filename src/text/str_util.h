// Small string helpers for src/text. The installed Abseil has its own
// string_view type (not std::string_view), so absl::StrCat cannot take the
// std::string_views this module works with; Cat can.
#ifndef HLOGYM_TEXT_STR_UTIL_H_
#define HLOGYM_TEXT_STR_UTIL_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace hlogym::text {

inline void AppendPiece(std::string* out, std::string_view s) { out->append(s); }
inline void AppendPiece(std::string* out, const char* s) { out->append(s); }
inline void AppendPiece(std::string* out, const std::string& s) { out->append(s); }
inline void AppendPiece(std::string* out, char c) { out->push_back(c); }
template <typename T>
requires(std::is_integral_v<T> && !std::is_same_v<T, char> &&
         !std::is_same_v<T, bool>) inline void AppendPiece(std::string* out, T v) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, ptr);
}

template <typename... Args>
void Append(std::string* out, const Args&... args) {
  (AppendPiece(out, args), ...);
}

template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (AppendPiece(&out, args), ...);
  return out;
}

}  // namespace hlogym::text

#endif  // HLOGYM_TEXT_STR_UTIL_H_
