// The planning half of the data-parallel split (spmd_data_parallel.h): where
// each value of a module compiled for several partitions lives along one mesh
// axis, whole, split along one dimension or a partial result (Placement), and
// what must be gathered, sliced again or moved for that (DataParallelPlan),
// decided by PlanDataParallel; spmd_data_parallel.cc rewrites the module by
// the plan. Internal to spmd-partitioning.
#ifndef HLOGYM_PASSES_SHARDING_SPMD_DATA_PARALLEL_PLAN_H_
#define HLOGYM_PASSES_SHARDING_SPMD_DATA_PARALLEL_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "hlo/module.h"

namespace hlogym::data_parallel {

// Where a value lives along one mesh axis: whole on every partition of it,
// split along one dimension over them, or a partial result on each (a
// reduction over the split dimension), which an all-reduce right after it
// completes, leaving it whole.
struct Placement {
  enum class Kind { kWhole, kSplit, kPartial };
  Kind kind = Kind::kWhole;
  int64_t dim = -1;  // kSplit: the split dimension
  static Placement Whole() { return {}; }
  static Placement Split(int64_t dim) { return {Kind::kSplit, dim}; }
  static Placement Partial() { return {Kind::kPartial, -1}; }
  bool split() const { return kind == Kind::kSplit; }
};

// One axis of the device mesh a module is compiled for: `size` partitions
// along it, `stride` apart in partition order (the mesh laid out row-major
// over the partitions), of `partitions` in all. A module split over all of
// its partitions along one dimension has one axis, of every partition.
struct MeshAxis {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t partitions = 1;
  bool whole_mesh() const { return size == partitions; }
  int64_t Coordinate(int64_t partition) const { return partition / stride % size; }
  // The partitions that differ only along this axis, a group each, as an
  // all-reduce's replica_groups writes them.
  std::string Groups() const {
    std::string groups = "{";
    bool first_group = true;
    for (int64_t p = 0; p < partitions; ++p) {
      if (Coordinate(p) != 0) continue;
      absl::StrAppend(&groups, first_group ? "{" : ",{");
      first_group = false;
      for (int64_t i = 0; i < size; ++i)
        absl::StrAppend(&groups, i == 0 ? "" : ",", p + i * stride);
      groups += "}";
    }
    return groups + "}";
  }
  // Each partition's coordinate along the axis times `scale`: a table
  // partition-id reads a partition's offset or ordinal from.
  std::vector<int64_t> Offsets(int64_t scale) const {
    std::vector<int64_t> offsets(partitions);
    for (int64_t p = 0; p < partitions; ++p) offsets[p] = Coordinate(p) * scale;
    return offsets;
  }
};

// An element of a while loop's state: the loop and the element's index.
using LoopElement = std::pair<const Instruction*, int64_t>;

struct DataParallelPlan {
  MeshAxis axis;           // the mesh axis the plan splits along
  int64_t partitions = 1;  // its size
  // What the planning visits, users after their operands (PlanningOrder).
  std::vector<Instruction*> order;
  absl::flat_hash_map<const Instruction*, Placement> placements;
  // While loops, by the placement of each element of their state: the
  // loop's result and its condition's and body's parameter alike.
  absl::flat_hash_map<const Instruction*, std::vector<Placement>> loops;
  // The loop each condition and body belongs to.
  absl::flat_hash_map<const Computation*, const Instruction*> loop_of;
  // Elements of a loop's state that entered whole and must be split (the
  // body writes them back split, or a split user reads them): planned again
  // split from the start (PlanDataParallelWith).
  std::vector<std::pair<LoopElement, int64_t>> loop_splits_found;
  // Broadcasts of a split value (an FSDP-sharded bias or scale) that an
  // elementwise user combines with a value split along another dimension:
  // planned again with their operand gathered for them (PlanDataParallelWith).
  std::vector<const Instruction*> gathered_broadcasts_found;
  // Gathers of one element along the operand's split dimension (a
  // vocabulary-parallel take_along_axis): partial results
  // (MaskGatherOutsidePart).
  absl::flat_hash_set<const Instruction*> masked_gathers;
  // Scatters of one element along the operand's split dimension (its
  // gradient), by the dimension: their indices less the partition's offset.
  absl::flat_hash_map<const Instruction*, int64_t> offset_scatters;
  // A broadcast or iota that some users take whole and others split gets a
  // split copy for the latter, as XLA's partitioner makes one per sharding.
  struct SplitCopy {
    int64_t dim;
    std::vector<const Instruction*> users;
  };
  absl::flat_hash_map<const Instruction*, SplitCopy> split_copies;
  // A broadcast of a whole value that elementwise users want split along
  // different dimensions (Adam's constants, read by moments split along the
  // batch's axis and by gradients split along another): a copy split along
  // each further dimension for the users that want it, as XLA's partitioner
  // makes one broadcast per sharding.
  absl::flat_hash_map<const Instruction*, std::vector<SplitCopy>> other_split_copies;
  // Where the split follows hlogym's model of a choice Shardy's propagation
  // makes (which operand keeps its split), one line each: XLA's may differ.
  std::vector<std::string> inferred;
  // Split values needed whole (by a batch norm, whose operands XLA's
  // partitioner replicates, or as an output returned whole), each gathered
  // once along its split dimension (an all-gather) for the users that read
  // it so.
  struct Gather {
    int64_t dim;
    std::vector<const Instruction*> users;
    bool for_result = false;  // the entry's result (not a tuple) is it
  };
  absl::flat_hash_map<const Instruction*, Gather> gathers;
  // Split values that users read split along another dimension (an
  // elementwise operation meeting two splits: its first split operand's
  // stays), each moved there once by an all-to-all for those users.
  struct Reshard {
    int64_t from;
    int64_t to;
    std::vector<const Instruction*> users;
  };
  absl::flat_hash_map<const Instruction*, Reshard> reshards;
  // Whole values (a batch norm's normalized result) split again along `dim`
  // right where they are made: the partition's slice, at an offset read from
  // a table by partition-id.
  absl::flat_hash_map<const Instruction*, int64_t> resliced;
  // Users that read a resliced value whole (not its slice).
  absl::flat_hash_map<const Instruction*, std::vector<const Instruction*>> whole_readers;
};

// How a tuple holds a value (TupleUseOf).
struct TupleUse {
  bool split = false;
  bool whole = false;
};

// The placement a sharding says (a parameter's, a constraint's) along
// `axis`: "{replicated}", or, over the whole mesh, tiles in device order
// splitting one dimension; along one axis of several, tiles whose index
// along one dimension is each device's coordinate on the axis (split), or
// each held on every coordinate of it (whole there). Nullopt for anything
// else.
std::optional<Placement> PlacementFromSharding(std::string_view sharding, const Shape& shape,
                                               const MeshAxis& axis);

// A sharding constraint ("Sharding") or Shardy's mark of a function's result:
// a custom call of one operand that the split leaves as a copy of it.
bool IsShardingMark(const Instruction& instruction);

// The instructions the planning visits, each after its operands: the
// computation's in post order, each while loop followed by its condition's
// and body's (whose parameter is the loop's state), loops within loops alike.
// `loop_of` gets the loop each such computation belongs to.
absl::StatusOr<std::vector<Instruction*>> PlanningOrder(
    const Computation& computation,
    absl::flat_hash_map<const Computation*, const Instruction*>& loop_of);

// Whether the tuple `tuple` passes its element `index` on split along `dim`:
// a loop's state, where the loop holds that element so; another tuple (not
// the root: call-inliner's residuals), where every get-tuple-element of that
// index reads it so.
bool HoldsSplit(const Instruction& tuple, int64_t index, int64_t dim, const DataParallelPlan& plan);

// How the tuple `user` holds `operand` (HoldsSplit): split along `dim` at
// some index, whole at some other (two accumulators started from one
// broadcast of zeros); nullopt where `user` is no tuple, or a root that makes
// no loop's state.
std::optional<TupleUse> TupleUseOf(const Instruction& user, const Instruction& operand, int64_t dim,
                                   const DataParallelPlan& plan);

// The plan along `axis`.
absl::StatusOr<DataParallelPlan> PlanDataParallel(const Module& module, const MeshAxis& axis);

}  // namespace hlogym::data_parallel

#endif  // HLOGYM_PASSES_SHARDING_SPMD_DATA_PARALLEL_PLAN_H_
