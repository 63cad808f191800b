#include "passes/sharding/sharding_text.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "hlo/replica_groups.h"
#include "hlo/str_cat.h"

namespace hlogym {

std::string_view ShardingText(const Instruction& instruction) {
  const RawAttribute* sharding = instruction.attrs().FindRaw("sharding");
  return sharding == nullptr ? std::string_view() : std::string_view(sharding->value);
}

std::optional<TiledSharding> ParseTiledSharding(std::string_view sharding) {
  constexpr std::string_view kDevices = "{devices=[";
  if (!sharding.starts_with(kDevices)) return std::nullopt;
  sharding.remove_prefix(kDevices.size());
  const size_t close = sharding.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  TiledSharding tiled;
  int64_t value = 0;
  for (const char c : sharding.substr(0, close + 1)) {
    if (c >= '0' && c <= '9' && value < (int64_t{1} << 40)) {
      value = value * 10 + (c - '0');
    } else if ((c == ',' || c == ']') && value >= 1) {
      tiled.tiles.push_back(value);
      value = 0;
    } else {
      return std::nullopt;
    }
  }
  int64_t devices = 1;
  for (int64_t t : tiled.tiles) devices *= t;
  const std::string_view rest = sharding.substr(close + 1);
  std::string in_order = "0";
  for (int64_t i = 1; i < devices; ++i) in_order += StrCat(",", i);
  tiled.devices_in_order = rest.starts_with(StrCat("<=[", devices, "]")) ||
                           (rest.starts_with(in_order) &&
                            (rest.size() == in_order.size() || rest[in_order.size()] == ' ' ||
                             rest[in_order.size()] == '}'));
  tiled.subgroup_dims = rest.find("last_tile_dim") != std::string_view::npos;
  const std::string_view listed = rest.substr(0, rest.find_first_of(" }"));
  if (listed.starts_with("<=")) {
    tiled.devices = ParseIotaList(listed).value_or(std::vector<int64_t>{});
  } else {
    const std::vector<std::string> entries = absl::StrSplit(std::string(listed), ',');
    for (const std::string& entry : entries) {
      int64_t device = 0;
      if (!absl::SimpleAtoi(entry, &device)) {
        tiled.devices.clear();
        break;
      }
      tiled.devices.push_back(device);
    }
  }
  if (static_cast<int64_t>(tiled.devices.size()) != devices) tiled.devices.clear();
  return tiled;
}

std::vector<std::string_view> TupleShardingElements(std::string_view sharding) {
  if (!sharding.starts_with("{{") || !sharding.ends_with("}")) return {};
  std::vector<std::string_view> elements;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 1; i + 1 < sharding.size(); ++i) {
    if (sharding[i] == '{' && depth++ == 0) begin = i;
    if (sharding[i] == '}' && --depth == 0)
      elements.push_back(sharding.substr(begin, i + 1 - begin));
    if (depth < 0) return {};
  }
  return depth == 0 ? elements : std::vector<std::string_view>{};
}

bool ShardingMayPropagateTo(const Module& module, std::string_view to, int64_t index) {
  const std::string key = StrCat("allow_spmd_sharding_propagation_to_", to);
  for (const RawAttribute& attr : module.raw_attributes()) {
    if (attr.key != key) continue;
    std::vector<bool> flags;  // "{true,false}", "{true}" or "true"
    for (std::string_view rest = attr.value;;) {
      const size_t t = rest.find("true"), f = rest.find("false");
      if (t == std::string_view::npos && f == std::string_view::npos) break;
      flags.push_back(t < f);
      rest.remove_prefix(t < f ? t + 4 : f + 5);
    }
    if (flags.size() == 1) return flags[0];
    return index < static_cast<int64_t>(flags.size()) && flags[index];
  }
  return false;
}

}  // namespace hlogym
