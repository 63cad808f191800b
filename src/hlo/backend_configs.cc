#include "hlo/backend_configs.h"

#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace hlogym {

std::optional<EighConfig> ParseEighConfig(const Instruction& instruction) {
  const RawAttribute* raw = instruction.attrs().FindRaw("backend_config");
  if (raw == nullptr) return std::nullopt;
  std::string text = raw->value;
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  std::vector<std::string> parts = absl::StrSplit(text, ',');
  int lower = 0, sort = 0;
  EighConfig config;
  if (parts.size() != 4 || !absl::SimpleAtoi(parts[0], &lower) ||
      !absl::SimpleAtoi(parts[1], &sort) || !absl::SimpleAtoi(parts[2], &config.max_iter) ||
      !absl::SimpleAtof(parts[3], &config.tol)) {
    return std::nullopt;
  }
  config.lower = lower != 0;
  config.sort = sort != 0;
  return config;
}

std::optional<int64_t> FfiAttribute(const Instruction& instruction, std::string_view key) {
  const RawAttribute* raw = instruction.attrs().FindRaw("backend_config");
  if (raw == nullptr) return std::nullopt;
  const std::string& s = raw->value;
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t pos = s.find(key); pos != std::string::npos; pos = s.find(key, pos + 1)) {
    if (pos > 0 && is_ident(s[pos - 1])) continue;
    size_t i = pos + key.size();
    if (i < s.size() && is_ident(s[i])) continue;
    while (i < s.size() && (s[i] == ' ' || s[i] == '"' || s[i] == '\\')) ++i;
    if (i >= s.size() || (s[i] != '=' && s[i] != ':')) continue;
    ++i;
    while (i < s.size() && s[i] == ' ') ++i;
    if (s.compare(i, 4, "true") == 0) return 1;
    if (s.compare(i, 5, "false") == 0) return 0;
    size_t j = i;
    if (j < s.size() && s[j] == '-') ++j;
    const size_t digits = j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == digits) return std::nullopt;
    return std::stoll(s.substr(i, j - i));
  }
  return std::nullopt;
}

}  // namespace hlogym
