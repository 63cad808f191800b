#include "passes/collectives/collective_opt_utils.h"

#include <cctype>
#include <functional>
#include <numeric>
#include <string>
#include <string_view>

#include "absl/strings/numbers.h"
#include "hlo/query.h"
#include "passes/collectives/collective_rewrite_utils.h"

namespace hlogym {
namespace {

// The integer value of an effectively scalar integer constant.
std::optional<int64_t> ScalarConstant(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kConstant || instruction->attrs().literal == nullptr ||
      !instruction->shape().IsArray() || !IsIntegralType(instruction->shape().element_type()) ||
      instruction->attrs().literal->element_count() != 1) {
    return std::nullopt;
  }
  return instruction->attrs().literal->GetAsInt64(0);
}

const Instruction* SkipLayoutOps(const Instruction* instruction) {
  while ((instruction->opcode() == Opcode::kBitcast || instruction->opcode() == Opcode::kReshape ||
          instruction->opcode() == Opcode::kCopy) &&
         instruction->operand_count() == 1) {
    instruction = instruction->operand(0);
  }
  return instruction;
}

// A dynamic-slice of a rank-1 s32/u32 constant or iota: a table lookup.
bool IsTableLookup(const Instruction* instruction) {
  instruction = SkipLayoutOps(instruction);
  if (instruction->opcode() != Opcode::kDynamicSlice || instruction->operand_count() != 2) {
    return false;
  }
  const Instruction* table = instruction->operand(0);
  const PrimitiveType type = table->shape().element_type();
  return (table->opcode() == Opcode::kIota ||
          (table->opcode() == Opcode::kConstant && table->attrs().literal != nullptr)) &&
         table->shape().IsArray() && table->shape().rank() == 1 &&
         (type == PrimitiveType::kS32 || type == PrimitiveType::kU32);
}

// What `instruction` evaluates to on device `id` when it is the device id
// (as `map_id` defines) or a chain of table lookups of it; -1 otherwise.
using MapId = std::function<int64_t(const Instruction*, int64_t)>;

int64_t TableEntry(const Instruction* lookup, int64_t index) {
  const Instruction* table = lookup->operand(0);
  if (table->opcode() == Opcode::kIota) return index;
  if (index < 0 || index >= table->attrs().literal->element_count()) return -1;
  return table->attrs().literal->GetAsInt64(index);
}

int64_t ValueForId(const Instruction* index, int64_t id, const MapId& map_id) {
  if (int64_t mapped = map_id(index, id); mapped >= 0) return mapped;
  if (!IsTableLookup(index)) return -1;
  const Instruction* lookup = SkipLayoutOps(index);
  int64_t inner = ValueForId(lookup->operand(1), id, map_id);
  if (inner < 0) return -1;
  const int64_t size = lookup->operand(0)->shape().dimensions(0);
  return TableEntry(lookup, std::min(inner, size - 1));
}

// Whether `offset` is shard_size * j on the j-th device of every group.
bool IsPerIdOffset(const Instruction* offset, int64_t shard_size, const MapId& map_id,
                   const std::vector<std::vector<int64_t>>& groups, int64_t group_size) {
  const bool iota_group = groups.empty();
  switch (offset->opcode()) {
    case Opcode::kMultiply: {
      if (!offset->shape().IsArray() || offset->shape().ElementCount() != 1) return false;
      for (int side = 0; side < 2; ++side) {
        std::optional<int64_t> factor = ScalarConstant(offset->operand(side));
        if (!factor.has_value()) continue;
        if (*factor <= 0 || shard_size % *factor != 0) return false;
        return IsPerIdOffset(offset->operand(1 - side), shard_size / *factor, map_id, groups,
                             group_size);
      }
      return false;
    }
    case Opcode::kBitcast:
    case Opcode::kReshape:
    case Opcode::kCopy:
      if (IsTableLookup(offset)) break;
      return IsPerIdOffset(offset->operand(0), shard_size, map_id, groups, group_size);
    case Opcode::kConvert: {
      const PrimitiveType from = offset->operand(0)->shape().element_type();
      if (!IsIntegralType(from) || BitWidth(from) > BitWidth(offset->shape().element_type())) {
        return false;
      }
      return IsPerIdOffset(offset->operand(0), shard_size, map_id, groups, group_size);
    }
    case Opcode::kClamp: {
      std::optional<int64_t> low = ScalarConstant(offset->operand(0));
      std::optional<int64_t> high = ScalarConstant(offset->operand(2));
      if (!low || !high || *low != 0 || *high < (group_size - 1) * shard_size) return false;
      return IsPerIdOffset(offset->operand(1), shard_size, map_id, groups, group_size);
    }
    default:
      break;
  }
  const int64_t num_groups = iota_group ? 1 : static_cast<int64_t>(groups.size());
  const bool lookup = IsTableLookup(offset);
  for (int64_t g = 0; g < num_groups; ++g) {
    for (int64_t j = 0; j < group_size; ++j) {
      const int64_t id = iota_group ? j : groups[g][j];
      int64_t value;
      if (lookup) {
        const Instruction* table_lookup = SkipLayoutOps(offset);
        int64_t index = ValueForId(table_lookup->operand(1), id, map_id);
        if (index < 0) return false;
        const int64_t size = table_lookup->operand(0)->shape().dimensions(0);
        value = TableEntry(table_lookup, std::min(index, size - 1));
      } else {
        value = map_id(offset, id);
      }
      if (value != shard_size * j) return false;
    }
  }
  return true;
}

}  // namespace

std::optional<DynamicSliceSpec> MatchDynamicSliceOfCollective(const Instruction* collective) {
  if (!collective->shape().IsArray() || collective->operand_count() != 1 ||
      HasConstrainedLayout(*collective) || collective->user_count() != 1) {
    return std::nullopt;
  }
  const Module& module = *collective->parent()->parent();
  const int64_t num_replicas = ReplicaCount(module);
  const int64_t num_partitions = NumPartitions(module);
  const bool cross_module = HasChannelId(*collective);
  const bool global_ids = UsesGlobalDeviceIds(*collective);
  if (cross_module && num_partitions <= 1) return std::nullopt;
  absl::StatusOr<ReplicaGroupList> groups = GetReplicaGroups(*collective);
  if (!groups.ok()) return std::nullopt;
  for (const auto& group : *groups) {
    if (group.size() != groups->front().size() || group.empty()) return std::nullopt;
  }
  Instruction* ds = collective->users()[0];
  if (ds->opcode() != Opcode::kDynamicSlice || ds->operand(0) != collective) return std::nullopt;

  int64_t group_size = 0;
  MapId map_id;
  std::vector<std::vector<int64_t>> offset_groups = *groups;
  if (!cross_module) {
    group_size = groups->empty() ? num_replicas : static_cast<int64_t>(groups->front().size());
    map_id = [](const Instruction* hlo, int64_t id) -> int64_t {
      return hlo->opcode() == Opcode::kReplicaId ? id : -1;
    };
  } else if (global_ids) {
    if (groups->empty()) return std::nullopt;
    group_size = static_cast<int64_t>(groups->front().size());
    bool orthogonal = true;
    std::vector<int64_t> index_of_partition(num_partitions, -1);
    for (const auto& group : *groups) {
      for (size_t i = 0; i < group.size(); ++i) {
        const int64_t partition = group[i] % num_partitions;
        if (index_of_partition[partition] == -1) {
          index_of_partition[partition] = static_cast<int64_t>(i);
        } else if (index_of_partition[partition] != static_cast<int64_t>(i) ||
                   group[i] / num_partitions != group[0] / num_partitions) {
          orthogonal = false;
        }
      }
    }
    map_id = [num_partitions, num_replicas, orthogonal](const Instruction* hlo,
                                                        int64_t id) -> int64_t {
      if (hlo->opcode() == Opcode::kReplicaId) return num_partitions == 1 ? id : -1;
      if (hlo->opcode() == Opcode::kPartitionId) {
        if (num_replicas == 1) return id;
        return orthogonal ? id % num_partitions : -1;
      }
      auto replica_times_partitions = [&](const Instruction* operand) {
        if (operand->opcode() != Opcode::kMultiply) return false;
        for (int side = 0; side < 2; ++side) {
          if (operand->operand(side)->opcode() == Opcode::kReplicaId &&
              ScalarConstant(operand->operand(1 - side)) == num_partitions) {
            return true;
          }
        }
        return false;
      };
      if (hlo->opcode() == Opcode::kAdd) {
        for (int side = 0; side < 2; ++side) {
          if (hlo->operand(side)->opcode() == Opcode::kPartitionId &&
              replica_times_partitions(hlo->operand(1 - side))) {
            return id;
          }
        }
      }
      return -1;
    };
  } else {
    // Cross-partition without global ids: each group one replica.
    if (static_cast<int64_t>(groups->size()) != num_replicas || groups->front().size() != 1) {
      return std::nullopt;
    }
    group_size = num_partitions;
    offset_groups.clear();
    map_id = [](const Instruction* hlo, int64_t id) -> int64_t {
      return hlo->opcode() == Opcode::kPartitionId ? id : -1;
    };
  }
  if (group_size < 2) return std::nullopt;

  // The one dimension the dynamic-slice narrows.
  const Shape& full = collective->shape();
  if (ds->operand_count() != full.rank() + 1 ||
      static_cast<int64_t>(ds->attrs().dynamic_slice_sizes.size()) != full.rank()) {
    return std::nullopt;
  }
  int64_t split_dim = -1;
  for (int64_t d = 0; d < full.rank(); ++d) {
    if (ds->attrs().dynamic_slice_sizes[d] == full.dimensions(d)) continue;
    if (split_dim != -1) return std::nullopt;
    split_dim = d;
  }
  if (split_dim == -1) return std::nullopt;
  const int64_t shard = ds->attrs().dynamic_slice_sizes[split_dim];
  if (shard <= 0 || full.dimensions(split_dim) / shard != group_size) return std::nullopt;
  if (!IsPerIdOffset(ds->operand(split_dim + 1), shard, map_id, offset_groups, group_size)) {
    return std::nullopt;
  }
  DynamicSliceSpec spec;
  spec.dynamic_slice = ds;
  spec.split_dim = split_dim;
  spec.group_size = group_size;
  return spec;
}

}  // namespace hlogym
