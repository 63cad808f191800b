#include "hlo/backend_configs.h"

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

}  // namespace hlogym
