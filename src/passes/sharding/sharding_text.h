// The sharding attribute as XLA writes it, read where the SPMD partitioning
// passes need it (spmd_partitioner.h, spmd_data_parallel.h): "{replicated}",
// "{manual}", or tiles over devices ("{devices=[4,1]<=[4]}",
// "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}").
#ifndef HLOGYM_PASSES_SHARDING_SHARDING_TEXT_H_
#define HLOGYM_PASSES_SHARDING_SHARDING_TEXT_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/module.h"

namespace hlogym {

// Shardy's mark of a function's result (jax.jit's out_shardings), a custom
// call of one operand.
inline constexpr std::string_view kFuncResultSharding = "xla.sdy.FuncResultSharding";

// The instruction's sharding attribute as written; "" when it has none.
std::string_view ShardingText(const Instruction& instruction);

// Whether the module's header lets XLA's sharding propagation choose the
// sharding of entry parameter `index` (`to` "parameters") or of output
// `index` (`to` "output"): allow_spmd_sharding_propagation_to_parameters or
// _to_output, one flag per parameter or output, or one for all of them; no
// where the header does not say.
bool ShardingMayPropagateTo(const Module& module, std::string_view to, int64_t index);

// A tiled sharding: how many tiles along each dimension (data dimensions
// first, then any subgroup ones), whether the devices are listed in order
// ("<=[N]" or "0,1,...,N-1"), and whether trailing tile dimensions replicate
// ("last_tile_dim_replicate" or "last_tile_dims="); `devices`, the device of
// each tile in row-major tile order, from the list or the iota
// ("<=[2,2]T(1,0)"), empty where neither reads.
struct TiledSharding {
  std::vector<int64_t> tiles;
  bool devices_in_order = false;
  bool subgroup_dims = false;
  std::vector<int64_t> devices;
};

// The element shardings of a tuple sharding ("{{replicated}, {devices=[4,1]<=[4]}}"),
// each with its braces; empty for any other.
std::vector<std::string_view> TupleShardingElements(std::string_view sharding);

// Nullopt for anything that is not "{devices=[...]...}".
std::optional<TiledSharding> ParseTiledSharding(std::string_view sharding);

}  // namespace hlogym

#endif  // HLOGYM_PASSES_SHARDING_SHARDING_TEXT_H_
