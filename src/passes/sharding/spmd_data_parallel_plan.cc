// The planning half of the data-parallel split (spmd_data_parallel_plan.h).
#include "passes/sharding/spmd_data_parallel_plan.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/module.h"
#include "hlo/opcode.h"
#include "hlo/query.h"
#include "hlo/status_macros.h"
#include "hlo/str_cat.h"
#include "passes/collectives/collective_rewrite_utils.h"
#include "passes/sharding/sharding_text.h"

namespace hlogym::data_parallel {
namespace {

// PlacementFromSharding along one axis of several (below).
std::optional<Placement> AlongAxis(const TiledSharding& tiled, const Shape& shape,
                                   const MeshAxis& axis) {
  const int64_t rank = shape.rank();
  if (static_cast<int64_t>(tiled.devices.size()) != axis.partitions ||
      static_cast<int64_t>(tiled.tiles.size()) < rank ||
      (static_cast<int64_t>(tiled.tiles.size()) > rank && !tiled.subgroup_dims)) {
    return std::nullopt;
  }
  // The tile index of every tile along each dimension, row-major.
  auto tile_index = [&](int64_t flat, int64_t dim) {
    for (int64_t d = static_cast<int64_t>(tiled.tiles.size()) - 1; d > dim; --d) {
      flat /= tiled.tiles[d];
    }
    return flat % tiled.tiles[dim];
  };
  std::optional<Placement> placement = Placement::Whole();
  for (int64_t d = 0; d < rank; ++d) {
    if (tiled.tiles[d] != axis.size || shape.dimensions(d) % axis.size != 0) continue;
    bool follows_axis = true;
    for (int64_t t = 0; t < axis.partitions && follows_axis; ++t) {
      follows_axis = tile_index(t, d) == axis.Coordinate(tiled.devices[t]);
    }
    if (!follows_axis) continue;
    if (placement->split()) return std::nullopt;
    placement = Placement::Split(d);
  }
  if (placement->split()) return placement;
  // Whole along the axis: each part of the data held on all its coordinates.
  absl::flat_hash_set<std::pair<int64_t, int64_t>> held;  // (data tile, coordinate)
  int64_t data_tiles = 1;
  for (int64_t d = 0; d < rank; ++d) data_tiles *= tiled.tiles[d];
  const int64_t per_data_tile = axis.partitions / data_tiles;
  for (int64_t t = 0; t < axis.partitions; ++t) {
    held.insert({t / per_data_tile, axis.Coordinate(tiled.devices[t])});
  }
  if (static_cast<int64_t>(held.size()) != data_tiles * axis.size) return std::nullopt;
  return placement;
}

// Where a reshape takes the split dimension `dim` of its operand: the output
// dimension that starts at the same offset and is the same dimension, a
// merge of it with the minor ones after it, or the major part of it; nullopt
// where the split would not stay one dimension's.
std::optional<int64_t> ReshapedSplit(const Shape& from, const Shape& to, int64_t dim,
                                     int64_t partitions) {
  auto product = [](const Shape& shape, int64_t begin, int64_t end) {
    int64_t p = 1;
    for (int64_t i = begin; i < end; ++i) p *= shape.dimensions(i);
    return p;
  };
  // A dimension that does not split evenly (a scan step's leading 1) is
  // not the one split.
  if (from.dimensions(dim) % partitions != 0) return std::nullopt;
  const int64_t before = product(from, 0, dim);
  for (int64_t e = 0; e < to.rank(); ++e) {
    if (product(to, 0, e) != before || to.dimensions(e) == 1) continue;
    const int64_t size = from.dimensions(dim), out = to.dimensions(e);
    const bool same = out == size;
    const bool merged = out > size && [&] {
      for (int64_t j = dim + 1; j <= from.rank(); ++j) {
        if (product(from, dim, j) == out) return true;
      }
      return false;
    }();
    const bool major_part = out < size && size % out == 0 && [&] {
      for (int64_t j = e + 1; j <= to.rank(); ++j) {
        if (product(to, e, j) == size) return true;
      }
      return false;
    }();
    if ((same || merged || major_part) && out % partitions == 0) return e;
    return std::nullopt;
  }
  return std::nullopt;
}

// The output dimension of a dot that dimension `dim` of its `lhs` (or rhs)
// operand becomes: batch dimensions first, then the lhs's free ones, then
// the rhs's; nullopt for a contracting dimension.
std::optional<int64_t> DotOutputDim(const Instruction& dot, bool lhs, int64_t dim) {
  const DotDimensionNumbers& numbers = *dot.attrs().dot_dimension_numbers;
  const std::vector<int64_t>& batch =
      lhs ? numbers.lhs_batch_dimensions : numbers.rhs_batch_dimensions;
  const std::vector<int64_t>& contracting =
      lhs ? numbers.lhs_contracting_dimensions : numbers.rhs_contracting_dimensions;
  auto at = std::find(batch.begin(), batch.end(), dim);
  if (at != batch.end()) return at - batch.begin();
  if (std::find(contracting.begin(), contracting.end(), dim) != contracting.end()) {
    return std::nullopt;
  }
  int64_t position = static_cast<int64_t>(batch.size());
  if (!lhs) {
    const int64_t lhs_rank = dot.operand(0)->shape().rank();
    position += lhs_rank - static_cast<int64_t>(numbers.lhs_batch_dimensions.size() +
                                                numbers.lhs_contracting_dimensions.size());
  }
  for (int64_t d = 0; d < dim; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      ++position;
    }
  }
  return position;
}

// Where dimension `dim` of a gather's operand (an offset dimension) or of its
// indices (a batch dimension) lands in its output; for a scatter, the same in
// its updates, which are laid out as a gather's output (window dimensions for
// offset ones). Nullopt for a dimension with no place there: collapsed (or
// inserted), batching, the index vector.
std::optional<int64_t> SlicedDim(const Instruction& instruction, bool of_operand, int64_t dim) {
  const bool gather = instruction.opcode() == Opcode::kGather;
  const GatherDimensionNumbers* g =
      gather ? &*instruction.attrs().gather_dimension_numbers : nullptr;
  const ScatterDimensionNumbers* s =
      gather ? nullptr : &*instruction.attrs().scatter_dimension_numbers;
  const std::vector<int64_t>& offset = gather ? g->offset_dims : s->update_window_dims;
  const std::vector<int64_t>& collapsed =
      gather ? g->collapsed_slice_dims : s->inserted_window_dims;
  const std::vector<int64_t>& batching = gather ? g->operand_batching_dims : s->input_batching_dims;
  const int64_t index_vector_dim = gather ? g->index_vector_dim : s->index_vector_dim;
  const int64_t out_rank =
      gather ? instruction.shape().rank() : instruction.operand(2)->shape().rank();
  auto contains = [](const std::vector<int64_t>& dims, int64_t d) {
    return std::find(dims.begin(), dims.end(), d) != dims.end();
  };
  if (of_operand) {
    auto is_offset = [&](int64_t d) { return !contains(collapsed, d) && !contains(batching, d); };
    if (!is_offset(dim)) return std::nullopt;
    int64_t k = 0;
    for (int64_t d = 0; d < dim; ++d) k += is_offset(d) ? 1 : 0;
    return offset[k];
  }
  if (dim == index_vector_dim) return std::nullopt;
  int64_t k = dim > index_vector_dim ? dim - 1 : dim;
  for (int64_t out = 0; out < out_rank; ++out) {
    if (contains(offset, out)) continue;
    if (k-- == 0) return out;
  }
  return std::nullopt;
}

// The operand dimension paired with the indices' batching dimension `dim` of
// a gather or scatter; nullopt where it is not a batching dimension.
std::optional<int64_t> PairedBatchingDim(const Instruction& instruction, int64_t dim) {
  const bool gather = instruction.opcode() == Opcode::kGather;
  const std::vector<int64_t>& operand_dims =
      gather ? instruction.attrs().gather_dimension_numbers->operand_batching_dims
             : instruction.attrs().scatter_dimension_numbers->input_batching_dims;
  const std::vector<int64_t>& indices_dims =
      gather ? instruction.attrs().gather_dimension_numbers->start_indices_batching_dims
             : instruction.attrs().scatter_dimension_numbers->scatter_indices_batching_dims;
  auto at = std::find(indices_dims.begin(), indices_dims.end(), dim);
  if (at == indices_dims.end()) return std::nullopt;
  return operand_dims[at - indices_dims.begin()];
}

// How a scatter is split along its operand's dimension `dim`: the updates'
// dimension that must be split with it (the window dimension covering all of
// `dim`, or, where the indices are split along `indices_dim`, the updates'
// dimension that follows the batching pair); nullopt where neither holds.
std::optional<int64_t> ScatterUpdatesSplit(const Instruction& scatter, int64_t dim,
                                           std::optional<int64_t> indices_dim) {
  if (indices_dim) {
    if (PairedBatchingDim(scatter, *indices_dim) != dim) return std::nullopt;
    return SlicedDim(scatter, /*of_operand=*/false, *indices_dim);
  }
  const std::vector<int64_t>& indexed =
      scatter.attrs().scatter_dimension_numbers->scatter_dims_to_operand_dims;
  std::optional<int64_t> window = SlicedDim(scatter, /*of_operand=*/true, dim);
  if (!window || std::find(indexed.begin(), indexed.end(), dim) != indexed.end() ||
      scatter.operand(2)->shape().dimensions(*window) !=
          scatter.operand(0)->shape().dimensions(dim)) {
    return std::nullopt;
  }
  return window;
}

// An elementwise operation, an all-reduce of one array over another mesh
// axis (the split along that axis made it), or an all-gather over one along
// another dimension than `dim`: each splits along `dim` as its operands do.
bool SplitsAsOperands(const Instruction& instruction, std::optional<int64_t> dim = std::nullopt) {
  const Opcode opcode = instruction.opcode();
  const bool one_array = instruction.operand_count() == 1 && instruction.shape().IsArray();
  if (opcode == Opcode::kAllGather) {
    return one_array && instruction.attrs().dimensions.size() == 1 &&
           (!dim || instruction.attrs().dimensions[0] != *dim);
  }
  return IsElementwise(opcode) || (opcode == Opcode::kAllReduce && one_array);
}

// Whether `gather` reads one element along its operand's dimension `dim`
// from an index vector of that one index (take_along_axis, jnp.take): each
// partition can gather from its part of `dim` with its offset taken off the
// index, where it falls in the part.
bool GathersOneIndexAlong(const Instruction& gather, int64_t dim) {
  const GatherDimensionNumbers& numbers = *gather.attrs().gather_dimension_numbers;
  const Shape& indices = gather.operand(1)->shape();
  return numbers.start_index_map == std::vector<int64_t>{dim} &&
         std::find(numbers.collapsed_slice_dims.begin(), numbers.collapsed_slice_dims.end(), dim) !=
             numbers.collapsed_slice_dims.end() &&
         gather.attrs().gather_slice_sizes[dim] == 1 && indices.IsArray() &&
         numbers.index_vector_dim < indices.rank() &&
         indices.dimensions(numbers.index_vector_dim) == 1 &&
         indices.element_type() == PrimitiveType::kS32;
}

// Whether `scatter` writes one element along its operand's dimension `dim`
// at an index vector of that one index (take_along_axis's gradient): each
// partition scatters into its part with its offset taken off the index,
// the indices outside the part skipped as a scatter skips them.
bool ScattersOneIndexAlong(const Instruction& scatter, int64_t dim) {
  const ScatterDimensionNumbers& numbers = *scatter.attrs().scatter_dimension_numbers;
  const Shape& indices = scatter.operand(1)->shape();
  return numbers.scatter_dims_to_operand_dims == std::vector<int64_t>{dim} &&
         std::find(numbers.inserted_window_dims.begin(), numbers.inserted_window_dims.end(), dim) !=
             numbers.inserted_window_dims.end() &&
         indices.IsArray() && numbers.index_vector_dim < indices.rank() &&
         indices.dimensions(numbers.index_vector_dim) == 1 &&
         indices.element_type() == PrimitiveType::kS32;
}

bool IsBatchNorm(Opcode opcode) {
  return opcode == Opcode::kBatchNormTraining || opcode == Opcode::kBatchNormInference ||
         opcode == Opcode::kBatchNormGrad;
}

absl::Status Cannot(const Instruction& instruction, std::string_view why) {
  return absl::UnimplementedError(
      StrCat("hlogym partitions only shard_map's manual work and data-parallel splits, and ",
             OpcodeName(instruction.opcode()), " ", instruction.name(), " ", why));
}

// The output dimension of a reduce that its operand's dimension `dim`
// becomes; nullopt where `dim` is reduced.
std::optional<int64_t> KeptDim(const Instruction& reduce, int64_t dim) {
  const std::vector<int64_t>& reduced = reduce.attrs().dimensions;
  if (std::find(reduced.begin(), reduced.end(), dim) != reduced.end()) return std::nullopt;
  return dim - std::count_if(reduced.begin(), reduced.end(), [&](int64_t d) { return d < dim; });
}

// Whether `reader` is a reduction of `value` (its operand, not its initial
// value) over `dim`.
bool ReducesOver(const Instruction& reader, const Instruction& value, int64_t dim) {
  return reader.opcode() == Opcode::kReduce && reader.operand_count() == 2 &&
         reader.operand(0) == &value && reader.operand(1) != &value && !KeptDim(reader, dim);
}

// Whether `reader` of `value` can read it in parts along `dim`: a reduction
// over `dim`, or a unary elementwise operation all of whose users can (a
// negation before a sum).
bool ReadsInParts(const Instruction& reader, const Instruction& value, int64_t dim) {
  if (ReducesOver(reader, value, dim)) return true;
  return IsElementwise(reader.opcode()) && reader.operand_count() == 1 &&
         reader.shape().IsArray() && !reader.users().empty() &&
         std::all_of(reader.users().begin(), reader.users().end(),
                     [&](const Instruction* next) { return ReadsInParts(*next, reader, dim); });
}

// Whether a whole instruction can be made split along `dim` where it is
// computed, with no slicing: a broadcast that creates that dimension, or an
// iota (along that dimension, counting from the partition's offset:
// AddIotaOffset).
bool CanSplitWhereMade(const Instruction& instruction, int64_t dim, int64_t partitions) {
  if (instruction.shape().dimensions(dim) % partitions != 0) return false;
  if (instruction.opcode() == Opcode::kBroadcast) {
    const std::vector<int64_t>& dims = instruction.attrs().dimensions;
    return std::find(dims.begin(), dims.end(), dim) == dims.end();
  }
  return instruction.opcode() == Opcode::kIota;
}

// The tuple an optimization barrier (jax.checkpoint's) bars; null for any
// other instruction, or a barrier over anything but a tuple.
const Instruction* BarredTuple(const Instruction& barrier) {
  if (barrier.opcode() != Opcode::kOptimizationBarrier) return nullptr;
  const Instruction* tuple = barrier.operand(0);
  return tuple->opcode() == Opcode::kTuple ? tuple : nullptr;
}

// `value`, or the tuple it bars where it is an optimization barrier.
const Instruction& BarredOrNot(const Instruction& value) {
  const Instruction* tuple = BarredTuple(value);
  return tuple != nullptr ? *tuple : value;
}

// The element a get-tuple-element reads out of a tuple, straight or through
// an optimization barrier, which passes its tuple's elements on as they are;
// null for any other instruction.
const Instruction* TupleElementRead(const Instruction& element) {
  if (element.opcode() != Opcode::kGetTupleElement) return nullptr;
  const Instruction& tuple = BarredOrNot(*element.operand(0));
  if (tuple.opcode() != Opcode::kTuple) return nullptr;
  return tuple.operand(element.attrs().tuple_index);
}

// The while loop whose state `value` is (the loop itself, or its condition's
// or body's parameter); null for any other value.
const Instruction* LoopStateOf(const Instruction& value, const DataParallelPlan& plan) {
  if (value.opcode() == Opcode::kWhile) return &value;
  if (value.opcode() != Opcode::kParameter) return nullptr;
  auto loop = plan.loop_of.find(value.parent());
  return loop == plan.loop_of.end() ? nullptr : loop->second;
}

// The loop whose state the tuple `user` makes (the one it starts from, or
// its body's result); null for any other.
const Instruction* LoopStateMadeBy(const Instruction& user, const DataParallelPlan& plan) {
  if (user.opcode() != Opcode::kTuple) return nullptr;
  if (user.IsRoot()) {
    auto loop = plan.loop_of.find(user.parent());
    return loop != plan.loop_of.end() && loop->second->called_computations()[1] == user.parent()
               ? loop->second
               : nullptr;
  }
  return user.users().size() == 1 && user.users()[0]->opcode() == Opcode::kWhile ? user.users()[0]
                                                                                 : nullptr;
}

// Whether split `user` takes its whole operand `operand` split along `dim`:
// an elementwise operation split along the same dimension, or a scatter
// writing into it (split alike) or with it as its updates (split as the
// scatter's split asks).
bool TakesSplit(const Instruction& user, const Instruction& operand, int64_t dim,
                const DataParallelPlan& plan) {
  const int64_t partitions = plan.partitions;
  const absl::flat_hash_map<const Instruction*, Placement>& placements = plan.placements;
  // A tuple passes each element on as its readers, or its loop, hold it.
  if (std::optional<TupleUse> use = TupleUseOf(user, operand, dim, plan)) {
    return use->split && !use->whole;
  }
  // The entry's result returns each output as its own sharding says.
  if (user.IsRoot() && user.opcode() == Opcode::kTuple && user.parent()->IsEntry()) {
    const std::vector<std::string_view> results = TupleShardingElements(ShardingText(user));
    bool split = false;
    for (int64_t i = 0; i < user.operand_count(); ++i) {
      if (user.operand(i) != &operand) continue;
      std::optional<Placement> asked =
          i < static_cast<int64_t>(results.size())
              ? PlacementFromSharding(results[i], operand.shape(), plan.axis)
              : std::nullopt;
      if (!asked || !asked->split() || asked->dim != dim) return false;
      split = true;
    }
    return split;
  }
  auto placed = placements.find(&user);
  if (placed == placements.end() || !placed->second.split()) return false;
  const int64_t user_dim = placed->second.dim;
  if (SplitsAsOperands(user, user_dim) || user.opcode() == Opcode::kConcatenate ||
      IsShardingMark(user)) {
    return user_dim == dim;
  }
  if (user.opcode() == Opcode::kDynamicUpdateSlice) {
    return (user.operand(0) == &operand || user.operand(1) == &operand) && user_dim == dim;
  }
  if (user.opcode() == Opcode::kTranspose) return user.attrs().dimensions[user_dim] == dim;
  if (user.opcode() == Opcode::kSlice || user.opcode() == Opcode::kDynamicSlice) {
    return user.operand(0) == &operand && user_dim == dim;  // all of the split dimension
  }
  if (user.opcode() == Opcode::kBroadcast) return user.attrs().dimensions[dim] == user_dim;
  if (user.opcode() == Opcode::kReshape) {
    return ReshapedSplit(operand.shape(), user.shape(), dim, partitions) == user_dim;
  }
  if (user.opcode() == Opcode::kReduce && user.operand_count() == 2 &&
      user.operand(0) == &operand && user.operand(1) != &operand) {
    return KeptDim(user, dim) == user_dim;
  }
  if (user.opcode() != Opcode::kScatter || user.operand_count() != 3 ||
      std::count(user.operands().begin(), user.operands().end(), &operand) != 1) {
    return false;
  }
  if (user.operand(0) == &operand) return user_dim == dim;
  if (user.operand(2) != &operand) return false;
  auto indices = placements.find(user.operand(1));
  std::optional<int64_t> indices_dim;
  if (indices != placements.end() && indices->second.split()) indices_dim = indices->second.dim;
  return ScatterUpdatesSplit(user, user_dim, indices_dim) == dim;
}

// For each value, the dimension a parameter split along `axis` pulls it to:
// the parameter meets it in an elementwise operation, and the pull goes back
// through elementwise operations (and all-reduces over other axes) to what
// computes it. Shardy propagates through elementwise operations before it
// settles a dot's conflicting operands: a training step's targets, split
// along the batch, pull the prediction to the batch's split.
absl::flat_hash_map<const Instruction*, int64_t> PulledByParameters(
    const std::vector<Instruction*>& order, const MeshAxis& axis) {
  absl::flat_hash_map<const Instruction*, int64_t> pulled;
  std::vector<std::pair<const Instruction*, int64_t>> work;
  for (const Instruction* instruction : order) {
    if (!IsElementwise(instruction->opcode()) || !instruction->shape().IsArray()) continue;
    for (const Instruction* operand : instruction->operands()) {
      if (operand->opcode() != Opcode::kParameter || ShardingText(*operand).empty() ||
          !operand->shape().SameDimensions(instruction->shape())) {
        continue;
      }
      std::optional<Placement> given =
          PlacementFromSharding(ShardingText(*operand), operand->shape(), axis);
      if (!given || !given->split()) continue;
      for (const Instruction* other : instruction->operands()) {
        if (other != operand) work.push_back({other, given->dim});
      }
    }
  }
  while (!work.empty()) {
    auto [value, dim] = work.back();
    work.pop_back();
    if (!value->shape().IsArray() || !pulled.try_emplace(value, dim).second) continue;
    // An all-reduce over another axis passes it on as an elementwise one does.
    if (!SplitsAsOperands(*value) || value->opcode() == Opcode::kAllGather) continue;
    for (const Instruction* operand : value->operands()) {
      if (operand->shape().IsArray() && operand->shape().SameDimensions(value->shape())) {
        work.push_back({operand, dim});
      }
    }
  }
  return pulled;
}

// One planning along one mesh axis, in two sweeps: forward, each instruction
// placed from its operands' placements by a handler for its kind of
// operation (Place), as XLA's partitioner visits a module; then backward,
// after the loops' state, the values read whole and the outputs are settled,
// each whole value that split users want split is made split where it is
// computed or sliced for them (SettleWant). What earlier plannings found
// comes in: `kept_whole`, batch norms whose result stays whole (not split
// again); `entered_split`, parameters with no sharding that enter split, by
// the dimension; `loop_splits`, elements of loops' state split from the
// start, by the dimension; `gathered_broadcasts`, broadcasts whose split
// operand is gathered for them.
class DataParallelPlanner {
 public:
  DataParallelPlanner(const Module& module, const MeshAxis& axis,
                      const absl::flat_hash_set<const Instruction*>& kept_whole,
                      const absl::flat_hash_map<const Instruction*, int64_t>& entered_split,
                      const absl::flat_hash_map<LoopElement, int64_t>& loop_splits,
                      const absl::flat_hash_set<const Instruction*>& gathered_broadcasts)
      : module_(module),
        entry_(module.entry_computation()),
        axis_(axis),
        n_(axis.size),
        kept_whole_(kept_whole),
        entered_split_(entered_split),
        loop_splits_(loop_splits),
        gathered_broadcasts_(gathered_broadcasts) {
    plan_.axis = axis;
    plan_.partitions = axis.size;
  }

  absl::StatusOr<DataParallelPlan> Plan();

 private:
  // A handler's answer: the instruction's placement (checked against a
  // sharding written on it, then recorded), or nullopt where the handler
  // recorded what it places itself, or nothing is placed.
  using Placed = absl::StatusOr<std::optional<Placement>>;

  // A partial result counts as whole: its all-reduce completes it.
  Placement PlacementOf(const Instruction* instruction) const;
  // `operand`, whole, wanted split along `dim` by a split user.
  absl::Status Want(const Instruction* operand, int64_t dim);
  // The one dimension `instruction`'s split operands are split along
  // (nullopt where none is); an error where they differ.
  absl::StatusOr<std::optional<int64_t>> CommonSplit(const Instruction& instruction) const;
  // Every whole operand of `instruction` wanted split along `dim`.
  absl::Status WantWholeOperands(const Instruction& instruction, int64_t dim);
  // `value`, split along `dim`, gathered (all-gather) for `user` to read it whole.
  void GatherFor(const Instruction* value, int64_t dim, const Instruction* user);

  // The forward sweep: one instruction, its operands placed.
  absl::Status Place(const Instruction* instruction);
  Placed PlaceWhile(const Instruction& loop);
  Placed PlaceParameter(const Instruction& parameter) const;
  Placed PlaceBroadcast(const Instruction& broadcast);
  Placed PlaceReshape(const Instruction& reshape);
  Placed PlaceDot(const Instruction& dot);
  Placed PlaceConvolution(const Instruction& convolution) const;
  Placed PlaceGather(const Instruction& gather);
  Placed PlaceScatter(const Instruction& scatter);
  // Reduce-window, pad, slice, dynamic-slice and reverse: each leaves the
  // split dimension as its operand has it, or cannot be split.
  Placed PlaceAlongOtherDimensions(const Instruction& instruction) const;
  Placed PlaceConcatenate(const Instruction& concatenate);
  Placed PlaceDynamicUpdateSlice(const Instruction& update);
  Placed PlaceReduce(const Instruction& reduce);
  Placed PlaceElementwise(const Instruction& instruction);
  Placed PlaceShardingConstraint(const Instruction& constraint) const;
  Placed PlaceBatchNorm(const Instruction& batch_norm);
  // The dimension the loop whose body computes `value` pulls it to: along it
  // `value` is written back, through operations that keep a dimension one
  // (elementwise ones, transposes, reshapes, an update into a stacked value),
  // to an element of the loop's state held split along where it lands.
  std::optional<int64_t> PulledByLoopState(const Instruction& value) const;
  // A sharding written on the instruction itself must be where it lives.
  absl::Status CheckWrittenSharding(const Instruction& instruction, const Placement& placement);

  // The backward sweep.
  absl::Status SettleLoops();
  void SettleWholeReaders();
  absl::Status SettleOutputs();
  absl::Status SettleWant(const Instruction* instruction, int64_t dim);
  absl::Status RejectReshardsInLoops() const;

  const Module& module_;
  const Computation* entry_;
  const MeshAxis axis_;
  const int64_t n_;  // partitions along the axis
  const absl::flat_hash_set<const Instruction*>& kept_whole_;
  const absl::flat_hash_map<const Instruction*, int64_t>& entered_split_;
  const absl::flat_hash_map<LoopElement, int64_t>& loop_splits_;
  const absl::flat_hash_set<const Instruction*>& gathered_broadcasts_;
  DataParallelPlan plan_;
  // What the parameters pull each value to (PulledByParameters).
  absl::flat_hash_map<const Instruction*, int64_t> pulled_;
  // Batch norms (tuple-shaped) whose first result is split again, by the
  // dimension.
  absl::flat_hash_map<const Instruction*, int64_t> batch_norm_resplit_;
  // Whole operands that a split user needs split, by the split dimension it
  // needs.
  absl::flat_hash_map<const Instruction*, int64_t> wanted_;
  const Instruction* root_ = nullptr;
  bool tuple_root_ = false;
};

Placement DataParallelPlanner::PlacementOf(const Instruction* instruction) const {
  auto it = plan_.placements.find(instruction);
  if (it == plan_.placements.end() || it->second.kind == Placement::Kind::kPartial) {
    return Placement::Whole();
  }
  return it->second;
}

absl::Status DataParallelPlanner::Want(const Instruction* operand, int64_t dim) {
  auto [it, inserted] = wanted_.try_emplace(operand, dim);
  if (!inserted && it->second != dim) {
    return Cannot(*operand, "is wanted split along two dimensions");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<int64_t>> DataParallelPlanner::CommonSplit(
    const Instruction& instruction) const {
  std::optional<int64_t> dim;
  for (const Instruction* operand : instruction.operands()) {
    const Placement p = PlacementOf(operand);
    if (!p.split()) continue;
    if (dim && *dim != p.dim) return Cannot(instruction, "mixes two split dimensions");
    dim = p.dim;
  }
  return dim;
}

absl::Status DataParallelPlanner::WantWholeOperands(const Instruction& instruction, int64_t dim) {
  for (const Instruction* operand : instruction.operands()) {
    if (PlacementOf(operand).split()) continue;
    auto earlier = wanted_.find(operand);
    if (earlier != wanted_.end() && earlier->second != dim &&
        operand->opcode() == Opcode::kBroadcast && CanSplitWhereMade(*operand, dim, n_) &&
        !PlacementOf(operand->operand(0)).split()) {
      std::vector<DataParallelPlan::SplitCopy>& copies = plan_.other_split_copies[operand];
      auto copy = std::find_if(copies.begin(), copies.end(),
                               [&](const DataParallelPlan::SplitCopy& c) { return c.dim == dim; });
      if (copy == copies.end()) copy = copies.insert(copies.end(), {dim, {}});
      copy->users.push_back(&instruction);
      continue;
    }
    HLOGYM_RETURN_IF_ERROR(Want(operand, dim));
  }
  return absl::OkStatus();
}

void DataParallelPlanner::GatherFor(const Instruction* value, int64_t dim,
                                    const Instruction* user) {
  auto [it, inserted] = plan_.gathers.try_emplace(value, DataParallelPlan::Gather{dim, {}});
  it->second.users.push_back(user);
}

absl::Status DataParallelPlanner::Place(const Instruction* instruction) {
  const Opcode opcode = instruction->opcode();
  Placed placed = Placement::Whole();
  if (opcode == Opcode::kParameter && LoopStateOf(*instruction, plan_)) {
    return absl::OkStatus();  // placed by its loop
  } else if (opcode == Opcode::kWhile) {
    placed = PlaceWhile(*instruction);
  } else if (opcode == Opcode::kGetTupleElement && LoopStateOf(*instruction->operand(0), plan_)) {
    // A loop whose state could not be placed has its own reason; its body
    // cannot place what it reads.
    auto loop = plan_.loops.find(LoopStateOf(*instruction->operand(0), plan_));
    if (loop == plan_.loops.end()) {
      return Cannot(*instruction, "reads the state of a loop that is not placed");
    }
    placed = loop->second.at(instruction->attrs().tuple_index);
  } else if (opcode == Opcode::kParameter) {
    placed = PlaceParameter(*instruction);
  } else if (opcode == Opcode::kConstant || opcode == Opcode::kIota ||
             opcode == Opcode::kPartitionId) {
    placed = Placement::Whole();
  } else if (opcode == Opcode::kBroadcast) {
    placed = PlaceBroadcast(*instruction);
  } else if (opcode == Opcode::kTranspose) {
    const Placement from = PlacementOf(instruction->operand(0));
    if (from.split()) {
      const std::vector<int64_t>& permutation = instruction->attrs().dimensions;
      placed = Placement::Split(std::find(permutation.begin(), permutation.end(), from.dim) -
                                permutation.begin());
    }
  } else if (opcode == Opcode::kReshape) {
    placed = PlaceReshape(*instruction);
  } else if (opcode == Opcode::kDot && instruction->attrs().dot_dimension_numbers) {
    placed = PlaceDot(*instruction);
  } else if (opcode == Opcode::kConvolution && instruction->attrs().convolution_dimension_numbers) {
    placed = PlaceConvolution(*instruction);
  } else if (opcode == Opcode::kGather && instruction->attrs().gather_dimension_numbers) {
    placed = PlaceGather(*instruction);
  } else if (opcode == Opcode::kScatter && instruction->operand_count() == 3 &&
             instruction->attrs().scatter_dimension_numbers) {
    placed = PlaceScatter(*instruction);
  } else if ((opcode == Opcode::kReduceWindow && instruction->operand_count() == 2 &&
              instruction->shape().IsArray() && instruction->attrs().window) ||
             (opcode == Opcode::kPad && instruction->operand_count() == 2) ||
             opcode == Opcode::kSlice || opcode == Opcode::kDynamicSlice ||
             opcode == Opcode::kReverse) {
    placed = PlaceAlongOtherDimensions(*instruction);
  } else if (opcode == Opcode::kConcatenate) {
    placed = PlaceConcatenate(*instruction);
  } else if (opcode == Opcode::kDynamicUpdateSlice) {
    placed = PlaceDynamicUpdateSlice(*instruction);
  } else if (opcode == Opcode::kReduce && instruction->operand_count() == 2 &&
             instruction->shape().IsArray()) {
    placed = PlaceReduce(*instruction);
  } else if (opcode == Opcode::kAllGather && SplitsAsOperands(*instruction)) {
    // Over another mesh axis: split along this one as its operand is.
    const Placement from = PlacementOf(instruction->operand(0));
    if (from.split() && !SplitsAsOperands(*instruction, from.dim)) {
      return Cannot(*instruction, "gathers along the dimension split along this axis");
    }
    placed = from;
  } else if (SplitsAsOperands(*instruction) && instruction->shape().IsArray()) {
    placed = PlaceElementwise(*instruction);
  } else if (opcode == Opcode::kCustomCall &&
             instruction->attrs().custom_call_target == kFuncResultSharding &&
             instruction->operand_count() == 1) {
    // Shardy's mark of a function's result (jax.jit's out_shardings): the
    // result's own sharding, written on the root, says where it ends.
    placed = PlacementOf(instruction->operand(0));
  } else if (opcode == Opcode::kCustomCall &&
             instruction->attrs().custom_call_target == "Sharding" &&
             instruction->operand_count() == 1) {
    placed = PlaceShardingConstraint(*instruction);
  } else if (IsBatchNorm(opcode)) {
    placed = PlaceBatchNorm(*instruction);
  } else if (opcode == Opcode::kGetTupleElement && IsBatchNorm(instruction->operand(0)->opcode())) {
    // A batch norm's normalized result, split again where its batch norm is.
    auto resplit = batch_norm_resplit_.find(instruction->operand(0));
    if (resplit != batch_norm_resplit_.end() && instruction->attrs().tuple_index == 0) {
      plan_.resliced[instruction] = resplit->second;
      placed = Placement::Split(resplit->second);
    }
  } else if (opcode == Opcode::kTuple ||
             (opcode == Opcode::kOptimizationBarrier && BarredTuple(*instruction))) {
    return absl::OkStatus();  // a tuple (barred or not) takes its elements' placements
  } else if (const Instruction* element = TupleElementRead(*instruction)) {
    placed = PlacementOf(element);
  } else {
    return Cannot(*instruction, "is an operation the data-parallel split does not model");
  }
  if (!placed.ok()) return placed.status();
  if (!placed->has_value()) return absl::OkStatus();
  HLOGYM_RETURN_IF_ERROR(CheckWrittenSharding(*instruction, **placed));
  plan_.placements[instruction] = **placed;
  return absl::OkStatus();
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceWhile(const Instruction& loop) {
  // The loop's state: each element placed as it enters, or split from the
  // start where an earlier planning found it must be (the value it enters as
  // then wanted split).
  const Instruction* init = loop.operand(0);
  if (init->opcode() != Opcode::kTuple || init->users().size() != 1) {
    return Cannot(loop, "starts from a state that is not a tuple of its own");
  }
  std::vector<Placement> elements;
  for (int64_t i = 0; i < init->operand_count(); ++i) {
    Placement entering = PlacementOf(init->operand(i));
    auto split = loop_splits_.find(LoopElement{&loop, i});
    if (split != loop_splits_.end() && !entering.split()) {
      HLOGYM_RETURN_IF_ERROR(Want(init->operand(i), split->second));
      entering = Placement::Split(split->second);
    }
    elements.push_back(entering);
  }
  plan_.loops[&loop] = std::move(elements);  // placed only when every element is
  return std::nullopt;
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceParameter(
    const Instruction& parameter) const {
  // A parameter with no sharding (JAX's uncommitted arguments) is whole
  // until a split user wants it split (SettleWant).
  auto entering = entered_split_.find(&parameter);
  std::optional<Placement> given =
      entering != entered_split_.end() ? std::optional(Placement::Split(entering->second))
      : ShardingText(parameter).empty()
          ? std::optional<Placement>(Placement::Whole())
          : PlacementFromSharding(ShardingText(parameter), parameter.shape(), axis_);
  if (!given) {
    return Cannot(parameter, StrCat("has sharding '", ShardingText(parameter),
                                    "' (whole, or one dimension split in device order)"));
  }
  return *given;
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceBroadcast(const Instruction& broadcast) {
  const Placement from = PlacementOf(broadcast.operand(0));
  if (from.split() && gathered_broadcasts_.contains(&broadcast)) {
    GatherFor(broadcast.operand(0), from.dim, &broadcast);  // whole, then wanted split where made
    return Placement::Whole();
  }
  if (from.split()) return Placement::Split(broadcast.attrs().dimensions[from.dim]);
  return Placement::Whole();
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceReshape(const Instruction& reshape) {
  const Placement from = PlacementOf(reshape.operand(0));
  if (!from.split()) return Placement::Whole();
  std::optional<int64_t> dim =
      ReshapedSplit(reshape.operand(0)->shape(), reshape.shape(), from.dim, n_);
  if (dim) return Placement::Split(*dim);
  // The split would not stay one dimension's (attention merging the batch
  // into the heads): the operand is gathered, the reshape whole.
  GatherFor(reshape.operand(0), from.dim, &reshape);
  return Placement::Whole();
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceDot(const Instruction& dot) {
  const Placement lhs = PlacementOf(dot.operand(0));
  const Placement rhs = PlacementOf(dot.operand(1));
  const DotDimensionNumbers& numbers = *dot.attrs().dot_dimension_numbers;
  const int64_t batch_dims = static_cast<int64_t>(numbers.lhs_batch_dimensions.size());
  std::optional<int64_t> lhs_out = lhs.split() ? DotOutputDim(dot, true, lhs.dim) : std::nullopt;
  std::optional<int64_t> rhs_out = rhs.split() ? DotOutputDim(dot, false, rhs.dim) : std::nullopt;
  // The operand that is not `kept` (0: lhs, 1: rhs) gathered for the dot,
  // the output split as the kept one's dimension is.
  auto gather_other = [&](int kept) {
    GatherFor(dot.operand(1 - kept), (kept == 0 ? rhs : lhs).dim, &dot);
    return Placement::Split(kept == 0 ? *lhs_out : *rhs_out);
  };
  auto contracting_pair = [&] {
    for (size_t i = 0; i < numbers.lhs_contracting_dimensions.size(); ++i) {
      if (numbers.lhs_contracting_dimensions[i] == lhs.dim &&
          numbers.rhs_contracting_dimensions[i] == rhs.dim) {
        return true;
      }
    }
    return false;
  };
  if (!lhs.split() && !rhs.split()) return Placement::Whole();
  if (lhs.split() && rhs.split() && !lhs_out && !rhs_out && contracting_pair()) {
    return Placement::Partial();
  }
  if (lhs.split() && rhs.split() && lhs_out && rhs_out && *lhs_out == *rhs_out &&
      *lhs_out < batch_dims) {
    return Placement::Split(*lhs_out);  // both split along the same batch dimension
  }
  if (lhs.split() != rhs.split() && (lhs_out || rhs_out) &&
      (lhs.split() ? *lhs_out : *rhs_out) >= batch_dims) {
    return Placement::Split(lhs.split() ? *lhs_out : *rhs_out);  // a free dimension
  }
  if (lhs.split() && rhs.split() && lhs_out && rhs_out && *lhs_out != *rhs_out &&
      *lhs_out >= batch_dims && *rhs_out >= batch_dims) {
    // Both split along free dimensions, which one output cannot both keep:
    // Shardy gives the mesh axis to the factor of the larger operand (the lhs
    // on a tie), and XLA's partitioner gathers the other.
    auto pull = pulled_.find(&dot);
    std::optional<int64_t> pulled_to =
        pull != pulled_.end() ? std::optional(pull->second) : PulledByLoopState(dot);
    if (pulled_to && (*pulled_to == *lhs_out || *pulled_to == *rhs_out)) {
      // Unless what it computes meets a parameter split along one of them
      // (the targets), or is written back to a loop's state held so (a
      // scan's carry), whose split Shardy propagates first.
      plan_.inferred.push_back(StrCat(dot.name(), " keeps the split its result meets"));
      return gather_other(*pulled_to == *lhs_out ? 0 : 1);
    }
    plan_.inferred.push_back(StrCat(dot.name(), " keeps its larger operand's split dimension"));
    return gather_other(
        dot.operand(0)->shape().ElementCount() >= dot.operand(1)->shape().ElementCount() ? 0 : 1);
  }
  if (lhs.split() && rhs.split() && (lhs_out.has_value() != rhs_out.has_value())) {
    const int kept = lhs_out ? 0 : 1;
    const Placement& free = kept == 0 ? lhs : rhs;
    const Placement& contracted = kept == 0 ? rhs : lhs;
    const Instruction* contracted_operand = dot.operand(1 - kept);
    // Pulled by a loop's state to a free dimension of the operand split along
    // a contracting one (a scan's carry, split along the batch, takes the
    // input gradient; a weight gradient is written into gradients split along
    // its rows): that operand is moved there by an all-to-all and the other
    // gathered, as XLA's dumps show its partitioner doing in a loop's body.
    std::optional<int64_t> pulled_to = PulledByLoopState(dot);
    if (pulled_to && *pulled_to != (kept == 0 ? *lhs_out : *rhs_out)) {
      for (int64_t d = 0; d < contracted_operand->shape().rank(); ++d) {
        if (DotOutputDim(dot, kept != 0, d) != pulled_to) continue;
        if (contracted_operand->shape().dimensions(d) % n_ != 0) break;
        auto [it, inserted] = plan_.reshards.try_emplace(
            contracted_operand, DataParallelPlan::Reshard{contracted.dim, d, {}});
        if (it->second.to != d) break;
        it->second.users.push_back(&dot);
        GatherFor(dot.operand(kept), free.dim, &dot);
        plan_.inferred.push_back(StrCat(dot.name(), " keeps the split its result meets"));
        return Placement::Split(*pulled_to);
      }
    }
    // One operand split along a dimension the output keeps, the other along
    // a contracting one (a weight sharded as FSDP shards it): the latter is
    // gathered for the dot, as XLA's partitioner does, and the output split
    // as the former.
    return gather_other(kept);
  }
  return Cannot(dot, "has operands split in a way that needs resharding");
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceConvolution(
    const Instruction& convolution) const {
  // As a dot: split along the batch (the activations', the weights whole)
  // stays split; a contraction over the split dimension (a weight gradient:
  // the batch as the features both operands reduce) is partial.
  const ConvolutionDimensionNumbers& numbers = *convolution.attrs().convolution_dimension_numbers;
  const Placement lhs = PlacementOf(convolution.operand(0));
  const Placement rhs = PlacementOf(convolution.operand(1));
  const bool grouped = convolution.attrs().batch_group_count != 1;
  if (!lhs.split() && !rhs.split()) return Placement::Whole();
  if (!grouped && lhs.split() && !rhs.split() && lhs.dim == numbers.input_batch_dimension &&
      convolution.shape().dimensions(numbers.output_batch_dimension) % n_ == 0) {
    return Placement::Split(numbers.output_batch_dimension);
  }
  if (!grouped && convolution.attrs().feature_group_count == 1 && lhs.split() && rhs.split() &&
      lhs.dim == numbers.input_feature_dimension &&
      rhs.dim == numbers.kernel_input_feature_dimension) {
    return Placement::Partial();
  }
  return Cannot(convolution, "has operands split in a way that needs resharding");
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceGather(const Instruction& gather) {
  // Split along a dimension the operand and the indices batch together, along
  // the operand's when every slice takes all of it, or along the indices'
  // batch when the operand is whole.
  const Placement operand = PlacementOf(gather.operand(0));
  const Placement indices = PlacementOf(gather.operand(1));
  if (!operand.split() && !indices.split()) return Placement::Whole();
  std::optional<int64_t> out;
  if (operand.split() && indices.split()) {
    if (PairedBatchingDim(gather, indices.dim) == operand.dim) {
      out = SlicedDim(gather, /*of_operand=*/false, indices.dim);
    } else if (GathersOneIndexAlong(gather, operand.dim) &&
               SlicedDim(gather, /*of_operand=*/false, indices.dim)) {
      // A table split along what it looks up (FSDP's embedding), the indices
      // split along their batch: as XLA's partitioner does, the indices are
      // gathered, each partition gathers from its part of the table
      // (masked), an all-reduce sums the parts and the result is sliced back
      // along the batch.
      const int64_t batch = *SlicedDim(gather, /*of_operand=*/false, indices.dim);
      GatherFor(gather.operand(1), indices.dim, &gather);
      plan_.masked_gathers.insert(&gather);
      plan_.resliced[&gather] = batch;
      plan_.placements[&gather] = Placement::Split(batch);
      return std::nullopt;
    }
  } else if (operand.split()) {
    const std::vector<int64_t>& indexed = gather.attrs().gather_dimension_numbers->start_index_map;
    if (std::find(indexed.begin(), indexed.end(), operand.dim) == indexed.end() &&
        gather.attrs().gather_slice_sizes[operand.dim] ==
            gather.operand(0)->shape().dimensions(operand.dim)) {
      out = SlicedDim(gather, /*of_operand=*/true, operand.dim);
    }
  } else {
    out = SlicedDim(gather, /*of_operand=*/false, indices.dim);
  }
  if (out) return Placement::Split(*out);
  if (operand.split() && !indices.split() && GathersOneIndexAlong(gather, operand.dim)) {
    // Each partition gathers what its part holds, the rest zero: a partial
    // result, summed over the partitions.
    plan_.masked_gathers.insert(&gather);
    return Placement::Partial();
  }
  return Cannot(gather, "gathers across the split dimension");
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceScatter(const Instruction& scatter) {
  // Split along an operand dimension that the updates cover whole (the
  // indices whole), or that the indices batch with the operand; whatever of
  // the operand and the updates is whole is wanted split.
  const Placement operand = PlacementOf(scatter.operand(0));
  const Placement indices = PlacementOf(scatter.operand(1));
  const Placement updates = PlacementOf(scatter.operand(2));
  std::optional<int64_t> dim;
  if (indices.split()) {
    dim = PairedBatchingDim(scatter, indices.dim);
  } else if (operand.split()) {
    dim = operand.dim;
  } else if (updates.split()) {
    for (int64_t d = 0; d < scatter.shape().rank() && !dim; ++d) {
      if (SlicedDim(scatter, /*of_operand=*/true, d) == updates.dim) dim = d;
    }
  }
  auto pull = pulled_.find(&scatter);
  if (!operand.split() && indices.split() && updates.split() && pull != pulled_.end() &&
      ScattersOneIndexAlong(scatter, pull->second)) {
    // An FSDP table's gradient: the table, split along its rows, pulls it to
    // that split, and the indices and updates, split along their batch, are
    // gathered and scattered into each partition's rows at the index less
    // the part's offset, as XLA's partitioner does.
    GatherFor(scatter.operand(1), indices.dim, &scatter);
    GatherFor(scatter.operand(2), updates.dim, &scatter);
    HLOGYM_RETURN_IF_ERROR(Want(scatter.operand(0), pull->second));
    plan_.offset_scatters[&scatter] = pull->second;
    plan_.placements[&scatter] = Placement::Split(pull->second);
    return std::nullopt;
  }
  if (!dim && !operand.split() && indices.split() && updates.split() &&
      SlicedDim(scatter, /*of_operand=*/false, indices.dim) == updates.dim &&
      IsAll(scatter.operand(0), 0) &&
      MatchReductionComputation(scatter.to_apply()) == ReductionKind::kSum) {
    // Indices and updates split alike along the indices' own batch, adding
    // into whole zeros (an embedding's gradient): each partition adds its
    // part, and an all-reduce completes the sum, as XLA's partitioner does.
    return Placement::Partial();
  }
  if (operand.split() && !indices.split() && !updates.split() &&
      ScattersOneIndexAlong(scatter, operand.dim)) {
    plan_.offset_scatters[&scatter] = operand.dim;
    return Placement::Split(operand.dim);
  }
  if (!operand.split() && !indices.split() && !updates.split()) return Placement::Whole();
  std::optional<int64_t> updates_dim =
      dim ? ScatterUpdatesSplit(scatter, *dim,
                                indices.split() ? std::optional(indices.dim) : std::nullopt)
          : std::nullopt;
  if (!updates_dim || (operand.split() && operand.dim != *dim) ||
      (updates.split() && updates.dim != *updates_dim)) {
    return Cannot(scatter, "scatters across the split dimension");
  }
  if (!operand.split()) HLOGYM_RETURN_IF_ERROR(Want(scatter.operand(0), *dim));
  if (!updates.split()) HLOGYM_RETURN_IF_ERROR(Want(scatter.operand(2), *updates_dim));
  return Placement::Split(*dim);
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceAlongOtherDimensions(
    const Instruction& instruction) const {
  const Placement placement = PlacementOf(instruction.operand(0));
  const Opcode opcode = instruction.opcode();
  const Shape& operand_shape = instruction.operand(0)->shape();
  if (opcode == Opcode::kReduceWindow || opcode == Opcode::kPad) {
    if (PlacementOf(instruction.operand(1)).split()) {
      return Cannot(instruction, opcode == Opcode::kPad ? "has a split padding value"
                                                        : "has a split initial value");
    }
  }
  if (!placement.split()) return placement;
  const int64_t dim = placement.dim;
  if (opcode == Opcode::kReduceWindow) {
    // Pooling over other dimensions: the split one's window is one element,
    // unstrided and unpadded.
    if (instruction.attrs().window->dimensions[dim] != WindowDimension{}) {
      return Cannot(instruction, "slides its window along the split dimension");
    }
  } else if (opcode == Opcode::kPad) {
    // Padding other dimensions (a pooling's gradient): none on the split one.
    if (instruction.attrs().padding[dim] != PaddingDimension{}) {
      return Cannot(instruction, "pads the split dimension");
    }
  } else if (opcode == Opcode::kSlice) {
    // Slicing other dimensions (attention's query, key and value out of one
    // projection): the split one taken whole.
    if (instruction.attrs().slice[dim] != SliceDimension{0, operand_shape.dimensions(dim), 1}) {
      return Cannot(instruction, "slices the split dimension");
    }
  } else if (opcode == Opcode::kDynamicSlice) {
    // Slicing other dimensions (a loop's step out of a stacked sequence): the
    // split one taken whole, so its start index can only be 0.
    if (instruction.attrs().dynamic_slice_sizes[dim] != operand_shape.dimensions(dim)) {
      return Cannot(instruction, "slices the split dimension");
    }
  } else if (opcode == Opcode::kReverse) {
    const std::vector<int64_t>& reversed = instruction.attrs().dimensions;
    if (std::find(reversed.begin(), reversed.end(), dim) != reversed.end()) {
      return Cannot(instruction, "reverses the split dimension");
    }
  }
  return placement;
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceConcatenate(const Instruction& concatenate) {
  // Joining along another dimension, every operand split alike.
  HLOGYM_ASSIGN(dim, CommonSplit(concatenate));
  if (!dim) return Placement::Whole();
  const std::vector<int64_t>& joined = concatenate.attrs().dimensions;
  if (std::find(joined.begin(), joined.end(), *dim) != joined.end()) {
    return Cannot(concatenate, "joins along the split dimension");
  }
  HLOGYM_RETURN_IF_ERROR(WantWholeOperands(concatenate, *dim));
  return Placement::Split(*dim);
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceDynamicUpdateSlice(
    const Instruction& update) {
  // An update covering all of the split dimension (a slice's gradient written
  // into zeros): split alike, the whole one of the two wanted so.
  const Placement base = PlacementOf(update.operand(0));
  const Placement written = PlacementOf(update.operand(1));
  if (!base.split() && !written.split()) return Placement::Whole();
  const int64_t dim = base.split() ? base.dim : written.dim;
  if ((base.split() && written.split() && base.dim != written.dim) ||
      update.operand(1)->shape().dimensions(dim) != update.shape().dimensions(dim)) {
    return Cannot(update, "updates across the split dimension");
  }
  for (const Instruction* operand : {update.operand(0), update.operand(1)}) {
    if (!PlacementOf(operand).split()) HLOGYM_RETURN_IF_ERROR(Want(operand, dim));
  }
  return Placement::Split(dim);
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceReduce(const Instruction& reduce) {
  const Placement from = PlacementOf(reduce.operand(0));
  if (PlacementOf(reduce.operand(1)).split()) {
    return Cannot(reduce, "has a split initial value");
  }
  if (!from.split()) return Placement::Whole();
  if (std::optional<int64_t> kept = KeptDim(reduce, from.dim)) return Placement::Split(*kept);
  if (plan_.resliced.contains(reduce.operand(0))) {
    // Reducing the split dimension of a value computed whole reads it whole,
    // with no all-reduce (a bias gradient from a batch norm's).
    plan_.whole_readers[reduce.operand(0)].push_back(&reduce);
    return Placement::Whole();
  }
  return Placement::Partial();
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceElementwise(const Instruction& instruction) {
  absl::StatusOr<std::optional<int64_t>> dim = CommonSplit(instruction);
  if (!dim.ok()) {
    // Operands split along different dimensions. The first split operand's
    // dimension stays, broadcasts of split values aside (Shardy: operands
    // alike in size, the lowest index wins). A broadcast of a value split
    // along another one (a bias sharded as FSDP shards it) has that value
    // gathered for it, as XLA's partitioner does (planned again so); any
    // other operand split along another one (an FSDP input gradient split as
    // the weight is, met by a mask split along the batch) is moved there by
    // an all-to-all.
    std::optional<int64_t> activations;
    std::vector<const Instruction*> broadcasts, moved;
    for (const Instruction* operand : instruction.operands()) {
      const Placement p = PlacementOf(operand);
      if (!p.split()) continue;
      if (operand->opcode() == Opcode::kBroadcast && PlacementOf(operand->operand(0)).split()) {
        broadcasts.push_back(operand);
      } else if (!activations) {
        activations = p.dim;
      } else if (*activations != p.dim) {
        moved.push_back(operand);
      }
    }
    if (!activations) return dim.status();
    for (const Instruction* broadcast : broadcasts) {
      if (PlacementOf(broadcast).dim != *activations) {
        plan_.gathered_broadcasts_found.push_back(broadcast);
      }
    }
    if (!plan_.gathered_broadcasts_found.empty()) {
      return std::nullopt;  // the planning stops here (Plan)
    }
    if (instruction.shape().dimensions(*activations) % n_ != 0) return dim.status();
    if (!moved.empty()) {
      plan_.inferred.push_back(
          StrCat(instruction.name(), " keeps its first split operand's dimension"));
    }
    for (const Instruction* operand : moved) {
      auto [it, inserted] = plan_.reshards.try_emplace(
          operand, DataParallelPlan::Reshard{PlacementOf(operand).dim, *activations, {}});
      if (it->second.to != *activations) {
        return Cannot(*operand, "is read split along two other dimensions");
      }
      it->second.users.push_back(&instruction);
    }
    dim = std::optional<int64_t>(*activations);
  }
  if (!*dim) return Placement::Whole();
  HLOGYM_RETURN_IF_ERROR(WantWholeOperands(instruction, **dim));
  return Placement::Split(**dim);
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceShardingConstraint(
    const Instruction& constraint) const {
  // The value must already be placed as the constraint says.
  const Placement placement = PlacementOf(constraint.operand(0));
  std::optional<Placement> asked =
      PlacementFromSharding(ShardingText(constraint), constraint.shape(), axis_);
  if (!asked || asked->kind != placement.kind || asked->dim != placement.dim) {
    return Cannot(constraint, StrCat("asks for '", ShardingText(constraint),
                                     "', which would reshard its operand"));
  }
  return placement;
}

DataParallelPlanner::Placed DataParallelPlanner::PlaceBatchNorm(const Instruction& batch_norm) {
  // Computed whole on every partition from gathered operands; its normalized
  // result (or gradient) is split again along the split dimension of the
  // activations it normalizes.
  std::optional<int64_t> resplit;
  for (const Instruction* operand : batch_norm.operands()) {
    const Placement p = PlacementOf(operand);
    if (!p.split()) continue;
    GatherFor(operand, p.dim, &batch_norm);
    if (operand == batch_norm.operand(0) || (batch_norm.opcode() == Opcode::kBatchNormGrad &&
                                             operand == batch_norm.operand(4) && !resplit)) {
      resplit = p.dim;
    }
  }
  if (kept_whole_.contains(&batch_norm)) resplit.reset();
  if (resplit && batch_norm.opcode() == Opcode::kBatchNormInference) {
    plan_.resliced[&batch_norm] = *resplit;
    return Placement::Split(*resplit);
  }
  if (resplit) batch_norm_resplit_[&batch_norm] = *resplit;
  return Placement::Whole();
}

std::optional<int64_t> DataParallelPlanner::PulledByLoopState(const Instruction& value) const {
  auto loop = plan_.loop_of.find(value.parent());
  if (loop == plan_.loop_of.end() || loop->second->called_computations()[1] != value.parent() ||
      !value.shape().IsArray()) {
    return std::nullopt;
  }
  auto elements = plan_.loops.find(loop->second);
  if (elements == plan_.loops.end()) return std::nullopt;
  const Instruction* written = value.parent()->root_instruction();
  // Each dimension of `value` followed to where the body writes it back: the
  // dimension it is there, through operations that keep it one dimension
  // (elementwise ones, transposes, reshapes, an update written into a
  // stacked value).
  for (int64_t start = 0; start < value.shape().rank(); ++start) {
    std::vector<std::pair<const Instruction*, int64_t>> work = {{&value, start}};
    absl::flat_hash_set<const Instruction*> seen;
    while (!work.empty()) {
      const auto [at, dim] = work.back();
      work.pop_back();
      if (!seen.insert(at).second) continue;
      for (const Instruction* user : at->users()) {
        const Opcode opcode = user->opcode();
        if (opcode == Opcode::kTuple) {
          // The body's result, or a tuple its reads take apart (call-inliner's).
          for (int64_t i = 0; i < user->operand_count(); ++i) {
            if (user->operand(i) != at) continue;
            if (user == written) {
              const Placement& held = elements->second.at(i);
              if (held.split() && held.dim == dim) return start;
              continue;
            }
            for (const Instruction* element : user->users()) {
              if (element->opcode() == Opcode::kGetTupleElement &&
                  element->attrs().tuple_index == i) {
                work.push_back({element, dim});
              }
            }
          }
        } else if (SplitsAsOperands(*user) && user->shape().IsArray() &&
                   user->shape().SameDimensions(at->shape())) {
          work.push_back({user, dim});
        } else if (opcode == Opcode::kTranspose) {
          const std::vector<int64_t>& permutation = user->attrs().dimensions;
          auto to = std::find(permutation.begin(), permutation.end(), dim);
          if (to != permutation.end()) work.push_back({user, to - permutation.begin()});
        } else if (opcode == Opcode::kReshape) {
          if (std::optional<int64_t> to = ReshapedSplit(at->shape(), user->shape(), dim, n_)) {
            work.push_back({user, *to});
          }
        } else if (opcode == Opcode::kDynamicUpdateSlice && user->operand(1) == at &&
                   at->shape().dimensions(dim) == user->shape().dimensions(dim)) {
          work.push_back({user, dim});
        }
      }
    }
  }
  return std::nullopt;
}

absl::Status DataParallelPlanner::CheckWrittenSharding(const Instruction& instruction,
                                                       const Placement& placement) {
  // On a root that only reads its result out of a tuple, a whole sharding
  // (jax.jit's out_shardings replicated) has the split result gathered, as
  // XLA's partitioner ends with. (A root that computes is computed whole from
  // gathered operands there: not modelled.)
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kParameter || opcode == Opcode::kCustomCall ||
      ShardingText(instruction).empty()) {
    return absl::OkStatus();
  }
  std::optional<Placement> written =
      PlacementFromSharding(ShardingText(instruction), instruction.shape(), axis_);
  if (written && !written->split() && placement.split() && opcode == Opcode::kGetTupleElement &&
      &instruction == entry_->root_instruction()) {
    plan_.gathers.try_emplace(&instruction,
                              DataParallelPlan::Gather{placement.dim, {}, /*for_result=*/true});
    return absl::OkStatus();
  }
  if (!written || written->kind != placement.kind || written->dim != placement.dim) {
    return Cannot(instruction,
                  StrCat("has sharding '", ShardingText(instruction), "', which would reshard it"));
  }
  return absl::OkStatus();
}

absl::Status DataParallelPlanner::SettleLoops() {
  // A loop's body writes each element of its state back as it entered: one
  // written back split where it entered whole is split from the start
  // (planned again), one written back whole where it entered split is wanted
  // split.
  for (const auto& [loop, elements] : plan_.loops) {
    const Instruction* written = loop->called_computations()[1]->root_instruction();
    if (written->opcode() != Opcode::kTuple ||
        written->operand_count() != static_cast<int64_t>(elements.size())) {
      return Cannot(*loop, "has a body whose result is not a tuple");
    }
    if (PlacementOf(loop->called_computations()[0]->root_instruction()).split()) {
      return Cannot(*loop, "has a split condition");
    }
    for (int64_t i = 0; i < written->operand_count(); ++i) {
      const Placement back = PlacementOf(written->operand(i));
      if (back.split() && !elements[i].split()) {
        plan_.loop_splits_found.push_back({LoopElement{loop, i}, back.dim});
      } else if (back.split() && back.dim != elements[i].dim) {
        return Cannot(*loop,
                      StrCat("writes element ", i, " of its state (", written->operand(i)->name(),
                             ") back split along dimension ", back.dim, ", not ", elements[i].dim));
      } else if (!back.split() && elements[i].split()) {
        HLOGYM_RETURN_IF_ERROR(Want(written->operand(i), elements[i].dim));
      }
    }
  }
  return absl::OkStatus();
}

void DataParallelPlanner::SettleWholeReaders() {
  // A value computed whole and split again stays whole for the reductions
  // over its split dimension only where no other user but a convolution
  // reads it: XLA's propagation splits it at its source as soon as an
  // elementwise operation, a dot or a reshape takes it split, and then every
  // user reads the slice (a reduction over it completed by an all-reduce).
  for (auto it = plan_.whole_readers.begin(); it != plan_.whole_readers.end();) {
    const std::vector<const Instruction*>& readers = it->second;
    const bool split_at_source = std::any_of(
        it->first->users().begin(), it->first->users().end(), [&](const Instruction* user) {
          return user->opcode() != Opcode::kConvolution &&
                 std::find(readers.begin(), readers.end(), user) == readers.end();
        });
    if (!split_at_source) {
      ++it;
      continue;
    }
    for (const Instruction* reader : readers) plan_.placements[reader] = Placement::Partial();
    plan_.whole_readers.erase(it++);
  }
}

absl::Status DataParallelPlanner::SettleOutputs() {
  // Outputs whose sharding XLA may not choose are returned whole (those that
  // allow_spmd_sharding_propagation_to_output leaves out, or all where the
  // header does not say, as PyTorch/XLA's): a split one is gathered. Where
  // the root's own sharding (jax.jit's out_shardings as GSPMD writes them on
  // a tuple root) splits an output XLA may not choose, the output is wanted
  // split so.
  const std::vector<std::string_view> root_shardings =
      tuple_root_ ? TupleShardingElements(ShardingText(*root_)) : std::vector<std::string_view>{};
  for (int64_t i = 0; i < (tuple_root_ ? root_->operand_count() : 1); ++i) {
    const Instruction* output = tuple_root_ ? root_->operand(i) : root_;
    const bool may_split = ShardingMayPropagateTo(module_, "output", i);
    const Placement p = PlacementOf(output);
    if (!may_split && i < static_cast<int64_t>(root_shardings.size())) {
      std::optional<Placement> asked =
          PlacementFromSharding(root_shardings[i], output->shape(), axis_);
      if (!asked && root_shardings[i] != "{manual}") {
        return Cannot(*output, StrCat("is returned with sharding '", root_shardings[i],
                                      "', which this split cannot read"));
      }
      if (asked && asked->split() && !p.split()) {
        // Shardy's result mark passes the want on to what it marks.
        const bool mark = output->opcode() == Opcode::kCustomCall &&
                          output->attrs().custom_call_target == kFuncResultSharding &&
                          output->operand_count() == 1;
        if (mark) plan_.placements[output] = Placement::Split(asked->dim);
        HLOGYM_RETURN_IF_ERROR(Want(mark ? output->operand(0) : output, asked->dim));
        continue;
      }
      if (asked && asked->split() && p.dim != asked->dim) {
        return Cannot(*output, "is returned split along another dimension than it is computed");
      }
      if (asked && asked->split()) continue;
    }
    if (may_split || !p.split()) continue;
    auto [it, inserted] = plan_.gathers.try_emplace(output, DataParallelPlan::Gather{p.dim, {}});
    if (tuple_root_) {
      it->second.users.push_back(root_);
    } else {
      it->second.for_result = true;
    }
  }
  return absl::OkStatus();
}

absl::Status DataParallelPlanner::SettleWant(const Instruction* instruction, int64_t dim) {
  // A whole value that split users need split is made split where it is
  // computed, when every user wants it so: a broadcast of a whole value or an
  // iota, or (wanting its own operands split in turn) an elementwise
  // operation or a scatter of whole windows, as XLA's propagation splits a
  // gradient's zeros and the scatters into them. Any other computed value,
  // or a whole parameter, is sliced for its split users (a parameter whose
  // sharding XLA may choose and that only split users read is split where it
  // enters); a constant is left to the reason.
  auto& placements = plan_.placements;
  const Opcode opcode = instruction->opcode();
  if (opcode == Opcode::kGetTupleElement) {
    if (const Instruction* loop = LoopStateOf(*instruction->operand(0), plan_)) {
      // An element of a loop's state: split from the start.
      plan_.loop_splits_found.push_back({LoopElement{loop, instruction->attrs().tuple_index}, dim});
      return absl::OkStatus();
    }
  }
  std::vector<const Instruction*> split_users, whole_users;
  bool held_both_ways = false;  // by one tuple
  for (const Instruction* user : instruction->users()) {
    std::optional<TupleUse> use = TupleUseOf(*user, *instruction, dim, plan_);
    if (use && use->split && use->whole) {
      held_both_ways = true;
      split_users.push_back(user);
      whole_users.push_back(user);
      continue;
    }
    (TakesSplit(*user, *instruction, dim, plan_) ? split_users : whole_users).push_back(user);
  }
  // A parameter with no sharding whose sharding XLA may choose
  // (allow_spmd_sharding_propagation_to_parameters: JAX's uncommitted
  // arguments) and that only split users read is split where it enters, as
  // XLA's propagation gives it their sharding. A whole user that only feeds
  // reductions over `dim` to a scalar (a mask converted and summed for a
  // mean's count) reads such a parameter split too: it is split with it, and
  // the reductions read their parts, completed by all-reduces.
  auto read_in_parts = [&](const Instruction* user) {
    return IsElementwise(user->opcode()) && user->operand_count() == 1 && !user->users().empty() &&
           std::all_of(user->users().begin(), user->users().end(), [&](const Instruction* r) {
             return ReducesOver(*r, *user, dim) && r->shape().rank() == 0;
           });
  };
  const bool split_parameter =
      opcode == Opcode::kParameter && ShardingText(*instruction).empty() &&
      std::all_of(whole_users.begin(), whole_users.end(), read_in_parts) &&
      ShardingMayPropagateTo(module_, "parameters", instruction->attrs().parameter_number) &&
      instruction->shape().IsArray() && instruction->shape().dimensions(dim) % n_ == 0;
  if (split_parameter) {
    for (const Instruction* user : whole_users) {
      placements[user] = Placement::Split(dim);
      for (const Instruction* reduction : user->users()) {
        placements[reduction] = Placement::Partial();
      }
    }
    whole_users.clear();
  }
  // A partial result (a bias gradient summed over the split batch) is whole
  // once its all-reduce completes it: sliced after that, as XLA's partitioner
  // does, not split back through what it reduced (split along another
  // dimension).
  auto placed = placements.find(instruction);
  if (placed != placements.end() && placed->second.kind == Placement::Kind::kPartial) {
    plan_.resliced[instruction] = dim;
    plan_.whole_readers[instruction] = std::move(whole_users);
    return absl::OkStatus();
  }
  const bool leaf = split_parameter || CanSplitWhereMade(*instruction, dim, n_);
  if (!whole_users.empty() && leaf) {
    plan_.split_copies[instruction] = {dim, std::move(split_users)};
    return absl::OkStatus();
  }
  if (held_both_ways) return Cannot(*instruction, "is held both whole and split in one tuple");
  if (instruction->shape().dimensions(dim) % n_ != 0) {
    return Cannot(*instruction, "is whole where a split user needs it split");
  }
  if (!whole_users.empty() && opcode == Opcode::kConstant) {
    return Cannot(*instruction,
                  StrCat("is needed both whole and split (by ", whole_users.front()->name(), ")"));
  }
  // A broadcast of a value along the wanted dimension, a reshape that keeps
  // it one operand dimension's, or a reduction over other dimensions, passes
  // the want on to that operand dimension (XLA slices a label vector, not its
  // one-hot broadcast or its [N,1] reshape), as does a slice or dynamic-slice
  // that takes all of it (a scan's step); a get-tuple-element of a tuple, to
  // the element.
  std::optional<int64_t> operand_dim;
  const Instruction* element = nullptr;
  if (const Instruction* read = TupleElementRead(*instruction);
      read != nullptr && !BarredOrNot(*instruction->operand(0)).IsRoot()) {
    element = read;
  } else if (opcode == Opcode::kReshape) {
    const Shape& from = instruction->operand(0)->shape();
    for (int64_t d = 0; d < from.rank() && !operand_dim; ++d) {
      if (ReshapedSplit(from, instruction->shape(), d, n_) == dim) operand_dim = d;
    }
  } else if (opcode == Opcode::kBroadcast) {
    const std::vector<int64_t>& dims = instruction->attrs().dimensions;
    auto at = std::find(dims.begin(), dims.end(), dim);
    if (at != dims.end()) operand_dim = at - dims.begin();
  } else if (opcode == Opcode::kReduce && instruction->operand_count() == 2 &&
             instruction->shape().IsArray()) {
    for (int64_t d = 0; d < instruction->operand(0)->shape().rank() && !operand_dim; ++d) {
      if (KeptDim(*instruction, d) == dim) operand_dim = d;
    }
  } else if ((opcode == Opcode::kSlice || opcode == Opcode::kDynamicSlice) &&
             instruction->shape().dimensions(dim) ==
                 instruction->operand(0)->shape().dimensions(dim)) {
    operand_dim = dim;
  }
  const bool splits_through = SplitsAsOperands(*instruction, dim) || opcode == Opcode::kTranspose ||
                              (opcode == Opcode::kScatter && instruction->operand_count() == 3) ||
                              operand_dim.has_value() || element != nullptr;
  // A value whose only whole users are reductions over the wanted dimension,
  // directly or after unary elementwise operations, is split through all the
  // same, those operations split and the reductions reading their part
  // (completed by an all-reduce), as XLA's propagation splits a value back to
  // where it enters and on to where it is reduced (a label's one-hot
  // weights, their negation and their sum).
  const bool only_reduced_whole =
      !whole_users.empty() && splits_through && !leaf &&
      std::all_of(whole_users.begin(), whole_users.end(),
                  [&](const Instruction* user) { return ReadsInParts(*user, *instruction, dim); });
  if (only_reduced_whole) {
    std::function<void(const Instruction*, const Instruction*)> place_parts =
        [&](const Instruction* reader, const Instruction* value) {
          if (ReducesOver(*reader, *value, dim)) {
            placements[reader] = Placement::Partial();
            return;
          }
          placements[reader] = Placement::Split(dim);
          for (const Instruction* next : reader->users()) place_parts(next, reader);
        };
    for (const Instruction* user : whole_users) place_parts(user, instruction);
    whole_users.clear();
  }
  if ((!whole_users.empty() || (!leaf && !splits_through)) && opcode != Opcode::kConstant) {
    // A whole value is sliced for its split users, whole users reading it as
    // it is: a whole parameter, as XLA's propagation slices a replicated
    // parameter that a split operation reads, or a value computed whole, as
    // it splits attention's heads again after a reshape it had to gather
    // for. (Where the split user is a root returned whole, XLA computes it
    // whole from gathered operands instead: hlogym leaves it.)
    if (opcode == Opcode::kParameter && !tuple_root_ &&
        !ShardingMayPropagateTo(module_, "output", 0) &&
        std::find(split_users.begin(), split_users.end(), root_) != split_users.end()) {
      return Cannot(*instruction, "is whole where a split output returned whole reads it");
    }
    plan_.resliced[instruction] = dim;
    plan_.whole_readers[instruction] = std::move(whole_users);
    return absl::OkStatus();
  }
  if (leaf) {
    // made split where it is: nothing below it changes
  } else if (SplitsAsOperands(*instruction, dim) && instruction->shape().IsArray()) {
    for (const Instruction* operand : instruction->operands()) {
      HLOGYM_RETURN_IF_ERROR(Want(operand, dim));
    }
  } else if (opcode == Opcode::kTranspose) {
    HLOGYM_RETURN_IF_ERROR(Want(instruction->operand(0), instruction->attrs().dimensions[dim]));
  } else if (element != nullptr) {
    HLOGYM_RETURN_IF_ERROR(Want(element, dim));
  } else if (operand_dim) {
    HLOGYM_RETURN_IF_ERROR(Want(instruction->operand(0), *operand_dim));
  } else if (opcode == Opcode::kScatter && instruction->operand_count() == 3 &&
             instruction->attrs().scatter_dimension_numbers &&
             ScattersOneIndexAlong(*instruction, dim) &&
             !PlacementOf(instruction->operand(1)).split() &&
             !PlacementOf(instruction->operand(2)).split()) {
    HLOGYM_RETURN_IF_ERROR(Want(instruction->operand(0), dim));
    plan_.offset_scatters[instruction] = dim;
  } else if (opcode == Opcode::kScatter && instruction->operand_count() == 3 &&
             instruction->attrs().scatter_dimension_numbers) {
    std::optional<int64_t> updates_dim = ScatterUpdatesSplit(*instruction, dim, std::nullopt);
    if (!updates_dim) return Cannot(*instruction, "is whole where a split user needs it split");
    HLOGYM_RETURN_IF_ERROR(Want(instruction->operand(0), dim));
    HLOGYM_RETURN_IF_ERROR(Want(instruction->operand(2), *updates_dim));
  } else {
    return Cannot(*instruction, "is whole where a split user needs it split");
  }
  placements[instruction] = Placement::Split(dim);
  return absl::OkStatus();
}

absl::Status DataParallelPlanner::RejectReshardsInLoops() const {
  // Inside a loop a value is gathered where a user needs it whole, a partial
  // one (a scanned layer's weight gradient) sliced again after its
  // all-reduce, and a split moved by an all-to-all; slicing anything else
  // again is not modelled there.
  for (const Instruction* instruction : plan_.order) {
    if (instruction->parent() == entry_) continue;
    auto placed = plan_.placements.find(instruction);
    const bool partial =
        placed != plan_.placements.end() && placed->second.kind == Placement::Kind::kPartial;
    if (plan_.resliced.contains(instruction) && !partial) {
      return Cannot(*instruction, "would be resharded inside a loop");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DataParallelPlan> DataParallelPlanner::Plan() {
  if (plan_.partitions <= 1 || entry_ == nullptr) {
    return absl::FailedPreconditionError("the module is compiled for one partition");
  }
  HLOGYM_ASSIGN(order, PlanningOrder(*entry_, plan_.loop_of));
  plan_.order = std::move(order);
  pulled_ = PulledByParameters(plan_.order, axis_);
  root_ = entry_->root_instruction();
  tuple_root_ = root_->opcode() == Opcode::kTuple;
  // Inside a loop, an instruction may not place only because an element of
  // the loop's state is still whole that the body makes split (found by
  // SettleLoops, and planned again): its error counts only where none is
  // found.
  absl::Status in_loop;
  for (const Instruction* instruction : plan_.order) {
    absl::Status placed = Place(instruction);
    if (!plan_.gathered_broadcasts_found.empty()) return std::move(plan_);  // planned again
    if (placed.ok()) continue;
    if (instruction->parent() == entry_) return placed;
    if (in_loop.ok()) in_loop = std::move(placed);
  }
  HLOGYM_RETURN_IF_ERROR(SettleLoops());
  if (!plan_.loop_splits_found.empty()) return std::move(plan_);  // planned again
  HLOGYM_RETURN_IF_ERROR(in_loop);
  SettleWholeReaders();
  HLOGYM_RETURN_IF_ERROR(SettleOutputs());
  // Users come first, in reverse post order, so that every user's placement
  // is settled when its operand is looked at.
  for (auto at = plan_.order.rbegin(); at != plan_.order.rend(); ++at) {
    auto it = wanted_.find(*at);
    if (it == wanted_.end()) continue;
    HLOGYM_RETURN_IF_ERROR(SettleWant(*at, it->second));
  }
  HLOGYM_RETURN_IF_ERROR(RejectReshardsInLoops());
  return std::move(plan_);
}

absl::StatusOr<DataParallelPlan> PlanOnce(
    const Module& module, const MeshAxis& axis,
    const absl::flat_hash_set<const Instruction*>& kept_whole,
    const absl::flat_hash_map<const Instruction*, int64_t>& entered_split,
    const absl::flat_hash_map<LoopElement, int64_t>& loop_splits,
    const absl::flat_hash_set<const Instruction*>& gathered_broadcasts) {
  return DataParallelPlanner(module, axis, kept_whole, entered_split, loop_splits,
                             gathered_broadcasts)
      .Plan();
}

// PlanOnce, again with each element of a loop's state that it found split
// split from the start, and each broadcast it found to gather for gathered,
// until it finds none.
absl::StatusOr<DataParallelPlan> PlanDataParallelWith(
    const Module& module, const MeshAxis& axis,
    const absl::flat_hash_set<const Instruction*>& kept_whole,
    const absl::flat_hash_map<const Instruction*, int64_t>& entered_split) {
  absl::flat_hash_map<LoopElement, int64_t> loop_splits;
  absl::flat_hash_set<const Instruction*> gathered_broadcasts;
  while (true) {
    HLOGYM_ASSIGN(
        plan, PlanOnce(module, axis, kept_whole, entered_split, loop_splits, gathered_broadcasts));
    if (!plan.gathered_broadcasts_found.empty()) {
      bool added = false;
      for (const Instruction* broadcast : plan.gathered_broadcasts_found) {
        added |= gathered_broadcasts.insert(broadcast).second;
      }
      if (!added) {
        return absl::InternalError(
            "spmd data-parallel planning found no new broadcast to gather for");
      }
      continue;
    }
    if (plan.loop_splits_found.empty()) return plan;
    bool added = false;
    for (const auto& [element, dim] : plan.loop_splits_found) {
      auto [it, inserted] = loop_splits.try_emplace(element, dim);
      if (!inserted && it->second != dim) {
        return Cannot(*element.first, "holds an element of its state split two ways");
      }
      added |= inserted;
    }
    if (!added) {
      // Each element found entered whole in this planning: none can be split already.
      return absl::InternalError("spmd data-parallel planning found no new loop element to split");
    }
  }
}

// The plan with as few batch-norm results split again as the program allows,
// as XLA's propagation keeps a replicated value replicated unless a split
// user pulls it (an integer-label loss on a split batch, a weight gradient's
// dot): all kept whole first; else split again in post order until the
// program partitions, then each kept whole again where it still does.
absl::StatusOr<DataParallelPlan> PlanKeepingBatchNormsWhole(
    const Module& module, const MeshAxis& axis,
    const absl::flat_hash_map<const Instruction*, int64_t>& entered_split) {
  std::vector<const Instruction*> batch_norms;
  for (const Instruction* instruction : module.entry_computation()->MakeInstructionPostOrder()) {
    if (IsBatchNorm(instruction->opcode())) batch_norms.push_back(instruction);
  }
  absl::flat_hash_set<const Instruction*> kept_whole(batch_norms.begin(), batch_norms.end());
  absl::StatusOr<DataParallelPlan> plan =
      PlanDataParallelWith(module, axis, kept_whole, entered_split);
  if (plan.ok()) return plan;
  std::vector<const Instruction*> split_again;
  for (const Instruction* batch_norm : batch_norms) {
    kept_whole.erase(batch_norm);
    split_again.push_back(batch_norm);
    plan = PlanDataParallelWith(module, axis, kept_whole, entered_split);
    if (plan.ok()) break;
  }
  if (!plan.ok()) return plan;
  for (const Instruction* batch_norm : split_again) {
    kept_whole.insert(batch_norm);
    absl::StatusOr<DataParallelPlan> trial =
        PlanDataParallelWith(module, axis, kept_whole, entered_split);
    if (trial.ok()) {
      plan = std::move(trial);
    } else {
      kept_whole.erase(batch_norm);
    }
  }
  return plan;
}

}  // namespace

std::optional<Placement> PlacementFromSharding(std::string_view sharding, const Shape& shape,
                                               const MeshAxis& axis) {
  if (sharding == "{replicated}") return Placement::Whole();
  std::optional<TiledSharding> tiled = ParseTiledSharding(sharding);
  if (!axis.whole_mesh())
    return tiled && shape.IsArray() ? AlongAxis(*tiled, shape, axis) : std::nullopt;
  const int64_t partitions = axis.partitions;
  if (!tiled || !shape.IsArray() || !tiled->devices_in_order || tiled->subgroup_dims ||
      static_cast<int64_t>(tiled->tiles.size()) != shape.rank()) {
    return std::nullopt;
  }
  std::optional<Placement> placement = Placement::Whole();
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (tiled->tiles[d] == 1) continue;
    if (tiled->tiles[d] != partitions || placement->split() ||
        shape.dimensions(d) % partitions != 0) {
      return std::nullopt;
    }
    placement = Placement::Split(d);
  }
  return placement;
}

bool IsShardingMark(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCustomCall && instruction.operand_count() == 1 &&
         (instruction.attrs().custom_call_target == "Sharding" ||
          instruction.attrs().custom_call_target == kFuncResultSharding);
}

absl::StatusOr<std::vector<Instruction*>> PlanningOrder(
    const Computation& computation,
    absl::flat_hash_map<const Computation*, const Instruction*>& loop_of) {
  std::vector<Instruction*> order;
  for (Instruction* instruction : computation.MakeInstructionPostOrder()) {
    order.push_back(instruction);
    if (instruction->opcode() != Opcode::kWhile) continue;
    for (const Computation* called : instruction->called_computations()) {
      if (!loop_of.try_emplace(called, instruction).second) {
        return Cannot(*instruction, "shares its condition or body with another loop");
      }
      HLOGYM_ASSIGN(inner, PlanningOrder(*called, loop_of));
      order.insert(order.end(), inner.begin(), inner.end());
    }
  }
  return order;
}

bool HoldsSplit(const Instruction& tuple, int64_t index, int64_t dim,
                const DataParallelPlan& plan) {
  if (const Instruction* loop = LoopStateMadeBy(tuple, plan)) {
    auto placed = plan.loops.find(loop);
    return placed != plan.loops.end() && placed->second[index].split() &&
           placed->second[index].dim == dim;
  }
  // The tuple's readers, those of an optimization barrier over it included.
  std::vector<const Instruction*> readers;
  for (const Instruction* user : tuple.users()) {
    if (BarredTuple(*user) == &tuple) {
      readers.insert(readers.end(), user->users().begin(), user->users().end());
    } else {
      readers.push_back(user);
    }
  }
  return std::all_of(readers.begin(), readers.end(), [&](const Instruction* element) {
    if (element->opcode() != Opcode::kGetTupleElement) return false;
    if (element->attrs().tuple_index != index) return true;
    auto at = plan.placements.find(element);
    return at != plan.placements.end() && at->second.split() && at->second.dim == dim;
  });
}

std::optional<TupleUse> TupleUseOf(const Instruction& user, const Instruction& operand, int64_t dim,
                                   const DataParallelPlan& plan) {
  if (user.opcode() != Opcode::kTuple || (user.IsRoot() && !LoopStateMadeBy(user, plan))) {
    return std::nullopt;
  }
  TupleUse use;
  for (int64_t i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) != &operand) continue;
    (HoldsSplit(user, i, dim, plan) ? use.split : use.whole) = true;
  }
  return use;
}

absl::StatusOr<DataParallelPlan> PlanDataParallel(const Module& module, const MeshAxis& axis) {
  if (module.entry_computation() == nullptr) {
    return absl::FailedPreconditionError("the module has no entry computation");
  }
  absl::StatusOr<DataParallelPlan> plan = PlanKeepingBatchNormsWhole(module, axis, {});
  if (plan.ok()) return plan;
  // Where the program does not partition with its parameters with no
  // sharding whole, XLA's propagation may split those it may choose for
  // (JAX's uncommitted arguments: integer labels beside a split batch, whose
  // gather and bounds check then split with it): along their first
  // dimension as long as the split dimension of an annotated parameter.
  absl::flat_hash_set<int64_t> split_sizes;
  std::vector<const Instruction*> choosable;
  const Computation& entry = *module.entry_computation();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const Instruction* parameter = entry.parameter_instruction(i);
    if (!parameter->shape().IsArray()) continue;
    if (ShardingText(*parameter).empty()) {
      if (ShardingMayPropagateTo(module, "parameters", parameter->attrs().parameter_number)) {
        choosable.push_back(parameter);
      }
      continue;
    }
    std::optional<Placement> given =
        PlacementFromSharding(ShardingText(*parameter), parameter->shape(), axis);
    if (given && given->split()) split_sizes.insert(parameter->shape().dimensions(given->dim));
  }
  absl::flat_hash_map<const Instruction*, int64_t> entered_split;
  for (const Instruction* parameter : choosable) {
    if (parameter->shape().rank() > 0 && split_sizes.contains(parameter->shape().dimensions(0))) {
      entered_split[parameter] = 0;
    }
  }
  if (entered_split.empty()) return plan;
  absl::StatusOr<DataParallelPlan> chosen = PlanKeepingBatchNormsWhole(module, axis, entered_split);
  return chosen.ok() ? chosen : plan;
}

}  // namespace hlogym::data_parallel
